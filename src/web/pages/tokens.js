// API settings: the account's tokens (SPEC.md section 5), in sections with the account pages' side menu
// (components/section-nav.js). New tokens start at the least privilege (read-only); permissions are shown with site
// names; revoked tokens wait behind a switch.

import { api, listAll } from '../api.js';
import { ConfirmButton, failed, Field, ok, Snippet, Status } from '../forms.js';
import { explain } from '../messages.js';
import { accountNav } from './settings-nav.js';
import { Section, SettingsLayout } from '../components/section-nav.js';
import { html, useEffect, useState } from '../ui.js';

const LABELS = { name: 'The token name', abilities: 'The permissions' };

/** A token's abilities in words, sites by name: "Read My blog (ABCDEFGH)". */
export function describeAbilities(abilities, siteNames) {
  const site = (id) => (siteNames.has(id) ? `${siteNames.get(id)} (${id})` : `site ${id} (deleted)`);
  return abilities
    .map((a) => {
      if (a === '*') return 'Full admin';
      if (a === 'all-sites-readonly') return 'Read-only, all sites';
      const m = /^(read|manage):(.+)$/.exec(a);
      return m ? `${m[1] === 'read' ? 'Read' : 'Manage'} ${site(m[2])}` : a;
    })
    .join(', ');
}

