// The `visitors` aggregate of a grouped report sorted by visitors, most first, with a limit (every breakdown card of
// the dashboard): exact counts for the groups that can be listed only, found with each group's pageviews as a bound.
//
// A group's visitors are at most its selected pageviews. Exact visitors of the `limit` groups with the most pageviews
// give T, the limit-th largest of them: the limit-th largest visitor count of all groups is at least T, so every group
// that can be listed (ties included) has at least T visitors, hence at least T pageviews. Counting exactly the first
// groups and the others with T pageviews or more therefore lists the same rows, in the same order, as counting every
// group; the compiler's join to the other aggregates keeps only these groups. On skewed traffic (most sites) that is
// a few groups' pageviews instead of every (group, visitor) pair (docs/benchmarks.md, "Reports").
//
// Counted in one pass each, not in slices of visitor ids (visitor-days.ts): each pass is first checked to read at
// most TOP_GROUP_ROWS pageviews (the compiler's topGroupRows), which bounds its hash table as slices do. Past it the
// statement fails with VISITORS_OVER_BOUND (before counting), and the engine runs the report without this plan
// (CompiledQuery.fallback): few groups holding most pageviews (browsers, countries) are counted in slices.

import type { Binder, SqlDialect } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { aggregateAlias } from '../result-columns.js';
import { Subqueries, type PlanContext } from './plan-sql.js';
import { typedHits } from './typed-hits.js';

/**
 * Pageviews one exact pass may read by default: three slices' worth (engine.ts, HITS_PER_VISITOR_SLICE). The ten top
 * pages of the 10 M benchmark (2.57 M pageviews) took DuckDB to 180 MiB at most, against 153 MiB for every page
 * counted in twelve slices (docs/benchmarks.md, "Memory: measurements behind the code").
 */
export const TOP_GROUP_ROWS = 3_750_000;

/** The message of the error a statement raises when a pass would read more than TOP_GROUP_ROWS pageviews. */
export const VISITORS_OVER_BOUND = 'plumb: the top groups have too many pageviews to count their visitors in one pass';

/**
 * Whether `q`'s visitors are counted for the listable groups only (the plan above): on a store large enough to count
 * grouped visitors in slices. On a smaller one the single pass costs less (20,000 pageviews: 6 against 11 ms).
 */
export function countsTopVisitors(d: SqlDialect, q: ReportQuery): boolean {
  return (
    // Subqueries named once: inlined (ClickHouse), each bound would be computed again where it is read.
    d.commonTableExpressions &&
    (q.visitorSlices ?? 1) > 1 &&
    q.limit !== undefined &&
    q.sort.field === 'visitors' &&
    q.sort.direction === 'desc' &&
    q.propGroup === undefined &&
    (q.fieldGrouping.length > 0 || q.dateGrouping !== undefined)
  );
}

/**
 * Per listable group (see above): its keys, as every plan writes them, its exact visitors and, with `pageviews`,
 * its pageviews (the bound's own counts: the report needs no other pass for them).
 */
export function topVisitors(ctx: PlanContext, q: ReportQuery, b: Binder, pageviews = false): string {
  const d = ctx.dialect;
  const { keys, where, join, keyColumn } = typedHits(ctx, q, b, 'pageview');
  const limit = b.value(q.limit!);
  const w = new Subqueries(d);
  const aliases = keys.map((k) => k.alias);
  const keyList = aliases.join(', ');
  const groupKeys = keys.length === 1 ? aliases[0]! : `(${keyList})`;
  const order = `n DESC, ${aliases.map((a) => `${a} ASC`).join(', ')}`;
  const selected = (more: string) =>
    `SELECT ${[...keys.map((k) => `${k.expr} AS ${k.alias}`), 'h.visitor_id AS visitor_id'].join(', ')} FROM ${d.table('hits', 'h')}${join}` +
    ` WHERE ${[...where, more].join(' AND ')}`;
  // Each group's distinct visitors, the groups (`groups`, with a number `r` each) joined to the hits and the pairs
  // kept by number: a smaller and quicker hash table than pairs of texts (199 against 167 MiB, 366 against 331 ms
  // for the ten top pages of 10 M pageviews, docs/benchmarks.md). `guard` fails the statement first if over the bound.
  const exact = (groups: string, guard: string) =>
    `SELECT ${aliases.map((a) => `g.${a} AS ${a}`).join(', ')}, x.v AS v FROM (SELECT r, count(*) AS v FROM (SELECT DISTINCT g.r AS r, h.visitor_id AS visitor_id` +
    ` FROM ${d.table('hits', 'h')}${join} JOIN ${w.ref(groups, 'g')} ON ${keys.map((k) => `g.${k.alias} = ${k.expr}`).join(' AND ')}` +
    ` WHERE ${[...where, `(SELECT ok FROM ${w.ref(guard)})`].join(' AND ')}) pairs GROUP BY r) x JOIN ${w.ref(groups, 'g')} ON g.r = x.r`;
  // Checked before a pass reads the hits: its groups' pageviews within TOP_GROUP_ROWS, else the statement fails.
  const withinBound = (groups: string) =>
    `SELECT CASE WHEN coalesce(sum(n), 0) > ${Math.floor(ctx.topGroupRows)} THEN ${d.raise(VISITORS_OVER_BOUND)} ELSE true END AS ok FROM ${w.ref(groups)}`;

  w.add('vt_pageviews', `SELECT ${keyList}, count(*) AS n FROM (${selected('true')}) p GROUP BY ${keyList}`, { materialized: true });
  w.add('vt_first', `SELECT ${keyList}, n, row_number() OVER (ORDER BY ${order}) AS r FROM ${w.ref('vt_pageviews')} ORDER BY ${order} ${d.limit(limit)}`, { materialized: true });
  w.add('vt_first_bound', withinBound('vt_first'), { materialized: true });
  w.add('vt_first_visitors', exact('vt_first', 'vt_first_bound'), { materialized: true });
  // T: the limit-th largest count among the first groups (0 when there are fewer groups: every group is first).
  const least = `(SELECT CASE WHEN count(*) = ${limit} THEN min(v) ELSE 0 END FROM ${w.ref('vt_first_visitors')})`;
  w.add(
    'vt_more',
    `SELECT ${keyList}, n, row_number() OVER () AS r FROM ${w.ref('vt_pageviews')}` +
      ` WHERE n >= ${least} AND ${groupKeys} NOT IN (SELECT ${keyList} FROM ${w.ref('vt_first')})`,
    { materialized: true },
  );
  w.add('vt_more_bound', withinBound('vt_more'), { materialized: true });
  w.add('vt_counted', `SELECT ${keyList}, v FROM ${w.ref('vt_first_visitors')} UNION ALL ${exact('vt_more', 'vt_more_bound')}`);
  const columns = [...keys.map((k) => keyColumn(k, 'c')), `c.v AS ${aggregateAlias('visitors')}`];
  if (!pageviews) return `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('vt_counted', 'c')}`;
  const counts = `JOIN ${w.ref('vt_pageviews', 'n')} ON ${aliases.map((a) => `n.${a} = c.${a}`).join(' AND ')}`;
  return `${w.with()}SELECT ${[...columns, `n.n AS ${aggregateAlias('pageviews')}`].join(', ')} FROM ${w.ref('vt_counted', 'c')} ${counts}`;
}
