// Plan 3, per visit, the general plan: the selected hits counted per (hit-level group, visit), then per group.
// Visit-level groups (entry and exit page) and filters are constant within a visit, so they join the visits
// table after the per-visit step, on one row per visit instead of one per hit.

import { filterConditions } from '../conditions.js';
import type { Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { scopedVisitFacts } from './hit-scope.js';
import { selectHits } from './hit-selection.js';
import { visitFacts, type PlanContext } from './plan-sql.js';

export function perVisit(ctx: PlanContext, q: ReportQuery, b: Binder): string {
  const d = ctx.dialect;
  const { w, inner, site, from, until, visitFilters, visitLevel, select, groupBy } = selectHits(ctx, q, b);
  const needsVisitFacts = q.aggregates.includes('avg_duration') || q.aggregates.includes('bounce_rate');
  const wantsPaths = q.aggregates.includes('uniques');
  const wantsValue = q.aggregates.includes('value');
  const perVisitColumns = [
    ...inner.map((g) => g.alias),
    'visit_id',
    'count(*) AS n',
    ...(wantsPaths ? [`${d.countDistinct('pathname')} AS paths`] : []),
    ...(wantsValue ? ['sum(value) AS value_sum'] : []),
  ];
  const perGroup = {
    pageviews: 'sum(p.n)',
    conversions: 'sum(p.n)',
    visits: 'count(*)',
    unique_conversions: 'count(*)',
    uniques: 'sum(p.paths)',
    value: 'sum(p.value_sum)',
    ...visitFacts(ctx),
  };
  const visitWhere = filterConditions(d, visitFilters, b);
  // A scope keeps a few of the range's hits (hit-scope.ts): the visits joined are narrowed to theirs, which a
  // dialect finds by the visits' key instead of merging every visit of the range; with whole visits, their facts
  // come from their hits and no visit is read.
  const joined = q.scope ? { few: true, where: [`v.visit_id IN (SELECT visit_id FROM ${w.ref('sel')})`] } : { where: [] };
  const facts = visitLevel ? undefined : scopedVisitFacts(d, q.scope, site, { from, until }, b);
  w.add('per_visit', `SELECT ${perVisitColumns.join(', ')} FROM ${w.ref('sel')} GROUP BY ${[...inner.map((g) => g.alias), 'visit_id'].join(', ')}`);
  return (
    w.with() +
    `SELECT ${select(perGroup)} FROM ${w.ref('per_visit', 'p')}` +
    // Every joined visit has a hit in the range, so overlaps it (a visit's started_at and last_seen_at span
    // all its hits, as plan 4 relies on too), and passes the visit filters.
    (facts && needsVisitFacts
      ? ` ${d.joinOneRowEach()} (${facts}) AS v ON v.visit_id = p.visit_id`
      : needsVisitFacts || visitLevel
        ? ` ${d.joinVisits('v', { site, few: joined.few, where: [`v.started_at < ${until}`, `v.last_seen_at >= ${from}`, ...joined.where, ...visitWhere] })} ON v.visit_id = p.visit_id`
        : '') +
    (visitWhere.length > 0 ? ` WHERE ${visitWhere.join(' AND ')}` : '') +
    groupBy
  );
}
