// Account security over HTTP: two-factor authentication (TOTP computed here with otpauth, recovery codes used
// once, codes never replayed, an owner requiring it of everyone), changing the password (other sessions end) and
// the email (confirmed through the delivered link), listing and ending sessions, and resetting a forgotten
// password through the delivered email without revealing which addresses have a login.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { linkIn, startMailbox, type Mailbox } from '../helpers/mail.js';
import { addMember, Browser, formField, logIn, newLogin, pageCsrf, PASSWORD } from './helpers.js';

const PUBLIC_URL = 'https://plumb.example.test';
const pathOf = (link: string) => new URL(link).pathname;
/** The code an authenticator app shows `offsetSteps` periods from now. */
const codeFor = (secret: string, offsetSteps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });

describe('account security', () => {
  let t: TestApp;
  let mailbox: Mailbox;
  before(async () => {
    mailbox = await startMailbox();
    t = await startTestApp({ mail: { smtpUrl: mailbox.url, publicUrl: PUBLIC_URL } });
  });
  after(async () => {
    await t.close();
    await mailbox.close();
  });

  /** Turns two-factor authentication on for a logged-in browser; returns the secret, the code used and recovery codes. */
  async function enableTwoFactor(b: Browser, csrf: string) {
    assert.equal((await b.api('POST', '/dashboard/api/account/two-factor/setup', csrf, { current_password: 'wrong password' })).status, 400);
    const setup = await b.api('POST', '/dashboard/api/account/two-factor/setup', csrf, { current_password: PASSWORD });
    assert.equal(setup.status, 200);
    assert.match(setup.body.otpauth_uri, /^otpauth:\/\/totp\/Plumb:/);
    const secret = setup.body.secret as string;
    assert.equal((await b.api('POST', '/dashboard/api/account/two-factor/enable', csrf, { code: '000000' === codeFor(secret) ? '111111' : '000000' })).status, 400);
    const used = codeFor(secret);
    const enabled = await b.api('POST', '/dashboard/api/account/two-factor/enable', csrf, { code: used });
    assert.equal(enabled.status, 200, JSON.stringify(enabled.body));
    assert.equal(enabled.body.recovery_codes.length, 10);
    return { secret, used, recovery: enabled.body.recovery_codes as string[] };
  }

  it('asks for the code after the password, never takes a code twice, and takes each recovery code once', async () => {
    const { email } = await newLogin(t.meta);
    const b = new Browser(t.app);
    const csrf = await logIn(b, email);
    const { secret, used, recovery } = await enableTwoFactor(b, csrf);
    assert.deepEqual((await b.api('GET', '/dashboard/api/account/two-factor', csrf)).body, { object: 'two_factor', enabled: true, recovery_codes_left: 10 });

    const fresh = new Browser(t.app);
    const form = await fresh.get('/login');
    const login = await fresh.post('/login', { csrf: formField(form.body), email, password: PASSWORD, next: '/sites' });
    assert.equal(login.statusCode, 303);
    assert.match(String(login.headers.location), /^\/login\/code/);
    assert.equal((await fresh.get('/sites')).statusCode, 303, 'the password alone logs nobody in');
    const codePage = await fresh.get('/login/code?next=%2Fsites');
    assert.equal(codePage.statusCode, 200);
    const wrong = await fresh.post('/login/code', { csrf: formField(codePage.body), code: '12345x', next: '/sites' });
    assert.equal(wrong.statusCode, 401);
    // The code used when enabling is spent (replayed as it was: the clock may have reached the next step since),
    // and the app's next code works.
    const replay = await fresh.post('/login/code', { csrf: formField(codePage.body), code: used, next: '/sites' });
    assert.equal(replay.statusCode, 401, 'a code used once is refused');
    const ok = await fresh.post('/login/code', { csrf: formField(codePage.body), code: codeFor(secret, 1), next: '/sites' });
    assert.equal(ok.statusCode, 303);
    assert.equal(ok.headers.location, '/sites');
    assert.equal((await fresh.get('/sites')).statusCode, 200);

    for (const attempt of [0, 1]) {
      const r = new Browser(t.app);
      const f = await r.get('/login');
      await r.post('/login', { csrf: formField(f.body), email, password: PASSWORD });
      const cp = await r.get('/login/code');
      const res = await r.post('/login/code', { csrf: formField(cp.body), code: recovery[0]!.toUpperCase() });
      assert.equal(res.statusCode, attempt === 0 ? 303 : 401, attempt === 0 ? 'a recovery code works' : 'but only once');
    }
    assert.equal((await b.api('GET', '/dashboard/api/account/two-factor', csrf)).body.recovery_codes_left, 9);
    assert.equal((await b.api('POST', '/dashboard/api/account/two-factor/disable', csrf, { current_password: PASSWORD })).status, 200);
    await logIn(new Browser(t.app), email); // straight in again
  });

  it("lets an owner require two-factor authentication: members without it get only the account page", async () => {
    const owner = await newLogin(t.meta);
    const ob = new Browser(t.app);
    const oc = await logIn(ob, owner.email);
    const require = (on: boolean) => ob.api('POST', '/dashboard/api/account/require-two-factor', oc, { required: on });
    assert.equal((await require(true)).status, 400, 'the owner first turns it on for themselves');
    await enableTwoFactor(ob, oc);
    assert.equal((await require(true)).status, 200);
    const site = (await ob.api('POST', '/v1/sites', oc, { name: 'S' })).body.id;
    const viewer = await addMember(t.team, owner.id, 'viewer');
    const vb = new Browser(t.app);
    const vf = await vb.get('/login');
    await vb.post('/login', { csrf: formField(vf.body), email: viewer.email, password: PASSWORD });
    const page = await vb.get('/sites');
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, '/account');
    const accountPage = await vb.get('/account');
    assert.equal(accountPage.statusCode, 200);
    const vc = pageCsrf(accountPage.body);
    assert.equal((await vb.api('GET', `/v1/sites/${site}`, vc)).status, 400);
    assert.equal((await vb.api('GET', '/dashboard/api/me', vc)).body.account.needs_two_factor, true);
    await enableTwoFactor(vb, vc);
    assert.equal((await vb.api('GET', `/v1/sites/${site}`, vc)).status, 200, 'in, once it is on');
    assert.equal((await vb.api('POST', '/dashboard/api/account/two-factor/disable', vc, { current_password: PASSWORD })).status, 400, 'and it stays on');
    const viewerCsrf = vc;
    assert.equal((await vb.api('POST', '/dashboard/api/account/require-two-factor', viewerCsrf, { required: false })).status, 400, 'owners only');
  });

  it('changes the password with the current one, ending the other sessions', async () => {
    const { email } = await newLogin(t.meta);
    const here = new Browser(t.app);
    const elsewhere = new Browser(t.app);
    const c = await logIn(here, email);
    const ec = await logIn(elsewhere, email);
    const sessions = await here.api('GET', '/dashboard/api/account/sessions', c);
    assert.equal(sessions.body.data.length, 2);
    assert.equal(sessions.body.data.filter((s: { current: boolean }) => s.current).length, 1);
    const change = (body: unknown) => here.api('POST', '/dashboard/api/account/password', c, body);
    assert.ok((await change({ current_password: 'not it at all', new_password: 'a brand new password' })).body.errors.current_password);
    assert.ok((await change({ current_password: PASSWORD, new_password: 'short' })).body.errors.new_password);
    assert.equal((await change({ current_password: PASSWORD, new_password: 'a brand new password' })).body.sessions_ended, 1);
    assert.equal((await elsewhere.api('GET', '/dashboard/api/me', ec)).status, 401, 'the other session ended');
    assert.equal((await here.api('GET', '/dashboard/api/me', c)).status, 200, 'this one goes on');
    await logIn(new Browser(t.app), email, 'a brand new password');

    const third = new Browser(t.app);
    await logIn(third, email, 'a brand new password');
    const list = (await here.api('GET', '/dashboard/api/account/sessions', c)).body.data as { id: string; current: boolean }[];
    const other = list.find((s) => !s.current)!;
    assert.equal((await here.api('DELETE', `/dashboard/api/account/sessions/${other.id}`, c)).status, 200);
    assert.equal((await here.api('DELETE', `/dashboard/api/account/sessions/${other.id}`, c)).status, 404);
    assert.equal((await here.api('DELETE', '/dashboard/api/account/sessions/nonsense', c)).status, 404);
  });

  it('changes the email once the new address confirms it through the delivered link', async () => {
    const { email } = await newLogin(t.meta);
    const b = new Browser(t.app);
    const c = await logIn(b, email);
    const next = `moved.${process.pid}@example.test`;
    const taken = await addMember(t.team, 1, 'viewer');
    // Another login's address is answered as a free one (email-change-privacy.test.ts): its mail says so, nothing changes.
    assert.equal((await b.api('POST', '/dashboard/api/account/email', c, { email: taken.email, current_password: PASSWORD })).status, 200);
    await mailbox.waitFor(taken.email, /already has a Plumb login/);
    assert.equal((await b.api('POST', '/dashboard/api/account/email', c, { email: next, current_password: PASSWORD })).status, 200);
    const message = await mailbox.waitFor(next, /Confirm your new email/);
    const link = linkIn(message, `${PUBLIC_URL}/confirm-email/`);
    await logIn(new Browser(t.app), email); // not changed until confirmed
    const confirm = new Browser(t.app);
    const page = await confirm.get(pathOf(link));
    assert.equal(page.statusCode, 200);
    assert.equal((await confirm.post(pathOf(link), { csrf: formField(page.body) })).statusCode, 200);
    assert.equal((await confirm.get(pathOf(link))).statusCode, 404, 'single use');
    await logIn(new Browser(t.app), next);
  });

  it('resets a forgotten password through the delivered link, saying the same thing for unknown addresses', async () => {
    const { email } = await newLogin(t.meta);
    const old = new Browser(t.app);
    const oc = await logIn(old, email);
    const b = new Browser(t.app);
    const ask = async (address: string) => {
      const form = await b.get('/forgot');
      return b.post('/forgot', { csrf: formField(form.body), email: address });
    };
    const unknown = await ask(`nobody.${process.pid}@example.test`);
    const known = await ask(email.toUpperCase());
    assert.equal(unknown.statusCode, 200);
    assert.equal(known.statusCode, 200);
    assert.equal(unknown.body, known.body, 'the answer reveals nothing');
    const message = await mailbox.waitFor(email, /Reset your Plumb password/);
    assert.equal(mailbox.to(`nobody.${process.pid}@example.test`).length, 0);
    const link = linkIn(message, `${PUBLIC_URL}/reset/`);
    const form = await b.get(pathOf(link));
    assert.equal(form.statusCode, 200);
    assert.equal((await b.post(pathOf(link), { csrf: formField(form.body), password: 'a new password!', password_again: 'another one!!' })).statusCode, 400);
    const done = await b.post(pathOf(link), { csrf: formField(form.body), password: 'a new password!', password_again: 'a new password!' });
    assert.equal(done.statusCode, 200);
    assert.match(done.body, /Password changed/);
    assert.equal((await b.get(pathOf(link))).statusCode, 404, 'single use');
    assert.equal((await old.api('GET', '/dashboard/api/me', oc)).status, 401, 'sessions with the old password ended');
    await logIn(new Browser(t.app), email, 'a new password!');
    assert.equal((await new Browser(t.app).get('/reset/plumb_made-up')).statusCode, 404);
  });

  it('limits reset requests per address', async () => {
    const { email } = await newLogin(t.meta);
    const limited = await startTestApp({ mail: { smtpUrl: mailbox.url, publicUrl: PUBLIC_URL }, limits: {} });
    try {
      await limited.team.createUser(email, null);
      const b = new Browser(limited.app);
      const statuses: number[] = [];
      for (let i = 0; i < 4; i++) {
        const form = await b.get('/forgot');
        statuses.push((await b.post('/forgot', { csrf: formField(form.body), email })).statusCode);
      }
      assert.deepEqual(statuses, [200, 200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('account security without mail', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp()));
  after(() => t.close());

  it('says a reset by email is not available, and refuses an email change', async () => {
    const page = await new Browser(t.app).get('/forgot');
    assert.match(page.body, /cannot send email/);
    const { email } = await newLogin(t.meta);
    const b = new Browser(t.app);
    const c = await logIn(b, email);
    const res = await b.api('POST', '/dashboard/api/account/email', c, { email: 'new@example.test', current_password: PASSWORD });
    assert.equal(res.status, 400);
    assert.match(res.body.error, /PLUMB_SMTP_URL/);
  });
});
