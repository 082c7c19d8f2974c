// A site's report page (the owner's and the share page): the live panel, toolbar, filters, headline, chart,
// goals (and the chosen goal's custom properties), funnels, breakdowns and journeys, each a component of its own reading the shared state (./state.js);
// for the owner of a site with no hits yet, the onboarding page (./onboarding.js) until the first one arrives.

import { listAll } from '../api.js';
import { html, useEffect, useState } from '../ui.js';
import { Breakdowns } from './breakdowns.js';
import { Chart } from './chart.js';
import { SiteContext } from './data.js';
import { FilterBar } from './filters.js';
import { FunnelsPanel } from './funnels.js';
import { GoalPropertiesPanel } from './goal-properties.js';
import { GoalsPanel } from './goals.js';
import { Headline } from './headline.js';
import { ImportedNotice } from './imported.js';
import { JourneysPanel } from './journeys.js';
import { hasHits, Onboarding } from './onboarding.js';
import { startReportState } from './state.js';
import { Toolbar } from './toolbar.js';

/** Goal currencies the server wrote into the page ({ goal id: currency }): the API's goal lists leave them out. */
function currencies(text) {
  try {
    const parsed = JSON.parse(text || '{}');
    return parsed && typeof parsed === 'object' ? new Map(Object.entries(parsed)) : new Map();
  } catch {
    return new Map();
  }
}

export function ReportPage({ data }) {
  const [site, setSite] = useState(null);
  const [failed, setFailed] = useState('');
  // Whether the report has anything to show: null while asked; a share page always shows its report.
  const [started, setStarted] = useState(data.mode === 'owner' ? null : true);
  useEffect(() => {
    const timeZone = data.timezone || 'UTC';
    startReportState(timeZone);
    const known = currencies(data.goalCurrencies);
    Promise.all([listAll(`/v1/sites/${data.site}/events`), listAll(`/v1/sites/${data.site}/milestones`).catch(() => [])]).then(
      async ([events, milestones]) => {
        const loaded = {
          id: data.site,
          name: data.siteName,
          timeZone,
          owner: data.mode === 'owner',
          goals: events.map((e) => ({ id: e.id, name: e.name, currency: known.get(e.id) ?? e.currency ?? 'dollar' })),
          milestones,
        };
        // A failed check shows the report: a page of zeros is better than a setup page for a site that has hits.
        if (loaded.owner) setStarted(await hasHits(loaded).catch(() => true));
        setSite(loaded);
      },
      () => setFailed('The report could not be loaded. Reload the page to try again.'),
    );
  }, []);
  const heading = html`<h1>${data.siteName}</h1>`;
  const links = data.mode === 'owner'
    ? html`<p class="links"><a href=${`/sites/${data.site}/settings`}>Site settings</a> · <a href=${`/sites/${data.site}/goals`}>Goals and milestones</a></p>`
    : html`<p class="muted">A read-only report shared by the site owner.</p>`;
  if (failed) return html`${heading}<p class="status error" role="alert">${failed}</p>`;
  if (!site) return html`${heading}${links}<p class="muted" data-loading>Loading…</p>`;
  if (!started) return html`<div class="report-head">${heading}${links}</div><${Onboarding} site=${site} onStarted=${() => setStarted(true)} />`;
  return html`<${SiteContext.Provider} value=${site}>
    <div class="report-head">${heading}${links}</div>
    <${Toolbar} />
    <${FilterBar} />
    <${ImportedNotice} />
    <${Headline} />
    <${Chart} />
    <${GoalsPanel} />
    <${GoalPropertiesPanel} />
    <${FunnelsPanel} />
    <${Breakdowns} />
    <${JourneysPanel} />
  <//>`;
}
