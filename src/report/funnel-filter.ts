// The dashboard's funnel filter (docs/reports.md, "Funnels"): a report narrowed to the visits of a funnel that
// reached a step and then continued to the next one or dropped before it, as one condition on the report's hit `h`.

import type { Binder, SqlDialect } from './dialect.js';
import { funnelOutcomeVisits } from './funnels.js';
import type { ReportQuery } from './query.js';

/** The outcomes a step can be filtered on. */
export const FUNNEL_OUTCOMES = ['continued', 'dropped'] as const;

/**
 * The condition keeping the hits of `q.funnel`'s visits, or none without a funnel filter. The funnel is walked
 * over the report's site, range and /v1 filters plus the funnel's own filters (exactly the visits its report
 * counts), never the report's custom property filters: so "dropped after step k" is the report's drop_off of
 * step k+1, whatever other dashboard filter is set. `site`, `from` and `until` are bound by the walk itself.
 */
export function funnelConditions(d: SqlDialect, q: ReportQuery, b: Binder): string[] {
  const f = q.funnel;
  if (f === undefined) return [];
  const last = f.steps.length;
  if (!Number.isInteger(f.step) || f.step < 1 || f.step > last) throw new Error(`a funnel filter's step is 1 to ${last}`);
  if (f.step === last && f.outcome === 'dropped') throw new Error('no visit drops after the last step');
  const { props: _props, propGroup: _propGroup, funnel: _funnel, ...rest } = q;
  const walkQuery: ReportQuery = { ...rest, filters: [...(f.filters ?? []), ...q.filters] };
  return [`h.visit_id IN (${funnelOutcomeVisits(d, walkQuery, f.steps, f.step, f.outcome, b)})`];
}
