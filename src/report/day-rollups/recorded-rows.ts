// A report's recorded rows with its closed UTC days read from their rollups: the valid builds' sums per value (and
// date bucket, or UTC hour) plus, from the hits, the rest of the range and the visits crossing a built day's
// midnight, as rows of the parts compiler, to be summed per group by mergeImported (imported.ts). Exact for the
// numbers rollups hold: pageviews add up over days, and so do visitors, each visitor id being one UTC day's
// (docs/reports.md, "Visitors"); a visit lying wholly inside one day is counted in that day's build alone, and every
// other visit of the range is counted from its hits, once.

import { utcDayStart } from '../../domain/time.js';
import { HOUR_FIELD, type DayBuild, type DayRollupStore } from '../../store/types.js';
import { valueConditions } from '../conditions.js';
import { Binder, DAY_MS, type CompiledQuery, type SqlDialect } from '../dialect.js';
import { GROUP_FIELDS, type Aggregate, type GroupField } from '../fields.js';
import type { HitScope, ReportQuery } from '../query.js';
import { aggregateAlias, fieldAlias, TIMESTAMP_ALIAS } from '../result-columns.js';
import { bucketOfDay, crossingWindows, hoursAlign, limitIntervals, localHourBucket, mergedWindows, uncoveredIntervals, wholeDays } from './days.js';

/** The numbers a build holds per field value: over all its day's pageviews... */
export const DAY_AGGREGATES = ['pageviews', 'visitors', 'visits', 'uniques', 'bounce_rate', 'avg_duration'] as const satisfies readonly Aggregate[];
/** ...these over the visits lying wholly inside the day only (bounce_rate and avg_duration as their parts). */
export const VISIT_AGGREGATES = ['visits', 'uniques', 'bounce_rate', 'avg_duration'] as const satisfies readonly Aggregate[];
const ROLLUP_AGGREGATES: ReadonlySet<Aggregate> = new Set(DAY_AGGREGATES);
const COUNTS_VISITS: ReadonlySet<Aggregate> = new Set(VISIT_AGGREGATES);

/** The fields whose values a build holds: those of the hit itself (a visit's entry and exit pages are not). */
export const ROLLUP_FIELDS = (Object.keys(GROUP_FIELDS) as GroupField[]).filter((f) => GROUP_FIELDS[f].table === 'hit');
const IS_ROLLUP_FIELD: ReadonlySet<string> = new Set(ROLLUP_FIELDS);

/** At most this many parts of a range are read from the hits, each a query (more: fewer days from rollups). */
const MAX_HIT_INTERVALS = 6;

/**
 * The hit field whose rows of a build answer a report, '' for the totals (HOUR_FIELD by hour), or undefined when
 * builds cannot: the aggregates builds hold (DAY_AGGREGATES), by at most one hit field (by hour: none, unfiltered),
 * filtered on at most that one field. A build's rows of a field are one value each, so filters on it pick whole
 * rows; summed over several values, pageviews add up, but nothing else does (a visitor or a visit may view several pages), so filters
 * without the grouping must pin one value unless only pageviews are asked for.
 */
export function rollupField(q: ReportQuery): string | undefined {
  if (
    q.entity !== 'pageview' ||
    q.aggregates.length === 0 ||
    !q.aggregates.every((a) => ROLLUP_AGGREGATES.has(a)) ||
    q.props?.length ||
    q.propGroup !== undefined ||
    q.funnel !== undefined ||
    q.fieldGrouping.length > 1 ||
    !q.fieldGrouping.every((f) => IS_ROLLUP_FIELD.has(f))
  ) {
    return undefined;
  }
  // By hour, the totals only (a build's hours are not split by field).
  if (q.dateGrouping === 'hour') return q.fieldGrouping.length === 0 && q.filters.length === 0 ? HOUR_FIELD : undefined;
  const grouped = q.fieldGrouping[0];
  const filtered = [...new Set(q.filters.map((f) => f.property))];
  if (filtered.length === 0) return grouped ?? '';
  const [property] = filtered;
  if (filtered.length > 1 || !IS_ROLLUP_FIELD.has(property!)) return undefined;
  if (grouped !== undefined) return grouped === property ? grouped : undefined;
  const pinned = q.filters.every((f) => f.operator === 'is' && f.value === q.filters[0]!.value);
  return pinned || (q.aggregates.length === 1 && q.aggregates[0] === 'pageviews') ? property : undefined;
}

export interface RecordedRowsDeps {
  rollups: Pick<DayRollupStore, 'validBuilds' | 'sums'>;
  /** The store's dialect, which writes the filters' conditions on a build's values as on the hits' columns. */
  dialect: SqlDialect;
  /** The parts compiler's statement for a query (ReportCompiler.aggregation in parts mode). */
  compile: (q: ReportQuery) => CompiledQuery;
  run: (c: CompiledQuery) => Promise<Record<string, unknown>[]>;
}

