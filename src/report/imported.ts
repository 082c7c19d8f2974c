// Imported daily aggregates (another product's history, src/ingest/peer-imports/plausible-import.ts) in reports: which
// queries they can answer, and how their numbers join the recorded hits' rows. The rule is docs/reports.md's "Imported
// data", decided per aggregate: each number a query asks for that they carry exactly is recorded hits plus imported
// days; every other number of the same answer is recorded hits only (never a 0 for a number the import holds because
// another number of the request is one it lacks).

import { zoneOffsetMs } from '../domain/zoned-time.js';
import { IMPORTED_DIMENSIONS, IMPORTED_LACKS, type ImportedDimension, type ImportedDaySums, type Site } from '../store/types.js';
import { valueConditions } from './conditions.js';
import { aggregateAlias, fieldAlias, TIMESTAMP_ALIAS } from './result-columns.js';
import { Binder, DAY_MS, type CompiledQuery, type SqlDialect } from './dialect.js';
import { formatAggregate } from './format.js';
import { ENGAGEMENT_AGGREGATES, POSITIVE_OPERATORS, type Aggregate } from './fields.js';
import { ENGAGED_PAIRS } from './plans/engagement.js';
import type { Filter, ReportQuery } from './query.js';

/** Sums that add up exactly over days and over the values of a field one visit has one of (visitors: see below). */
const ADDITIVE = new Set<Aggregate>(['pageviews', 'visits', 'visitors']);
/** Ratios whose parts imported tables carry (bounces / visits, duration / visits). */
const RATIOS = new Set<Aggregate>(['bounce_rate', 'avg_duration']);
/** Fields with an imported table of their own ('' is the totals, event_name no report field). */
const FIELDS = new Set<string>(IMPORTED_DIMENSIONS.filter((d) => d !== '' && d !== 'event_name'));
/**
 * The one field whose table does not count visits whole: a visit views many pages, so its visits, bounces and
 * durations are not parts of the site's. Every other imported field has one value per visit.
 */
const PER_HIT: ReadonlySet<string> = new Set(['pathname']);
/**
 * The dimensions whose rows carry engagement (Plausible's pages, and the totals the importer sums from them). Its
 * unit, the (visit, page) pair, is one page's: pairs of several pages add up exactly, whatever the filters keep.
 */
const ENGAGED: ReadonlySet<string> = new Set(['', 'pathname']);

/** Which rows of a dimension's imported days a report reads, and whether they are summed per value or per day only. */
export interface ImportedValues {
  /** The report's filters on the field, applied to the stored value as to recorded hits' column (none: every value). */
  conditions: readonly Pick<Filter, 'operator' | 'value'>[];
  /** Sums per day and value (grouping by the field); otherwise per day, `value` ''. */
  byValue: boolean;
}

export interface ImportedPlan {
  dimension: ImportedDimension;
  /** The query's aggregates the dimension's rows can answer by the query's shape (rows may still lack them: importedAnswers). */
  answers: ReadonlySet<Aggregate>;
  /** Local days, `YYYY-MM-DD`: the first counted and the first no longer counted. */
  fromDay: string;
  untilDay: string;
  values: ImportedValues;
}

/** The site's local day of a UTC instant when that instant is the day's midnight, else undefined. */
function localMidnight(zone: string, at: Date): string | undefined {
  const local = at.getTime() + zoneOffsetMs(zone, at.getTime());
  if (local % DAY_MS !== 0) return undefined;
  return new Date(local).toISOString().slice(0, 10);
}

type Selection = { dimension: ImportedDimension; values: ImportedValues; answers: ReadonlySet<Aggregate> };

/**
 * The imported rows a pageview query's filters and grouping select, and which of its aggregates they answer
 * exactly; undefined when no table answers the query's shape or none of its aggregates.
 */
