// The report SQL dialect for ClickHouse (18.16 and later): values inlined as escaped literals, times as Int64
// epoch milliseconds (see src/store/clickhouse/migrations.ts), visits read with FINAL, subqueries inlined.

import { pageGoalPathRegex } from '../domain/page-goal-paths.js';
import { atLeast, CLICKHOUSE_18_16, type ClickHouseFeatures } from '../store/clickhouse/features.js';
import { sqlLiteral } from '../store/clickhouse/literal.js';
import { CROSSING_FIELD } from '../store/types.js';
import { DAY_MS, SqlDialect, type Binder, type JoinScope, type SqlValue } from './dialect.js';
import type { DateGrouping } from './fields.js';

const START_OF: Record<DateGrouping, string> = {
  hour: 'toStartOfHour',
  day: 'toStartOfDay',
  month: 'toStartOfMonth',
  year: 'toStartOfYear',
};

/** The visit columns a report reads from a joined visit (the plans in src/report/plans/: visit facts, groups, filters). */
const JOINED_VISIT_COLUMNS = ['visit_id', 'started_at', 'last_seen_at', 'pageviews', 'entry_page', 'exit_page'];

/** FUNCTION_THROW_IF_VALUE_IS_NON_ZERO (395), a throwIf() that fired (dayRollupCrossings' guard): the HTTP client's code, or in the message (18.16, chdb). */
const THROW_IF_FIRED = { code: '395', message: /\bCode: 395\b/ };

export class ClickHouseDialect extends SqlDialect {
  override readonly name: string = 'clickhouse';
  // 18.16's WITH names expressions only, not subqueries.
  override readonly commonTableExpressions: boolean = false;
  // ClickHouse's memory is the database server's, and uniqExact's hash sets are compact: one pass.
  override readonly slicesVisitors: boolean = false;
  // One pass counting each UTC day's visitors apart, added up: 18.16 on 10 M pageviews, browsers 1.3 → 0.75 s,
  // a total 0.72 → 0.46 s (docs/benchmarks.md, "How reports are planned").
  override readonly visitorsByDay: boolean = true;
  // Values are inlined literals: nothing is left for a prelude to fill.
  override readonly preludes: boolean = false;

  /** `features`: the connected release's (ClickHouseEventStore.features); 18.16's SQL runs on every release. */
  constructor(readonly features: ClickHouseFeatures = CLICKHOUSE_18_16) {
    super();
  }

  /** No binding: the value's escaped literal (src/store/clickhouse/literal.ts), nothing pushed to `params`. */
  override placeholder(value: SqlValue, _params: SqlValue[]): string {
    return sqlLiteral(value);
  }

  override addSeconds(ts: string, seconds: string): string {
    return `(${ts} + ${seconds} * 1000)`;
  }

  /**
   * A DateTime in UTC (the local time's wall clock read as UTC). The zone is named in every call: the server's
   * own zone must never leak in. Months and years come back as Date, turned into DateTime so every unit compares
   * and formats alike.
   */
  override bucket(unit: DateGrouping, local: string): string {
    const start = `${START_OF[unit]}(toDateTime(intDiv(${local}, 1000), 'UTC'), 'UTC')`;
    return unit === 'month' || unit === 'year' ? `toDateTime(${start}, 'UTC')` : start;
  }

  /**
   * toString, not formatDateTime: its `%M` is the minute in 18.16 but the month's name from 23.4 on (MySQL's
   * meaning), while toString(DateTime, zone) writes `YYYY-MM-DD HH:MM:SS` in every release.
   */
  override formatBucket(bucket: string): string {
    return `toString(${bucket}, 'UTC')`;
  }

  /**
   * No ILIKE in 18.16: both sides lowered (lowerUTF8, as the reference lowers Unicode). LIKE reads `\` escapes
   * as DuckDB's ESCAPE '\' does (`\%`, `\_`, `\\` literal), which likePattern() relies on.
   */
  override ilike(column: string, pattern: string): string {
    return `(lowerUTF8(${column}) LIKE lowerUTF8(${pattern}))`;
  }

