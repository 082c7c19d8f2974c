// Validates a /v1/aggregations query string into the parts of a report request, naming the parameter at fault.
// What needs the site (time zone, default range) is resolved afterwards by the engine.

import { FieldErrorCollector, unprocessable, ValidationError } from '../domain/errors.js';
import { isCalendarDate, isTimeZone, parseInstant, parseTimestamp } from '../domain/time.js';
import {
  AGGREGATES, DATE_GROUPINGS, FILTER_PROPERTIES, GROUP_FIELDS, OPERATORS,
  type Aggregate, type DateGrouping, type Entity, type FilterProperty, type GroupField, type Operator,
} from './fields.js';
import type { Filter, ReportQuery, SortKey } from './query.js';

/**
 * One end of the range as the client wrote it: a wall-clock time of the reporting zone (not known yet), or an
 * exact instant (an ISO 8601 time with an offset). Both are whole seconds; `date_to` is inclusive to its second.
 */
export type RangeEnd =
  | { kind: 'local'; /** The local time as the UTC fields of this millisecond value. */ local: number }
  | { kind: 'instant'; /** UTC milliseconds. */ at: number };

/** A report request before the site is known: range ends not yet in UTC, defaults not yet applied. */
export type ReportRequest = Omit<ReportQuery, 'from' | 'until' | 'timezone' | 'sort'> & {
  sort?: SortKey;
  dateFrom?: RangeEnd;
  dateTo?: RangeEnd;
  timezone?: string;
};

/** The dates a request may name (docs/reports.md, "Range and time zone"): years 2000 to 2099 as written. */
export const EARLIEST_DATE = '2000-01-01 00:00:00';
export const LATEST_DATE = '2099-12-31 23:59:59';
const EARLIEST_YEAR = Number(EARLIEST_DATE.slice(0, 4));
const LATEST_YEAR = Number(LATEST_DATE.slice(0, 4));

export const MAX_REGEX_LENGTH = 1000;
const MAX_FILTERS = 50;
const MAX_LIMIT = 1000;
export const DEFAULT_GROUPED_LIMIT = 500;

type Query = Record<string, unknown>;
/** Query parameters in the order they were sent (the `filters[][…]` form needs it). */
export type OrderedQuery = Iterable<readonly [string, string]>;

function text(query: Query, name: string): string | undefined {
  const v = Object.hasOwn(query, name) ? query[name] : undefined;
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw ValidationError.of(name, 'must be given once');
  return v;
}

function list(value: string): string[] {
  return value.split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** Identifies the entity and its site; errors here come before any site lookup. */
export function parseEntity(query: Query): { entity: Entity; siteId: string; eventName?: string } {
  const entity = text(query, 'entity');
  if (entity === undefined || entity === '') throw ValidationError.of('entity', 'is required');
  if (entity !== 'pageview' && entity !== 'event') throw ValidationError.of('entity', 'must be pageview or event');
  // An empty entity_id is no entity_id (a Ruby client always sends the key).
  const entityId = text(query, 'entity_id');
  if (entity === 'pageview') {
    if (!entityId) throw ValidationError.of('entity_id', 'is required (the site id) when entity is pageview');
    return { entity, siteId: entityId };
  }
  if (entityId !== undefined && entityId !== '') {
    throw ValidationError.of('entity_id', 'reporting an event by its goal code is no longer available: send site_id and entity_name');
  }
  const errors = new FieldErrorCollector();
  const siteId = text(query, 'site_id');
  const eventName = text(query, 'entity_name');
  if (!siteId) errors.add('site_id', 'is required when entity is event');
  if (!eventName) errors.add('entity_name', 'is required when entity is event');
  errors.throwIfAny();
  return { entity, siteId: siteId!, eventName: eventName! };
}

const FILTER_KEYS = ['property', 'operator', 'value'] as const;
type RawFilter = Partial<Record<(typeof FILTER_KEYS)[number], unknown>>;
const NESTED_KEY_RE = /^filters\[([^\]]*)\]\[([^\]]*)\]$/;
const INDEX_RE = /^(0|[1-9]\d{0,8})$/;
const NESTED_FORMS = 'filters[0][property], filters[0][operator] and filters[0][value] (or filters[][property], …)';