function pageviewSelection(q: ReportQuery): Selection | undefined {
  if (q.fieldGrouping.length > 1) return undefined;
  const grouped = q.fieldGrouping[0];
  if (grouped !== undefined && !FIELDS.has(grouped)) return undefined;
  // Filters only on the one field whose table is read (the grouped one, if any): a table row is one value of it,
  // so every operator selects whole rows, as it selects hits by their value.
  const properties = new Set<string>(q.filters.map((f) => f.property));
  if (properties.size > 1) return undefined;
  const filtered = [...properties][0];
  if (filtered !== undefined && (!FIELDS.has(filtered) || (grouped !== undefined && filtered !== grouped))) return undefined;
  const dimension = (grouped ?? filtered ?? '') as ImportedDimension;
  const values: ImportedValues = { byValue: grouped !== undefined, conditions: q.filters.map(({ operator, value }) => ({ operator, value })) };

  const perHit = PER_HIT.has(dimension);
  // Summed over several values of a field (filters that may keep more than one, no grouping by it), pageviews add
  // up, and so do visits and their parts where a visit has one value; visitor-days do not (one person may come by
  // two sources a day), nor visits of pages (one visit views two). Only `is` of one value (negatives can only
  // narrow it) keeps at most one; a pattern may keep any number.
  const positives = q.filters.filter((f) => POSITIVE_OPERATORS.has(f.operator));
  const oneValue = positives.length > 0 && positives.every((f) => f.operator === 'is' && f.value === positives[0]!.value);
  const severalValues = grouped === undefined && filtered !== undefined && !oneValue;
  const answers = new Set(
    q.aggregates.filter((a) => {
      if (ENGAGEMENT_AGGREGATES.has(a)) return ENGAGED.has(dimension);
      if (!ADDITIVE.has(a) && !RATIOS.has(a)) return false; // uniques: no table counts them
      if (RATIOS.has(a) && perHit) return false;
      return !(severalValues && (a === 'visitors' || (perHit && a === 'visits')));
    }),
  );
  return answers.size > 0 ? { dimension, values, answers } : undefined;
}

/**
 * Whether imported days can answer some of `q`'s aggregates, which, and from which rows: reports over whole days
 * of the site's own time zone (the days the export was made in), by day, month, year or not at all, and
 * * pageviews: pageviews, visits and visitors, with bounce_rate and avg_duration where the table counts whole
 *   visits, and scroll_depth and time_on_page in the totals and by page, grouped by nothing or by one field an
 *   imported table carries, filtered on that field only, with any operator (pageviewSelection);
 * * events: conversions of the event, with no grouping or filter (unique_conversions and value: no export has them).
 */
export function importedPlan(q: ReportQuery, site: Site): ImportedPlan | undefined {
  if (q.dateGrouping === 'hour' || q.timezone !== site.timezone) return undefined;
  let selection: Selection | undefined;
  if (q.entity === 'event') {
    const answerable = q.eventName !== undefined && q.aggregates.includes('conversions') && q.fieldGrouping.length === 0 && q.filters.length === 0;
    selection = answerable
      ? { dimension: 'event_name', values: { conditions: [{ operator: 'is', value: q.eventName! }], byValue: false }, answers: new Set<Aggregate>(['conversions']) }
      : undefined;
  } else {
    selection = pageviewSelection(q);
  }
  if (!selection) return undefined;
  const fromDay = localMidnight(q.timezone, q.from);
  const untilDay = localMidnight(q.timezone, q.until);
  if (fromDay === undefined || untilDay === undefined || untilDay <= fromDay) return undefined;
  return { ...selection, fromDay, untilDay };
}

/** Aliases of importedDaysQuery's columns (never a column's name: ClickHouse resolves a name to an alias everywhere). */
const DAY_ALIAS = 'd';
const VALUE_ALIAS = 'v';
const SUMS = {
  pageviews: 'pageviews', visits: 'visits', visitors: 'visitors', bounces: 'bounces', visitDuration: 'visit_duration',
  scrollSum: 'scroll_sum', scrollPairs: 'scroll_pairs', engagedMsSum: 'engaged_ms_sum', engagedPairs: 'engaged_pairs',
} as const;
const sumAlias = (column: string) => `sum_${column}`;
const LACKS_ALIAS = 'any_lacks';

/**
 * The site's imported days of the plan's dimension and range, summed per day (and value), the plan's conditions
 * bound and written as for recorded hits (valueConditions); with `importIds`, only the rows of those imports (the
 * finished ones: an import still running, or undone after its process died, counts for nothing).
 */
