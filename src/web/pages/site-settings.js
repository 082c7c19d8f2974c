// A site's settings, in sections with a side menu (components/section-nav.js): general (name, domain, time zone,
// multi-domain, Plausible's script) with sharing (password, link) in the same form; where its public report may be
// embedded (the origins allowed to frame /share/{id}?embed=true); imported history; the tracking code with its
// options and the other trackers' forms; the danger zone, deletion behind the typed name.

import { api } from '../api.js';
import { failed, Field, ok, Snippet, Status, ZoneField, zoneAccepted } from '../forms.js';
import { ImportsPanel } from './imports.js';
import { explain } from '../messages.js';
import { Section, SettingsLayout } from '../components/section-nav.js';
import { siteNav } from './settings-nav.js';
import { TrackingCode } from '../tracking-code.js';
import { html, useEffect, useState } from '../ui.js';

const LABELS = { name: 'The site name', domain: 'The domain', share_password: 'The share password', plausible_script_id: "The Plausible script's id" };
const MISSING = 'This site no longer exists: it may have been deleted. Go back to the sites page.';

function SettingsForm({ site, onSaved }) {
  const [name, setName] = useState(site.name);
  const [domain, setDomain] = useState(site.domain ?? '');
  const [scriptId, setScriptId] = useState(site.plausible_script_id ?? '');
  const [zone, setZone] = useState(site.timezone);
  const [sharing, setSharing] = useState(site.sharing);
  const [password, setPassword] = useState('');
  const [multi, setMulti] = useState(site.multi_domain);
  const [option, setOption] = useState(site.multi_domain_option || 'combined');
  const [status, setStatus] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    if (!zoneAccepted(zone, site.timezone)) return setStatus(failed('Choose a time zone from the list.'));
    if (sharing === 'private' && site.sharing !== 'private' && !password) {
      return setStatus(failed('Choose a share password: visitors of the private report will need it.'));
    }
    const body = {};
    if (name.trim() !== site.name) body.name = name.trim();
    if (domain.trim() !== (site.domain ?? '')) body.domain = domain.trim();
    if (scriptId.trim() !== (site.plausible_script_id ?? '')) body.plausible_script_id = scriptId.trim();
    if (zone !== site.timezone) body.timezone = zone;
    if (sharing !== site.sharing || (sharing === 'private' && password)) body.sharing = sharing;
    if (sharing === 'private' && password) body.share_password = password;
    if (multi !== site.multi_domain || (multi && option !== site.multi_domain_option)) {
      body.multi_domain = multi;
      if (multi) body.multi_domain_option = option;
    }
    try {
      const saved = await api('POST', `/v1/sites/${site.id}`, body);
      setPassword('');
      setStatus(ok('Saved.'));
      onSaved(saved);
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS, missing: MISSING })));
    }
  };
  // One form, one Save: sharing is a part of it with its own menu entry, not a second form to save apart.
  return html`<form class="card stack" aria-label="Site settings" onSubmit=${submit}>
    <h2>General</h2>
    <${Field} label="Site name">${(id) => html`<input id=${id} name="name" required maxlength="255" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}<//>
    <${Field} label="Domain" hint="The site's address without https://, several separated by commas. Other trackers' tags (Plausible's) find the site by it.">
      ${(id, hint) => html`<input id=${id} name="domain" maxlength="2048" spellcheck="false" autocomplete="off" aria-describedby=${hint} value=${domain} onInput=${(e) => setDomain(e.currentTarget.value)} />`}
    <//>
    <${Field} label="Plausible script" hint="Switching from Plausible's current snippet (<script async src=…/js/pa-….js>): paste its script address or the pa-… name, then point the snippet's src at this server. Empty: none.">
      ${(id, hint) => html`<input id=${id} name="plausible_script_id" maxlength="512" spellcheck="false" autocomplete="off" aria-describedby=${hint} value=${scriptId} onInput=${(e) => setScriptId(e.currentTarget.value)} />`}
    <//>
    <${ZoneField} value=${zone} onChange=${setZone} keep=${site.timezone} />
    <div class="check">
      <input type="checkbox" id="multi-domain" name="multi_domain" checked=${multi} onChange=${(e) => setMulti(e.currentTarget.checked)} />
      <label for="multi-domain">Track several domains with this site</label>
    </div>
    ${multi
      ? html`<${Field} label="How to count several domains">
          ${(id) => html`<select id=${id} name="multi_domain_option" value=${option} onChange=${(e) => setOption(e.currentTarget.value)}>
            <option value="combined">Combined: one visitor across all domains</option><option value="separate">Separate: each domain on its own</option>
          </select>`}
        <//>`
      : null}
    <div class="stack settings-section subsection" id="sharing" data-section="sharing">
      <h3>Sharing</h3>
      <p class="muted">A shared report is read-only, at its own address, for people without a login.</p>
      <${Field} label="Sharing">
        ${(id) => html`<select id=${id} name="sharing" value=${sharing} onChange=${(e) => setSharing(e.currentTarget.value)}>
          <option value="none">Not shared</option><option value="private">Shared with a password</option><option value="public">Shared publicly</option>
        </select>`}
      <//>
      ${sharing === 'private'
        ? html`<${Field} label="Share password" hint=${site.sharing === 'private' ? 'Leave empty to keep the current password.' : 'Visitors of the shared report will need it.'}>
            ${(id, hint) => html`<input id=${id} name="share_password" type="password" maxlength="255" autocomplete="new-password" aria-describedby=${hint} value=${password} onInput=${(e) => setPassword(e.currentTarget.value)} />`}
          <//>`
        : null}
      ${site.sharing !== 'none' ? html`<p>Share link: <a href=${`/share/${site.id}`}>${`${location.origin}/share/${site.id}`}</a></p>` : null}
    </div>
    <button type="submit">Save settings</button>
    <${Status} status=${status} />
  </form>`;
}

function Embedding({ site }) {
  const [text, setText] = useState('');
  const [saved, setSaved] = useState(null);
  const [status, setStatus] = useState(null);
  const url = `/dashboard/api/sites/${site.id}/embedding`;
  useEffect(() => {
    api('GET', url).then(
      (e) => {
        setSaved(e.embed_origins);
        setText(e.embed_origins.join('\n'));
      },
      (err) => setStatus(failed(`The embedding settings could not be loaded. ${explain(err, { missing: MISSING })}`)),
    );
  }, [site.id]);
  const submit = async (event) => {
    event.preventDefault();
    const origins = text.split(/[\s,]+/).filter(Boolean);
    if (origins.length > 20) return setStatus(failed('List at most 20 sites.'));
    try {
      const answer = await api('PUT', url, { embed_origins: origins });
      setSaved(answer.embed_origins);
      setText(answer.embed_origins.join('\n'));
      setStatus(ok(answer.embed_origins.length ? 'Saved: only these sites may embed the report.' : 'Saved: no site may embed the report.'));
    } catch (err) {
      setStatus(failed(explain(err, { labels: { embed_origins: 'The address' }, missing: MISSING })));
    }
  };
  const embedUrl = `${location.origin}/share/${site.id}?embed=true`;
  return html`<form class="card stack" aria-label="Embedding" onSubmit=${submit}>
    <h2>Embedding</h2>
    <p class="muted">The shared report can sit in an iframe on the sites you list here, and nowhere else.${site.sharing === 'public'
      ? ''
      : ' It must be shared publicly for that: a password cannot be asked for inside another page.'}</p>
    <${Field} label="Sites allowed to embed the report" hint="One address per line, such as https://blog.example.com; https://*.example.com for every subdomain. Empty: no site may.">
      ${(id, hint) => html`<textarea id=${id} name="embed_origins" rows="3" spellcheck="false" class="code" aria-describedby=${hint} value=${text} onInput=${(e) => setText(e.currentTarget.value)}></textarea>`}
    <//>
    <button type="submit" disabled=${saved === null}>Save embedding</button>
    <${Status} status=${status} />
    ${site.sharing === 'public' && saved && saved.length > 0
      ? html`<${Snippet} label="Embed code" text=${`<iframe src="${embedUrl}" title="${site.name.replace(/"/g, '&quot;')}: statistics" width="100%" height="1400" style="border:0"></iframe>`} />`
      : null}
  </form>`;
}

function DeleteSite({ site }) {
  const [typed, setTyped] = useState('');
  const [status, setStatus] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    if (typed !== site.name) return;
    try {
      await api('DELETE', `/v1/sites/${site.id}`);
      location.assign('/sites');
    } catch (err) {
      setStatus(failed(explain(err, { missing: MISSING })));
    }
  };
  // Deleting asks for the site's name, typed: a slip of the mouse must not wipe a site and its data.
  return html`<form class="card stack danger-zone" aria-label="Delete site" onSubmit=${submit}>
    <h2>Danger zone</h2>
    <p>Deleting the site removes it with its goals, milestones and every recorded pageview. It cannot be undone.</p>
    <${Field} label=${`Type the site name (${site.name}) to confirm`}>
      ${(id) => html`<input id=${id} name="confirm" autocomplete="off" value=${typed} onInput=${(e) => setTyped(e.currentTarget.value)} />`}
    <//>
    <button type="submit" class="danger" disabled=${typed !== site.name}>Delete this site and all its data</button>
    <${Status} status=${status} />
  </form>`;
}

export function SiteSettingsPage({ data }) {
  const [site, setSite] = useState(null);
  const [problem, setProblem] = useState('');
  useEffect(() => {
    api('GET', `/v1/sites/${data.site}`).then(setSite, (err) => setProblem(explain(err, { missing: MISSING })));
  }, [data.site]);
  const title = `Settings of ${site ? site.name : data.siteName}`;
  return html`<div class="settings-page-head">
      <h1>${title}</h1>
      <p class="links"><a href=${`/sites/${data.site}`}>Report</a> · <a href="/sites">All sites</a></p>
    </div>
    ${problem ? html`<p class="status error" role="alert">The settings could not be loaded. ${problem}</p>` : null}
    ${site === null
      ? problem ? null : html`<p class="muted">Loading…</p>`
      : html`<${SettingsLayout} label="Site settings" groups=${siteNav(site.id, 'settings')}>
          <${Section} id="general"><${SettingsForm} key=${site.id} site=${site} onSaved=${setSite} /><//>
          <${Section} id="embedding"><${Embedding} site=${site} /><//>
          <${Section} id="imports"><${ImportsPanel} site=${site} /><//>
          <${Section} id="tracking-code">
            <section class="card stack" aria-labelledby="tracking-code-title"><h2 id="tracking-code-title">Tracking code</h2>
              <${TrackingCode} site=${site} /></section>
          <//>
          <${Section} id="danger-zone"><${DeleteSite} site=${site} /><//>
        <//>`}`;
}
