// API settings: the account's tokens (SPEC.md section 5): create with a name and permissions, the secret shown
// once, the list with last use, revoke.

import { api, listAll } from './api.js';
import { field, fill, h, main, select, snippet, statusLine } from './dom.js';

function describeAbilities(abilities) {
  return abilities
    .map((a) => (a === '*' ? 'Full admin' : a === 'all-sites-readonly' ? 'Read-only, all sites' : a.replace(/^read:/, 'Read ').replace(/^manage:/, 'Manage ')))
    .join(', ');
}

export async function tokensPage() {
  const root = main();
  const status = statusLine();
  const list = h('div', {}, h('p', { class: 'muted' }, 'Loading…'));
  const secretBox = h('div', { 'aria-live': 'polite' });
  const sites = await listAll('/v1/sites');

  const name = h('input', { name: 'name', required: true, maxlength: 255, autocomplete: 'off' });
  const radio = (value, label, checked) => {
    const input = h('input', { type: 'radio', name: 'permission', value, id: `perm-${value}`, checked });
    return h('div', { class: 'check' }, input, h('label', { for: input.id }, label));
  };
  const perSite = h('div', { class: 'per-site', hidden: true },
    sites.length === 0
      ? h('p', { class: 'muted' }, 'No sites yet.')
      : sites.map((s) => field(`${s.name} (${s.id})`, select(`site-${s.id}`, [['', 'No access'], ['read', 'Read'], ['manage', 'Manage']], '', { 'data-site': s.id }))));
  const permissions = h('fieldset', {}, h('legend', {}, 'Permissions'),
    radio('*', 'Full admin: everything the account can do', true),
    radio('all-sites-readonly', 'Read-only on all sites', false),
    radio('sites', 'Site-specific: choose per site', false),
    perSite);
  permissions.addEventListener('change', () => {
    perSite.hidden = permissions.querySelector('input[name=permission]:checked')?.value !== 'sites';
  });
  const form = h('form', { class: 'card stack', 'aria-label': 'Create a token' }, h('h2', {}, 'Create a token'), field('Token name', name), permissions,
    h('button', { type: 'submit' }, 'Create token'), status.el, secretBox);

  form.addEventListener('submit', async (event) => {
    event.preventDefault();
    status.clear();
    fill(secretBox);
    const choice = permissions.querySelector('input[name=permission]:checked')?.value;
    const abilities =
      choice === 'sites'
        ? [...perSite.querySelectorAll('select')].filter((s) => s.value).map((s) => `${s.value}:${s.dataset.site}`)
        : [choice];
    if (abilities.length === 0) {
      status.error('Choose read or manage for at least one site.');
      return;
    }
    try {
      const token = await api('POST', '/dashboard/api/tokens', { name: name.value, abilities });
      name.value = '';
      status.ok(`Created ${token.name}.`);
      fill(secretBox, h('div', { class: 'secret', 'data-secret': '' },
        h('p', {}, h('strong', {}, 'Copy this token now. It will not be shown again.')), snippet('New API token', token.token)));
      await render();
    } catch (err) {
      status.error(err.message);
    }
  });

  async function render() {
    const { data } = await api('GET', '/dashboard/api/tokens');
    if (data.length === 0) {
      fill(list, h('p', { class: 'muted' }, 'No tokens.'));
      return;
    }
    fill(list, h('table', {},
      h('thead', {}, h('tr', {}, ['Name', 'Permissions', 'Created', 'Last used', 'Status', 'Actions'].map((c) => h('th', { scope: 'col' }, c)))),
      h('tbody', {}, data.map((t) =>
        h('tr', { 'data-token': t.id },
          h('td', {}, t.name), h('td', {}, describeAbilities(t.abilities)), h('td', {}, t.created_at),
          h('td', { 'data-last-used': '' }, t.last_used_at ?? 'never'),
          h('td', { 'data-status': '' }, t.revoked_at ? `revoked ${t.revoked_at}` : 'active'),
          h('td', {}, t.revoked_at ? null : revokeButton(t)))))));
  }

  function revokeButton(t) {
    const button = h('button', { type: 'button', class: 'danger small', 'aria-label': `Revoke token ${t.name}` }, 'Revoke');
    let armed = false;
    button.addEventListener('click', async () => {
      if (!armed) {
        armed = true;
        button.textContent = 'Confirm revoke';
        button.setAttribute('aria-label', `Confirm: revoke token ${t.name}`);
        return;
      }
      try {
        await api('DELETE', `/dashboard/api/tokens/${encodeURIComponent(t.id)}`);
        status.ok(`Revoked ${t.name}.`);
        await render();
      } catch (err) {
        status.error(err.message);
      }
    });
    return button;
  }

  fill(root, h('h1', {}, 'API settings'),
    h('p', {}, 'Tokens let programs use the v1 API: send ', h('code', {}, 'Authorization: Bearer <token>'), '. A token is shown once, when it is created.'),
    h('section', { class: 'card', 'aria-labelledby': 'tokens-h' }, h('h2', { id: 'tokens-h' }, 'Tokens'), list), form);
  await render();
}
