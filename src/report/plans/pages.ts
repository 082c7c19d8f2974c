// Plan 5, pages: distinct (visit, page) pairs without grouping by visit, for top pages and uniques. Each pageview
// knows whether it is its visit's first view of the page, so for visits wholly inside the range (and one time
// bucket) with exact flags, counting flagged views counts pairs. Filters may only be on pathname, which all views
// of a pair share. The few other visits are counted from their hits, pair by pair.

import { offsetSpans } from '../../domain/zoned-time.js';
import { filterConditions } from '../conditions.js';
import type { Binder } from '../dialect.js';
import type { Aggregate } from '../fields.js';
import type { ReportQuery } from '../query.js';
import { aggregateAlias, fieldAlias, TIMESTAMP_ALIAS } from '../result-columns.js';
import { edgeVisitHits, inexactFirstViews, Subqueries, type PlanContext } from './plan-sql.js';

export function pages(ctx: PlanContext, q: ReportQuery, b: Binder): string {
  const d = ctx.dialect;
  const pathFilters = q.filters;
  const spans = q.dateGrouping ? offsetSpans(q.timezone, q.from.getTime(), q.until.getTime()) : [];
  const bucketOf = (ts: string) => d.bucket(q.dateGrouping!, d.localTime(ts, spans, b));
  const site = b.value(q.siteId);
  const from = b.value(q.from);
  const until = b.value(q.until);
  const edge = inexactFirstViews(d, site, from, until, q.dateGrouping ? [`${bucketOf('v.started_at')} = ${bucketOf('v.last_seen_at')}`] : []);
  const groups = [...(q.dateGrouping ? [TIMESTAMP_ALIAS] : []), ...(q.fieldGrouping.length > 0 ? [fieldAlias(0)] : [])];
  const selected = [
    ...(q.dateGrouping ? [`${bucketOf('h.ts')} AS ${TIMESTAMP_ALIAS}`] : []),
    ...(q.fieldGrouping.length > 0 ? [`h.pathname AS ${fieldAlias(0)}`] : []),
    'h.visit_id AS visit_id',
    'h.pathname AS pathname',
    'h.first_view AS first_view',
    'h.ts AS ts',
  ];
  const where = [
    `h.site_id = ${site}`,
    `h.type = 'pageview'`,
    `h.ts >= ${from}`,
    `h.ts < ${until}`,
    ...filterConditions(d, pathFilters, b),
  ];
  const groupBy = (extra: string[] = []) => ([...groups, ...extra].length > 0 ? ` GROUP BY ${[...groups, ...extra].join(', ')}` : '');
  const lead = groups.length > 0 ? `${groups.join(', ')}, ` : '';
  const w = new Subqueries(d);
  w.add('edge', edge);
  w.add('sel', `SELECT ${selected.join(', ')} FROM ${d.table('hits', 'h')} WHERE ${where.join(' AND ')}`);
  // The edge visits' hits, read near the range's ends only (edgeVisitHits; a time bucket's edges are everywhere in
  // the range, so with one every edge hit is read).
  const edgeSel = (time: string, ids: string) => `SELECT * FROM ${w.ref('sel')} WHERE visit_id IN (${ids})${time ? ` AND ${time}` : ''}`;
  const edgeRows = q.dateGrouping
    ? edgeSel('', `SELECT visit_id FROM ${w.ref('edge')}`)
    : edgeVisitHits(d, b, q, { site, from, until }, ['v.paths_exact'], 'ts', edgeSel);
  const parts =
    `SELECT ${lead}count(*) AS pv, sum(CASE WHEN first_view THEN 1 ELSE 0 END) AS pairs FROM ${w.ref('sel')} ` +
    `WHERE visit_id NOT IN (SELECT visit_id FROM ${w.ref('edge')})${groupBy()} ` +
    `UNION ALL SELECT ${lead}sum(n) AS pv, count(*) AS pairs FROM (SELECT ${lead}visit_id, pathname, count(*) AS n FROM (${edgeRows}) AS s` +
    `${groupBy(['visit_id', 'pathname'])}) e${groupBy()}`;
  w.add('parts', parts);
  const aggregates: Partial<Record<Aggregate, string>> = { pageviews: 'sum(p.pv)', uniques: 'sum(p.pairs)', visits: 'sum(p.pairs)' };
  const columns = [
    ...(q.fieldGrouping.length > 0 ? [`p.${fieldAlias(0)} AS ${fieldAlias(0)}`] : []),
    ...(q.dateGrouping ? [`${d.formatBucket(`p.${TIMESTAMP_ALIAS}`)} AS ${TIMESTAMP_ALIAS}`] : []),
    ...q.aggregates.map((a) => `${aggregates[a]} AS ${aggregateAlias(a)}`),
  ];
  return (
    `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('parts', 'p')}` +
    (groups.length > 0 ? ` GROUP BY ${groups.map((g) => `p.${g}`).join(', ')}` : '')
  );
}