function CreateToken({ sites, onCreated }) {
  const [name, setName] = useState('');
  // Least privilege first: reading every site's reports, changing nothing.
  const [kind, setKind] = useState('all-sites-readonly');
  const [perSite, setPerSite] = useState({});
  const [status, setStatus] = useState(null);
  const [secret, setSecret] = useState(null);
  const submit = async (event) => {
    event.preventDefault();
    setSecret(null);
    const abilities = kind === 'sites' ? Object.entries(perSite).filter(([, v]) => v).map(([id, v]) => `${v}:${id}`) : [kind];
    if (abilities.length === 0) return setStatus(failed('Choose read or manage for at least one site.'));
    try {
      const token = await api('POST', '/dashboard/api/tokens', { name: name.trim(), abilities });
      setName('');
      setStatus(ok(`Created ${token.name}.`));
      setSecret(token);
      await onCreated();
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS })));
    }
  };
  const radio = (value, label) => html`<div class="check">
    <input type="radio" name="permission" id=${`perm-${value}`} value=${value} checked=${kind === value} onChange=${() => setKind(value)} />
    <label for=${`perm-${value}`}>${label}</label>
  </div>`;
  return html`<form class="card stack" aria-label="Create a token" onSubmit=${submit}>
    <h2>Create a token</h2>
    <${Field} label="Token name" hint="What will use it, such as Grafana or the deploy script.">
      ${(id, hint) => html`<input id=${id} name="name" required maxlength="255" autocomplete="off" aria-describedby=${hint} value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}
    <//>
    <fieldset>
      <legend>Permissions</legend>
      ${radio('all-sites-readonly', 'Read-only on all sites: reports and settings, no changes')}
      ${radio('sites', 'Site-specific: choose per site')}
      ${radio('*', 'Full admin: everything the account can do')}
      ${kind === 'sites'
        ? html`<div class="per-site">${sites.length === 0
            ? html`<p class="muted">No sites yet.</p>`
            : sites.map((s) => html`<${Field} label=${`${s.name} (${s.id})`}>
                ${(id) => html`<select id=${id} data-site=${s.id} value=${perSite[s.id] ?? ''} onChange=${(e) => setPerSite({ ...perSite, [s.id]: e.currentTarget.value })}>
                  <option value="">No access</option><option value="read">Read</option><option value="manage">Manage</option>
                </select>`}
              <//>`)}</div>`
        : null}
    </fieldset>
    <button type="submit">Create token</button>
    <${Status} status=${status} />
    ${secret
      ? html`<div class="secret" data-secret="" aria-live="polite">
          <p><strong>Copy this token now. It will not be shown again.</strong></p>
          <${Snippet} label="New API token" text=${secret.token} />
        </div>`
      : null}
  </form>`;
}

function TokenTable({ tokens, siteNames, onRevoke }) {
  return html`<div class="scroll-x"><table class="stacked">
    <thead><tr>${['Name', 'Permissions', 'Created', 'Last used', 'Status', 'Actions'].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
    <tbody>${tokens.map((t) => html`<tr data-token=${t.id} class=${t.revoked_at ? 'revoked' : ''}>
      <td class="label" data-label="Name">${t.name}</td>
      <td data-label="Permissions" data-abilities="">${describeAbilities(t.abilities, siteNames)}</td>
      <td data-label="Created">${t.created_at}</td>
      <td data-label="Last used" data-last-used="">${t.last_used_at ?? 'never'}</td>
      <td data-label="Status" data-status="">${t.revoked_at ? `revoked ${t.revoked_at}` : 'active'}</td>
      <td class="actions">${t.revoked_at ? null : html`<${ConfirmButton} label="Revoke" confirmLabel="Confirm revoke" what=${`token ${t.name}`} onConfirm=${() => onRevoke(t)} />`}</td>
    </tr>`)}</tbody>
  </table></div>`;
}

export function TokensPage({ data }) {
  const [sites, setSites] = useState(null);
  const [tokens, setTokens] = useState(null);
  const [showRevoked, setShowRevoked] = useState(false);
  const [status, setStatus] = useState(null);
  const loadTokens = async () => setTokens((await api('GET', '/dashboard/api/tokens')).data);
  useEffect(() => {
    Promise.all([listAll('/v1/sites').then(setSites), loadTokens()]).catch((err) => setStatus(failed(`The tokens could not be loaded. ${explain(err)}`)));
  }, []);
  const revoke = async (t) => {
    try {
      await api('DELETE', `/dashboard/api/tokens/${encodeURIComponent(t.id)}`);
      setStatus(ok(`Revoked ${t.name}: programs using it are refused from now on.`));
      await loadTokens();
    } catch (err) {
      setStatus(failed(explain(err, { missing: 'That token was already revoked. Reload the page.' })));
    }
  };
  const siteNames = new Map((sites ?? []).map((s) => [s.id, s.name]));
  const active = (tokens ?? []).filter((t) => !t.revoked_at);
  const revoked = (tokens ?? []).filter((t) => t.revoked_at);
  const shown = showRevoked ? tokens ?? [] : active;
  return html`<div class="settings-page-head">
      <h1>API settings</h1>
      <p>Tokens let programs use the v1 API: send <code>${'Authorization: Bearer <token>'}</code>. A token is shown once, when it is created.</p>
    </div>
    <${SettingsLayout} label="Account settings" ready=${tokens !== null && sites !== null} groups=${accountNav('tokens', data?.role)}>
      <${Section} id="tokens"><section class="card" aria-labelledby="tokens-h">
        <h2 id="tokens-h">Tokens</h2>
        ${tokens === null || sites === null
          ? html`<p class="muted">Loading…</p>`
          : html`${shown.length === 0 ? html`<p class="muted">${revoked.length ? 'No active tokens.' : 'No tokens yet.'}</p>` : html`<${TokenTable} tokens=${shown} siteNames=${siteNames} onRevoke=${revoke} />`}
            ${revoked.length > 0
              ? html`<div class="check"><input type="checkbox" id="show-revoked" checked=${showRevoked} onChange=${(e) => setShowRevoked(e.currentTarget.checked)} />
                  <label for="show-revoked">Show revoked tokens (${revoked.length})</label></div>`
              : null}`}
        <${Status} status=${status} />
      </section><//>
      ${sites === null ? null : html`<${Section} id="create-token"><${CreateToken} sites=${sites} onCreated=${loadTokens} /><//>`}
    <//>`;
}
