// A site's settings: name, time zone, sharing (with its password and link), multi-domain, the script tag, and
// deletion behind a typed confirmation.

import { api } from './api.js';
import { field, fill, h, main, pageData, select, snippet, statusLine } from './dom.js';
import { scriptTag, zoneOptions } from './sites.js';

export async function siteSettingsPage() {
  const root = main();
  const siteId = pageData('site');
  let site = await api('GET', `/v1/sites/${siteId}`);

  const status = statusLine();
  const name = h('input', { name: 'name', required: true, maxlength: 255, value: site.name });
  const zone = select('timezone', zoneOptions(site.timezone), site.timezone);
  const sharing = select('sharing', [['none', 'Not shared'], ['private', 'Shared with a password'], ['public', 'Shared publicly']], site.sharing);
  const password = h('input', { name: 'share_password', type: 'password', maxlength: 255, autocomplete: 'new-password' });
  const passwordField = field('Share password', password, 'Required when making the report private; leave empty to keep the current password.');
  const multi = h('input', { type: 'checkbox', name: 'multi_domain', checked: site.multi_domain });
  const option = select('multi_domain_option', [['combined', 'Combined: one visitor across all domains'], ['separate', 'Separate: each domain on its own']], site.multi_domain_option || 'combined');
  const optionField = field('How to count several domains', option);
  const shareLink = h('div');
  const sync = () => {
    passwordField.hidden = sharing.value !== 'private';
    optionField.hidden = !multi.checked;
    fill(shareLink, site.sharing === 'none' ? null : h('p', {}, 'Share link: ', h('a', { href: `/share/${site.id}` }, `${location.origin}/share/${site.id}`)));
  };
  sharing.addEventListener('change', sync);
  multi.addEventListener('change', sync);

  const form = h('form', { class: 'card stack', 'aria-label': 'Site settings' },
    h('h2', {}, 'Settings'), field('Site name', name), field('Time zone', zone), field('Sharing', sharing), passwordField, shareLink,
    h('div', { class: 'check' }, multi, h('label', { for: (multi.id = 'multi-domain') }, 'Track several domains with this site')), optionField,
    h('button', { type: 'submit' }, 'Save settings'), status.el);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    status.clear();
    const body = {};
    if (name.value !== site.name) body.name = name.value;
    if (zone.value !== site.timezone) body.timezone = zone.value;
    if (sharing.value !== site.sharing || (sharing.value === 'private' && password.value)) body.sharing = sharing.value;
    if (sharing.value === 'private' && password.value) body.share_password = password.value;
    if (multi.checked !== site.multi_domain || (multi.checked && option.value !== site.multi_domain_option)) {
      body.multi_domain = multi.checked;
      if (multi.checked) body.multi_domain_option = option.value;
    }
    try {
      site = await api('POST', `/v1/sites/${siteId}`, body);
      password.value = '';
      status.ok('Saved.');
      sync();
    } catch (err) {
      status.error(err.message);
    }
  });

  // Deleting asks for the site's name, typed: a slip of the mouse must not wipe a site and its data.
  const confirmInput = h('input', { name: 'confirm', autocomplete: 'off' });
  const deleteStatus = statusLine();
  const deleteButton = h('button', { type: 'submit', class: 'danger', disabled: true }, 'Delete this site and all its data');
  confirmInput.addEventListener('input', () => {
    deleteButton.disabled = confirmInput.value !== site.name;
  });
  const danger = h('form', { class: 'card stack danger-zone', 'aria-label': 'Delete site' },
    h('h2', {}, 'Delete site'), h('p', {}, 'This removes the site, its goals, milestones and every recorded pageview. It cannot be undone.'),
    field(`Type the site name (${site.name}) to confirm`, confirmInput), deleteButton, deleteStatus.el);
  danger.addEventListener('submit', async (event) => {
    event.preventDefault();
    if (confirmInput.value !== site.name) return;
    try {
      await api('DELETE', `/v1/sites/${siteId}`);
      location.assign('/sites');
    } catch (err) {
      deleteStatus.error(err.message);
    }
  });

  fill(root, h('h1', {}, `Settings of ${site.name}`),
    h('p', { class: 'links' }, h('a', { href: `/sites/${siteId}` }, 'Report'), ' · ', h('a', { href: `/sites/${siteId}/goals` }, 'Goals and milestones')),
    form, h('section', { class: 'card' }, h('h2', {}, 'Script tag'), h('p', {}, 'Add this to every page of the site, in <head> or at the end of <body>.'),
      snippet('Script tag', scriptTag(site.id))),
    danger);
  sync();
}
