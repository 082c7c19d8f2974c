// Plan 2, semi-join totals: totals (no groups) that need visit facts (duration, bounces) under hit filters, read
// from the visits having a selected hit; counts and sums of the hits themselves come from the selection.

import type { Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { scopedVisitFacts } from './hit-scope.js';
import { selectHits } from './hit-selection.js';
import { visitFacts, type PlanContext } from './plan-sql.js';

export function semiJoinTotals(ctx: PlanContext, q: ReportQuery, b: Binder): string {
  const { w, select, site, from, until } = selectHits(ctx, q, b);
  // With a scope holding its visits' hits, their facts come from those hits (hit-scope.ts).
  const facts = scopedVisitFacts(ctx.dialect, q.scope, site, { from, until }, b);
  const totals = {
    pageviews: `(SELECT count(*) FROM ${w.ref('sel')})`,
    conversions: `(SELECT count(*) FROM ${w.ref('sel')})`,
    value: `(SELECT sum(value) FROM ${w.ref('sel')})`,
    visits: 'count(*)',
    unique_conversions: 'count(*)',
    ...visitFacts(ctx),
  };
  const visits = facts ? `(${facts}) AS v` : ctx.dialect.table('visits', 'v');
  return w.with() + `SELECT ${select(totals)} FROM ${visits} WHERE v.visit_id IN (SELECT visit_id FROM ${w.ref('sel')})`;
}
