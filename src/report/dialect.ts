// SQL dialects for reports. The base class speaks DuckDB; another database is a subclass overriding only what
// differs (how values enter SQL, a few functions), as in Kysely. No report is ever written twice.

import { pageGoalPathLike } from '../domain/page-goal-paths.js';
import type { OffsetSpan } from '../domain/zoned-time.js';
import type { DateGrouping } from './fields.js';

/** A UTC day in milliseconds (a day of visitor ids: StoredHit). */
export const DAY_MS = 86_400_000;

export type SqlValue = string | number | boolean | null | Date | bigint;

/** SQL text and the values bound to its placeholders (empty for dialects that inline escaped literals). */
export interface CompiledQuery {
  sql: string;
  params: SqlValue[];
  /**
   * What to run instead when the statement fails with VISITORS_OVER_BOUND (plans/top-visitors.ts): the same report
   * without the plan that bounds its reads.
   */
  fallback?: CompiledQuery;
  /** Run first, in the same snapshot of the data: its one row fills some of `params` (plan-sql.ts, edgeVisitHits). */
  prelude?: Prelude;
}

/**
 * A statement whose one row gives values for parameters of the statement it comes before: each `fills` column, an
 * epoch in milliseconds or null, is bound as a timestamp at the 0-based index `param` of that statement's params.
 */
export interface Prelude {
  sql: string;
  params: SqlValue[];
  fills: readonly { column: string; param: number }[];
}

/** `c`'s parameters with the values its prelude's row gives (ReportEngine, before running `c`). */
export function filledParams(c: CompiledQuery, row: Record<string, unknown> | undefined): SqlValue[] {
  const params = [...c.params];
  for (const { column, param } of c.prelude?.fills ?? []) {
    const v = row && Object.hasOwn(row, column) ? row[column] : null;
    params[param] = v === null || v === undefined ? null : new Date(Number(v));
  }
  return params;
}

/** Collects the values of one query; `value()` is the only way a value from a request reaches SQL. */
export class Binder {
  readonly params: SqlValue[] = [];
  private before?: { binder: Binder; rows: string[]; columns: { part: number; column: string; param: number }[] };
  constructor(private readonly dialect: SqlDialect) {}
  value(v: SqlValue): string {
    return this.dialect.placeholder(v, this.params);
  }

  /**
   * A parameter whose value the prelude's row gives (CompiledQuery.prelude): `row` makes, with the prelude's own
   * binder, a one-row SELECT; each of `columns` (an epoch in ms or null) fills the placeholder returned for it.
   * Rows asked by several parts of a statement are joined into one prelude.
   */
  filledBy(columns: readonly string[], row: (b: Binder) => string): string[] {
    this.before ??= { binder: new Binder(this.dialect), rows: [], columns: [] };
    const part = this.before.rows.length;
    this.before.rows.push(row(this.before.binder));
    return columns.map((column) => {
      const placeholder = this.value(null);
      this.before!.columns.push({ part, column, param: this.params.length - 1 });
      return placeholder;
    });
  }

  /** The prelude filledBy() asked for, if any. */
  prelude(): Prelude | undefined {
    const b = this.before;
    if (!b) return undefined;
    const named = b.columns.map((c) => ({ ...c, as: `p${c.part}_${c.column}` }));
    return {
      sql: `SELECT ${named.map((c) => `p${c.part}.${c.column} AS ${c.as}`).join(', ')} FROM ${b.rows.map((r, i) => `(${r}) AS p${i}`).join(' CROSS JOIN ')}`,
      params: b.binder.params,
      fills: named.map((c) => ({ column: c.as, param: c.param })),
    };
  }

  /** The compiled query of `sql` over these values, with its prelude. */
  compiled(sql: string): CompiledQuery {
    const prelude = this.prelude();
    return prelude ? { sql, params: this.params, prelude } : { sql, params: this.params };
  }
}

/**
 * The visits a JOIN can match, as SQL already bound: the report's site, and conditions on the joined alias that
 * every matching visit meets (so filtering the joined table by them first changes no answer).
 */
export interface JoinScope {
  site: string;
  where: readonly string[];
  /** The conditions keep few of the site's visits (those at the edges of the range or of a bucket). */
  few?: boolean;
}

