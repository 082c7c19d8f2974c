// Owner login over HTTP: first-run setup, login and logout, session cookie flags, anti-CSRF rules for forms and
// for /v1 calls made with the session, login rate limits, and the admin API's password route.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, EMAIL, formField, givePassword, logIn, newLogin, PASSWORD } from './helpers.js';

const cookieHeader = (res: { headers: Record<string, unknown> }, name: string) =>
  ([] as string[]).concat((res.headers['set-cookie'] as string | string[] | undefined) ?? []).find((c) => c.startsWith(`${name}=`));

describe('first-run setup', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp()));
  after(() => t.close());

  it('points the login page to setup while the owner has no password', async () => {
    const res = await new Browser(t.app).get('/login');
    assert.equal(res.statusCode, 200);
    assert.match(res.body, /href="\/setup"/);
  });

  it('refuses a wrong owner token, a short password and differing passwords, then sets up and logs in', async () => {
    const browser = new Browser(t.app);
    const form = await browser.get('/setup');
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /<label for="owner_token">Owner API token<\/label>/);
    const csrf = formField(form.body);
    const base = { csrf, owner_token: OWNER_TOKEN, email: 'me@example.test', password: 'long enough pw', password_again: 'long enough pw' };

    const wrongToken = await browser.post('/setup', { ...base, owner_token: 'plumb_not-a-token' });
    assert.equal(wrongToken.statusCode, 401);
    assert.match(wrongToken.body, /not a valid full-access API token/);
    const readOnly = await t.token(['all-sites-readonly']);
    assert.equal((await browser.post('/setup', { ...base, owner_token: readOnly })).statusCode, 401, 'a read-only token does not prove ownership');
    const short = await browser.post('/setup', { ...base, password: 'short', password_again: 'short' });
    assert.equal(short.statusCode, 400);
    assert.match(short.body, /at least 10 characters/);
    assert.equal((await browser.post('/setup', { ...base, password_again: 'something else' })).statusCode, 400);
    assert.equal(await t.meta.getPasswordHash(1), undefined, 'nothing saved so far');
    assert.equal((await browser.post('/setup', { ...base, csrf: 'forged-value-forged-value' })).statusCode, 403);

    const done = await browser.post('/setup', base);
    assert.equal(done.statusCode, 303);
    assert.equal(done.headers.location, '/sites');
    assert.ok(cookieHeader(done, 'plumb_session'));
    assert.equal((await browser.get('/sites')).statusCode, 200, 'logged in at once');
    assert.equal((await t.meta.getAccount(1))?.email, 'me@example.test');

    const again = await new Browser(t.app).get('/setup');
    assert.equal(again.statusCode, 303, 'setup is over once the owner has a password');
    assert.equal(again.headers.location, '/login');
    const replay = await browser.post('/setup', { ...base, password: 'takeover attempt', password_again: 'takeover attempt' });
    assert.equal(replay.statusCode, 303);
    assert.equal(replay.headers.location, '/login');
    const login = new Browser(t.app);
    await logIn(login, 'me@example.test', 'long enough pw');
  });
});

