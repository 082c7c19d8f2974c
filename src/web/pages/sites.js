// The sites page: every site of the account with its visitors of the last 24 hours, their trend hour by hour, its
// links and (behind a disclosure) its script tag; and the form that adds one (name, domain, time zone defaulting to
// the viewer's own), behind an "Add a site" button once the account has a site.

import { api, listAll, query } from '../api.js';
import { failed, Field, ok, Snippet, Status, ZoneField, zoneAccepted } from '../forms.js';
import { fmtInt } from '../format.js';
import { explain } from '../messages.js';
import { browserZone } from '../time-zones.js';
import { html, useEffect, useRef, useState } from '../ui.js';
import { Sparkline } from './sparkline.js';

/** The tag an owner adds to their pages; SPA tracking on, so client-side navigations count too. */
export const scriptTag = (siteId) => `<script src="${location.origin}/script.js" data-site="${siteId}" data-spa="auto" defer></script>`;

export const SHARING_WORDS = new Map([
  ['none', 'not shared'],
  ['private', 'shared with a password'],
  ['public', 'shared publicly'],
]);

const SITE_LABELS = { name: 'The site name', domain: 'The domain' };

/** Sites summed per request to /dashboard/api/site-summaries (its bound). */
const SUMMARY_CHUNK = 100;

/** Each site's last 24 hours ({ visitors, hours }) by site id, asked in as few bounded requests as the list needs. */
async function summariesOf(sites) {
  const found = new Map();
  for (let i = 0; i < sites.length; i += SUMMARY_CHUNK) {
    const ids = sites.slice(i, i + SUMMARY_CHUNK).map((s) => s.id).join(',');
    const answer = await api('GET', `/dashboard/api/site-summaries?${query({ site_ids: ids })}`);
    for (const summary of answer.data) found.set(summary.site_id, summary);
  }
  return found;
}

/** The site's visitors of the last 24 hours and their trend; a dash until (or unless) the numbers come. */
function LastDay({ site, summary }) {
  if (summary === undefined) return html`<div class="site-numbers"><span class="muted" data-visitors-24h>…</span></div>`;
  if (summary === null) return html`<div class="site-numbers"><span class="muted" data-visitors-24h>—</span></div>`;
  const peak = Math.max(...summary.hours.map((h) => h.visitors));
  return html`<div class="site-numbers">
    <p class="site-visitors"><strong data-visitors-24h>${fmtInt(summary.visitors)}</strong> <span class="muted">${summary.visitors === 1 ? 'visitor' : 'visitors'} in the last 24 hours</span></p>
    <${Sparkline}
      values=${summary.hours.map((h) => h.visitors)}
      label=${`Visitors of ${site.name} hour by hour over the last 24 hours: ${peak === 0 ? 'none' : `at most ${fmtInt(peak)} in an hour`}`}
    />
  </div>`;
}

