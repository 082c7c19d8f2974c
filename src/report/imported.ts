// Imported daily aggregates (another product's history, src/ingest/plausible-import.ts) in reports: which queries
// they can answer, and how their numbers join the recorded hits' rows. The rule is docs/reports.md's "Imported
// data": a query is answered with them only when every number it asks for is one they carry exactly; otherwise
// reports use recorded hits only.

import { zoneOffsetMs } from '../domain/zoned-time.js';
import { IMPORTED_DIMENSIONS, type ImportedDay, type ImportedDaySums, type Site } from '../store/types.js';
import type { Aggregate } from './fields.js';
import type { ReportQuery } from './query.js';

/** Aggregates imported days carry as sums that add up exactly over days (visitors are visitor-days). */
const ADDITIVE = new Set<Aggregate>(['pageviews', 'visits', 'visitors']);
const GROUPABLE = new Set<string>(IMPORTED_DIMENSIONS.filter((d) => d !== ''));
const DAY_MS = 86_400_000;

export interface ImportedPlan {
  dimension: ImportedDay['dimension'];
  /** Local days, `YYYY-MM-DD`: the first counted and the first no longer counted. */
  fromDay: string;
  untilDay: string;
}

/** The site's local day of a UTC instant when that instant is the day's midnight, else undefined. */
function localMidnight(zone: string, at: Date): string | undefined {
  const local = at.getTime() + zoneOffsetMs(zone, at.getTime());
  if (local % DAY_MS !== 0) return undefined;
  return new Date(local).toISOString().slice(0, 10);
}

/**
 * Whether imported days can answer `q`, and from which of their tables: pageview reports without filters, asking
 * only for pageviews, visits and visitors, grouped by nothing or by one field an imported table carries, by day,
 * month, year or not at all,
 * over whole days of the site's own time zone (the days the export was made in).
 */
export function importedPlan(q: ReportQuery, site: Site): ImportedPlan | undefined {
  if (q.entity !== 'pageview' || q.filters.length > 0) return undefined;
  if (!q.aggregates.every((a) => ADDITIVE.has(a))) return undefined;
  if (q.dateGrouping === 'hour') return undefined;
  if (q.fieldGrouping.length > 1 || (q.fieldGrouping.length === 1 && !GROUPABLE.has(q.fieldGrouping[0]!))) return undefined;
  if (q.timezone !== site.timezone) return undefined;
  const fromDay = localMidnight(q.timezone, q.from);
  const untilDay = localMidnight(q.timezone, q.until);
  if (fromDay === undefined || untilDay === undefined || untilDay <= fromDay) return undefined;
  return { dimension: (q.fieldGrouping[0] ?? '') as ImportedDay['dimension'], fromDay, untilDay };
}

/** The `timestamp` of an imported day's bucket, as reports write bucket starts. */
function bucketOf(q: ReportQuery, day: string): string | undefined {
  switch (q.dateGrouping) {
    case 'day':
      return `${day} 00:00:00`;
    case 'month':
      return `${day.slice(0, 7)}-01 00:00:00`;
    case 'year':
      return `${day.slice(0, 4)}-01-01 00:00:00`;
    default:
      return undefined;
  }
}

type Row = Record<string, string>;

const compareBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const compareNumbers = (a: string, b: string) => {
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
};

/**
 * Recorded rows (every group, unlimited) plus the imported days, summed per group, then ordered and limited as
 * docs/reports.md says: by the sort field, ties by timestamp ascending, then by each grouped field ascending.
 */
export function mergeImported(q: ReportQuery, recorded: readonly Row[], days: readonly ImportedDaySums[]): Row[] {
  const field = q.fieldGrouping[0];
  const keyOf = (timestamp: string | undefined, value: string | undefined) => `${timestamp ?? ''}\0${value ?? ''}`;
  const rows = new Map<string, Row>();
  for (const row of recorded) rows.set(keyOf(row.timestamp, field === undefined ? undefined : row[field]), { ...row });
  const zero = Object.fromEntries(q.aggregates.map((a) => [a, '0']));
  for (const d of days) {
    const timestamp = bucketOf(q, d.day);
    const key = keyOf(timestamp, field === undefined ? undefined : d.value);
    let row = rows.get(key);
    if (!row) {
      row = { ...(field === undefined ? {} : { [field]: d.value }), ...(timestamp !== undefined ? { timestamp } : {}), ...zero };
      rows.set(key, row);
    }
    for (const a of q.aggregates) {
      const add = a === 'pageviews' ? d.pageviews : a === 'visits' ? d.visits : d.visitors;
      row[a] = (BigInt(row[a] ?? '0') + BigInt(add)).toString();
    }
  }
  const out = [...rows.values()];
  const { field: sortField, direction } = q.sort;
  const sign = direction === 'asc' ? 1 : -1;
  const primary = (a: Row, b: Row) => {
    if (ADDITIVE.has(sortField as Aggregate)) return compareNumbers(a[sortField] ?? '0', b[sortField] ?? '0');
    return compareBytes(a[sortField] ?? '', b[sortField] ?? '');
  };
  out.sort((a, b) => {
    const p = primary(a, b) * sign;
    if (p !== 0) return p;
    if (q.dateGrouping) {
      const t = compareBytes(a.timestamp ?? '', b.timestamp ?? '');
      if (t !== 0) return t;
    }
    for (const f of q.fieldGrouping) {
      const c = compareBytes(a[f] ?? '', b[f] ?? '');
      if (c !== 0) return c;
    }
    return 0;
  });
  // Key order as recorded rows have it: grouped fields, timestamp, then aggregates.
  const shaped = out.map((r) => {
    const row: Row = {};
    for (const f of q.fieldGrouping) row[f] = r[f] ?? '';
    if (q.dateGrouping) row.timestamp = r.timestamp ?? '';
    for (const a of q.aggregates) row[a] = r[a] ?? '0';
    return row;
  });
  return q.limit !== undefined ? shaped.slice(0, q.limit) : shaped;
}