export function importedDaysQuery(d: SqlDialect, siteId: string, plan: ImportedPlan, importIds?: readonly string[]): CompiledQuery {
  const b = new Binder(d);
  const where = [
    `site_id = ${b.value(siteId)}`, `dimension = ${b.value(plan.dimension)}`,
    ...(importIds ? [`import_id IN (${importIds.map((id) => b.value(id)).join(', ')})`] : []),
    `day >= ${d.date(b.value(plan.fromDay))}`, `day < ${d.date(b.value(plan.untilDay))}`,
    ...valueConditions(d, 'value', plan.values.conditions, b),
  ];
  const byValue = plan.values.byValue;
  const sums = Object.values(SUMS).map((c) => `${d.sumInteger(c)} AS ${sumAlias(c)}`);
  return {
    sql:
      `SELECT ${d.dateText('day')} AS ${DAY_ALIAS}, ${byValue ? 'value' : "''"} AS ${VALUE_ALIAS}, ${sums.join(', ')}, ${d.bitOrAll('lacks')} AS ${LACKS_ALIAS} ` +
      `FROM ${d.table('imported_daily')} WHERE ${where.join(' AND ')} GROUP BY day${byValue ? ', value' : ''}`,
    params: b.params,
  };
}

/** importedDaysQuery's rows as the database returned them. */
export function importedDaySums(rows: readonly Record<string, unknown>[]): ImportedDaySums[] {
  const n = (row: Record<string, unknown>, column: string) => Number(integer(row[sumAlias(column)]));
  return rows.map((r) => ({
    day: String(r[DAY_ALIAS]), value: String(r[VALUE_ALIAS] ?? ''), pageviews: n(r, SUMS.pageviews), visits: n(r, SUMS.visits),
    visitors: n(r, SUMS.visitors), bounces: n(r, SUMS.bounces), visitDuration: n(r, SUMS.visitDuration), lacks: Number(integer(r[LACKS_ALIAS])),
    scrollSum: n(r, SUMS.scrollSum), scrollPairs: n(r, SUMS.scrollPairs), engagedMsSum: n(r, SUMS.engagedMsSum), engagedPairs: n(r, SUMS.engagedPairs),
  }));
}

/** The IMPORTED_LACKS bits of the numbers each aggregate needs. */
const NEEDS: Partial<Record<Aggregate, number>> = {
  visitors: IMPORTED_LACKS.visitors,
  visits: IMPORTED_LACKS.visits,
  bounce_rate: IMPORTED_LACKS.visits | IMPORTED_LACKS.bounces,
  avg_duration: IMPORTED_LACKS.visits | IMPORTED_LACKS.duration,
};

/**
 * The plan's aggregates that every imported row read carries (an export may lack some numbers: Fathom's has no
 * visitors). A number some row in the range lacks is recorded hits only over the whole range, not summed over the
 * rows that have it: a partial sum would pass for the whole.
 */
export function importedAnswers(plan: ImportedPlan, days: readonly ImportedDaySums[]): ReadonlySet<Aggregate> {
  const lacks = days.reduce((bits, d) => bits | d.lacks, 0);
  return new Set([...plan.answers].filter((a) => (lacks & (NEEDS[a] ?? 0)) === 0));
}

/**
 * The query recorded hits are read with before imported days are added: every group (no limit), and the visits
 * the ratios divide by even when not asked for. Run it with a ReportCompiler in `parts` mode.
 */