export class SqlDialect {
  readonly name: string = 'duckdb';
  /** Whether `WITH name AS (subquery)` exists; without it the compiler inlines each subquery where it is read. */
  readonly commonTableExpressions: boolean = true;
  /**
   * Whether `visitors` on a large store are counted in disjoint slices, one after another, and added up: slices of
   * time cut at UTC midnights (exact, because every visitor id is one UTC day's, StoredHit), grouped ones cut again by
   * visitor id where the range has few days (plans/visitor-days.ts). DuckDB holds every distinct (group, visitor)
   * pair of a slice in its hash table at once, so the slices bound the memory of the report that sets the server's
   * peak (top pages with visitors over 10 M pageviews: 520 MiB in one pass, 280 in four, 190 in eight;
   * docs/benchmarks.md, "Memory: measurements behind the code"), and smaller tables are faster. How many:
   * ReportEngine, by the store's size.
   */
  readonly slicesVisitors: boolean = true;
  /**
   * Whether `visitors` counted in one pass (a small store, or a dialect that does not slice) are counted per UTC day
   * and added up, in one statement: exact for the same reason as the slices, and smaller hash sets (ClickHouse). On
   * DuckDB the extra grouping cost more than it saved (browsers over 30 days: 866 against 374 ms in slices).
   */
  readonly visitorsByDay: boolean = false;
  /**
   * Whether values are bound parameters that a prelude may fill after compiling (CompiledQuery.prelude): DuckDB's
   * zone maps then skip the row groups a bound excludes, which a bound computed inside the statement does not do.
   */
  readonly preludes: boolean = true;

  /** DuckDB binds every value as a numbered parameter (numbered, so SQL may be assembled in any order). */
  placeholder(value: SqlValue, params: SqlValue[]): string {
    params.push(value);
    return `$${params.length}`;
  }

  /**
   * Local time of UTC timestamp column `ts` in the reporting zone, by adding the zone's offset for the span the
   * time falls in: plain arithmetic, so every dialect agrees to the second.
   */
  localTime(ts: string, spans: readonly OffsetSpan[], b: Binder): string {
    if (spans.length === 1 && spans[0]!.offsetMs === 0) return ts;
    if (spans.length === 1) return this.addSeconds(ts, b.value(spans[0]!.offsetMs / 1000));
    const cases = spans
      .slice(1)
      .reverse()
      .map((s) => `WHEN ${ts} >= ${b.value(new Date(s.from))} THEN ${b.value(s.offsetMs / 1000)}`)
      .join(' ');
    return this.addSeconds(ts, `(CASE ${cases} ELSE ${b.value(spans[0]!.offsetMs / 1000)} END)`);
  }

  addSeconds(ts: string, seconds: string): string {
    return `(${ts} + to_seconds(CAST(${seconds} AS BIGINT)))`;
  }

  /** The start of the bucket of local time `local` (grouped on as a timestamp: cheaper than text per row). */
  bucket(unit: DateGrouping, local: string): string {
    return `date_trunc('${unit}', ${local})`;
  }

  /** A bucket start as the API writes it, `YYYY-MM-DD HH:MM:SS` (applied to result rows only). */
  formatBucket(bucket: string): string {
    return `strftime(${bucket}, '%Y-%m-%d %H:%M:%S')`;
  }

  /** Case-insensitive LIKE with `\` as the escape character. */
  ilike(column: string, pattern: string): string {
    return `(${column} ILIKE ${pattern} ESCAPE '\\')`;
  }

  /**
   * Whether `column` matches the page path pattern `path` (with `*`, as pageGoalPathRegex reads it). LIKE: 5 times
   * as fast as the anchored expression on DuckDB (docs/benchmarks.md, "Analysis reports"); a newline, which the
   * expression's `.` does not cross, is ruled out apart.
   */
  pagePathMatch(column: string, path: string, b: Binder): string {
    // A pattern whose only `*` ends it (`/blog/*`) as a prefix test: DuckDB makes one of a literal LIKE pattern, not of
    // a bound one (10 M pathnames: 63 against 97 ms).
    const parts = path.split(/\*+/);
    if (parts.length === 2 && parts[1] === '') return `(starts_with(${column}, ${b.value(parts[0]!)}) AND strpos(${column}, chr(10)) = 0)`;
    return `(${column} LIKE ${b.value(pageGoalPathLike(path))} ESCAPE '\\' AND strpos(${column}, chr(10)) = 0)`;
  }

  /** RE2 search (not anchored), run by the database. */
  regexMatch(column: string, pattern: string): string {
    return `regexp_matches(${column}, ${pattern})`;
  }

  /** The value of custom property `key` of the hit `alias`, '' when it has none (rows before properties hold NULL lists). */
  propValue(alias: string, key: string): string {
    return `coalesce(${alias}.prop_values[list_position(${alias}.prop_keys, ${key})], '')`;
  }

  /** Whether hit `alias` carries custom property `key`. */
  hasProp(alias: string, key: string): string {
    return `coalesce(list_contains(${alias}.prop_keys, ${key}), false)`;
  }

  /** The custom property keys of the hits of `from` (with alias h) meeting `where`, one row (`k`) per key of each hit. */
  propKeyRows(from: string, where: readonly string[]): string {
    return `SELECT unnest(h.prop_keys) AS k FROM ${from} WHERE ${where.join(' AND ')}`;
  }

