// The fixed vocabulary of reports (SPEC.md section 4): entities, aggregates, groupable fields, filterable
// properties and their operators. Column names in SQL come only from here, never from a request.

export type Entity = 'pageview' | 'event';
/**
 * SPEC.md's five, `visitors` (distinct visitor-days: Fathom's headline number), and the engagement extensions
 * `scroll_depth` and `time_on_page` (docs/reports.md).
 */
export const PAGEVIEW_AGGREGATES = ['visits', 'uniques', 'pageviews', 'avg_duration', 'bounce_rate', 'visitors', 'scroll_depth', 'time_on_page'] as const;
export const EVENT_AGGREGATES = ['conversions', 'unique_conversions', 'value'] as const;
export type Aggregate = (typeof PAGEVIEW_AGGREGATES)[number] | (typeof EVENT_AGGREGATES)[number];
export const AGGREGATES: Record<Entity, readonly Aggregate[]> = { pageview: PAGEVIEW_AGGREGATES, event: EVENT_AGGREGATES };
/** Aggregates whose values are decimals, computed as integers scaled by 10^places (the rest are counts or sums). */
export const DECIMAL_PLACES: Partial<Record<Aggregate, number>> = { avg_duration: 2, bounce_rate: 4, scroll_depth: 2, time_on_page: 2 };
/**
 * Aggregates of the engagement the tracker reports per page (its `engagement` hits), not of pageviews: null for a
 * group none of whose (visit, page) pairs reported any (plans/engagement.ts).
 */
export const ENGAGEMENT_AGGREGATES: ReadonlySet<Aggregate> = new Set(['scroll_depth', 'time_on_page']);

export const DATE_GROUPINGS = ['hour', 'day', 'month', 'year'] as const;
export type DateGrouping = (typeof DATE_GROUPINGS)[number];

/** Where a field's value lives: a column of the hit, or of the hit's visit. */
export interface FieldSource {
  table: 'hit' | 'visit';
  column: string;
}

export const GROUP_FIELDS = {
  hostname: { table: 'hit', column: 'hostname' },
  pathname: { table: 'hit', column: 'pathname' },
  entry_page: { table: 'visit', column: 'entry_page' },
  exit_page: { table: 'visit', column: 'exit_page' },
  referrer_hostname: { table: 'hit', column: 'referrer_hostname' },
  referrer_pathname: { table: 'hit', column: 'referrer_pathname' },
  referrer_source: { table: 'hit', column: 'referrer_source' },
  browser: { table: 'hit', column: 'browser' },
  country_code: { table: 'hit', column: 'country_code' },
  city: { table: 'hit', column: 'city' },
  state: { table: 'hit', column: 'state' },
  region: { table: 'hit', column: 'region' },
  device_type: { table: 'hit', column: 'device_type' },
  operating_system: { table: 'hit', column: 'operating_system' },
  utm_campaign: { table: 'hit', column: 'utm_campaign' },
  utm_content: { table: 'hit', column: 'utm_content' },
  utm_medium: { table: 'hit', column: 'utm_medium' },
  utm_source: { table: 'hit', column: 'utm_source' },
  utm_term: { table: 'hit', column: 'utm_term' },
  keyword: { table: 'hit', column: 'keyword' },
  ref: { table: 'hit', column: 'ref' },
} as const satisfies Record<string, FieldSource>;
export type GroupField = keyof typeof GROUP_FIELDS;

export const OPERATORS = ['is', 'is not', 'is like', 'is not like', 'matching', 'not matching'] as const;
export type Operator = (typeof OPERATORS)[number];
export const POSITIVE_OPERATORS: ReadonlySet<Operator> = new Set(['is', 'is like', 'matching']);

const ALL: readonly Operator[] = OPERATORS;
const EXACT: readonly Operator[] = ['is', 'is not'];

/** Operators on custom properties (the dashboard's filter; no regular expressions). */
export const PROP_OPERATORS = ['is', 'is not', 'is like', 'is not like'] as const;
export type PropOperator = (typeof PROP_OPERATORS)[number];

/** Filterable properties with the operators each allows (SPEC.md's table). `domain` is the hostname without scheme. */
export const FILTER_PROPERTIES = {
  domain: ALL,
  hostname: ALL,
  pathname: ALL,
  entry_page: ALL,
  exit_page: ALL,
  referrer_hostname: ALL,
  referrer_pathname: ALL,
  referrer_source: ALL,
  ref: ALL,
  utm_campaign: ALL,
  utm_source: ALL,
  utm_medium: ALL,
  utm_content: ALL,
  utm_term: ALL,
  device_type: EXACT,
  operating_system: EXACT,
  browser: EXACT,
  country_code: EXACT,
  city: EXACT,
  state: EXACT,
  region: EXACT,
} as const satisfies Record<string, readonly Operator[]>;
export type FilterProperty = keyof typeof FILTER_PROPERTIES;

/** The column a filter property reads (`domain` reads the hostname and strips its scheme in SQL). */
export function filterSource(property: FilterProperty): FieldSource {
  return property === 'domain' ? GROUP_FIELDS.hostname : GROUP_FIELDS[property];
}