export function recordedPartsQuery(q: ReportQuery): ReportQuery {
  const { limit: _limit, ...unlimited } = q;
  const needsVisits = q.aggregates.some((a) => RATIOS.has(a)) && !q.aggregates.includes('visits');
  return { ...unlimited, aggregates: needsVisits ? [...q.aggregates, 'visits'] : q.aggregates };
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

type Row = Record<string, string | null>;

/** Counts, and the parts of the ratios (bounced visits, duration in milliseconds, engagement's sums and pairs). */
interface Parts {
  pageviews: bigint;
  visits: bigint;
  visitors: bigint;
  conversions: bigint;
  bounces: bigint;
  durationMs: bigint;
  scrollSum: bigint;
  scrollPairs: bigint;
  engagedMs: bigint;
  engagedPairs: bigint;
  /** Numbers imported days never carry, from recorded rows as the database wrote them. */
  uniques: bigint;
  unique_conversions: bigint;
  value: bigint;
}

/** A group's sums, recorded and imported apart: an aggregate imported days do not answer reads recorded ones only. */
interface Sums {
  field?: string;
  timestamp?: string;
  recorded: Parts;
  imported: Parts;
}

const noParts = (): Parts => ({
  pageviews: 0n, visits: 0n, visitors: 0n, conversions: 0n, bounces: 0n, durationMs: 0n, scrollSum: 0n, scrollPairs: 0n, engagedMs: 0n, engagedPairs: 0n,
  uniques: 0n, unique_conversions: 0n, value: 0n,
});

/** A number the database returned (bigint, number or decimal text) as an integer. */
export function integer(raw: unknown): bigint {
  if (raw === null || raw === undefined) return 0n;
  if (typeof raw === 'bigint') return raw;
  if (typeof raw === 'number') return BigInt(Math.round(raw));
  const text = String(raw);
  const dot = text.indexOf('.');
  return BigInt(dot < 0 ? text : text.slice(0, dot) || '0');
}

/** round_half_up(numerator / denominator), 0 when the denominator is 0: as the compiler rounds (roundedRatio). */
const rounded = (numerator: bigint, denominator: bigint) => (denominator === 0n ? 0n : (2n * numerator + denominator) / (2n * denominator));

/**
 * An aggregate of a group's sums as an integer (decimals scaled by 10^places, as formatAggregate reads them):
 * recorded plus imported when imported days answer it, recorded only otherwise (a ratio's parts alike); null for
 * an engagement aggregate over no pairs.
 */
function value(a: Aggregate, g: Sums, answers: ReadonlySet<Aggregate>): bigint | null {
  const r = g.recorded;
  const i = g.imported;
  const s: Parts = answers.has(a)
    ? { pageviews: r.pageviews + i.pageviews, visits: r.visits + i.visits, visitors: r.visitors + i.visitors, conversions: r.conversions + i.conversions,
        bounces: r.bounces + i.bounces, durationMs: r.durationMs + i.durationMs, scrollSum: r.scrollSum + i.scrollSum, scrollPairs: r.scrollPairs + i.scrollPairs,
        engagedMs: r.engagedMs + i.engagedMs, engagedPairs: r.engagedPairs + i.engagedPairs, uniques: r.uniques, unique_conversions: r.unique_conversions, value: r.value }
    : r;
  switch (a) {
    case 'pageviews':
      return s.pageviews;
    case 'visits':
      return s.visits;
    case 'visitors':
      return s.visitors;
    case 'conversions':
      return s.conversions;
    case 'avg_duration':
      return rounded(s.durationMs, s.visits * 10n);
    case 'bounce_rate':
      return rounded(s.bounces * 10_000n, s.visits);
    case 'uniques':
      return s.uniques;
    case 'unique_conversions':
      return s.unique_conversions;
    case 'value':
      return s.value;
    // As plans/engagement.ts rounds recorded pairs alone: percent and seconds, scaled by 100.
    case 'scroll_depth':
      return s.scrollPairs === 0n ? null : rounded(s.scrollSum * 100n, s.scrollPairs);
    case 'time_on_page':
      return s.engagedPairs === 0n ? null : rounded(s.engagedMs, s.engagedPairs * 10n);
  }
}

const compareBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));
const compareBig = (a: bigint, b: bigint) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Recorded rows of recordedPartsQuery (as the database returned them) plus the imported days, summed per group
 * for the aggregates in `answers` (importedAnswers; the others: recorded rows only), then ordered and limited as
 * docs/reports.md says: by the sort field, ties by timestamp ascending, then by the grouped field ascending.
 */
