// The engagement aggregates per group, `scroll_depth` and `time_on_page`: from the tracker's engagement hits, each
// (visit, page) pair's deepest scroll and summed engaged time, then their means. Counted apart from the other
// aggregates (engagement hits are not pageviews) and left-joined to them on the group keys by the compiler.

import type { Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { aggregateAlias } from '../result-columns.js';
import { roundedRatio, type PlanContext } from './plan-sql.js';
import { typedHits } from './typed-hits.js';

/** The column of the engagement subquery counting its (visit, page) pairs: 0 or absent, the group had none. */
export const ENGAGED_PAIRS = 'engaged_pairs';

/**
 * Per group: the pairs, the mean of their deepest scroll (percent, scaled by 100) and the mean of their engaged
 * time (seconds, scaled by 100), both rounded half up with integers as the other decimals are (in parts mode,
 * their sums: percent and ms). The group keys are the report's fields and time bucket, written as the other plans
 * write them (the bucket formatted), so that the compiler joins on them. Filters read the engagement hit's own columns (it is enriched as its pageview was) and,
 * for entry and exit page, its visit's.
 */
export function engagement(ctx: PlanContext, q: ReportQuery, b: Binder, onlyGroupsOf?: string): string {
  const d = ctx.dialect;
  const { keys, where: all, join, keyColumn } = typedHits(ctx, q, b, 'engagement');
  // `onlyGroupsOf`: a FROM item with the groups wanted, as the report's field columns (the compiler's listed rows).
  const hitKeys = keys.length === 1 ? keys[0]!.expr : `(${keys.map((k) => k.expr).join(', ')})`;
  const where = onlyGroupsOf ? [...all, `${hitKeys} IN (SELECT ${keys.map((k) => k.alias).join(', ')} FROM ${onlyGroupsOf})`] : all;
  // By expression, not alias: with the visit joined, `visit_id` alone would name two columns.
  const pairKeys = [...keys.map((k) => k.expr), 'h.visit_id', 'h.pathname'];
  const pairs =
    `SELECT ${[...keys.map((k) => `${k.expr} AS ${k.alias}`), 'h.visit_id AS visit_id', 'h.pathname AS pathname'].join(', ')}, ` +
    `max(h.scroll_depth) AS deepest, sum(h.engaged_ms) AS engaged_ms FROM ${d.table('hits', 'h')}${join} ` +
    `WHERE ${where.join(' AND ')} GROUP BY ${pairKeys.join(', ')}`;
  const keyColumns = keys.map((k) => keyColumn(k, 'p'));
  // In parts mode the numerators, unrounded (percent; ms), over ENGAGED_PAIRS: imported days' sums are added to
  // them before dividing (src/report/imported.ts), as avg_duration's parts are (plan-sql.ts, visitFacts).
  const [scroll, time] = ctx.parts
    ? ['sum(p.deepest)', 'sum(p.engaged_ms)']
    : [roundedRatio(d, 'sum(p.deepest) * 100', 'count(*)'), roundedRatio(d, 'sum(p.engaged_ms)', 'count(*) * 10')];
  const columns = [...keyColumns, `count(*) AS ${ENGAGED_PAIRS}`, `${scroll} AS ${aggregateAlias('scroll_depth')}`, `${time} AS ${aggregateAlias('time_on_page')}`];
  const groupBy = keys.length > 0 ? ` GROUP BY ${keys.map((k) => `p.${k.alias}`).join(', ')}` : '';
  return `SELECT ${columns.join(', ')} FROM (${pairs}) p${groupBy}`;
}
