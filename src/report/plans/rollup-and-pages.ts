// Plans 4 and 5 together, for whole-visit aggregates with uniques, in total or by time: the visit rollup for its
// aggregates, the pages plan for uniques, joined on the time bucket (the two have the same buckets: those with a
// pageview).

import type { Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { aggregateAlias, TIMESTAMP_ALIAS } from '../result-columns.js';
import { pages } from './pages.js';
import { Subqueries, type PlanContext } from './plan-sql.js';
import { visitRollup } from './visit-rollup.js';

export function rollupAndPages(ctx: PlanContext, q: ReportQuery, b: Binder): string {
  const visitPart = visitRollup(ctx, { ...q, aggregates: q.aggregates.filter((a) => a !== 'uniques') }, b);
  const pagePart = pages(ctx, { ...q, aggregates: ['uniques'] }, b);
  const columns = [
    ...(q.dateGrouping ? [`a.${TIMESTAMP_ALIAS} AS ${TIMESTAMP_ALIAS}`] : []),
    ...q.aggregates.map((a) => `${a === 'uniques' ? 'u' : 'a'}.${aggregateAlias(a)} AS ${aggregateAlias(a)}`),
  ];
  const w = new Subqueries(ctx.dialect);
  w.add('a', visitPart);
  w.add('u', pagePart);
  return (
    `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('a')} ` +
    (q.dateGrouping ? `JOIN ${w.ref('u')} ON u.${TIMESTAMP_ALIAS} = a.${TIMESTAMP_ALIAS}` : `CROSS JOIN ${w.ref('u')}`)
  );
}
