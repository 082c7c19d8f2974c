// What every plan's SQL is built from: the compiler's settings, the named subqueries of one statement, and the
// visit facts (average duration, bounce rate) computed the same way wherever a plan reads visits.

import type { Binder, SqlDialect } from '../dialect.js';

/** What a plan is built for. */
export interface PlanContext {
  readonly dialect: SqlDialect;
  /**
   * avg_duration and bounce_rate come out as their unrounded numerators (durations in milliseconds, bounced
   * visits), to be added to imported days' before dividing (src/report/imported.ts); the denominator is the
   * `visits` aggregate of the same row. scroll_depth and time_on_page come out as sums beside their pair counts
   * (plans/engagement.ts).
   */
  readonly parts: boolean;
  /** Pageviews one pass counting the visitors of a report's top groups may read (plans/top-visitors.ts). */
  readonly topGroupRows: number;
}

/**
 * The named subqueries of one statement: a WITH clause, or, for a dialect without common table expressions
 * (ClickHouse 18.16 has WITH for expressions only), each subquery inlined wherever it is read.
 */
export class Subqueries {
  private readonly defined = new Map<string, string>();
  private readonly kept = new Set<string>();
  constructor(private readonly dialect: SqlDialect) {}

  /**
   * Defines `name` (its SQL may read earlier names). `materialized`: computed once and kept while the statement
   * runs, for a small result that several parts read (where subqueries are inlined, each reading computes it).
   */
  add(name: string, sql: string, { materialized = false }: { materialized?: boolean } = {}): void {
    this.defined.set(name, sql);
    if (materialized) this.kept.add(name);
  }

  /** A FROM item reading `name`, under `alias` when given. */
  ref(name: string, alias?: string): string {
    if (!this.dialect.commonTableExpressions) return `(${this.defined.get(name)!}) ${alias ?? name}`;
    return alias ? `${name} ${alias}` : name;
  }

  /**
   * What the statement starts with: the WITH clause, or nothing when inlined. NOT MATERIALIZED: DuckDB otherwise
   * may store a subquery read twice, and the page plan's selection of every pageview in the range (10 M rows
   * over a month of a big site) took 272 MiB of memory and made its report twice as slow as reading it twice.
   */
  with(): string {
    if (!this.dialect.commonTableExpressions || this.defined.size === 0) return '';
    return `WITH ${[...this.defined].map(([name, sql]) => `${name} AS ${this.kept.has(name) ? '' : 'NOT '}MATERIALIZED (${sql})`).join(', ')} `;
  }
}

/**
 * `SELECT v.visit_id` of the site's visits with pageviews in the range whose first-view flags (`first_view`: a
 * pageview is its visit's first view of its page) cannot be read alone: visits crossing the range's ends, whose flags
 * were given up (`paths_exact`), or failing `alsoWhole` (conditions on `v`, such as one time bucket). In every other
 * visit the flagged pageviews are the first of their pages (plan 5, pages.ts; a funnel's first step, funnels.ts).
 */
export function inexactFirstViews(d: SqlDialect, site: string, from: string, until: string, alsoWhole: readonly string[] = []): string {
  return d.edgeVisitIds(site, from, until, ['v.paths_exact', ...alsoWhole]);
}

/** The report's site and range as the statement's bound SQL (the prelude binds their values again). */
export interface BoundRange {
  site: string;
  from: string;
  until: string;
}