function SiteCard({ site, fresh, canManage, summary }) {
  const facts = [`Site id ${site.id}`, site.timezone, site.domain ? site.domain.split(',').join(', ') : null, SHARING_WORDS.get(site.sharing)];
  return html`<article class=${`card site${fresh ? ' fresh' : ''}`} data-site-id=${site.id}>
    <div class="site-top">
      <h2><a href=${`/sites/${site.id}`}>${site.name}</a></h2>
      <${LastDay} site=${site} summary=${summary} />
    </div>
    <p class="muted">${facts.filter(Boolean).join(' · ')}</p>
    <p class="links">
      <a href=${`/sites/${site.id}`}>Report</a>${canManage
        ? html`${' · '}<a href=${`/sites/${site.id}/settings`}>Settings</a>${' · '}<a href=${`/sites/${site.id}/goals`}>Goals and milestones</a>`
        : null}
    </p>
    ${fresh ? html`<p><strong>Add this tag to every page of ${site.name}</strong> to start counting, or open <a href=${`/sites/${site.id}`}>its report</a> for the tag's options and a test pageview.</p>` : null}
    <details class="site-code" open=${fresh}>
      <summary>Tracking code</summary>
      <${Snippet} label=${`Script tag for ${site.name}`} text=${scriptTag(site.id)} />
      ${canManage
        ? html`<p class="muted">Options (single-page apps, outbound links, downloads, 404 pages) and other trackers' tags: in <a href=${`/sites/${site.id}/settings`}>the site's settings</a>, and on its report until its first pageview.</p>`
        : null}
    </details>
  </article>`;
}

function AddSite({ onAdded, focusFirst, onClose }) {
  const [name, setName] = useState('');
  const [domain, setDomain] = useState('');
  const [zone, setZone] = useState(() => browserZone());
  const [status, setStatus] = useState(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event) => {
    event.preventDefault();
    if (!zoneAccepted(zone)) return setStatus(failed('Choose a time zone from the list.'));
    setBusy(true);
    setStatus(null);
    try {
      const site = await api('POST', '/v1/sites', { name: name.trim(), timezone: zone, ...(domain.trim() ? { domain: domain.trim() } : {}) });
      setName('');
      setDomain('');
      setStatus(ok(`Added ${site.name}. Its tracking code is open on its card above: add the tag to every page of the site.`));
      await onAdded(site);
    } catch (err) {
      setStatus(failed(explain(err, { labels: SITE_LABELS })));
    } finally {
      setBusy(false);
    }
  };
  const first = useRef(null);
  // Opened by the "Add a site" button: the keyboard goes on in the form, at the bottom of the page.
  useEffect(() => {
    if (focusFirst) first.current?.focus();
  }, []);
  return html`<form class="card stack" aria-label="Add a site" onSubmit=${submit}>
    <h2>Add a site</h2>
    <${Field} label="Site name" hint="What you call the site, such as My blog.">
      ${(id, hint) => html`<input id=${id} ref=${first} name="name" required maxlength="255" autocomplete="off" aria-describedby=${hint} value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}
    <//>
    <${Field} label="Domain (optional)" hint="The site's address without https://, such as example.com; several separated by commas. Other trackers' tags (Plausible's) find the site by it.">
      ${(id, hint) => html`<input id=${id} name="domain" maxlength="2048" autocomplete="off" spellcheck="false" placeholder="example.com" aria-describedby=${hint} value=${domain} onInput=${(e) => setDomain(e.currentTarget.value)} />`}
    <//>
    <${ZoneField} value=${zone} onChange=${setZone} />
    <div class="row">
      <button type="submit" disabled=${busy}>Add site</button>
      ${onClose ? html`<button type="button" class="secondary" onClick=${onClose}>Close</button>` : null}
    </div>
    <${Status} status=${status} />
  </form>`;
}

export function SitesPage({ data }) {
  // Viewers read reports; adding and changing sites is for the account's owners and admins (the server says so too).
  const canManage = data.role !== 'viewer';
  const [sites, setSites] = useState(null);
  const [problem, setProblem] = useState('');
  const [fresh, setFresh] = useState('');
  const [adding, setAdding] = useState(false);
  // Site id -> its last 24 hours; null when the numbers could not be had (the list still shows).
  const [summaries, setSummaries] = useState(new Map());
  const load = async () => {
    try {
      const list = await listAll('/v1/sites');
      setSites(list);
      setProblem('');
      summariesOf(list).then((found) => setSummaries(new Map(list.map((s) => [s.id, found.get(s.id) ?? null]))), () => setSummaries(new Map(list.map((s) => [s.id, null]))));
    } catch (err) {
      setProblem(explain(err));
    }
  };
  useEffect(() => void load(), []);
  const added = async (site) => {
    setFresh(site.id);
    // The form stays open for the next site, and for the words saying this one was added.
    setAdding(true);
    await load();
  };
  const noSites = sites !== null && sites.length === 0;
  const addOpen = adding || noSites;
  return html`<div class="sites-head">
      <h1>Sites</h1>
      ${canManage && sites !== null && !addOpen ? html`<button type="button" onClick=${() => setAdding(true)}>Add a site</button>` : null}
    </div>
    ${problem ? html`<p class="status error" role="alert">The sites could not be loaded. ${problem}</p>` : null}
    <div class="sites">
      ${sites === null
        ? html`<p class="muted">Loading…</p>`
        : sites.length === 0
          ? html`<p class="card">${canManage ? 'No sites yet: add your first one below.' : 'No sites to show yet.'}</p>`
          : sites.map((s) => html`<${SiteCard} key=${s.id} site=${s} fresh=${s.id === fresh} canManage=${canManage} summary=${summaries.get(s.id)} />`)}
    </div>
    ${canManage
      ? sites === null
        ? null
        : addOpen
          ? html`<${AddSite} onAdded=${added} focusFirst=${!noSites} onClose=${noSites ? null : () => setAdding(false)} />`
          : null
      : html`<p class="muted">You can read the reports of these sites. Adding and changing sites is up to the account's owners and admins.</p>`}`;
}
