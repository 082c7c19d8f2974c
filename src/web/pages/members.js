// The members page (owners and admins), in sections with the account pages' side menu (components/section-nav.js):
// who belongs to the account with which role, changing a role, removing a member, withdrawing an invitation;
// inviting someone (the link is shown to copy, and emailed when the server has mail); and, for owners, requiring
// two-factor authentication of everyone.

import { api, listAll } from '../api.js';
import { ConfirmButton, failed, Field, ok, Snippet, Status } from '../forms.js';
import { explain } from '../messages.js';
import { accountNav } from './settings-nav.js';
import { Section, SettingsLayout } from '../components/section-nav.js';
import { html, useEffect, useState } from '../ui.js';

export const ROLE_WORDS = new Map([
  ['owner', 'Owner: everything, including members'],
  ['admin', 'Admin: sites, goals, tokens and members below owner'],
  ['viewer', 'Viewer: reads reports, changes nothing'],
]);
const LABELS = { email: 'The email address', role: 'The role', site_ids: 'The sites' };

/** The sites a viewer may see, in words. */
const sitesInWords = (ids, names) => (ids === null ? 'All sites' : ids.map((id) => names.get(id) ?? id).join(', '));

/** "All sites" or a choice of sites, for viewers. */
function SiteChoice({ sites, value, onChange }) {
  const all = value === null;
  return html`<fieldset>
    <legend>Sites this viewer sees</legend>
    <div class="check"><input type="checkbox" id="invite-all-sites" checked=${all} onChange=${(e) => onChange(e.currentTarget.checked ? null : [])} />
      <label for="invite-all-sites">All sites, also those added later</label></div>
    ${all
      ? null
      : sites.map((s) => html`<div class="check">
          <input type="checkbox" id=${`invite-site-${s.id}`} checked=${value.includes(s.id)}
            onChange=${(e) => onChange(e.currentTarget.checked ? [...value, s.id] : value.filter((id) => id !== s.id))} />
          <label for=${`invite-site-${s.id}`}>${s.name}</label>
        </div>`)}
  </fieldset>`;
}

function Invite({ me, sites, mailConfigured, onInvited }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState('viewer');
  const [siteIds, setSiteIds] = useState(null);
  const [status, setStatus] = useState(null);
  const [sent, setSent] = useState(null);
  const roles = me.account.role === 'owner' ? ['viewer', 'admin', 'owner'] : ['viewer', 'admin'];
  const submit = async (event) => {
    event.preventDefault();
    setSent(null);
    try {
      const invitation = await api('POST', '/dashboard/api/invitations', { email: email.trim(), role, ...(role === 'viewer' ? { site_ids: siteIds } : {}) });
      setSent(invitation);
      setStatus(ok(invitation.emailed ? `Invitation emailed to ${invitation.email}.` : `Invitation for ${invitation.email} made.`));
      setEmail('');
      await onInvited();
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS })));
    }
  };
  return html`<form class="card stack" aria-label="Invite someone" onSubmit=${submit}>
    <h2>Invite someone</h2>
    ${mailConfigured ? null : html`<p class="notice">This server sends no email (PLUMB_SMTP_URL is not set): copy the invitation link and send it yourself.</p>`}
    <${Field} label="Email address">
      ${(id) => html`<input id=${id} name="email" type="email" required maxlength="255" autocomplete="off" value=${email} onInput=${(e) => setEmail(e.currentTarget.value)} />`}
    <//>
    <${Field} label="Role">
      ${(id) => html`<select id=${id} name="role" value=${role} onChange=${(e) => setRole(e.currentTarget.value)}>
        ${roles.map((r) => html`<option value=${r}>${ROLE_WORDS.get(r)}</option>`)}
      </select>`}
    <//>
    ${role === 'viewer' ? html`<${SiteChoice} sites=${sites} value=${siteIds} onChange=${setSiteIds} />` : null}
    <button type="submit">Invite</button>
    <${Status} status=${status} />
    ${sent
      ? html`<div class="secret" data-invitation="" aria-live="polite">
          <p><strong>${sent.emailed ? 'The link was emailed. ' : ''}Anyone with this link can join until ${sent.expires_at} UTC, once.</strong>
            ${sent.mail_error ? html` ${sent.mail_error}` : null}</p>
          <${Snippet} label="Invitation link" text=${sent.link} />
        </div>`
      : null}
  </form>`;
}

