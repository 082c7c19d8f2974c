// Plan 4, visit rollup, for reports of whole-visit facts without hit filters (totals, by time, by entry or exit
// page): most visits lie wholly inside the range and inside one time bucket, so the visits table answers for them
// directly; only the few visits that cross the range's ends or a bucket boundary are counted from their hits.

import { offsetSpans } from '../../domain/zoned-time.js';
import { columnOf, filterConditions } from '../conditions.js';
import type { Binder } from '../dialect.js';
import { GROUP_FIELDS } from '../fields.js';
import type { ReportQuery } from '../query.js';
import { aggregateAlias, fieldAlias, TIMESTAMP_ALIAS } from '../result-columns.js';
import { edgeVisitHits, Subqueries, visitFacts, type PlanContext } from './plan-sql.js';

export function visitRollup(ctx: PlanContext, q: ReportQuery, b: Binder): string {
  const d = ctx.dialect;
  const outer = q.fieldGrouping.map((f, i) => ({ alias: fieldAlias(i), expr: columnOf(GROUP_FIELDS[f]) }));
  const visits = d.table('visits', 'v');
  const spans = q.dateGrouping ? offsetSpans(q.timezone, q.from.getTime(), q.until.getTime()) : [];
  const bucketOf = (ts: string) => d.bucket(q.dateGrouping!, d.localTime(ts, spans, b));
  const site = b.value(q.siteId);
  const from = b.value(q.from);
  const until = b.value(q.until);
  // A visit in one time bucket: counted from its row (with the range's own ends, `inside`).
  const oneBucket = q.dateGrouping ? [`${bucketOf('v.started_at')} = ${bucketOf('v.last_seen_at')}`] : [];
  const inside = [`v.started_at >= ${from}`, `v.last_seen_at < ${until}`, ...oneBucket].join(' AND ');
  const ts = q.dateGrouping ? [`${bucketOf('v.started_at')} AS ${TIMESTAMP_ALIAS}`] : [];
  const facts = 'v.entry_page, v.exit_page, v.started_at, v.last_seen_at, v.pageviews';
  const edge = [`v.pageviews > 0`, `v.started_at < ${until}`, `v.last_seen_at >= ${from}`, `NOT (${inside})`];
  // The edge visits' pageviews in the range, counted per visit (and bucket), read near the range's ends only
  // (edgeVisitHits; a time bucket's edges are everywhere in the range, so with one every edge hit is read).
  const edgeHitsOf = (time: string, ids: string) =>
    `SELECT ${q.dateGrouping ? `${bucketOf('h.ts')} AS ${TIMESTAMP_ALIAS}, ` : ''}h.visit_id AS visit_id, count(*) AS n ` +
    `FROM ${d.table('hits', 'h')} WHERE h.site_id = ${site} AND h.type = 'pageview' AND h.ts >= ${from} AND h.ts < ${until} ` +
    `${time ? `AND ${time} ` : ''}AND h.visit_id IN (${ids}) GROUP BY ${q.dateGrouping ? `${TIMESTAMP_ALIAS}, ` : ''}h.visit_id`;
  const edgeHits = q.dateGrouping
    ? edgeHitsOf('', d.edgeVisitIds(site, from, until, oneBucket))
    : edgeVisitHits(d, b, q, { site, from, until }, [], 'h.ts', edgeHitsOf);
  const rollup =
    `SELECT ${[...ts, 'v.visit_id AS visit_id', 'v.pageviews AS n', facts].join(', ')} FROM ${visits} ` +
    `WHERE v.site_id = ${site} AND v.pageviews > 0 AND ${inside} ` +
    `UNION ALL SELECT ${[...(q.dateGrouping ? [`e.${TIMESTAMP_ALIAS} AS ${TIMESTAMP_ALIAS}`] : []), 'e.visit_id AS visit_id', 'e.n AS n', facts].join(', ')} ` +
    `FROM (${edgeHits}) e ${d.joinVisits('v', { site, where: edge, few: true })} ON v.visit_id = e.visit_id`;
  const aggregates: Record<string, string> = { pageviews: 'sum(v.n)', visits: 'count(*)', ...visitFacts(ctx) };
  const columns = [
    ...(q.dateGrouping ? [`${d.formatBucket(`v.${TIMESTAMP_ALIAS}`)} AS ${TIMESTAMP_ALIAS}`] : []),
    ...outer.map((g) => `${g.expr} AS ${g.alias}`),
    ...q.aggregates.map((a) => `${aggregates[a]} AS ${aggregateAlias(a)}`),
  ];
  const keys = [...(q.dateGrouping ? [`v.${TIMESTAMP_ALIAS}`] : []), ...outer.map((g) => g.expr)];
  const visitWhere = filterConditions(d, q.filters, b);
  const w = new Subqueries(d);
  w.add('rollup', rollup);
  return (
    `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('rollup', 'v')}` +
    (visitWhere.length > 0 ? ` WHERE ${visitWhere.join(' AND ')}` : '') +
    (keys.length > 0 ? ` GROUP BY ${keys.join(', ')}` : '')
  );
}
