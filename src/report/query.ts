// The typed report query: what a valid /v1/aggregations request asks for, with every default resolved.

import type { DayBuild, FunnelStep } from '../store/types.js';
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
  /**
   * Only the visits of a funnel that reached `step` (1-based) and then reached the next step (`continued`) or not
   * (`dropped`); at the last step `continued` is the visits that completed it (dashboard only; src/report/
   * funnel-filter.ts). The funnel is walked over the report's range and filters plus the funnel's own `filters`.
   */
  funnel?: FunnelFilter;
  /** `visitors` counted in slices, at least this many where grouped (SqlDialect.slicesVisitors); default 1: one pass. */
  visitorSlices?: number;
  /** Only some of the range's hits (day rollups read the rest from their builds; plans/hit-scope.ts). */
  scope?: HitScope;
}

/**
 * The hits of a report's range that count: those in `intervals` (but not those of the visits `except` names), and
 * within `crossing.windows` those of the visits it names (src/report/day-rollups/: the visits of a built UTC day
 * that have hits outside it).
 */
export interface HitScope {
  intervals: readonly (readonly [Date, Date])[];
  except?: VisitSet;
  crossing?: { windows: readonly (readonly [Date, Date])[]; visits: VisitSet };
  /**
   * Which visits have all their hits in the scope, so that the plans take their facts (pageviews, first and last
   * hit) from those hits instead of reading the visits: 'all' of those it keeps, or those 'inside' the report's
   * range (the visits crossing its ends are read from their rows).
   */
  factsFromHits?: 'all' | 'inside';
}

/**
 * Visits a scope names: those overlapping `edgesOf` without lying inside it, those builds list as crossing their
 * day, or these ids.
 */
export type VisitSet = { edgesOf: readonly [Date, Date] } | { builds: readonly DayBuild[] } | { ids: readonly bigint[] };

/** A report's funnel filter (ReportQuery.funnel). */
export interface FunnelFilter {
  steps: FunnelStep[];
  step: number;
  outcome: 'continued' | 'dropped';
  /** The funnel's own saved /v1 filters, added to the report's for the walk (as its report adds them). */
  filters?: Filter[];
}
