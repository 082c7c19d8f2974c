// The account page of the person logged in, in sections with a side menu (components/section-nav.js, shared with
// the members and API tokens pages): their accounts (switch between them), two-factor authentication (set up with
// any authenticator app, recovery codes shown once), email reports per site, password, email address and sessions.

import { api } from '../api.js';
import { ConfirmButton, failed, Field, ok, Status } from '../forms.js';
import { explain } from '../messages.js';
import { QrCode } from '../qr-code.js';
import { Section, SettingsLayout } from '../components/section-nav.js';
import { ACCOUNT_SECTIONS, accountNav } from './settings-nav.js';
import { html, useEffect, useState } from '../ui.js';

const LABELS = {
  current_password: 'Your current password',
  new_password: 'The new password',
  email: 'The email address',
  code: 'The code',
  site_id: 'The site',
};

/** A password field with its own state, for forms that ask for the current password. */
function PasswordField({ label, value, onInput, autocomplete = 'current-password', name = 'current_password' }) {
  return html`<${Field} label=${label}>
    ${(id) => html`<input id=${id} name=${name} type="password" required autocomplete=${autocomplete} value=${value} onInput=${(e) => onInput(e.currentTarget.value)} />`}
  <//>`;
}

function Accounts({ me }) {
  const [status, setStatus] = useState(null);
  if (me.accounts.length < 2) return null;
  const switchTo = async (account) => {
    try {
      await api('POST', '/dashboard/api/switch', { account_id: account.id });
      location.assign('/sites');
    } catch (err) {
      setStatus(failed(explain(err)));
    }
  };
  return html`<section class="card" aria-labelledby="accounts-h">
    <h2 id="accounts-h">Your accounts</h2>
    <ul class="accounts">${me.accounts.map((a) => html`<li data-account=${a.id}>
      ${a.name} (${a.role})${' '}
      ${a.id === me.account.id ? html`<strong>current</strong>` : html`<button type="button" class="secondary small" onClick=${() => switchTo(a)}>Switch to ${a.name}</button>`}
    </li>`)}</ul>
    <${Status} status=${status} />
  </section>`;
}

function Reports() {
  const [list, setList] = useState(null);
  const [status, setStatus] = useState(null);
  const load = async () => setList(await api('GET', '/dashboard/api/subscriptions'));
  useEffect(() => {
    load().catch((err) => setStatus(failed(explain(err))));
  }, []);
  const toggle = async (row, frequency, subscribed) => {
    // The box shows its new state at once: rendered again with the old one while the change is saved (the status
    // line below does that), the controlled box would flick back until the list is read again.
    setList((l) => l && { ...l, data: l.data.map((r) => (r.site_id === row.site_id ? { ...r, [frequency]: subscribed } : r)) });
    try {
      await api('PUT', '/dashboard/api/subscriptions', { site_id: row.site_id, frequency, subscribed });
      setStatus(ok(subscribed ? `You will get the ${frequency} report of ${row.site_name} by email.` : `No more ${frequency} reports of ${row.site_name}.`));
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS })));
    }
    await load();
  };
  const box = (row, frequency) => html`<input type="checkbox" aria-label=${`${frequency === 'weekly' ? 'Weekly' : 'Monthly'} report of ${row.site_name}`}
    checked=${row[frequency]} onChange=${(e) => toggle(row, frequency, e.currentTarget.checked)} />`;
  // "Send me this report now": last week's or last month's report at once, to try mail without waiting for a
  // period to end (to the address above only; a few a minute).
  const [sending, setSending] = useState(null);
  const sendNow = async (row, period) => {
    setSending(`${row.site_id}:${period}`);
    try {
      const sent = await api('POST', '/dashboard/api/subscriptions/send', { site_id: row.site_id, period });
      setStatus(ok(`Sent ${period === 'last_week' ? "last week's" : "last month's"} report of ${row.site_name} (${sent.date_from} to ${sent.date_to}) to ${sent.sent_to}.`));
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS })));
    } finally {
      setSending(null);
    }
  };
  const sendButton = (row, period) => html`<button type="button" class="secondary small" data-send-report=${period}
    disabled=${!list.mail_configured || sending !== null} onClick=${() => sendNow(row, period)}
    aria-label=${`Send me ${period === 'last_week' ? "last week's" : "last month's"} report of ${row.site_name} now`}>
    ${sending === `${row.site_id}:${period}` ? 'Sending…' : period === 'last_week' ? 'Last week' : 'Last month'}</button>`;
  return html`<section class="card" aria-labelledby="reports-h">
    <h2 id="reports-h">Email reports</h2>
    ${list === null
      ? html`<p class="muted">Loading…</p>`
      : html`<p class="muted">Sent to ${list.email} when a week (Monday to Sunday) or a month is over in the site's time zone: visitors,
            pageviews, bounce rate and visit duration against the period before, top pages, top sources and goals.
            "Send me now" sends you last week's or last month's report at once, to see one without waiting.</p>
          ${list.mail_configured ? null : html`<p class="notice">This server sends no email (PLUMB_SMTP_URL or PLUMB_PUBLIC_URL is not set), so reports cannot be sent yet.</p>`}
          ${list.data.length === 0
            ? html`<p class="muted">No sites yet.</p>`
            : html`<div class="scroll-x"><table>
                <thead><tr><th scope="col">Site</th><th scope="col">Weekly</th><th scope="col">Monthly</th><th scope="col">Send me now</th></tr></thead>
                <tbody>${list.data.map((row) => html`<tr data-subscription=${row.site_id}><td>${row.site_name}</td><td>${box(row, 'weekly')}</td><td>${box(row, 'monthly')}</td>
                  <td class="actions">${sendButton(row, 'last_week')} ${sendButton(row, 'last_month')}</td></tr>`)}</tbody>
              </table></div>`}`}
    <${Status} status=${status} />
  </section>`;
}