describe('login, sessions and logout', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ trustProxy: true })));
  after(() => t.close());

  it('sends pages to the login page without a session, and back after logging in', async () => {
    const { email } = await newLogin(t.meta);
    const browser = new Browser(t.app);
    const res = await browser.get('/settings/api');
    assert.equal(res.statusCode, 303);
    assert.equal(res.headers.location, '/login?next=%2Fsettings%2Fapi');
    const form = await browser.get('/login?next=%2Fsettings%2Fapi');
    const login = await browser.post('/login', { csrf: formField(form.body), email, password: PASSWORD, next: formField(form.body, 'next') });
    assert.equal(login.headers.location, '/settings/api');
    const evil = await browser.post('/login', { csrf: formField(form.body), email, password: PASSWORD, next: '//evil.example' });
    assert.equal(evil.headers.location, '/sites', 'never redirects off this server');
  });

  it('sets an HttpOnly, SameSite, path-wide session cookie, Secure over https', async () => {
    const { email } = await newLogin(t.meta);
    const browser = new Browser(t.app);
    const form = await browser.get('/login');
    const res = await browser.post('/login', { csrf: formField(form.body), email: email.toUpperCase(), password: PASSWORD });
    assert.equal(res.statusCode, 303);
    const cookie = cookieHeader(res, 'plumb_session')!;
    assert.match(cookie, /; HttpOnly/);
    assert.match(cookie, /; SameSite=Lax/);
    assert.match(cookie, /; Path=\//);
    assert.doesNotMatch(cookie, /Secure/, 'plain http: a Secure cookie would never come back');
    const id = /^plumb_session=([^;]+)/.exec(cookie)![1]!;
    const { createHash } = await import('node:crypto');
    assert.ok(await t.meta.findSession(createHash('sha256').update(decodeURIComponent(id)).digest('hex')), 'stored by hash');

    const https = new Browser(t.app, { headers: { 'x-forwarded-proto': 'https' } });
    const httpsForm = await https.get('/login');
    const secure = await https.post('/login', { csrf: formField(httpsForm.body), email, password: PASSWORD });
    assert.match(cookieHeader(secure, 'plumb_session')!, /; Secure/);
  });

  it('refuses a wrong password, a form without its value and a post from another origin', async () => {
    const { email } = await newLogin(t.meta);
    const browser = new Browser(t.app);
    const form = await browser.get('/login');
    const csrf = formField(form.body);
    const wrong = await browser.post('/login', { csrf, email, password: 'not the password' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /Wrong email or password/);
    assert.equal(cookieHeader(wrong, 'plumb_session'), undefined);
    const unknown = await browser.post('/login', { csrf, email: 'nobody@example.test', password: PASSWORD });
    assert.equal(unknown.statusCode, 401);
    assert.equal((await browser.post('/login', { email, password: PASSWORD })).statusCode, 403, 'no form value');
    const fresh = new Browser(t.app);
    assert.equal((await fresh.post('/login', { csrf, email, password: PASSWORD })).statusCode, 403, 'a value without its cookie');
    const crossSite = await browser.post('/login', { csrf, email, password: PASSWORD }, { origin: 'https://evil.example' });
    assert.equal(crossSite.statusCode, 403);
  });

  it('lets the page script use /v1 with the cookie and the anti-CSRF header, never with the cookie alone', async () => {
    const { email } = await newLogin(t.meta);
    const browser = new Browser(t.app);
    const csrf = await logIn(browser, email);
    const account = await browser.api('GET', '/v1/account', csrf);
    assert.equal(account.status, 200);
    assert.equal(account.body.email, email);
    const token = await browser.api('GET', '/v1/token', csrf);
    assert.deepEqual(token.body.abilities, ['*']);
    assert.equal((await browser.api('GET', '/v1/account', undefined)).status, 401, 'cookie without header');
    assert.equal((await browser.api('GET', '/v1/account', 'x'.repeat(43))).status, 401, 'cookie with a wrong header');
    const site = await browser.api('POST', '/v1/sites', csrf, { name: 'From the dashboard' });
    assert.equal(site.status, 200);
    assert.equal((await browser.api('DELETE', `/v1/sites/${site.body.id}`, undefined)).status, 401);
    assert.ok(await t.meta.getSite(site.body.id), 'a cross-site request with the cookie alone changed nothing');
    const other = new Browser(t.app);
    const otherCsrf = await logIn(other, email);
    other.cookies.set('plumb_session', browser.cookies.get('plumb_session')!);
    assert.equal((await other.api('GET', '/v1/account', otherCsrf)).status, 401, "one session's value does not unlock another");
  });

  it('logs out only from its own page, and the session then stops working everywhere', async () => {
    const { email } = await newLogin(t.meta);
    const browser = new Browser(t.app);
    const csrf = await logIn(browser, email);
    const stolen = browser.cookies.get('plumb_session')!;
    assert.equal((await browser.post('/logout', { csrf: 'not-it' })).statusCode, 403);
    assert.equal((await browser.api('GET', '/v1/account', csrf)).status, 200, 'still logged in');
    const out = await browser.post('/logout', { csrf });
    assert.equal(out.statusCode, 303);
    assert.equal(out.headers.location, '/login');
    assert.match(cookieHeader(out, 'plumb_session')!, /Max-Age=0/);
    const replay = new Browser(t.app);
    replay.cookies.set('plumb_session', stolen);
    assert.equal((await replay.api('GET', '/v1/account', csrf)).status, 401);
    assert.equal((await replay.get('/sites')).statusCode, 303);
  });

  it('sets passwords through the admin API, which ends the sessions', async () => {
    const { id, email } = await newLogin(t.meta);
    const browser = new Browser(t.app);
    const csrf = await logIn(browser, email);
    const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
    const short = await t.app.inject({ method: 'PUT', url: `/admin/accounts/${id}/password`, headers: admin, payload: { password: 'short' } });
    assert.equal(short.statusCode, 400);
    assert.deepEqual(JSON.parse(short.body).errors.password, ['must be at least 10 characters']);
    const none = await t.app.inject({ method: 'PUT', url: '/admin/accounts/99/password', headers: admin, payload: { password: 'long enough' } });
    assert.equal(none.statusCode, 404);
    const unauth = await t.app.inject({ method: 'PUT', url: `/admin/accounts/${id}/password`, payload: { password: 'long enough' } });
    assert.equal(unauth.statusCode, 401);
    const ok = await t.app.inject({ method: 'PUT', url: `/admin/accounts/${id}/password`, headers: admin, payload: { password: 'a brand new password' } });
    assert.equal(ok.statusCode, 200);
    assert.equal(JSON.parse(ok.body).password_set, true);
    assert.equal((await browser.api('GET', '/v1/account', csrf)).status, 401, 'the old session ended');
    await logIn(new Browser(t.app), email, 'a brand new password');
  });

  it('serves its pages under a CSP without inline script, and the root sends browsers to the dashboard', async () => {
    const { email } = await newLogin(t.meta);
    const browser = new Browser(t.app);
    await logIn(browser, email);
    const page = await browser.get('/sites');
    const csp = String(page.headers['content-security-policy']);
    assert.match(csp, /script-src 'self'/);
    assert.doesNotMatch(csp, /unsafe-inline/);
    assert.doesNotMatch(page.body, /<script>(?!<\/script>)/, 'no inline script');
    assert.match(page.body, /<script src="\/dashboard\/app.js" defer><\/script>/);
    const js = await browser.get('/dashboard/app.js');
    assert.equal(js.statusCode, 200);
    assert.match(String(js.headers['content-type']), /javascript/);
    assert.doesNotMatch(js.body + (await browser.get('/dashboard/app.css')).body, /fonts\.googleapis|cdn\.|unpkg|jsdelivr|@import url\(/, 'nothing from elsewhere');
    const root = await t.app.inject({ url: '/', headers: { accept: 'text/html' } });
    assert.equal(root.statusCode, 302);
    assert.equal(root.headers.location, '/sites');
    const api = await t.app.inject({ url: '/', headers: { accept: 'application/json' } });
    assert.equal(JSON.parse(api.body).api, '/v1', 'API clients still learn where the API is');
  });
});

describe('login rate limits', () => {
  let t: TestApp;
  let clock = Date.parse('2026-11-20T10:00:00Z');
  before(async () => {
    t = await startTestApp({ limits: { now: () => clock } });
    await givePassword(t.meta);
  });
  after(() => t.close());

  it('allows 10 attempts per email in 15 minutes, then 429 with Retry-After even for the right password', async () => {
    const browser = new Browser(t.app, { headers: { 'x-test': '1' } });
    const csrf = formField((await browser.get('/login')).body);
    for (let i = 0; i < 10; i++) {
      assert.equal((await browser.post('/login', { csrf, email: EMAIL, password: `wrong ${i}` })).statusCode, 401);
    }
    const limited = await browser.post('/login', { csrf, email: EMAIL, password: PASSWORD });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0 && Number(limited.headers['retry-after']) <= 900);
    assert.match(limited.body, /Too many attempts/);
    clock += 15 * 60_000 + 1000;
    assert.equal((await browser.post('/login', { csrf, email: EMAIL, password: PASSWORD })).statusCode, 303, 'the window passed');
  });

  it('limits per client address across emails too (30: an address may be a whole office)', async () => {
    clock += 60 * 60_000;
    const browser = new Browser(t.app);
    const csrf = formField((await browser.get('/login')).body);
    for (let i = 0; i < 30; i++) {
      assert.equal((await browser.post('/login', { csrf, email: `guess${i}@example.test`, password: 'whatever you like' })).statusCode, 401);
    }
    assert.equal((await browser.post('/login', { csrf, email: 'another@example.test', password: 'whatever' })).statusCode, 429);
    const elsewhere = new Browser(t.app);
    const form = formField((await elsewhere.get('/login')).body);
    assert.equal((await elsewhere.post('/login', { csrf: form, email: EMAIL, password: PASSWORD })).statusCode, 303, 'other addresses are not affected');
  });
});

