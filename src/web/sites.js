// The sites page: every site of the account with its links and script tag, and a form to add one.

import { api, listAll } from './api.js';
import { field, fill, h, main, pageData, select, snippet, statusLine } from './dom.js';

export const timeZones = () => (typeof Intl.supportedValuesOf === 'function' ? Intl.supportedValuesOf('timeZone') : ['UTC']);
export const zoneOptions = (current) => {
  const zones = timeZones();
  return (zones.includes(current) ? zones : [current, ...zones]).map((z) => [z, z]);
};

export const scriptTag = (siteId) => `<script src="${location.origin}/script.js" data-site="${siteId}" defer></script>`;

export async function sitesPage() {
  const root = main();
  const list = h('div', { class: 'sites' }, h('p', { class: 'muted' }, 'Loading…'));
  const status = statusLine();
  const name = h('input', { name: 'name', required: true, maxlength: 255, autocomplete: 'off' });
  const zone = select('timezone', zoneOptions(pageData('timezone') || 'UTC'), pageData('timezone') || 'UTC');
  const form = h('form', { class: 'card stack', 'aria-label': 'Add a site' }, h('h2', {}, 'Add a site'), field('Site name', name), field('Time zone', zone),
    h('button', { type: 'submit' }, 'Add site'), status.el);
  fill(root, h('h1', {}, 'Sites'), list, form);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    status.clear();
    try {
      const site = await api('POST', '/v1/sites', { name: name.value, timezone: zone.value });
      name.value = '';
      status.ok(`Added ${site.name}. Add its script tag to your pages to start counting.`);
      await render();
    } catch (err) {
      status.error(err.message);
    }
  });

  async function render() {
    const sites = await listAll('/v1/sites');
    if (sites.length === 0) {
      fill(list, h('p', { class: 'card' }, 'No sites yet: add your first one below.'));
      return;
    }
    fill(
      list,
      sites.map((s) =>
        h('article', { class: 'card site', 'data-site-id': s.id },
          h('h2', {}, h('a', { href: `/sites/${s.id}` }, s.name)),
          h('p', { class: 'muted' }, `Site id ${s.id} · ${s.timezone} · sharing: ${s.sharing}`),
          h('p', { class: 'links' }, h('a', { href: `/sites/${s.id}` }, 'Report'), ' · ', h('a', { href: `/sites/${s.id}/settings` }, 'Settings'), ' · ',
            h('a', { href: `/sites/${s.id}/goals` }, 'Goals and milestones')),
          snippet(`Script tag for ${s.name}`, scriptTag(s.id)),
        ),
      ),
    );
  }
  await render();
}