/**
 * The recorded rows of `q` (without its limit) with the valid builds of its whole UTC days in place of their hits;
 * undefined when no build answers any of its days (or one was not found whole): the caller reads the hits.
 */
export async function recordedRowsWithRollups(q: ReportQuery, deps: RecordedRowsDeps): Promise<Record<string, unknown>[] | undefined> {
  const field = rollupField(q);
  if (field === undefined) return undefined;
  // The filters on the field's values, written as for the hits' column; values inlined (the dialects of stores
  // with rollups bind none).
  const b = new Binder(deps.dialect);
  const valueWhere = valueConditions(deps.dialect, 'value', q.filters, b).join(' AND ');
  if (b.params.length > 0) return undefined;
  const fromMs = q.from.getTime();
  const untilMs = q.until.getTime();
  const { first, afterLast } = wholeDays(fromMs, untilMs);
  if (first === afterLast) return undefined;
  const hourly = q.dateGrouping === 'hour';
  const grouping = q.dateGrouping === 'hour' ? undefined : q.dateGrouping;
  const buckets = new Map<string, string>();
  const builds: DayBuild[] = [];
  for (const build of await deps.rollups.validBuilds(q.siteId, first, afterLast)) {
    if (hourly && !hoursAlign(build.day, q.timezone)) continue;
    if (grouping) {
      const bucket = bucketOfDay(build.day, grouping, q.timezone);
      if (bucket === undefined) continue;
      buckets.set(build.day, bucket);
    }
    builds.push(build);
  }
  const kept = new Set(limitIntervals(fromMs, untilMs, builds.map((b) => b.day), MAX_HIT_INTERVALS));
  const used = builds.filter((b) => kept.has(b.day));
  if (used.length === 0) return undefined;

  const { limit: _limit, ...unlimited } = q;
  // A part of the answer: some of its aggregates, in any order (mergeImported orders the sums).
  const part = (aggregates: Aggregate[], rest: Partial<ReportQuery>) =>
    deps.run(deps.compile({ ...unlimited, aggregates, sort: { field: aggregates[0]!, direction: 'desc' }, ...rest }));
  const intervals = uncoveredIntervals(fromMs, untilMs, used.map((b) => b.day));
  // Pageviews and visitors of the days without a build, an interval at a time...
  const counted = q.aggregates.filter((a) => !COUNTS_VISITS.has(a));
  const parts =
    counted.length === 0
      ? []
      : intervals.map(([from, until]) => part(counted, { from: new Date(from), until: new Date(until) }));
  // ...and the visits not wholly inside a build's day, in one statement over those days and the crossing visits'
  // hits in the builds' days.
  const visitAggregates = q.aggregates.filter((a) => COUNTS_VISITS.has(a));
  if (visitAggregates.length > 0) {
    const crossed = used
      .map((b) => ({ build: b, windows: crossingWindows(utcDayStart(b.day), utcDayStart(b.day) + DAY_MS, b) }))
      .filter((c) => c.windows.length > 0);
    if (intervals.length > 0 || crossed.length > 0) {
      // Every visit counted here has all its hits in these intervals and windows, except those crossing the
      // range's ends: the others' facts come from their hits.
      const scope: HitScope = {
        intervals: intervals.map(([from, until]) => [new Date(from), new Date(until)] as const),
        crossing: { windows: mergedWindows(crossed.flatMap((c) => c.windows)), visits: { builds: crossed.map((c) => c.build) } },
        factsFromHits: 'inside',
      };
      parts.push(part(visitAggregates, { scope }));
    }
  }
  // The builds' sums are read beside the hits' parts. When a statement does not find every build (a replica that
  // has not yet received one), the report reads the hits.
  let sums: Awaited<ReturnType<typeof deps.rollups.sums>>;
  let read: Record<string, unknown>[][];
  try {
    [sums, ...read] = await Promise.all([deps.rollups.sums(q.siteId, field, used, grouping ? buckets : undefined, valueWhere || undefined), ...parts]);
  } catch (err) {
    if (deps.dialect.missingBuild(err)) return undefined;
    throw err;
  }
  if (!sums) return undefined;
  const rows: Record<string, unknown>[] = sums.map((s) => ({
    ...(q.fieldGrouping.length > 0 ? { [fieldAlias(0)]: s.value } : {}),
    ...(grouping ? { [TIMESTAMP_ALIAS]: s.bucket } : {}),
    // By hour, each row is one UTC hour of a build: the zone's hour it is (hoursAlign).
    ...(hourly ? { [TIMESTAMP_ALIAS]: localHourBucket(s.value, q.timezone) } : {}),
    [aggregateAlias('pageviews')]: s.pageviews,
    [aggregateAlias('visitors')]: s.visitors,
    [aggregateAlias('visits')]: s.visits,
    [aggregateAlias('uniques')]: s.uniques,
    // As the parts compiler writes the ratios: bounced visits, durations in ms.
    [aggregateAlias('bounce_rate')]: s.bounces,
    [aggregateAlias('avg_duration')]: s.durationMs,
  }));
  return rows.concat(...read);
}
