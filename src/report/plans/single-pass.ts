// Plan 1, single pass: counts and sums only (pageviews, conversions, value) with nothing at visit level, in one
// pass over the selected hits, whatever their filters and groups.

import type { Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';
import { selectHits } from './hit-selection.js';
import type { PlanContext } from './plan-sql.js';

export function singlePass(ctx: PlanContext, q: ReportQuery, b: Binder): string {
  const { w, select, groupBy } = selectHits(ctx, q, b);
  return w.with() + `SELECT ${select({ pageviews: 'count(*)', conversions: 'count(*)', value: 'sum(p.value)' })} FROM ${w.ref('sel', 'p')}${groupBy}`;
}
