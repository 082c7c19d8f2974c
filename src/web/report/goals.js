// The goals panel: every goal with its conversions, unique conversions, conversion rate (unique conversions /
// visitors) and value in the goal's currency. Clicking a goal filters the whole page to it.

import { fmtInt, fmtPercent, fmtValue } from '../format.js';
import { html } from '../ui.js';
import { aggregate, aggregateGoals, baseParams, explainError, usePanel, useSite } from './data.js';
import { ImportedGap } from './imported.js';
import { setReport, useReportState } from './state.js';

/**
 * The rows of the goals panel for a period: [{ goal, conversions, unique_conversions, value, conversion_rate }]. Two
 * requests whatever the number of goals: the visitors, and every goal's numbers at once.
 */
export async function fetchGoals(site, state, period, signal) {
  const [[pages], perGoal] = await Promise.all([
    aggregate({ ...baseParams(site, period, state.filters), aggregates: 'visitors' }, signal),
    aggregateGoals({ ...baseParams(site, period, state.filters, ''), aggregates: 'conversions,unique_conversions,value' }, signal),
  ]);
  const visitors = Number(pages?.visitors) || 0;
  const byId = new Map(perGoal.map((g) => [g.id, g.rows[0] ?? {}]));
  return {
    visitors,
    rows: site.goals.map((goal) => {
      const r = byId.get(goal.id) ?? {};
      const unique = Number(r.unique_conversions) || 0;
      return { goal, conversions: Number(r.conversions) || 0, unique_conversions: unique, value: Number(r.value) || 0, conversion_rate: visitors ? unique / visitors : 0 };
    }),
  };
}

export function GoalsPanel() {
  const site = useSite();
  const state = useReportState();
  const { loading, error, data } = usePanel((p, signal) => fetchGoals(site, state, p, signal), [], { compare: false });
  if (site.goals.length === 0) {
    return html`<section class="card goals-panel" aria-labelledby="goals-h"><h2 id="goals-h">Goals</h2>
      <p class="muted">No goals yet.${site.owner ? html` <a href=${`/sites/${site.id}/goals`}>Add a goal</a> to count conversions.` : null}</p></section>`;
  }
  return html`<section class="card goals-panel" aria-labelledby="goals-h" aria-busy=${loading ? 'true' : 'false'}>
    <h2 id="goals-h">Goals</h2>
    ${error ? html`<p class="status error" role="alert">${explainError(error)}</p>` : null}
    ${!data ? html`<p class="muted">Loading…</p>` : html`<div class="scroll-x"><table class="breakdown goals">
      <thead><tr><th scope="col">Goal</th><th scope="col" class="num">Conversions</th><th scope="col" class="num">Unique</th>
        <th scope="col" class="num">Conv. rate</th><th scope="col" class="num">Value</th></tr></thead>
      <tbody>
        ${data.rows.map((r) => {
          const selected = state.goal === r.goal.id;
          return html`<tr data-goal=${r.goal.id} class=${selected ? 'selected' : ''}>
            <td class="label"><button type="button" class="row-filter" aria-pressed=${selected ? 'true' : 'false'}
              aria-label=${selected ? `Show every goal again (now only ${r.goal.name})` : `Filter by goal: ${r.goal.name}`}
              onClick=${() => setReport({ goal: selected ? '' : r.goal.id })}>${r.goal.name}</button></td>
            <td class="num" data-column="conversions" data-label="Conversions">${fmtInt(r.conversions)}</td>
            <td class="num" data-column="unique_conversions" data-label="Unique">${fmtInt(r.unique_conversions)}</td>
            <td class="num" data-column="conversion_rate" data-label="Conv. rate">${fmtPercent(r.conversion_rate)}</td>
            <td class="num" data-column="value" data-label="Value">${fmtValue(r.value, r.goal.currency)}</td>
          </tr>`;
        })}
      </tbody>
    </table></div>`}
    <${ImportedGap} metrics=${['conversions', 'unique_conversions', 'conversion_rate', 'value']} />
  </section>`;
}
