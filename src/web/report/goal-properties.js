// The goal's properties panel, shown while the page is filtered to a goal: its completions broken down by one
// custom property (the key chosen from those its completions carry), each value with completions, unique
// completions and its share of the goal's completions; a value filters the page when clicked; CSV of the rows.

import { download, slug, toCsv } from '../download.js';
import { Field } from '../field.js';
import { fmtInt, fmtPercent } from '../format.js';
import { html, useState } from '../ui.js';
import { explainError, fetchGoalProperties, goalOf, usePanel, useSite } from './data.js';
import { PROP_FILTER } from './properties.js';
import { addFilter, setReport, useReportState } from './state.js';

const TOP = 10;
/** Values asked for (the panel shows TOP until "Show all"); the CSV has them all. */
export const VALUES_LIMIT = 1000;

/** The panel's rows with their share (completions of the value / every completion of the goal, with or without the key). */
export async function fetchPropertyRows(site, state, period, signal) {
  const goal = goalOf(site, state);
  const result = await fetchGoalProperties(site, period, state.filters, goal.name, state.propKey, VALUES_LIMIT, signal);
  return { ...result, rows: result.rows.map((r) => ({ ...r, share: result.total ? r.conversions / result.total : 0 })) };
}

export function GoalPropertiesPanel() {
  const site = useSite();
  const state = useReportState();
  const goal = goalOf(site, state);
  const [all, setAll] = useState(false);
  const { loading, error, data, period } = usePanel((p, signal) => (goal ? fetchPropertyRows(site, state, p, signal) : null), [state.propKey], { compare: false });
  if (!goal) return null;
  const rows = data?.rows ?? [];
  const shown = all ? rows : rows.slice(0, TOP);
  const max = Math.max(1, ...rows.map((r) => r.conversions));
  const applied = state.filters.some((f) => f.property === PROP_FILTER && f.key === data?.key && f.operator === 'is');
  const csv = () =>
    download(`${slug(site.name)}-${slug(goal.name)}-${slug(data.key)}-${period.from}-to-${period.to}.csv`,
      toCsv(['value', 'conversions', 'unique_conversions', 'share'], rows.map((r) => ({ ...r, share: Math.round(r.share * 10000) / 10000 }))),
      'text/csv;charset=utf-8');
  return html`<section class="card goal-properties" aria-labelledby="goal-props-h" aria-busy=${loading ? 'true' : 'false'}>
    <h2 id="goal-props-h">Properties of ${goal.name}</h2>
    ${error ? html`<p class="status error" role="alert">${explainError(error)}</p>` : null}
    ${!data ? html`<p class="muted">Loading…</p>` : data.keys.length === 0
      ? html`<p class="muted">No completion of this goal in this range has custom properties.</p>`
      : html`
        <div class="row wrap">
          <${Field} label="Property"><select name="prop_key" value=${data.key} onChange=${(e) => setReport({ propKey: e.currentTarget.value })}>
            ${data.keys.map((k) => html`<option value=${k}>${k}</option>`)}
          </select><//>
        </div>
        ${rows.length === 0 ? html`<p class="muted">No completion with these filters has this property.</p>` : html`<table class="breakdown props">
          <thead><tr><th scope="col">${data.key}</th><th scope="col" class="num">Completions</th><th scope="col" class="num">Unique</th>
            <th scope="col" class="num">Share</th></tr></thead>
          <tbody>
            ${shown.map((r) => html`<tr data-value=${r.value}>
              <td class="label"><span class="bar" style=${{ width: `${(r.conversions / max) * 100}%` }} aria-hidden="true"></span>${applied
                ? html`<span class="bar-label" title=${r.value}>${r.value}</span>`
                : html`<button type="button" class="row-filter bar-label" title=${`Show only ${data.key} ${r.value}`}
                    aria-label=${`Filter by property ${data.key}: ${r.value}`}
                    onClick=${() => addFilter({ property: PROP_FILTER, key: data.key, operator: 'is', value: r.value })}>${r.value}</button>`}</td>
              <td class="num" data-column="conversions" data-label="Completions">${fmtInt(r.conversions)}</td>
              <td class="num" data-column="unique_conversions" data-label="Unique">${fmtInt(r.unique_conversions)}</td>
              <td class="num" data-column="share" data-label="Share">${fmtPercent(r.share)}</td>
            </tr>`)}
          </tbody>
        </table>`}
        <p class="muted small">Share: of the goal's ${fmtInt(data.total)} recorded completion${data.total === 1 ? '' : 's'} with these filters;
          completions without the property are in none of the rows.</p>
        <div class="row card-foot">
          ${rows.length > TOP ? html`<button type="button" class="secondary small" onClick=${() => setAll(!all)}>${all ? `Show the top ${TOP}` : `Show all ${rows.length}`}</button>` : null}
          <button type="button" class="secondary small" disabled=${rows.length === 0} aria-label=${`Export ${data.key} of ${goal.name} as CSV`} onClick=${csv}>CSV</button>
        </div>`}
  </section>`;
}
