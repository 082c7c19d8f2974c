// Plan 2, semi-join totals: totals (no groups) that need visit facts (duration, bounces) under hit filters, read
// from the visits having a selected hit; counts and sums of the hits themselves come from the selection.

import type { Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { selectHits } from './hit-selection.js';
import { visitFacts, type PlanContext } from './plan-sql.js';

export function semiJoinTotals(ctx: PlanContext, q: ReportQuery, b: Binder): string {
  const { w, select } = selectHits(ctx, q, b);
  const totals = {
    pageviews: `(SELECT count(*) FROM ${w.ref('sel')})`,
    conversions: `(SELECT count(*) FROM ${w.ref('sel')})`,
    value: `(SELECT sum(value) FROM ${w.ref('sel')})`,
    visits: 'count(*)',
    unique_conversions: 'count(*)',
    ...visitFacts(ctx),
  };
  return w.with() + `SELECT ${select(totals)} FROM ${ctx.dialect.table('visits', 'v')} WHERE v.visit_id IN (SELECT visit_id FROM ${w.ref('sel')})`;
}