/**
 * The hits of `q`'s range's edge visits (SqlDialect.edgeVisitIds with `whole`) as SQL: `hits(time, visitIds)` makes a
 * SELECT of the hits in the range meeting the condition `time` ('' for none) whose visit is among `visitIds`. On
 * DuckDB these are two SELECTs, UNION ALL (their visits are disjoint): the hits of the visits crossing the range's
 * start or failing `whole`, before the latest end among them, and those of the visits crossing its end, from the
 * earliest start among them (a visit's start and end are its first and last hit). DuckDB then reads the hits
 * table's row groups around the range's ends only, where the visit ids alone had it read every hit of the range
 * (41 against 7 ms at 10 M pageviews; docs/benchmarks.md, "How reports are planned"). The two bounds are parameters
 * a prelude fills, run in the same snapshot (Binder.filledBy): bounds computed inside the statement skip no row
 * group. Two ranges, not one condition with OR: with bounds that skip little (a visit crossing the start that lasts
 * days), DuckDB judged the OR selective and built its join on the hits (454 against 45 ms). `whole` takes no
 * parameters (the prelude binds its own). ClickHouse, whose values are inlined, gets one SELECT without bounds.
 */
export function edgeVisitHits(
  d: SqlDialect,
  b: Binder,
  q: { siteId: string; from: Date; until: Date },
  r: BoundRange,
  whole: readonly string[],
  ts: string,
  hits: (time: string, visitIds: string) => string,
): string {
  if (!d.preludes) return hits('', d.edgeVisitIds(r.site, r.from, r.until, whole));
  if (whole.some((c) => /\$\d/.test(c))) throw new Error('edgeVisitHits: `whole` must not read parameters');
  const [before, after] = b.filledBy(['before_ms', 'after_ms'], (e) => {
    const [site, start, end] = [e.value(q.siteId), e.value(q.from), e.value(q.until)];
    const ends = (side: 'start' | 'end') =>
      d.edgeVisitIds(site, start, end, whole, side, `${side === 'start' ? 1 : 0} AS at_start, v.started_at AS started_at, v.last_seen_at AS last_seen_at`);
    // Milliseconds: the latest end rounded up (a stored time may have microseconds), the earliest start down.
    // Without such visits, the range's own ends, which no hit read passes: a NULL bound left every row group read.
    return (
      `SELECT coalesce(${d.epochMs('max(x.last_seen_at) FILTER (WHERE x.at_start = 1)')} + 1, ${d.epochMs(start)}) AS before_ms,` +
      ` coalesce(${d.epochMs('min(x.started_at) FILTER (WHERE x.at_start = 0)')}, ${d.epochMs(end)}) AS after_ms` +
      ` FROM (${ends('start')} UNION ALL ${ends('end')}) AS x`
    );
  });
  return (
    `${hits(`${ts} < ${before}`, d.edgeVisitIds(r.site, r.from, r.until, whole, 'start'))}` +
    ` UNION ALL ${hits(`${ts} >= ${after}`, d.edgeVisitIds(r.site, r.from, r.until, whole, 'end'))}`
  );
}

/**
 * avg_duration and bounce_rate over rows that carry their visit's facts as `v.`: rounded half up with integers
 * only, so every database (and the reference implementation) agrees to the last digit, and sorting sees
 * exactly the value shown (hundredths of a second, ten-thousandths of a rate).
 */
export function visitFacts(ctx: PlanContext): Record<'avg_duration' | 'bounce_rate', string> {
  const d = ctx.dialect;
  if (ctx.parts) {
    return { avg_duration: `sum(${d.durationMs('v.started_at', 'v.last_seen_at')})`, bounce_rate: 'sum(CASE WHEN v.pageviews = 1 THEN 1 ELSE 0 END)' };
  }
  return {
    avg_duration: roundedRatio(d, `sum(${d.durationMs('v.started_at', 'v.last_seen_at')})`, 'count(*) * 10'),
    bounce_rate: roundedRatio(d, 'sum(CASE WHEN v.pageviews = 1 THEN 1 ELSE 0 END) * 10000', 'count(*)'),
  };
}

/** round_half_up(numerator / denominator) as an integer, 0 when the denominator is 0. */
export function roundedRatio(d: SqlDialect, numerator: string, denominator: string): string {
  return `CASE WHEN count(*) = 0 THEN 0 ELSE ${d.intDiv(`2 * ${numerator} + ${denominator}`, `2 * ${denominator}`)} END`;
}