function MemberRow({ member, me, names, soleOwner, onChanged, setStatus }) {
  // Admins never touch owners, and the account's only owner can be neither demoted nor removed (the server refuses
  // both): the page offers only what the server allows.
  const mayTouch = (member.role !== 'owner' || me.account.role === 'owner') && !soleOwner;
  const roles = me.account.role === 'owner' ? ['owner', 'admin', 'viewer'] : ['admin', 'viewer'];
  // The role asked for, shown while it is saved (as the two-factor box below does).
  const [asked, setAsked] = useState(null);
  const change = async (role) => {
    setAsked(role);
    try {
      await api('POST', `/dashboard/api/members/${member.user_id}`, { role, site_ids: role === 'viewer' ? member.site_ids : null });
      setStatus(ok(`${member.email} is now ${role === 'admin' ? 'an admin' : `a ${role}`}.`));
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS })));
    }
    await onChanged();
    setAsked(null);
  };
  const remove = async () => {
    try {
      await api('DELETE', `/dashboard/api/members/${member.user_id}`);
      setStatus(ok(`Removed ${member.email}: their sessions in this account have ended.`));
    } catch (err) {
      setStatus(failed(explain(err)));
    }
    await onChanged();
  };
  return html`<tr data-member=${member.email}>
    <td>${member.email}${member.you ? html` <span class="muted">(you)</span>` : null}</td>
    <td>${mayTouch
      ? html`<select aria-label=${`Role of ${member.email}`} value=${asked ?? member.role} onChange=${(e) => change(e.currentTarget.value)}>
          ${roles.map((r) => html`<option value=${r}>${r}</option>`)}
        </select>`
      : html`${member.role}${soleOwner ? html` <span class="muted" data-sole-owner="">(the only owner: make someone else owner to change this)</span>` : null}`}</td>
    <td>${member.role === 'viewer' ? sitesInWords(member.site_ids, names) : 'All sites'}</td>
    <td>${member.two_factor ? 'on' : 'off'}</td>
    <td>${member.joined_at}</td>
    <td class="actions">${mayTouch ? html`<${ConfirmButton} label="Remove" confirmLabel="Confirm remove" what=${member.email} onConfirm=${remove} />` : null}</td>
  </tr>`;
}

function RequireTwoFactor({ me, onChanged }) {
  const [status, setStatus] = useState(null);
  // The state asked for, shown while it is saved: rendered again with the old one meanwhile (the status line does
  // that), the controlled box would flick back until the account is read again.
  const [asked, setAsked] = useState(null);
  const toggle = async (required) => {
    setAsked(required);
    try {
      await api('POST', '/dashboard/api/account/require-two-factor', { required });
      setStatus(ok(required ? 'Every member now needs two-factor authentication to use this account.' : 'Two-factor authentication is optional again.'));
    } catch (err) {
      setStatus(failed(explain(err)));
    }
    await onChanged();
    setAsked(null);
  };
  return html`<section class="card stack" aria-labelledby="require-2fa-h">
    <h2 id="require-2fa-h">Two-factor authentication</h2>
    <div class="check">
      <input type="checkbox" id="require-2fa" checked=${asked ?? me.account.require_two_factor} onChange=${(e) => toggle(e.currentTarget.checked)} />
      <label for="require-2fa">Require two-factor authentication of every member</label>
    </div>
    <p class="muted">Members without it can only open their account page, to turn it on, until they do.</p>
    <${Status} status=${status} />
  </section>`;
}

export function MembersPage({ data }) {
  const [me, setMe] = useState(null);
  const [members, setMembers] = useState(null);
  const [sites, setSites] = useState([]);
  const [status, setStatus] = useState(null);
  const load = async () => {
    const [who, list] = await Promise.all([api('GET', '/dashboard/api/me'), api('GET', '/dashboard/api/members')]);
    setMe(who);
    setMembers(list);
  };
  useEffect(() => {
    Promise.all([load(), listAll('/v1/sites').then(setSites)]).catch((err) => setStatus(failed(`The members could not be loaded. ${explain(err)}`)));
  }, []);
  const withdraw = async (i) => {
    try {
      await api('DELETE', `/dashboard/api/invitations/${encodeURIComponent(i.id)}`);
      setStatus(ok(`Withdrew the invitation of ${i.email}: its link no longer works.`));
    } catch (err) {
      setStatus(failed(explain(err)));
    }
    await load();
  };
  const names = new Map(sites.map((s) => [s.id, s.name]));
  const role = me?.account.role ?? data?.role;
  return html`<div class="settings-page-head">
      <h1>Members</h1>
      ${me ? html`<p class="muted">People who can log in to ${me.account.name}, and their roles.</p>` : null}
    </div>
    <${SettingsLayout} label="Account settings" ready=${me !== null && members !== null} groups=${accountNav('members', role)}>
      <${Section} id="members"><section class="card" aria-labelledby="members-h">
        <h2 id="members-h">Members</h2>
        ${members === null || me === null
          ? html`<p class="muted">Loading…</p>`
          : html`<div class="scroll-x"><table>
              <thead><tr>${['Email', 'Role', 'Sites', 'Two-factor', 'Joined', 'Actions'].map((c) => html`<th scope="col">${c}</th>`)}</tr></thead>
              <tbody>${members.data.map((m) => html`<${MemberRow} member=${m} me=${me} names=${names}
                soleOwner=${m.role === 'owner' && members.data.filter((o) => o.role === 'owner').length === 1} onChanged=${load} setStatus=${setStatus} />`)}</tbody>
            </table></div>
            ${members.invitations.length
              ? html`<h3>Invitations waiting</h3><ul class="invitations">${members.invitations.map((i) => html`<li data-invited=${i.email}>
                  ${i.email} as ${i.role}${i.site_ids ? ` (${sitesInWords(i.site_ids, names)})` : ''}, until ${i.expires_at} UTC
                  ${' '}<${ConfirmButton} label="Withdraw" confirmLabel="Confirm withdraw" what=${`invitation of ${i.email}`} onConfirm=${() => withdraw(i)} />
                </li>`)}</ul>`
              : null}`}
        <${Status} status=${status} />
      </section><//>
      ${me && members ? html`<${Section} id="invite"><${Invite} me=${me} sites=${sites} mailConfigured=${members.mail_configured} onInvited=${load} /><//>` : null}
      ${me && me.account.role === 'owner' ? html`<${Section} id="security"><${RequireTwoFactor} me=${me} onChanged=${load} /><//>` : null}
    <//>`;
}
