// The `visitors` aggregate per group: distinct visitor ids (each a visitor-day, see StoredHit) among the selected
// pageviews, counted apart from the other aggregates (a visit crossing midnight UTC has two visitor-days, so it is
// not a per-visit count). Visit-level groups and filters join each hit's visit. Sorted by visitors with a limit, only
// the groups that can be listed are counted (`topOnly`, plans/top-visitors.ts).

import type { Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { aggregateAlias } from '../result-columns.js';
import type { PlanContext } from './plan-sql.js';
import { topVisitors } from './top-visitors.js';
import { typedHits } from './typed-hits.js';

export function visitorDays(ctx: PlanContext, q: ReportQuery, b: Binder, topOnly = false): string {
  if (topOnly) return topVisitors(ctx, q, b);
  const d = ctx.dialect;
  const { keys, where, join, keyColumn: keyOf } = typedHits(ctx, q, b, 'pageview');
  const selected = [...keys.map((k) => `${k.expr} AS ${k.alias}`), 'h.visitor_id AS visitor_id'];
  const pageviews = (...more: string[]) =>
    `(SELECT ${selected.join(', ')} FROM ${d.table('hits', 'h')}${join} WHERE ${[...where, ...more].join(' AND ')}) p`;
  const visitors = aggregateAlias('visitors');
  if (keys.length === 0) return `SELECT ${d.countDistinct('p.visitor_id')} AS ${visitors} FROM ${pageviews()}`;
  const groupBy = (from: string) => ` GROUP BY ${keys.map((k) => `${from}.${k.alias}`).join(', ')}`;
  const slices = q.visitorSlices ?? 1;
  if (slices <= 1) {
    return `SELECT ${[...keys.map((k) => keyOf(k, 'p')), `${d.countDistinct('p.visitor_id')} AS ${visitors}`].join(', ')} FROM ${pageviews()}${groupBy('p')}`;
  }
  // Disjoint slices of visitor ids, counted one after another and added up (see SqlDialect.slicesVisitors). The
  // slice is chosen where the hits are read: DuckDB would otherwise work out every group key before filtering.
  const counts = Array.from({ length: slices }, (_, i) =>
    `SELECT ${keys.map((k) => `p.${k.alias} AS ${k.alias}`).join(', ')}, ${d.countDistinct('p.visitor_id')} AS n` +
    ` FROM ${pageviews(`h.visitor_id % ${slices} = ${i}`)}${groupBy('p')}`,
  );
  return `SELECT ${[...keys.map((k) => keyOf(k, 's')), `${d.sumInteger('s.n')} AS ${visitors}`].join(', ')} FROM (${counts.join(' UNION ALL ')}) s${groupBy('s')}`;
}