const shown = (key: string) => JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);

/** The query's parameters in order: the ones sent, or the record's when the order is not known. */
function pairsOf(query: Query, ordered: OrderedQuery | undefined): [string, string][] {
  if (ordered) return [...ordered].map(([k, v]) => [k, v]);
  const pairs: [string, string][] = [];
  for (const [k, v] of Object.entries(query)) {
    for (const item of Array.isArray(v) ? v : [v]) pairs.push([k, String(item)]);
  }
  return pairs;
}

/**
 * The filters of PHP and Rails clients, as nested parameters: `filters[0][property]=…` (numbered) or
 * `filters[][property]=…` (in order: a filter ends where one of its keys repeats). Undefined when the query has no
 * such key; every other key starting with `filters` is an error, never ignored.
 */
function nestedFilters(query: Query, ordered: OrderedQuery | undefined, errors: FieldErrorCollector): RawFilter[] | undefined {
  const pairs = pairsOf(query, ordered).filter(([k]) => k.startsWith('filters') && k !== 'filters');
  if (pairs.length === 0) return undefined;
  let failed = false;
  const fail = (message: string) => {
    failed = true;
    errors.add('filters', message);
  };
  if (text(query, 'filters') !== undefined) fail(`give filters either as one JSON parameter or as ${NESTED_FORMS}, not both`);
  const numbered = new Map<number, RawFilter>();
  const listed: RawFilter[] = [];
  let forms = 0;
  for (const [key, value] of pairs) {
    const m = NESTED_KEY_RE.exec(key);
    if (!m) {
      fail(`${shown(key)} is not a filter parameter: use ${NESTED_FORMS}`);
      continue;
    }
    const [, index, name] = m as unknown as [string, string, string];
    if (!(FILTER_KEYS as readonly string[]).includes(name)) {
      fail(`${shown(key)}: a filter has only property, operator and value`);
      continue;
    }
    const field = name as (typeof FILTER_KEYS)[number];
    if (index === '') {
      forms |= 1;
      const last = listed[listed.length - 1];
      if (!last || Object.hasOwn(last, field)) listed.push({ [field]: value });
      else last[field] = value;
      continue;
    }
    forms |= 2;
    if (!INDEX_RE.test(index)) {
      fail(`${shown(key)}: the index must be a whole number from 0 (without leading zeros)`);
      continue;
    }
    const i = Number(index);
    if (i >= MAX_FILTERS) {
      fail(`${shown(key)}: may hold at most ${MAX_FILTERS} filters (indexes 0 to ${MAX_FILTERS - 1})`);
      continue;
    }
    const filter = numbered.get(i) ?? {};
    numbered.set(i, filter);
    if (Object.hasOwn(filter, field)) fail(`filters[${i}][${field}] is given more than once`);
    else filter[field] = value;
  }
  if (forms === 3) fail('give nested filters either all numbered (filters[0][…]) or all as filters[][…], not both');
  // Each filter with the name a message gives it.
  const list: [string, RawFilter][] = listed.map((f, i) => [`filter ${i + 1} of filters[][…]`, f]);
  if (forms === 2) {
    const count = Math.max(...numbered.keys()) + 1;
    for (let i = 0; i < count; i++) {
      const filter = numbered.get(i);
      if (!filter) fail(`filters[${i}] is missing: number filters from 0 without gaps`);
      else list.push([`filters[${i}]`, filter]);
    }
  }
  if (list.length > MAX_FILTERS) fail(`may hold at most ${MAX_FILTERS} filters`);
  for (const [name, filter] of list) {
    const missing = FILTER_KEYS.filter((k) => !Object.hasOwn(filter, k));
    if (missing.length > 0) fail(`${name} is incomplete: it lacks ${missing.join(' and ')}`);
  }
  return failed ? [] : list.map(([, f]) => f);
}

/** The JSON `filters` parameter as a list of raw filters; `{}` and `[]` are none. */
function jsonFilters(raw: string | undefined, errors: FieldErrorCollector): unknown[] {
  if (raw === undefined || raw.trim() === '' || raw.trim() === '{}') return [];
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    errors.add('filters', 'must be a JSON array of filter objects');
    return [];
  }
  if (!Array.isArray(parsed)) {
    errors.add('filters', 'must be a JSON array of filter objects');
    return [];
  }
  return parsed;
}