  /** A hostname column without its scheme. */
  domain(column: string): string {
    return `regexp_replace(${column}, '^[a-z]+://', '')`;
  }

  /** Milliseconds from `start` to `end`. */
  durationMs(start: string, end: string): string {
    return `date_diff('millisecond', ${start}, ${end})`;
  }

  /** Integer division rounding down (operands are never negative here). */
  intDiv(a: string, b: string): string {
    return `(${a}) // (${b})`;
  }

  /** A bound `YYYY-MM-DD` as a DATE, to compare with a DATE column. */
  date(value: string): string {
    return `CAST(${value} AS DATE)`;
  }

  /** A DATE column as `YYYY-MM-DD`. */
  dateText(column: string): string {
    return `strftime(${column}, '%Y-%m-%d')`;
  }

  /** The sum of an integer column as a 64-bit integer (DuckDB's sum of BIGINT is a HUGEINT). */
  sumInteger(column: string): string {
    return `CAST(sum(${column}) AS BIGINT)`;
  }

  /** Every bit set in any row of an integer column (NULL: rows from before the column, none set). */
  bitOrAll(column: string): string {
    return `CAST(bit_or(coalesce(${column}, 0)) AS INTEGER)`;
  }

  /** The row id of the table row behind `alias` (DuckDB's `rowid`; read only where commonTableExpressions). */
  rowId(alias: string): string {
    return `${alias}.rowid`;
  }

  /** Aggregate: `value` of the row with the least `by`. */
  argMin(value: string, by: string): string {
    return `arg_min(${value}, ${by})`;
  }

  /** The UTC day of the hits' time column `ts` as a whole number (days since 1970). */
  utcDayNumber(ts: string): string {
    return `CAST(epoch_ms(${ts}) // ${DAY_MS} AS BIGINT)`;
  }

  countDistinct(column: string): string {
    return `count(DISTINCT ${column})`;
  }

  /** Table references, with an alias when given: a dialect may need a modifier (e.g. ClickHouse's FINAL on visits). */
  table(name: 'hits' | 'visits' | 'imported_daily', alias?: string): string {
    return alias ? `${name} ${alias}` : name;
  }

  /**
   * `JOIN` and the visits table on its right (ClickHouse drops FINAL there, so it needs another form). `scope` is
   * what the compiler knows of the visits the JOIN can match; a dialect may narrow the table with it, DuckDB has
   * no need to (its hash join reads only what the query uses). Each visit matches at most one joined row.
   */
  joinVisits(alias: string, _scope: JoinScope): string {
    return `JOIN ${this.table('visits', alias)}`;
  }

  /** `JOIN` of a right side with at most one row per key (a subquery grouped by it). */
  joinOneRowEach(): string {
    return 'JOIN';
  }

  /** joinVisits() with its condition: the visit of `left`, a left-side `visit_id` column. */
  joinVisitsOn(alias: string, scope: JoinScope, left: string): string {
    return `${this.joinVisits(alias, scope)} ON ${alias}.visit_id = ${left}`;
  }

  /**
   * `SELECT v.visit_id` of the site's visits meeting `where` (conditions on alias `v`), for an IN. The compiler
   * asks only for few visits (those at the edges of the range or of a bucket), which a dialect may use.
   */
  visitIds(site: string, where: readonly string[], columns = 'v.visit_id'): string {
    return `SELECT ${columns} FROM ${this.table('visits', 'v')} WHERE ${[`v.site_id = ${site}`, ...where].join(' AND ')}`;
  }

  /**
   * `SELECT columns` (the ids) of the site's visits with pageviews in [from, until) that are not wholly inside it with
   * `whole` true (conditions on `v`), on `side`: 'start', those crossing its start and those inside failing `whole`;
   * 'end', those crossing its end (and not its start); 'both', all of them. Written as parts that each read the slice
   * of the visits table its zone maps find (visits are stored in start order, and `whole` fails in few row groups):
   * as one condition, every visit's row was read (21 against 3 ms at 10 M pageviews; docs/benchmarks.md, "How
   * reports are planned").
   */
  edgeVisitIds(site: string, from: string, until: string, whole: readonly string[], side: 'start' | 'end' | 'both' = 'both', columns = 'v.visit_id'): string {
    const base = ['v.pageviews > 0', `v.started_at < ${until}`, `v.last_seen_at >= ${from}`];
    const parts: string[] = [];
    if (side !== 'end') {
      parts.push(this.visitIds(site, [...base, `v.started_at < ${from}`], columns));
      if (whole.length > 0) parts.push(this.visitIds(site, [...base, `v.started_at >= ${from}`, `v.last_seen_at < ${until}`, `NOT (${whole.join(' AND ')})`], columns));
    }
    if (side !== 'start') parts.push(this.visitIds(site, [...base, `v.started_at >= ${from}`, `v.last_seen_at >= ${until}`], columns));
    return parts.join(' UNION ALL ');
  }

