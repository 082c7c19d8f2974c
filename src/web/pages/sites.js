// The sites page: every site of the account with its links and script tag, and the form that adds one (name,
// domain, time zone defaulting to the viewer's own).

import { api, listAll } from '../api.js';
import { failed, Field, ok, Snippet, Status, ZoneField, zoneAccepted } from '../forms.js';
import { explain } from '../messages.js';
import { browserZone } from '../time-zones.js';
import { html, useEffect, useState } from '../ui.js';

/** The tag an owner adds to their pages; SPA tracking on, so client-side navigations count too. */
export const scriptTag = (siteId) => `<script src="${location.origin}/script.js" data-site="${siteId}" data-spa="auto" defer></script>`;

export const SHARING_WORDS = new Map([
  ['none', 'not shared'],
  ['private', 'shared with a password'],
  ['public', 'shared publicly'],
]);

const SITE_LABELS = { name: 'The site name', domain: 'The domain' };

function SiteCard({ site, fresh, canManage }) {
  const facts = [`Site id ${site.id}`, site.timezone, site.domain ? site.domain.split(',').join(', ') : null, SHARING_WORDS.get(site.sharing)];
  return html`<article class=${`card site${fresh ? ' fresh' : ''}`} data-site-id=${site.id}>
    <h2><a href=${`/sites/${site.id}`}>${site.name}</a></h2>
    <p class="muted">${facts.filter(Boolean).join(' · ')}</p>
    <p class="links">
      <a href=${`/sites/${site.id}`}>Report</a>${canManage
        ? html`${' · '}<a href=${`/sites/${site.id}/settings`}>Settings</a>${' · '}<a href=${`/sites/${site.id}/goals`}>Goals and milestones</a>`
        : null}
    </p>
    ${fresh ? html`<p><strong>Add this tag to every page of ${site.name}</strong> to start counting.</p>` : null}
    <${Snippet} label=${`Script tag for ${site.name}`} text=${scriptTag(site.id)} />
  </article>`;
}

function AddSite({ onAdded }) {
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
      setStatus(ok(`Added ${site.name}. Its script tag is above: add it to every page of the site.`));
      await onAdded(site);
    } catch (err) {
      setStatus(failed(explain(err, { labels: SITE_LABELS })));
    } finally {
      setBusy(false);
    }
  };
  return html`<form class="card stack" aria-label="Add a site" onSubmit=${submit}>
    <h2>Add a site</h2>
    <${Field} label="Site name" hint="What you call the site, such as My blog.">
      ${(id, hint) => html`<input id=${id} name="name" required maxlength="255" autocomplete="off" aria-describedby=${hint} value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}
    <//>
    <${Field} label="Domain (optional)" hint="The site's address without https://, such as example.com; several separated by commas. Other trackers' tags (Plausible's) find the site by it.">
      ${(id, hint) => html`<input id=${id} name="domain" maxlength="2048" autocomplete="off" spellcheck="false" placeholder="example.com" aria-describedby=${hint} value=${domain} onInput=${(e) => setDomain(e.currentTarget.value)} />`}
    <//>
    <${ZoneField} value=${zone} onChange=${setZone} />
    <button type="submit" disabled=${busy}>Add site</button>
    <${Status} status=${status} />
  </form>`;
}

export function SitesPage({ data }) {
  // Viewers read reports; adding and changing sites is for the account's owners and admins (the server says so too).
  const canManage = data.role !== 'viewer';
  const [sites, setSites] = useState(null);
  const [problem, setProblem] = useState('');
  const [fresh, setFresh] = useState('');
  const load = async () => {
    try {
      setSites(await listAll('/v1/sites'));
      setProblem('');
    } catch (err) {
      setProblem(explain(err));
    }
  };
  useEffect(() => void load(), []);
  const added = async (site) => {
    setFresh(site.id);
    await load();
  };
  return html`<h1>Sites</h1>
    ${problem ? html`<p class="status error" role="alert">The sites could not be loaded. ${problem}</p>` : null}
    <div class="sites">
      ${sites === null
        ? html`<p class="muted">Loading…</p>`
        : sites.length === 0
          ? html`<p class="card">${canManage ? 'No sites yet: add your first one below.' : 'No sites to show yet.'}</p>`
          : sites.map((s) => html`<${SiteCard} key=${s.id} site=${s} fresh=${s.id === fresh} canManage=${canManage} />`)}
    </div>
    ${canManage
      ? html`<${AddSite} onAdded=${added} />`
      : html`<p class="muted">You can read the reports of these sites. Adding and changing sites is up to the account's owners and admins.</p>`}`;
}