/** Checks raw filters (from JSON or nested parameters alike) against the properties and operators allowed. */
function checkFilters(raw: readonly unknown[], errors: FieldErrorCollector): Filter[] {
  if (raw.length > MAX_FILTERS) {
    errors.add('filters', `may hold at most ${MAX_FILTERS} filters`);
    return [];
  }
  const filters: Filter[] = [];
  raw.forEach((f: unknown, i) => {
    const at = `filter ${i + 1}`;
    if (!f || typeof f !== 'object' || Array.isArray(f)) return errors.add('filters', `${at} must be an object with property, operator and value`);
    const own = (name: string) => (Object.hasOwn(f, name) ? (f as Record<string, unknown>)[name] : undefined);
    const [property, operator, value] = [own('property'), own('operator'), own('value')];
    if (typeof property !== 'string' || typeof operator !== 'string' || typeof value !== 'string') {
      return errors.add('filters', `${at} must have string property, operator and value`);
    }
    if (property === 'keyword') return errors.add('filters', `${at}: keyword may be grouped by but not filtered on`);
    if (!Object.hasOwn(FILTER_PROPERTIES, property)) return errors.add('filters', `${at}: unknown property ${shown(property)}`);
    if (!(OPERATORS as readonly string[]).includes(operator)) return errors.add('filters', `${at}: unknown operator ${shown(operator)}`);
    const allowed = FILTER_PROPERTIES[property as FilterProperty] as readonly string[];
    if (!allowed.includes(operator)) {
      return errors.add('filters', `${at}: ${property} allows only ${allowed.map((o) => `"${o}"`).join(' and ')}`);
    }
    if ((operator === 'matching' || operator === 'not matching') && value.length > MAX_REGEX_LENGTH) {
      return errors.add('filters', `${at}: a regular expression may be at most ${MAX_REGEX_LENGTH} characters`);
    }
    filters.push({ property: property as FilterProperty, operator: operator as Operator, value });
  });
  return filters;
}

const DATE_FORMS =
  'must be YYYY-MM-DD or YYYY-MM-DD HH:MM:SS (in the reporting time zone), or an ISO 8601 time with an offset ' +
  '(2026-10-01T00:00:00Z, 2026-10-01T00:00:00.000+02:00)';

/**
 * `date_from` / `date_to` (docs/reports.md): `YYYY-MM-DD HH:MM:SS` local, `YYYY-MM-DD` local (the day's first
 * second for date_from, its last for date_to), or an instant with an offset; years 2000 to 2099 as written.
 */
function parseRangeEnd(name: 'date_from' | 'date_to', value: string, errors: FieldErrorCollector): RangeEnd | undefined {
  let end: RangeEnd;
  let year: number;
  const dateOnly = isCalendarDate(value);
  const local = parseTimestamp(dateOnly ? `${value} ${name === 'date_from' ? '00:00:00' : '23:59:59'}` : value);
  const instant = local ? undefined : parseInstant(value);
  if (local) {
    end = { kind: 'local', local: local.getTime() };
    year = local.getUTCFullYear();
  } else if (instant) {
    end = { kind: 'instant', at: instant.date.getTime() };
    year = instant.year;
  } else {
    errors.add(name, DATE_FORMS);
    return undefined;
  }
  if (year < EARLIEST_YEAR || year > LATEST_YEAR) {
    errors.add(name, `must be from ${EARLIEST_DATE} to ${LATEST_DATE} (the dates reports accept)`);
    return undefined;
  }
  return end;
}

/**
 * Checks every parameter; throws a 400 naming each bad one, or a 422 for a sort the request cannot have.
 * `ordered` is the query string's pairs in the order sent, for the `filters[][…]` form (default: the record's).
 */
