// The typed report query: what a valid /v1/aggregations request asks for, with every default resolved.

import type { Aggregate, DateGrouping, Entity, FilterProperty, GroupField, Operator, PropOperator } from './fields.js';

export interface Filter {
  property: FilterProperty;
  operator: Operator;
  value: string;
}

/**
 * A filter on a custom property (the dashboard's own API, never /v1: SPEC.md has no properties). A hit without the
 * key reads it as '' (docs/reports.md, "Custom properties").
 */
export interface PropFilter {
  key: string;
  operator: PropOperator;
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
  /** Custom property filters (dashboard only). */
  props?: PropFilter[];
  /** Group by this custom property's value too (dashboard only), counting only hits that carry the key. */
  propGroup?: string;
  /** Grouped `visitors` counted in this many slices of visitor ids (SqlDialect.slicesVisitors); default 1. */
  visitorSlices?: number;
}
