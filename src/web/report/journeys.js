// The journeys panel: the paths visits take through the site in the report's range and filters
// (GET /v1/sites/{id}/journeys, docs/reports.md "Journeys"), as a tree with one column per step: each prefix a box
// with its visits and the share that ended there, its most frequent continuations beside it (under it, narrow).
// The entry page is any, or one of the top first pages; clicking a page in the tree makes it the entry page.

import { api, query } from '../api.js';
import { Field } from '../field.js';
import { fmtInt, fmtPercent } from '../format.js';
import { html, useState } from '../ui.js';
import { baseParams, explainError, usePanel, useSite } from './data.js';
import { useReportState } from './state.js';

/** Prefixes asked per depth: enough that the boxes shown below are exact and the rest add up to "other paths". */
export const JOURNEY_LIMIT = 100;
/** First pages shown (with any entry page), continuations shown per box, and entry pages offered. */
const ROOTS = 5;
const CHILDREN = 3;
const ENTRY_CHOICES = 20;
const DEPTHS = [2, 3, 4, 5];

/**
 * The journeys answer for a period with the page's filters: /v1's route, or with custom property filters or a funnel
 * filter (which /v1 does not take) the report page's own, which answers the same way.
 */
export function fetchJourneys(site, state, period, { entryPage, steps, limit = JOURNEY_LIMIT }, signal) {
  const { entity: _entity, ...scope } = baseParams(site, period, state.filters);
  const own = { entry_page: entryPage || undefined, steps, limit };
  return scope.props || scope.funnel
    ? api('GET', `/dashboard/api/report/journeys?${query({ ...scope, ...own })}`, undefined, { signal })
    : api('GET', `/v1/sites/${encodeURIComponent(site.id)}/journeys?${query({ date_from: scope.date_from, date_to: scope.date_to, filters: scope.filters, ...own })}`, undefined, { signal });
}

/**
 * The answer's paths as a tree: each node { pages, visits, ended, children } with its listed continuations, most
 * visits first (the API's order). A path whose parent prefix is not listed has no place in the tree and is left out.
 */
export function journeyTree(paths) {
  const byKey = new Map();
  const roots = [];
  for (const p of paths) {
    const node = { pages: p.pages, visits: Number(p.visits) || 0, ended: Number(p.ended) || 0, children: [] };
    byKey.set(JSON.stringify(p.pages), node);
    if (p.pages.length === 1) roots.push(node);
    else byKey.get(JSON.stringify(p.pages.slice(0, -1)))?.children.push(node);
  }
  return roots;
}

function Box({ node, steps, onPick }) {
  const page = node.pages[node.pages.length - 1];
  const ended = node.visits ? node.ended / node.visits : 0;
  const shown = node.pages.length < steps ? node.children.slice(0, CHILDREN) : [];
  const listed = shown.reduce((sum, c) => sum + c.visits, 0);
  // Visits that went on to a page not shown: every visit either ended here or went on to exactly one next page.
  const other = node.pages.length < steps ? node.visits - node.ended - listed : 0;
  return html`<li class="journey-node" data-pages=${JSON.stringify(node.pages)}>
    <div class="journey-box">
      <button type="button" class="journey-page" title=${`Start journeys at ${page}`} aria-label=${`Step ${node.pages.length}: ${page}. Start journeys here`}
        onClick=${() => onPick(page)}>${page}</button>
      <span class="journey-numbers"><span data-column="visits">${fmtInt(node.visits)} visit${node.visits === 1 ? '' : 's'}</span>${' · '}<span
        data-column="ended">${fmtPercent(ended)} ended</span></span>
      <span class="journey-bar" aria-hidden="true"><span style=${{ width: `${Math.round(ended * 100)}%` }}></span></span>
    </div>
    ${shown.length > 0 || other > 0
      ? html`<ul class="journey-children">
          ${shown.map((c) => html`<${Box} node=${c} steps=${steps} onPick=${onPick} />`)}
          ${other > 0 ? html`<li class="journey-node journey-other"><div class="journey-box muted">${fmtInt(other)} went on elsewhere</div></li>` : null}
        </ul>`
      : null}
  </li>`;
}

export function JourneysPanel() {
  const site = useSite();
  const state = useReportState();
  const [entryPage, setEntryPage] = useState('');
  const [steps, setSteps] = useState(3);
  const { loading, error, data } = usePanel(
    (period, signal) =>
      Promise.all([
        fetchJourneys(site, state, period, { entryPage, steps }, signal),
        // The entry pages to choose from are the top first pages of journeys with any entry page.
        entryPage ? fetchJourneys(site, state, period, { steps: 2, limit: ENTRY_CHOICES }, signal) : null,
      ]),
    [entryPage, steps],
    { compare: false },
  );
  const [answer, anyEntry] = data ?? [];
  const entries = ((anyEntry ?? answer)?.paths ?? []).filter((p) => p.pages.length === 1).slice(0, ENTRY_CHOICES).map((p) => p.pages[0]);
  if (entryPage && !entries.includes(entryPage)) entries.unshift(entryPage);
  const roots = answer ? journeyTree(answer.paths).slice(0, entryPage ? 1 : ROOTS) : [];
  return html`<section class="card journeys" aria-labelledby="journeys-h" aria-busy=${loading ? 'true' : 'false'}>
    <h2 id="journeys-h">Journeys</h2>
    <div class="row wrap journeys-controls">
      <${Field} label="Entry page"><select name="entry_page" value=${entryPage} onChange=${(e) => setEntryPage(e.currentTarget.value)}>
        <option value="">Any page</option>
        ${entries.map((p) => html`<option value=${p}>${p}</option>`)}
      </select><//>
      <${Field} label="Steps"><select name="steps" value=${String(steps)} onChange=${(e) => setSteps(Number(e.currentTarget.value))}>
        ${DEPTHS.map((n) => html`<option value=${String(n)}>${n}</option>`)}
      </select><//>
      ${entryPage ? html`<button type="button" class="secondary small" onClick=${() => setEntryPage('')}>Any entry page</button>` : null}
    </div>
    ${error ? html`<p class="status error" role="alert">${explainError(error)}</p>` : null}
    ${!answer ? (error ? null : html`<p class="muted">Loading…</p>`) : roots.length === 0
      ? html`<p class="muted">No visit in this range${entryPage ? ` started at ${entryPage}` : ''}${state.filters.length || state.funnel ? ' with these filters' : ''}.</p>`
      : html`<div class="journey-scroll"><ol class="journey-tree" aria-label="Paths, one column per step">
          ${roots.map((r) => html`<${Box} node=${r} steps=${answer.steps} onPick=${setEntryPage} />`)}
        </ol></div>
        <p class="muted small">${fmtInt(Number(answer.total_visits))} visit${answer.total_visits === '1' ? '' : 's'} with a pageview in this range;
          a reload is not a step. Click a page to start journeys there.</p>`}
  </section>`;
}