  /** The anchored expression, as the goals run it (regexMatch keeps `.` from crossing a newline). */
  override pagePathMatch(column: string, path: string, b: Binder): string {
    return this.regexMatch(column, b.value(pageGoalPathRegex(path)));
  }

  /**
   * match() is RE2, searched (not anchored), but 18.16 first scans the pattern for plain text itself: a pattern
   * it deems plain skips RE2 (a lone `\` or `\q` then matches instead of being invalid, `\Qab\E` reads as
   * text), and text it finds outside groups becomes a case-sensitive prefilter even under `(?i)`. Its scan gives
   * up on an alternative at the top level, so every pattern is sent as `(?-s)\b\B|pattern`: `\b\B` never
   * matches, `(?-s)` sets DuckDB's flag (`.` does not match a newline; ClickHouse's default does) for the whole
   * rest, and RE2 validates the pattern unchanged (a prefix cannot balance or escape anything the pattern opens).
   * 26.x hands every pattern to RE2 and keeps `(?i)` in its prefilter, so it gets only `(?-s)`: the alternative
   * would hide the pattern's literal text from its prefilter (3x slower on 10 M paths, docs/benchmarks.md).
   */
  override regexMatch(column: string, pattern: string): string {
    if (atLeast(this.features, 26)) return `match(${column}, concat('(?-s)', ${pattern}))`;
    return `match(${column}, concat('(?-s)\\\\b\\\\B|', ${pattern}))`;
  }

  override domain(column: string): string {
    return `replaceRegexpOne(${column}, '^[a-z]+://', '')`;
  }

  /** Times are epoch milliseconds: a plain difference. */
  override durationMs(start: string, end: string): string {
    return `(${end} - ${start})`;
  }

  /** OrZero: CASE evaluates every branch in ClickHouse, so the guarded division by zero would still throw. */
  override intDiv(a: string, b: string): string {
    return `intDivOrZero(${a}, ${b})`;
  }

  /** Exact, unlike uniq(): the API's counts are exact. */
  // Index 0 (no such key) reads the element type's default, ''.
  override propValue(alias: string, key: string): string {
    return `${alias}.prop_values[indexOf(${alias}.prop_keys, ${key})]`;
  }

  override hasProp(alias: string, key: string): string {
    return `has(${alias}.prop_keys, ${key})`;
  }

  override propKeyRows(from: string, where: readonly string[]): string {
    return `SELECT k FROM ${from} ARRAY JOIN h.prop_keys AS k WHERE ${where.join(' AND ')}`;
  }

  override countDistinct(column: string): string {
    return `uniqExact(${column})`;
  }

  override utcDayNumber(ts: string): string {
    return `intDiv(${ts}, ${DAY_MS})`;
  }

  /**
   * Visits with FINAL: one row per visit, its highest version. Not an argMax subquery: FINAL merges the
   * already sorted parts and keeps WHERE on the primary key (site_id), and 18.16 never moves WHERE to PREWHERE
   * under FINAL, so filters see only the latest versions (an explicit PREWHERE would not).
   */
  override date(value: string): string {
    return `toDate(${value})`;
  }

  override dateText(column: string): string {
    return `toString(${column})`;
  }

  override sumInteger(column: string): string {
    return `sum(${column})`;
  }

  /** Rows from before the column read its default, 0. */
  override bitOrAll(column: string): string {
    return `groupBitOr(${column})`;
  }

  override table(name: 'hits' | 'visits' | 'imported_daily', alias?: string): string {
    const ref = alias ? `${name} AS ${alias}` : name;
    return name === 'visits' ? `${ref} FINAL` : ref;
  }

  /**
   * 18.16 silently ignores FINAL on the right table of a JOIN (every version of a visit would join), but keeps
   * it in a subquery. The right side of a ClickHouse JOIN is built whole into an in-memory hash table before the
   * left side is read, so the subquery keeps only what can match: the report's site, the scope's conditions,
   * and the visit columns reports read. ANY: FINAL leaves one row per (site, visit), so ANY joins exactly what
   * ALL would, with a hash table of single rows instead of row lists (about 10% faster).
   */
  override joinVisits(alias: string, scope: JoinScope): string {
    // Named explicitly: 18.16 would name a column `v.x` after its qualified expression.
    const columns = JOINED_VISIT_COLUMNS.map((c) => `${alias}.${c} AS ${c}`).join(', ');
    return `${this.anyInnerJoin()} (${this.newestVisits(columns, alias, scope)}) AS ${alias}`;
  }

