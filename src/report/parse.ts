// Validates a /v1/aggregations query string into the parts of a report request, naming the parameter at fault.
// What needs the site (time zone, default range) is resolved afterwards by the engine.

import { FieldErrorCollector, unprocessable, ValidationError } from '../domain/errors.js';
import { parseTimestamp } from '../domain/time.js';
import { isTimeZone } from '../domain/time.js';
import {
  AGGREGATES, DATE_GROUPINGS, FILTER_PROPERTIES, GROUP_FIELDS, OPERATORS,
  type Aggregate, type DateGrouping, type Entity, type FilterProperty, type GroupField, type Operator,
} from './fields.js';
import type { Filter, ReportQuery, SortKey } from './query.js';

/** A report request before the site is known: ranges still in local time, defaults not yet applied. */
export type ReportRequest = Omit<ReportQuery, 'from' | 'until' | 'timezone' | 'sort'> & {
  sort?: SortKey;
  /** Local `YYYY-MM-DD HH:MM:SS` as given. */
  dateFrom?: string;
  dateTo?: string;
  timezone?: string;
};

export const MAX_REGEX_LENGTH = 1000;
const MAX_FILTERS = 50;
const MAX_LIMIT = 1000;
export const DEFAULT_GROUPED_LIMIT = 500;

type Query = Record<string, unknown>;

function text(query: Query, name: string): string | undefined {
  const v = query[name];
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
  if (entity === 'pageview') {
    const siteId = text(query, 'entity_id');
    if (!siteId) throw ValidationError.of('entity_id', 'is required (the site id) when entity is pageview');
    return { entity, siteId };
  }
  if (text(query, 'entity_id') !== undefined) {
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

function parseFilters(raw: string | undefined, errors: FieldErrorCollector): Filter[] {
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
  if (parsed.length > MAX_FILTERS) errors.add('filters', `may hold at most ${MAX_FILTERS} filters`);
  const filters: Filter[] = [];
  parsed.forEach((f: unknown, i) => {
    const at = `filter ${i + 1}`;
    if (!f || typeof f !== 'object' || Array.isArray(f)) return errors.add('filters', `${at} must be an object with property, operator and value`);
    const { property, operator, value } = f as Record<string, unknown>;
    if (typeof property !== 'string' || typeof operator !== 'string' || typeof value !== 'string') {
      return errors.add('filters', `${at} must have string property, operator and value`);
    }
    if (property === 'keyword') return errors.add('filters', `${at}: keyword may be grouped by but not filtered on`);
    if (!(property in FILTER_PROPERTIES)) return errors.add('filters', `${at}: unknown property "${property}"`);
    if (!(OPERATORS as readonly string[]).includes(operator)) return errors.add('filters', `${at}: unknown operator "${operator}"`);
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

/** Checks every parameter; throws a 400 naming each bad one, or a 422 for a sort the request cannot have. */
export function parseReportRequest(query: Query): ReportRequest {
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
    else if (!(f in GROUP_FIELDS)) errors.add('field_grouping', `"${f}" is not a field (use ${Object.keys(GROUP_FIELDS).join(', ')})`);
    else if (!fieldGrouping.includes(f as GroupField)) fieldGrouping.push(f as GroupField);
  }

  const filters = parseFilters(text(query, 'filters'), errors);

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

  const dateFrom = text(query, 'date_from');
  const dateTo = text(query, 'date_to');
  for (const [name, value] of [['date_from', dateFrom], ['date_to', dateTo]] as const) {
    if (value !== undefined && value !== '' && !parseTimestamp(value)) errors.add(name, 'must be a date and time YYYY-MM-DD HH:MM:SS');
  }

  let sort: SortKey | undefined;
  const sortText = text(query, 'sort_by');
  if (sortText !== undefined && sortText !== '') {
    const m = /^([a-z_]+):(asc|desc)$/.exec(sortText);
    const known = m && (m[1] === 'timestamp' || m[1]! in GROUP_FIELDS || [...AGGREGATES.pageview, ...AGGREGATES.event].includes(m[1] as Aggregate));
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
