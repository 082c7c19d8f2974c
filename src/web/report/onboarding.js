// What a site owner sees on the report of a site with no hits yet: its tracking code, a live check that turns into
// the report by itself once the first pageview arrives, and a button that sends a real test pageview.

import { api, query } from '../api.js';
import { todayIn } from '../range.js';
import { explain } from '../messages.js';
import { TrackingCode } from '../tracking-code.js';
import { html, useEffect, useRef, useState } from '../ui.js';

/** How often the waiting page asks whether a pageview has arrived. */
export const POLL_MS = 4000;
/** The path of the test pageview: named so nobody mistakes it for a visit to a real page. */
export const TEST_PATH = '/plumb-test';
/** After this long without the test pageview showing up, the page says why it may have been dropped. */
const TEST_PATIENCE_MS = 20_000;
/** Goals whose completions are asked for at once, for a site with events but no pageviews. */
const GOALS_AT_ONCE = 10;
// All of the site's history, imported days included (the default range starts at the first recorded hit only).
const ALL_TIME = '2000-01-01 00:00:00';

/**
 * The range of the checks: all time to the end of the site's today. Whole days, because imported history counts
 * only in ranges of whole days (docs/reports.md): a range ending now would not see a site with imports alone.
 */
const allTime = (site) => ({ date_from: ALL_TIME, date_to: `${todayIn(site.timeZone)} 23:59:59` });

/** The site's pageviews, recorded or imported, as /v1 counts them. */
async function pageviews(site) {
  const [row] = await api('GET', `/v1/aggregations?${query({ entity: 'pageview', entity_id: site.id, aggregates: 'pageviews', ...allTime(site) })}`);
  return Number(row?.pageviews ?? 0);
}

/** Whether the site has any hit: a pageview, or a completion of one of its goals (a site may send events only). */
export async function hasHits(site) {
  if ((await pageviews(site)) > 0) return true;
  for (let i = 0; i < site.goals.length; i += GOALS_AT_ONCE) {
    const counts = await Promise.all(
      site.goals.slice(i, i + GOALS_AT_ONCE).map(async (goal) => {
        const params = { entity: 'event', site_id: site.id, entity_name: goal.name, aggregates: 'conversions', ...allTime(site) };
        const [row] = await api('GET', `/v1/aggregations?${query(params)}`);
        return Number(row?.conversions ?? 0);
      }),
    );
    if (counts.some((n) => n > 0)) return true;
  }
  return false;
}

/**
 * A real pageview of TEST_PATH on this page's host, sent to the collector as the tag would send it: it is
 * recorded and counted like any other (docs/dashboard.md, "A new site").
 */
function sendTestHit(siteId) {
  const params = query({ sid: siteId, h: location.origin, p: TEST_PATH, cid: String(Date.now()) });
  return fetch(`/?${params}`, { credentials: 'omit', cache: 'no-store' }).then((res) => {
    if (!res.ok) throw new Error(`The collector answered ${res.status}.`);
  });
}

function TestHit({ siteId }) {
  const [state, setState] = useState(null);
  const timer = useRef(0);
  useEffect(() => () => clearTimeout(timer.current), []);
  const send = async () => {
    setState({ busy: true, text: 'Sending…' });
    try {
      await sendTestHit(siteId);
      setState({ busy: false, text: `Sent a pageview of ${TEST_PATH}: the report opens as soon as it is counted.` });
      clearTimeout(timer.current);
      timer.current = setTimeout(
        () => setState({
          busy: false,
          text: `The test pageview has not arrived yet. The server drops hits from browsers that call themselves bots and from hosts it is told to exclude (PLUMB_EXCLUDED_HOSTS): ${location.hostname} may be one.`,
        }),
        TEST_PATIENCE_MS,
      );
    } catch (err) {
      setState({ busy: false, text: `The test pageview could not be sent. ${err instanceof Error ? err.message : ''}` });
    }
  };
  return html`<section class="card stack" aria-labelledby="test-hit-title">
    <h2 id="test-hit-title">Try it without your site</h2>
    <p>Sends one real pageview of <code>${TEST_PATH}</code> on ${location.host} from this browser to the collector, as the tag does. It is recorded and counted in the report like any other pageview.</p>
    <div class="row">
      <button type="button" class="secondary" disabled=${state?.busy} onClick=${send}>Send a test pageview</button>
      <span class="muted" role="status" aria-live="polite">${state?.text ?? ''}</span>
    </div>
  </section>`;
}

/** The waiting page: polls until the first pageview is counted, then hands over to the report (`onStarted`). */
export function Onboarding({ site, onStarted }) {
  const [details, setDetails] = useState(null);
  const [problem, setProblem] = useState('');
  useEffect(() => {
    // The site's domain and Umami id, for the other trackers' tags.
    api('GET', `/v1/sites/${site.id}`).then(setDetails, () => setDetails({ id: site.id, name: site.name }));
  }, [site.id]);
  useEffect(() => {
    let stopped = false;
    let timer = 0;
    const check = async () => {
      // A hidden tab waits: nobody is watching, and the check runs the moment the tab is shown again.
      if (!document.hidden) {
        try {
          if ((await pageviews(site)) > 0) {
            if (!stopped) onStarted();
            return;
          }
          setProblem('');
        } catch (err) {
          setProblem(`Checking failed: ${explain(err)} Trying again.`);
        }
      }
      if (!stopped) timer = setTimeout(check, POLL_MS);
    };
    timer = setTimeout(check, POLL_MS);
    const shown = () => {
      if (document.hidden) return;
      clearTimeout(timer);
      void check();
    };
    document.addEventListener('visibilitychange', shown);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', shown);
    };
  }, [site.id]);
  return html`<div class="onboarding stack">
    <section class="card waiting" aria-labelledby="waiting-title">
      <div class="waiting-line">
        <span class="waiting-pulse" aria-hidden="true"></span>
        <h2 id="waiting-title">Waiting for the first pageview</h2>
      </div>
      <p role="status" aria-live="polite" data-waiting>No pageview recorded yet. This page checks every few seconds and shows the report as soon as one arrives.</p>
      ${problem ? html`<p class="status error">${problem}</p>` : null}
    </section>
    <section class="card stack" aria-labelledby="install-title">
      <h2 id="install-title">Add the tracking code to your site</h2>
      ${details ? html`<${TrackingCode} site=${details} />` : html`<p class="muted">Loading…</p>`}
    </section>
    <${TestHit} siteId=${site.id} />
  </div>`;
}
