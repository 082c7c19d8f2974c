// The `visitors` aggregate per group: distinct visitor ids (each a visitor-day, see StoredHit) among the selected
// pageviews, counted apart from the other aggregates (a visit crossing midnight UTC has two visitor-days, so it is
// not a per-visit count). Visit-level groups and filters join each hit's visit. Sorted by visitors with a limit, only
// the groups that can be listed are counted (`topOnly`, plans/top-visitors.ts).

import type { Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { aggregateAlias } from '../result-columns.js';
import { daySlices } from './day-slices.js';
import type { PlanContext } from './plan-sql.js';
import { topVisitors } from './top-visitors.js';
import { typedHits } from './typed-hits.js';

export function visitorDays(ctx: PlanContext, q: ReportQuery, b: Binder, topOnly = false): string {
  if (topOnly) return topVisitors(ctx, q, b);
  const d = ctx.dialect;
  const { keys, where, join, keyColumn: keyOf } = typedHits(ctx, q, b, 'pageview');
  const selected = [...keys.map((k) => `${k.expr} AS ${k.alias}`), 'h.visitor_id AS visitor_id'];
  const pageviews = (more: readonly string[] = [], columns: readonly string[] = []) =>
    `(SELECT ${[...selected, ...columns].join(', ')} FROM ${d.table('hits', 'h')}${join} WHERE ${[...where, ...more].join(' AND ')}) p`;
  const visitors = aggregateAlias('visitors');
  const groupBy = (from: string, more: readonly string[] = []) => {
    const groups = [...keys.map((k) => `${from}.${k.alias}`), ...more];
    return groups.length > 0 ? ` GROUP BY ${groups.join(', ')}` : '';
  };
  // A part's visitors per group (and per `more`, columns of `p`) as `n`, and the parts' counts added up per group.
  const counted = (source: string, more: readonly string[] = []) =>
    `SELECT ${[...keys.map((k) => `p.${k.alias} AS ${k.alias}`), `${d.countDistinct('p.visitor_id')} AS n`].join(', ')} FROM ${source}${groupBy('p', more)}`;
  const added = (parts: readonly string[]) =>
    `SELECT ${[...keys.map((k) => keyOf(k, 's')), `${d.sumInteger('s.n')} AS ${visitors}`].join(', ')} FROM (${parts.join(' UNION ALL ')}) s${groupBy('s')}`;
  const slices = q.visitorSlices ?? 1;
  // Each UTC day's visitors apart, added up (SqlDialect.visitorsByDay).
  if (slices <= 1 && d.visitorsByDay) return added([counted(pageviews([], [`${d.utcDayNumber('h.ts')} AS visitor_day`]), ['p.visitor_day'])]);
  if (slices <= 1) {
    return `SELECT ${[...keys.map((k) => keyOf(k, 'p')), `${d.countDistinct('p.visitor_id')} AS ${visitors}`].join(', ')} FROM ${pageviews()}${groupBy('p')}`;
  }
  // Disjoint slices of the visitors, counted one after another and added up (see SqlDialect.slicesVisitors): slices
  // of time cut at UTC midnights (day-slices.ts), each reading only its own row groups, so that all of them together
  // read the range about once, each with a hash table of its own day's visitors (a total over 30 days of 10 M
  // pageviews: 481 ms in one pass, 245 in days). Where the range has fewer days than `slices`, grouped visitors are cut
  // again by visitor id, so that no slice holds more (group, visitor) pairs than `slices` slices of the whole store
  // would (a total holds visitors only). The slice is chosen where the hits are read: DuckDB would otherwise work out
  // every group key before filtering.
  const days = daySlices(q, b, join !== '');
  const byId = keys.length > 0 ? Math.ceil(slices / days.length) : 1;
  const counts: string[] = [];
  for (const within of days) {
    for (let j = 0; j < byId; j++) counts.push(counted(pageviews([...within, ...(byId > 1 ? [`h.visitor_id % ${byId} = ${j}`] : [])])));
  }
  return added(counts);
}