/** The two-factor key on one line (a key is no text to resize or wrap), selected on focus, with a copy button. */
function KeyField({ text }) {
  const [note, setNote] = useState('');
  const copy = async (input) => {
    try {
      await navigator.clipboard.writeText(text);
      setNote('Copied');
    } catch {
      input.select();
      setNote('Selected: press Ctrl+C to copy');
    }
  };
  return html`<${Field} label="Key">
    ${(id) => html`<div class="row">
      <input id=${id} readonly class="code" size=${text.length} value=${text} spellcheck="false" autocomplete="off" onFocus=${(e) => e.currentTarget.select()} />
      <button type="button" class="secondary" onClick=${(e) => copy(e.currentTarget.previousElementSibling)}>Copy</button>
      <span class="muted" role="status" aria-live="polite">${note}</span>
    </div>`}
  <//>`;
}

function TwoFactor({ me, onChanged }) {
  const [state, setState] = useState(null);
  const [password, setPassword] = useState('');
  const [setup, setSetup] = useState(null);
  const [code, setCode] = useState('');
  const [codes, setCodes] = useState(null);
  const [status, setStatus] = useState(null);
  const load = async () => setState(await api('GET', '/dashboard/api/account/two-factor'));
  useEffect(() => {
    load().catch((err) => setStatus(failed(explain(err))));
  }, []);
  const run = async (work) => {
    try {
      await work();
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS })));
    }
  };
  const start = (e) => {
    e.preventDefault();
    return run(async () => {
      setSetup(await api('POST', '/dashboard/api/account/two-factor/setup', { current_password: password }));
      setPassword('');
      setStatus(null);
    });
  };
  const enable = (e) => {
    e.preventDefault();
    return run(async () => {
      const done = await api('POST', '/dashboard/api/account/two-factor/enable', { code: code.trim() });
      setCodes(done.recovery_codes);
      setSetup(null);
      setCode('');
      setStatus(ok('Two-factor authentication is on. Logging in now asks for a code from your app.'));
      await load();
      await onChanged();
    });
  };
  const disable = (e) => {
    e.preventDefault();
    return run(async () => {
      await api('POST', '/dashboard/api/account/two-factor/disable', { current_password: password });
      setPassword('');
      setCodes(null);
      setStatus(ok('Two-factor authentication is off.'));
      await load();
      await onChanged();
    });
  };
  const newCodes = (e) => {
    e.preventDefault();
    return run(async () => {
      setCodes((await api('POST', '/dashboard/api/account/two-factor/recovery-codes', { current_password: password })).recovery_codes);
      setPassword('');
      setStatus(ok('New recovery codes: the old ones no longer work.'));
      await load();
    });
  };
  const codesShown = codes
    ? html`<div class="secret" data-recovery-codes="">
        <p><strong>Your recovery codes, shown this once.</strong> Each logs you in once without your app: keep them somewhere safe.</p>
        <ul class="code recovery-codes">${codes.map((c) => html`<li>${c}</li>`)}</ul>
      </div>`
    : null;
  return html`<section class="card stack" aria-labelledby="twofa-h">
    <h2 id="twofa-h">Two-factor authentication</h2>
    ${state === null
      ? html`<p class="muted">Loading…</p>`
      : state.enabled
        ? html`<p data-two-factor="on">On. ${state.recovery_codes_left} recovery code${state.recovery_codes_left === 1 ? '' : 's'} left.</p>
            ${codesShown}
            <form class="stack" aria-label="Two-factor settings" onSubmit=${(e) => e.preventDefault()}>
              <${PasswordField} label="Your current password" value=${password} onInput=${setPassword} />
              <div class="row wrap">
                <button type="button" class="secondary" onClick=${newCodes}>New recovery codes</button>
                <button type="button" class="danger" onClick=${disable}>Turn off</button>
              </div>
            </form>`
        : setup
          ? html`<div class="stack" data-two-factor-setup="">
              <p>Add Plumb to your authenticator app (any app for time-based codes): scan this code with it, type in the key, or open the link on the phone with the app.</p>
              <${QrCode} text=${setup.otpauth_uri} label="QR code for your authenticator app" />
              <${KeyField} text=${setup.secret} />
              <p class="small"><a href=${setup.otpauth_uri}>Open in authenticator app</a></p>
              <form class="stack" aria-label="Confirm two-factor authentication" onSubmit=${enable}>
                <${Field} label="The 6-digit code the app shows now">
                  ${(id) => html`<input id=${id} name="code" inputmode="numeric" autocomplete="one-time-code" required value=${code} onInput=${(e) => setCode(e.currentTarget.value)} />`}
                <//>
                <button type="submit">Turn on</button>
              </form>
            </div>`
          : html`<p data-two-factor="off">Off. With it on, logging in also asks for a code from an app on your phone.</p>
              ${codesShown}
              <form class="stack" aria-label="Set up two-factor authentication" onSubmit=${start}>
                <${PasswordField} label="Your current password" value=${password} onInput=${setPassword} />
                <button type="submit">Set up two-factor authentication</button>
              </form>`}
    <${Status} status=${status} />
  </section>`;
}