  /**
   * `SELECT` of the visit ids that day rollups' builds list as crossing their day, the builds given as
   * `(day, built_at, inserted, deleted)` tuples of bound values; the statement fails (missingBuild) where one of
   * the builds is not there, as on a replica that has not yet received it. Only stores that keep day rollups have it.
   */
  dayRollupCrossings(_site: string, _builds: readonly string[]): string {
    throw new Error(`the ${this.name} store keeps no day rollups`);
  }

  /** Whether `err` is a statement's dayRollupCrossings failing because a build was not there. */
  missingBuild(_err: unknown): boolean {
    return false;
  }

  /** The earliest of a timestamp column, as the engine reads it: a Date, or UTC text `YYYY-MM-DD HH:MM:SS[.mmm]`. */
  earliest(column: string): string {
    return `min(${column})`;
  }

  limit(n: string): string {
    return `LIMIT ${n}`;
  }

  /** An expression that fails the statement with `message` (a constant of Plumb's, never a request's text). */
  raise(message: string): string {
    return `error('${message.replace(/'/g, "''")}')`;
  }

  // Journeys (src/report/journeys.ts): lists of pathnames, 1-based as in SQL.

  /** Aggregate: the group's pages ordered by time, pages of the same instant by pathname (a fixed order). */
  timeOrderedPages(ts: string, page: string): string {
    // A plain list of (time, page) structs sorted afterwards (structs sort field by field: the same order) rather
    // than list(... ORDER BY ...), whose per-group sorting took 2.5-3 times as long (docs/benchmarks.md, "Analysis reports").
    return `list_transform(list_sort(list({'t': ${ts}, 'p': ${page}})), x -> x.p)`;
  }

  /** List column `list` without consecutive repeats (a reload is not a step). */
  collapseRepeats(list: string): string {
    return `list_filter(${list}, (x, i) -> i = 1 OR x <> ${list}[i - 1])`;
  }

  /** The first `n` elements of `list` (all when shorter). */
  listHead(list: string, n: string): string {
    return `${list}[1:${n}]`;
  }

  listLength(list: string): string {
    return `len(${list})`;
  }

  listFirst(list: string): string {
    return `${list}[1]`;
  }

  /** Element `index` (1-based) of a list of pathnames, '' past its end (a pathname is never empty). */
  listItem(list: string, index: string): string {
    return `coalesce(${list}[${index}], '')`;
  }

  /** An integer expression as a signed 64-bit integer: the branches of a UNION ALL name one type. */
  bigint(expr: string): string {
    return `CAST(${expr} AS BIGINT)`;
  }

  /** A FROM clause's addition repeating each row once per `name` = 0..max (an integer column named `name`). */
  depthsUpTo(max: string, name: string): string {
    return `CROSS JOIN (SELECT unnest(range(0, CAST(${max} AS BIGINT) + 1)) AS ${name}) AS ${name}s`;
  }

  /** What follows GROUP BY: at most `n` rows per value of `group` (first by `order`), ordered by group, then order. */
  topPerGroup(group: string, order: readonly string[], n: string): string {
    const by = order.join(', ');
    return `QUALIFY row_number() OVER (PARTITION BY ${group} ORDER BY ${by}) <= ${n} ORDER BY ${group}, ${by}`;
  }

  // Funnels (src/report/funnels.ts): each visit's matching hits as a sorted list of pairs, walked step by step.

  /** A timestamp column as integer epoch milliseconds. */
  epochMs(ts: string): string {
    return `epoch_ms(${ts})`;
  }

  /** Aggregate: the (key, second) pairs of the rows meeting `condition`, sorted by key then second (NULL without rows). */
  sortedPairs(key: string, second: string, condition: string): string {
    return `list_sort(list({'k': ${key}, 's': ${second}}) FILTER (WHERE ${condition}))`;
  }

  /** The key of a pair of sortedPairs. */
  pairKey(pair: string): string {
    return `struct_extract(${pair}, 'k')`;
  }

  /** The second value of a pair of sortedPairs. */
  pairSecond(pair: string): string {
    return `struct_extract(${pair}, 's')`;
  }

  /** The 1-based index of the first element `x` (at 1-based index `i`) of `list` meeting `condition`; 0 when none does. */
  firstIndexWhere(list: string, condition: string): string {
    return `coalesce(list_position(list_transform(${list}, lambda x, i: ${condition}), true), 0)`;
  }

  /** Aggregate: the values of the rows meeting `condition`, sorted (NULL without rows). */
  sortedValues(value: string, condition: string): string {
    return `list_sort(list(${value}) FILTER (WHERE ${condition}))`;
  }
}
