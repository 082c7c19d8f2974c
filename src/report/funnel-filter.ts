// The dashboard's funnel filter (docs/reports.md, "Funnels"): a report narrowed to the visits of a funnel that
// reached a step and then continued to the next one or dropped before it, as one condition on the report's hit `h`.

import type { Binder, SqlDialect } from './dialect.js';
import { walkedVisits } from './funnels.js';
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
  const walked = walkedVisits(d, walkQuery, f.steps, b);
  // p_k is the index of the hit that reached step k, 0 when the visit did not (funnels.ts, walkedVisits).
  const reached = [`fw.p${f.step} > 0`];
  if (f.step < last) reached.push(`fw.p${f.step + 1} ${f.outcome === 'continued' ? '>' : '='} 0`);
  // ClickHouse 18.16 drops from a subquery the columns only a lambda reads (each p_k and t_k, read by the later
  // steps' searches), and then fails to find them: naming every one here keeps them all. Always true: an index
  // and a time are 0 or more.
  reached.push(`${Array.from({ length: last }, (_, j) => `fw.p${j + 1} + fw.t${j + 1}`).join(' + ')} >= 0`);
  return [`h.visit_id IN (SELECT fw.visit_id FROM (${walked}) AS fw WHERE ${reached.join(' AND ')})`];
}