function Password() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [status, setStatus] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    // Typed twice, so a typo does not become the password the next login asks for.
    if (next !== again) {
      setStatus(failed('The new password and its confirmation differ: type the same password in both.'));
      return;
    }
    try {
      const done = await api('POST', '/dashboard/api/account/password', { current_password: current, new_password: next });
      setCurrent('');
      setNext('');
      setAgain('');
      setStatus(ok(`Password changed. ${done.sessions_ended ? `${done.sessions_ended} other session${done.sessions_ended === 1 ? '' : 's'} ended.` : ''}`));
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS })));
    }
  };
  return html`<form class="card stack" aria-label="Change password" onSubmit=${submit}>
    <h2>Password</h2>
    <${PasswordField} label="Current password" value=${current} onInput=${setCurrent} />
    <${PasswordField} label="New password (at least 10 characters)" value=${next} onInput=${setNext} autocomplete="new-password" name="new_password" />
    <${PasswordField} label="New password again" value=${again} onInput=${setAgain} autocomplete="new-password" name="new_password_again" />
    <button type="submit">Change password</button>
    <p class="muted small">Every other session of your login ends.</p>
    <${Status} status=${status} />
  </form>`;
}

function Email({ me, mailConfigured }) {
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [status, setStatus] = useState(null);
  const submit = async (e) => {
    e.preventDefault();
    try {
      await api('POST', '/dashboard/api/account/email', { email: email.trim(), current_password: password });
      setStatus(ok(`A message is on its way to ${email.trim()}: open its link to change your address.`));
      setPassword('');
    } catch (err) {
      setStatus(failed(explain(err, { labels: LABELS })));
    }
  };
  return html`<form class="card stack" aria-label="Change email" onSubmit=${submit}>
    <h2>Email address</h2>
    <p>You log in as <strong>${me.user.email}</strong>.</p>
    ${mailConfigured
      ? html`<${Field} label="New email address">
            ${(id) => html`<input id=${id} name="email" type="email" required maxlength="255" value=${email} onInput=${(e) => setEmail(e.currentTarget.value)} />`}
          <//>
          <${PasswordField} label="Your current password" value=${password} onInput=${setPassword} />
          <button type="submit">Send a confirmation link</button>`
      : html`<p class="notice">Changing it needs email to confirm the new address, and this server sends none (PLUMB_SMTP_URL is not set).</p>`}
    <${Status} status=${status} />
  </form>`;
}

