// The typed report query: what a valid /v1/aggregations request asks for, with every default resolved.

import type { Aggregate, DateGrouping, Entity, FilterProperty, GroupField, Operator } from './fields.js';

export interface Filter {
  property: FilterProperty;
  operator: Operator;
  value: string;
}

export interface SortKey {
  /** An aggregate, a grouped field, or `timestamp`. */
  field: Aggregate | GroupField | 'timestamp';
  direction: 'asc' | 'desc';
}

export interface ReportQuery {
  entity: Entity;
  siteId: string;
  /** entity=event: the event's name. */
  eventName?: string;
  aggregates: Aggregate[];
  dateGrouping?: DateGrouping;
  fieldGrouping: GroupField[];
  filters: Filter[];
  sort: SortKey;
  /** First instant counted (UTC). */
  from: Date;
  /** First instant no longer counted (UTC): one second after date_to. */
  until: Date;
  timezone: string;
  limit?: number;
}