  /**
   * joinVisits() with its condition, the visit of `left` (a left-side `visit_id` column). On a cluster of 18.16 by
   * USING: when the left side is the Distributed hits table itself, 18.16 sends the shards `ON v.visit_id =
   * h.visit_id` without the aliases it names (the right side is a temporary table there, the left one the
   * node-local table), and the query fails; USING names no alias. Both sides call the column visit_id.
   */
  override joinVisitsOn(alias: string, scope: JoinScope, left: string): string {
    if (this.features.cluster && left.endsWith('.visit_id')) return `${this.joinVisits(alias, scope)} USING visit_id`;
    return `${this.joinVisits(alias, scope)} ON ${alias}.visit_id = ${left}`;
  }

  override joinOneRowEach(): string {
    return this.anyInnerJoin();
  }

  /**
   * A join on a right side with one row per key. 18.16's ANY INNER JOIN keeps every left row (with one right row
   * each), about 10% faster than ALL there. From 19.14 ANY INNER JOIN joins each right row at most once (most hits
   * of a visit would be dropped), so later releases get INNER JOIN, which joins the same rows here.
   */
  private anyInnerJoin(): string {
    return atLeast(this.features, 19, 14) ? 'INNER JOIN' : 'ANY INNER JOIN';
  }

  override visitIds(site: string, where: readonly string[], columns = 'v.visit_id'): string {
    return this.newestVisits(columns, 'v', { site, where, few: true });
  }

  /**
   * Every edge visit in one condition: each part would merge the site's visit versions again (newestVisits). One
   * side alone (asked only with a prelude, which this dialect has none of) as the base class writes it.
   */
  override edgeVisitIds(site: string, from: string, until: string, whole: readonly string[], side: 'start' | 'end' | 'both' = 'both', columns = 'v.visit_id'): string {
    if (side !== 'both') return super.edgeVisitIds(site, from, until, whole, side, columns);
    const inside = [`v.started_at >= ${from}`, `v.last_seen_at < ${until}`, ...whole].join(' AND ');
    return this.visitIds(site, ['v.pageviews > 0', `v.started_at < ${until}`, `v.last_seen_at >= ${from}`, `NOT (${inside})`], columns);
  }

  /**
   * The ids and the builds' totals rows in one read: on a replicated cluster this subquery may go to another replica
   * than the one that named the builds, and one without a build would list none of its visits. A build is one part
   * (ClickHouseDayRollups.insertBuild), so a replica that has its totals row has its ids: every totals row found,
   * or the statement fails (throwIf's code 395, missingBuild) and the report reads the hits.
   */
  override dayRollupCrossings(site: string, builds: readonly string[]): string {
    return (
      `SELECT arrayJoin(c.ids) FROM (SELECT groupArrayIf(toUInt64OrZero(value), field = ${sqlLiteral(CROSSING_FIELD)}) AS ids, ` +
      `countIf(field = '') AS found FROM day_rollups WHERE site_id = ${site} AND field IN (${sqlLiteral(CROSSING_FIELD)}, '')` +
      ` AND (day, built_at, inserted, deleted) IN (${builds.join(', ')})) c WHERE throwIf(c.found != ${builds.length}) = 0`
    );
  }

  override missingBuild(err: unknown): boolean {
    const e = err as { code?: unknown; message?: unknown } | undefined;
    return e?.code === THROW_IF_FIRED.code || THROW_IF_FIRED.message.test(String(e?.message ?? '').slice(0, 4000));
  }

