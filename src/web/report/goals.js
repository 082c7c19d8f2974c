// The goals panel: every goal with its conversions, unique conversions, conversion rate (unique conversions /
// visitors) and value in the goal's currency; the site's pageview goals after its event goals, with the pageviews
// of their pages as conversions and the visits with one as unique. Clicking an event goal filters the whole page to
// its completions; clicking a pageview goal filters it to the goal's pages.

import { fmtInt, fmtPercent, fmtValue } from '../format.js';
import { html } from '../ui.js';
import { aggregate, aggregateGoals, aggregatePageGoals, baseParams, explainError, usePanel, useSite } from './data.js';
import { ImportedGap } from './imported.js';
import { setReport, useReportState } from './state.js';

/**
 * The rows of the goals panel for a period: [{ goal, conversions, unique_conversions, value, conversion_rate }]. Two
 * requests whatever the number of goals: the visitors, and every goal's numbers at once.
 */
export async function fetchGoals(site, state, period, signal) {
  const [[pages], perGoal, pageGoals] = await Promise.all([
    aggregate({ ...baseParams(site, period, state.filters), aggregates: 'visitors' }, signal),
    site.goals.length ? aggregateGoals({ ...baseParams(site, period, state.filters, ''), aggregates: 'conversions,unique_conversions,value' }, signal) : [],
    aggregatePageGoals(baseParams(site, period, state.filters), signal),
  ]);
  const visitors = Number(pages?.visitors) || 0;
  const byId = new Map(perGoal.map((g) => [g.id, g.rows[0] ?? {}]));
  const row = (goal, r) => {
    const unique = Number(r.unique_conversions) || 0;
    return { goal, conversions: Number(r.conversions) || 0, unique_conversions: unique, value: Number(r.value) || 0, conversion_rate: visitors ? unique / visitors : 0 };
  };
  return {
    visitors,
    rows: site.goals.map((goal) => row(goal, byId.get(goal.id) ?? {})),
    // rows null: the page is already filtered by page path, which the goal's own path would widen, not narrow.
    pageRows: pageGoals.map((g) => (g.rows ? { ...row(g, g.rows[0] ?? {}), page: true } : { goal: g, page: true, unknown: true })),
  };
}

/** The filter that selects a pageview goal's pages: its path as it is, or its pattern's expression. */
export const pageGoalFilter = (goal) =>
  goal.path.includes('*') ? { property: 'pathname', operator: 'matching', value: goal.regex } : { property: 'pathname', operator: 'is', value: goal.path };

const sameFilter = (a, b) => a.property === b.property && a.operator === b.operator && a.value === b.value;

function EventGoalRow({ r, state }) {
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
}

function PageGoalRow({ r, state }) {
  const filter = pageGoalFilter(r.goal);
  const at = state.filters.findIndex((f) => sameFilter(f, filter));
  const selected = at >= 0;
  const toggle = () => setReport({ filters: selected ? state.filters.filter((_, i) => i !== at) : [...state.filters, filter], goal: '' });
  const unknown = html`<span class="muted" title="Not counted while the page is filtered by page: remove that filter to see it">—</span>`;
  return html`<tr data-page-goal=${r.goal.id} class=${selected ? 'selected' : ''}>
    <td class="label"><button type="button" class="row-filter" aria-pressed=${selected ? 'true' : 'false'}
      aria-label=${selected ? `Remove the filter of pageview goal ${r.goal.name}` : `Filter by pageview goal: ${r.goal.name}`}
      onClick=${toggle}>${r.goal.name}</button> <small class="muted goal-path">${r.goal.path}</small></td>
    <td class="num" data-column="conversions" data-label="Conversions">${r.unknown ? unknown : fmtInt(r.conversions)}</td>
    <td class="num" data-column="unique_conversions" data-label="Unique">${r.unknown ? unknown : fmtInt(r.unique_conversions)}</td>
    <td class="num" data-column="conversion_rate" data-label="Conv. rate">${r.unknown ? unknown : fmtPercent(r.conversion_rate)}</td>
    <td class="num" data-column="value" data-label="Value">—</td>
  </tr>`;
}

export function GoalsPanel() {
  const site = useSite();
  const state = useReportState();
  const { loading, error, data } = usePanel((p, signal) => fetchGoals(site, state, p, signal), [], { compare: false });
  const none = site.goals.length === 0 && data?.pageRows.length === 0;
  if (none) {
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
        ${data.rows.map((r) => html`<${EventGoalRow} r=${r} state=${state} />`)}
        ${data.pageRows.map((r) => html`<${PageGoalRow} r=${r} state=${state} />`)}
      </tbody>
    </table></div>`}
    <${ImportedGap} metrics=${['conversions', 'unique_conversions', 'conversion_rate', 'value']} />
  </section>`;
}