export function parseReportRequest(query: Query, ordered?: OrderedQuery): ReportRequest {
  const { entity, siteId, eventName } = parseEntity(query);
  const errors = new FieldErrorCollector();
  const allowedAggregates = AGGREGATES[entity] as readonly string[];

  const aggregates: Aggregate[] = [];
  const aggregatesText = text(query, 'aggregates');
  if (!aggregatesText || list(aggregatesText).length === 0) errors.add('aggregates', 'is required');
  else {
    for (const a of list(aggregatesText)) {
      if (!allowedAggregates.includes(a)) errors.add('aggregates', `"${a}" is not an aggregate of ${entity} (use ${allowedAggregates.join(', ')})`);
      else if (!aggregates.includes(a as Aggregate)) aggregates.push(a as Aggregate);
    }
  }

  let dateGrouping: DateGrouping | undefined;
  const dg = text(query, 'date_grouping');
  if (dg !== undefined && dg !== '' && dg !== 'none') {
    if ((DATE_GROUPINGS as readonly string[]).includes(dg)) dateGrouping = dg as DateGrouping;
    else errors.add('date_grouping', `must be one of ${DATE_GROUPINGS.join(', ')}`);
  }

  const fieldGrouping: GroupField[] = [];
  for (const f of list(text(query, 'field_grouping') ?? '')) {
    if (f === 'domain') errors.add('field_grouping', 'domain may be filtered on but not grouped by');
    else if (!Object.hasOwn(GROUP_FIELDS, f)) errors.add('field_grouping', `"${f}" is not a field (use ${Object.keys(GROUP_FIELDS).join(', ')})`);
    else if (!fieldGrouping.includes(f as GroupField)) fieldGrouping.push(f as GroupField);
  }

  const nested = nestedFilters(query, ordered, errors);
  const filters = checkFilters(nested ?? jsonFilters(text(query, 'filters'), errors), errors);

  let limit: number | undefined;
  const limitText = text(query, 'limit');
  if (limitText !== undefined && limitText !== '') {
    if (!/^\d{1,9}$/.test(limitText.trim())) errors.add('limit', `must be a whole number from 1 to ${MAX_LIMIT}`);
    else {
      limit = Number(limitText);
      if (limit < 1 || limit > MAX_LIMIT) errors.add('limit', `must be from 1 to ${MAX_LIMIT}`);
    }
  }

  const timezone = text(query, 'timezone');
  if (timezone !== undefined && timezone !== '' && !isTimeZone(timezone)) errors.add('timezone', 'is not a time zone of the TZ database');

  const dateFromText = text(query, 'date_from');
  const dateToText = text(query, 'date_to');
  const dateFrom = dateFromText ? parseRangeEnd('date_from', dateFromText, errors) : undefined;
  const dateTo = dateToText ? parseRangeEnd('date_to', dateToText, errors) : undefined;

  let sort: SortKey | undefined;
  const sortText = text(query, 'sort_by');
  if (sortText !== undefined && sortText !== '') {
    const m = /^([a-z_]+):(asc|desc)$/.exec(sortText);
    const known = m && (m[1] === 'timestamp' || Object.hasOwn(GROUP_FIELDS, m[1]!) || [...AGGREGATES.pageview, ...AGGREGATES.event].includes(m[1] as Aggregate));
    if (!m || !known) errors.add('sort_by', 'must be field:asc or field:desc, the field an aggregate, a grouped field or timestamp');
    else sort = { field: m[1] as SortKey['field'], direction: m[2] as 'asc' | 'desc' };
  }
  errors.throwIfAny();

  if (sort) {
    if (sort.field === 'timestamp' && !dateGrouping) throw unprocessable('sort_by=timestamp needs date_grouping');
    const requested = sort.field === 'timestamp' || aggregates.includes(sort.field as Aggregate) || fieldGrouping.includes(sort.field as GroupField);
    if (!requested) throw unprocessable(`sort_by names ${sort.field}, which is not among this request's aggregates or field_grouping`);
  }

  return {
    entity,
    siteId,
    ...(eventName !== undefined ? { eventName } : {}),
    aggregates,
    ...(dateGrouping ? { dateGrouping } : {}),
    fieldGrouping,
    filters,
    ...(sort ? { sort } : {}),
    ...(dateFrom ? { dateFrom } : {}),
    ...(dateTo ? { dateTo } : {}),
    ...(timezone ? { timezone } : {}),
    ...(limit !== undefined ? { limit } : {}),
  };
}