  /**
   * `columns` of the site's visits whose newest version meets `scope.where`. The WHERE applies after FINAL (to
   * newest versions only, see table()), so FINAL first merges every version of the site's visits: about 0.1 µs
   * a row, most of a report's time on millions of visits. When the conditions keep few visits, a PREWHERE first
   * narrows the merge to the ids of visits with any version meeting them, found by a PREWHERE of the conditions
   * themselves over every version, without FINAL (an id per matching version; the set keeps each once). That
   * drops only whole visits none of whose versions qualify, so the newest version of every kept visit is still
   * there for FINAL to pick and the WHERE to judge. Without FINAL the pass merges nothing: the 181 edge visits of
   * 30 days at 10 M pageviews in 16 ms against 99 with it (26.7; docs/benchmarks.md, "Reports on ClickHouse").
   * With many visits kept, the extra pass costs more than it saves.
   */
  private newestVisits(columns: string, alias: string, scope: JoinScope): string {
    const where = [`${alias}.site_id = ${scope.site}`, ...scope.where].join(' AND ');
    const ids = `SELECT ${alias}.visit_id FROM visits AS ${alias} PREWHERE ${where}`;
    const prewhere = scope.few ? ` PREWHERE ${alias}.visit_id IN (${ids})` : '';
    return `SELECT ${columns} FROM ${this.table('visits', alias)}${prewhere} WHERE ${where}`;
  }

  // Journeys on 18.16, which has no window functions: arrays of (time, page) tuples, sorted per visit.

  /** Tuples sort by time, then pathname: the same fixed order as DuckDB's. */
  override timeOrderedPages(ts: string, page: string): string {
    return `arrayMap(t -> tupleElement(t, 2), arraySort(groupArray((${ts}, ${page}))))`;
  }

  /** Each page against the one before it ('' before the first: a pathname is never empty). */
  override collapseRepeats(list: string): string {
    return `arrayFilter((x, prev) -> x != prev, ${list}, arrayPushFront(arrayPopBack(${list}), ''))`;
  }

  override listHead(list: string, n: string): string {
    return `arraySlice(${list}, 1, ${n})`;
  }

  override listLength(list: string): string {
    return `length(${list})`;
  }

  /** Past the end arrayElement gives the type's default, '' for String. */
  override listItem(list: string, index: string): string {
    return `arrayElement(${list}, ${index})`;
  }

  override bigint(expr: string): string {
    return `toInt64(${expr})`;
  }

  override depthsUpTo(max: string, name: string): string {
    return `ARRAY JOIN range(toUInt8(${max} + 1)) AS ${name}`;
  }

  /** LIMIT BY: the top rows of every group in one sort, without a window. */
  override topPerGroup(group: string, order: readonly string[], n: string): string {
    return `ORDER BY ${group}, ${order.join(', ')} LIMIT ${n} BY ${group}`;
  }

  // Funnels: (key, visitor) tuples sorted per visit, walked with arrayFirstIndex.

  /** Times are epoch milliseconds already. */
  override epochMs(ts: string): string {
    return ts;
  }

  /** Tuples sort by their elements in order (18.16 too); no rows give []. */
  override sortedPairs(key: string, second: string, condition: string): string {
    return `arraySort(groupArrayIf((${key}, ${second}), ${condition}))`;
  }

  override pairKey(pair: string): string {
    return `tupleElement(${pair}, 1)`;
  }

  override pairSecond(pair: string): string {
    return `tupleElement(${pair}, 2)`;
  }

  /**
   * 18.16 finds a column the lambda reads from the enclosing row only when that row is selected whole
   * (`SELECT *, …`), which is how src/report/funnels.ts writes each step.
   */
  override firstIndexWhere(list: string, condition: string): string {
    return `arrayFirstIndex((x, i) -> ${condition}, ${list}, arrayEnumerate(${list}))`;
  }

  override sortedValues(value: string, condition: string): string {
    return `arraySort(groupArrayIf(${value}, ${condition}))`;
  }

  /** UTC text with milliseconds (a DateTime would drop them); NULL without rows, as DuckDB's min(). */
  override earliest(column: string): string {
    const first = `min(${column})`;
    return (
      `if(count() = 0, NULL, concat(toString(toDateTime(intDiv(${first}, 1000), 'UTC')), '.', ` +
      `substring(toString(1000 + ${first} % 1000), 2, 3)))`
    );
  }
}
