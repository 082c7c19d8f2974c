// The tags that send a site's pageviews to this server: Plumb's own, built from the options a site owner picks, and
// the forms of Fathom's, Plausible's and Umami's tags pointed at Plumb for people switching (docs/collection.md).

import { Field, Snippet, useId } from './forms.js';
import { html, useState } from './ui.js';

/** What the owner picked: page changes without reload, outbound links, file downloads, the site's 404 page. */
export const DEFAULT_OPTIONS = { spa: 'auto', outbound: false, downloads: false, notFound: false };

const quoted = (text) => String(text).replace(/&/g, '&amp;').replace(/"/g, '&quot;');

/** Plumb's tag (attributes of src/tracker/tracker.js and, for the three events, of its extension script). */
export function plumbTag(origin, siteId, options = DEFAULT_OPTIONS) {
  const attributes = [`src="${origin}/script.js"`, `data-site="${quoted(siteId)}"`];
  if (options.spa !== 'off') attributes.push(`data-spa="${options.spa}"`);
  if (options.outbound) attributes.push('data-outbound-links="true"');
  if (options.downloads) attributes.push('data-file-downloads="true"');
  if (options.notFound) attributes.push('data-track-404="true"');
  return `<script ${attributes.join(' ')} defer></script>`;
}

/** Fathom's npm client (fathom-client) loading Plumb's script; its load() options have no word for the three events. */
export function fathomClientCall(origin, siteId, options = DEFAULT_OPTIONS) {
  const spa = options.spa === 'off' ? '' : `, spa: '${options.spa}'`;
  return `Fathom.load('${siteId}', { url: '${origin}/script.js'${spa} });`;
}

/**
 * Plausible's tag with its host changed: the script path carries the options as Plausible's extensions (history
 * navigation is counted by Plausible's plain script), and a 404 page calls plausible('404') as Plausible documents.
 */
export function plausibleTag(origin, domain, options = DEFAULT_OPTIONS) {
  const extensions = [options.spa === 'hash' ? 'hash' : '', options.outbound ? 'outbound-links' : '', options.downloads ? 'file-downloads' : ''].filter(Boolean);
  const tag = `<script defer data-domain="${quoted(domain)}" src="${origin}/js/script${extensions.map((e) => `.${e}`).join('')}.js"></script>`;
  if (!options.notFound) return tag;
  return `${tag}\n<script>window.plausible = window.plausible || function () { (window.plausible.q = window.plausible.q || []).push(arguments); };\nplausible('404', { props: { path: document.location.pathname } });</script>`;
}

/** Umami's tag with its host changed; it takes a Plumb site id in data-website-id as well as the site's Umami id. */
export function umamiTag(origin, websiteId) {
  return `<script defer src="${origin}/script.js" data-website-id="${quoted(websiteId)}"></script>`;
}

function Choice({ label, checked, onChange, hint }) {
  const id = useId('option');
  return html`<div class="check">
    <input type="checkbox" id=${id} checked=${checked} onChange=${(e) => onChange(e.currentTarget.checked)} />
    <label for=${id}>${label}${hint ? html` <span class="muted">${hint}</span>` : null}</label>
  </div>`;
}

/** The tag with its options, and the other trackers' forms behind a disclosure; each copyable. */
export function TrackingCode({ site }) {
  const [options, setOptions] = useState(DEFAULT_OPTIONS);
  const set = (key) => (value) => setOptions({ ...options, [key]: value });
  const origin = location.origin;
  const domain = site.domain ? site.domain.split(',')[0] : '';
  return html`<div class="tracking-code stack">
    <fieldset class="tracking-options">
      <legend>Options</legend>
      <${Field} label="Page changes without a reload (single-page app)">
        ${(id) => html`<select id=${id} name="spa" value=${options.spa} onChange=${(e) => set('spa')(e.currentTarget.value)}>
          <option value="auto">Count them (history API, most apps)</option>
          <option value="hash">Count them (#/ routes)</option>
          <option value="off">No: full page loads only</option>
        </select>`}
      <//>
      <${Choice} label="Clicks on links to other sites" hint="(event Outbound Link: Click)" checked=${options.outbound} onChange=${set('outbound')} />
      <${Choice} label="File downloads" hint="(event File Download)" checked=${options.downloads} onChange=${set('downloads')} />
      <${Choice} label="This tag is for the site's “not found” page" hint="(event 404)" checked=${options.notFound} onChange=${set('notFound')} />
    </fieldset>
    <${Snippet} label=${`Script tag for ${site.name}`} text=${plumbTag(origin, site.id, options)} />
    <p class="muted">Put it in the ${'<head>'} of every page${options.notFound ? ' (this one with the 404 option only on the “not found” page; the others without it)' : ''}.</p>
    <details class="switching">
      <summary>Switching from Fathom, Plausible or Umami?</summary>
      <p>Keep your tag and change only where it loads from; the options above apply to these too.</p>
      <h3>Fathom</h3>
      <p class="muted">Fathom's tag takes the same attributes: change its src to ${origin}/script.js and its data-site to ${site.id}, and it is the tag above. With the fathom-client package:</p>
      <${Snippet} label="fathom-client" text=${fathomClientCall(origin, site.id, options)} />
      <h3>Plausible</h3>
      ${domain
        ? html`<${Snippet} label="Plausible's tag" text=${plausibleTag(origin, domain, options)} />`
        : html`<p>Plausible's tag finds the site by its domain (data-domain): give the site its domain in <a href=${`/sites/${site.id}/settings`}>its settings</a> first. Plausible's current snippet (/js/pa-….js) needs the Plausible script setting there too.</p>`}
      <h3>Umami</h3>
      <${Snippet} label="Umami's tag" text=${umamiTag(origin, site.umami_website_id || site.id)} />
      <p class="muted">Umami's script counts page changes by the history API by itself; link clicks and downloads are events only where a link carries data-umami-event.</p>
    </details>
  </div>`;
}