export function mergeImported(q: ReportQuery, recorded: readonly Record<string, unknown>[], days: readonly ImportedDaySums[], answers: ReadonlySet<Aggregate>): Row[] {
  const grouped = q.fieldGrouping.length > 0;
  const keyOf = (timestamp: string | undefined, field: string | undefined) => `${timestamp ?? ''}\0${field ?? ''}`;
  const groups = new Map<string, Sums>();
  const group = (timestamp: string | undefined, field: string | undefined) => {
    const key = keyOf(timestamp, field);
    let s = groups.get(key);
    if (!s) {
      s = { ...(field !== undefined ? { field } : {}), ...(timestamp !== undefined ? { timestamp } : {}), recorded: noParts(), imported: noParts() };
      groups.set(key, s);
    }
    return s;
  };
  const read = (row: Record<string, unknown>, a: Aggregate) => integer(row[aggregateAlias(a)]);
  for (const row of recorded) {
    const sums = group(q.dateGrouping ? String(row[TIMESTAMP_ALIAS]) : undefined, grouped ? String(row[fieldAlias(0)] ?? '') : undefined);
    const s = sums.recorded;
    s.pageviews += read(row, 'pageviews');
    s.visits += read(row, 'visits');
    s.visitors += read(row, 'visitors');
    s.conversions += read(row, 'conversions');
    // In parts mode these columns hold the numerators (ReportCompiler).
    s.bounces += read(row, 'bounce_rate');
    s.durationMs += read(row, 'avg_duration');
    s.scrollSum += read(row, 'scroll_depth');
    s.engagedMs += read(row, 'time_on_page');
    // One count of recorded pairs for both: each pair has a deepest scroll and an engaged time.
    const pairs = integer(row[ENGAGED_PAIRS]);
    s.scrollPairs += pairs;
    s.engagedPairs += pairs;
    s.uniques += read(row, 'uniques');
    s.unique_conversions += read(row, 'unique_conversions');
    s.value += read(row, 'value');
  }
  for (const d of days) {
    // A group only imported days have shows them in the aggregates they answer, the others 0 (recorded: none).
    const s = group(bucketOf(q, d.day), grouped ? d.value : undefined).imported;
    // An event's completions are stored as its pageviews (ImportedDay).
    if (q.entity === 'event') s.conversions += BigInt(d.pageviews);
    else s.pageviews += BigInt(d.pageviews);
    s.visits += BigInt(d.visits);
    s.visitors += BigInt(d.visitors);
    s.bounces += BigInt(d.bounces);
    s.durationMs += BigInt(d.visitDuration) * 1000n;
    s.scrollSum += BigInt(d.scrollSum);
    s.scrollPairs += BigInt(d.scrollPairs);
    s.engagedMs += BigInt(d.engagedMsSum);
    s.engagedPairs += BigInt(d.engagedPairs);
  }
  const out = [...groups.values()];
  // Without any grouping there is always one row of totals, zeros when nothing matched.
  if (!grouped && !q.dateGrouping && out.length === 0) out.push(group(undefined, undefined));
  const { field: sortField, direction } = q.sort;
  const sign = direction === 'asc' ? 1 : -1;
  const primary = (a: Sums, b: Sums) => {
    if (sortField === 'timestamp') return compareBytes(a.timestamp ?? '', b.timestamp ?? '');
    if (q.fieldGrouping.includes(sortField as never)) return compareBytes(a.field ?? '', b.field ?? '');
    const [x, y] = [value(sortField as Aggregate, a, answers), value(sortField as Aggregate, b, answers)];
    // Groups without engagement (null) come last whichever the direction, as the databases order NULLs.
    if (x === null || y === null) return x === y ? 0 : (x === null ? 1 : -1) * sign;
    return compareBig(x, y);
  };
  out.sort((a, b) => {
    const p = primary(a, b) * sign;
    if (p !== 0) return p;
    const t = compareBytes(a.timestamp ?? '', b.timestamp ?? '');
    return t !== 0 ? t : compareBytes(a.field ?? '', b.field ?? '');
  });
  // Key order as recorded rows have it: grouped field, timestamp, then aggregates.
  const shaped = out.map((s) => {
    const row: Row = {};
    if (grouped) row[q.fieldGrouping[0]!] = s.field ?? '';
    if (q.dateGrouping) row.timestamp = s.timestamp ?? '';
    for (const a of q.aggregates) row[a] = formatAggregate(a, value(a, s, answers));
    return row;
  });
  return q.limit !== undefined ? shaped.slice(0, q.limit) : shaped;
}