function Sessions() {
  const [list, setList] = useState(null);
  const [status, setStatus] = useState(null);
  const load = async () => setList((await api('GET', '/dashboard/api/account/sessions')).data);
  useEffect(() => {
    load().catch((err) => setStatus(failed(explain(err))));
  }, []);
  const end = async (s) => {
    try {
      await api('DELETE', `/dashboard/api/account/sessions/${s.id}`);
      setStatus(ok('That session has ended.'));
    } catch (err) {
      setStatus(failed(explain(err)));
    }
    await load();
  };
  return html`<section class="card" aria-labelledby="sessions-h">
    <h2 id="sessions-h">Sessions</h2>
    ${list === null
      ? html`<p class="muted">Loading…</p>`
      : html`<div class="scroll-x"><table>
          <thead><tr><th scope="col">Device</th><th scope="col">Started</th><th scope="col">Until</th><th scope="col">Actions</th></tr></thead>
          <tbody>${list.map((s) => html`<tr data-session=${s.id}>
            <td class="label" title=${s.browser ?? ''}>${s.device ?? s.browser ?? 'unknown'}${s.current ? html` <strong>(this one)</strong>` : null}</td>
            <td>${s.created_at}</td><td>${s.expires_at}</td>
            <td class="actions">${s.current ? null : html`<${ConfirmButton} label="End" confirmLabel="Confirm end" what="session" onConfirm=${() => end(s)} />`}</td>
          </tr>`)}</tbody>
        </table></div>`}
    <${Status} status=${status} />
  </section>`;
}

export function AccountPage({ data }) {
  const [me, setMe] = useState(null);
  const [problem, setProblem] = useState(null);
  const load = async () => setMe(await api('GET', '/dashboard/api/me'));
  useEffect(() => {
    load().catch((err) => setProblem(explain(err)));
  }, []);
  if (problem) return html`<h1>Your account</h1><p class="status error" role="alert">${problem}</p>`;
  if (!me) return html`<h1>Your account</h1><p class="muted">Loading…</p>`;
  const blocked = me.account.needs_two_factor;
  // The menu lists the sections this person has: accounts only with several, email reports once two-factor is on
  // where the account requires it.
  const own = [...(me.accounts.length > 1 ? [['accounts', 'Accounts']] : []), ...ACCOUNT_SECTIONS.filter(([key]) => key !== 'email-reports' || !blocked)];
  return html`<div class="settings-page-head">
      <h1>Your account</h1>
      <p class="muted">${me.user.email} · ${me.account.role} of ${me.account.name}</p>
    </div>
    ${blocked
      ? html`<p class="notice" role="alert">${me.account.name} requires two-factor authentication: turn it on below to use the account.</p>`
      : null}
    <${SettingsLayout} label="Account settings" groups=${accountNav('account', blocked ? 'viewer' : me.account.role ?? data?.role, own)}>
      ${me.accounts.length > 1 ? html`<${Section} id="accounts"><${Accounts} me=${me} /><//>` : null}
      <${Section} id="two-factor"><${TwoFactor} me=${me} onChanged=${load} /><//>
      ${blocked ? null : html`<${Section} id="email-reports"><${Reports} /><//>`}
      <${Section} id="password"><${Password} /><//>
      <${Section} id="email"><${Email} me=${me} mailConfigured=${me.mail_configured} /><//>
      <${Section} id="sessions"><${Sessions} /><//>
    <//>`;
}
