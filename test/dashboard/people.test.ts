// People over HTTP: invitations (mailed through a real SMTP server when mail is configured, the link always shown
// to the inviter, single use, expiring), accepting as a new or an existing person, switching accounts, members
// listed, their roles changed and removed under the rules of roles, and bad input refused.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../src/domain/secrets.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { linkIn, startMailbox, type Mailbox } from '../helpers/mail.js';
import { addMember, Browser, formField, logIn, newLogin, PASSWORD } from './helpers.js';

const PUBLIC_URL = 'https://plumb.example.test';
const pathOf = (link: string) => new URL(link).pathname;

describe('invitations and members, with mail', () => {
  let t: TestApp;
  let mailbox: Mailbox;
  let owner: Browser;
  let csrf: string;
  let accountId: number;
  let site: string;
  before(async () => {
    mailbox = await startMailbox();
    t = await startTestApp({ mail: { smtpUrl: mailbox.url, publicUrl: PUBLIC_URL } });
    const login = await newLogin(t.meta);
    accountId = login.id;
    owner = new Browser(t.app);
    csrf = await logIn(owner, login.email);
    site = (await owner.api('POST', '/v1/sites', csrf, { name: 'Shop' })).body.id;
  });
  after(async () => {
    await t.close();
    await mailbox.close();
  });

  it('mails an invitation whose link makes a new viewer, once', async () => {
    const email = `new.viewer.${process.pid}@example.test`;
    const res = await owner.api('POST', '/dashboard/api/invitations', csrf, { email, role: 'viewer' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.emailed, true, JSON.stringify(res.body));
    assert.match(res.body.link, new RegExp(`^${PUBLIC_URL}/invite/`));
    const message = await mailbox.waitFor(email, /invited/);
    assert.equal(message.from?.value[0]?.address, 'plumb@example.test');
    const link = linkIn(message, `${PUBLIC_URL}/invite/`);
    assert.equal(link, res.body.link, 'the mailed link is the one shown');
    assert.match(String(message.html), /Accept the invitation/);

    const listed = await owner.api('GET', '/dashboard/api/members', csrf);
    assert.deepEqual(listed.body.invitations.map((i: { email: string }) => i.email), [email]);

    const invitee = new Browser(t.app);
    const form = await invitee.get(pathOf(link));
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /Choose a password/);
    const short = await invitee.post(pathOf(link), { csrf: formField(form.body), password: 'short', password_again: 'short' });
    assert.equal(short.statusCode, 400);
    const done = await invitee.post(pathOf(link), { csrf: formField(form.body), password: PASSWORD, password_again: PASSWORD });
    assert.equal(done.statusCode, 303);
    const page = await invitee.get('/sites');
    assert.equal(page.statusCode, 200);
    const viewerCsrf = /<meta name="plumb-csrf" content="([^"]+)">/.exec(page.body)![1]!;
    const me = await invitee.api('GET', '/dashboard/api/me', viewerCsrf);
    assert.deepEqual([me.body.user.email, me.body.account.id, me.body.account.role, me.body.mail_configured], [email, accountId, 'viewer', true]);
    assert.equal((await invitee.api('GET', `/v1/sites/${site}`, viewerCsrf)).status, 200);
    assert.equal((await invitee.api('POST', `/v1/sites/${site}`, viewerCsrf, { name: 'No' })).status, 400);

    assert.equal((await new Browser(t.app).get(pathOf(link))).statusCode, 404, 'single use');
    const members = await owner.api('GET', '/dashboard/api/members', csrf);
    assert.deepEqual(members.body.data.map((m: { email: string; role: string }) => m.role), ['owner', 'viewer']);
    assert.deepEqual(members.body.invitations, []);
    // The new person can log in with the password they chose.
    await logIn(new Browser(t.app), email);
  });

  it('adds the account to an existing login, which then switches between its accounts', async () => {
    const other = await newLogin(t.meta);
    const person = new Browser(t.app);
    const personCsrf = await logIn(person, other.email);
    const theirSite = (await person.api('POST', '/v1/sites', personCsrf, { name: 'Their own' })).body.id;
    const res = await owner.api('POST', '/dashboard/api/invitations', csrf, { email: other.email.toUpperCase(), role: 'admin' });
    const form = await person.get(pathOf(res.body.link));
    assert.match(form.body, /already have a Plumb login/);
    assert.equal((await person.post(pathOf(res.body.link), { csrf: formField(form.body), password: 'wrong password!' })).statusCode, 401);
    assert.equal((await person.post(pathOf(res.body.link), { csrf: formField(form.body), password: PASSWORD })).statusCode, 303);
    const page = await person.get('/sites');
    const c = /<meta name="plumb-csrf" content="([^"]+)">/.exec(page.body)![1]!;
    const me = await person.api('GET', '/dashboard/api/me', c);
    assert.equal(me.body.account.id, accountId, 'lands in the account just joined');
    assert.deepEqual(me.body.accounts.map((a: { role: string }) => a.role).sort(), ['admin', 'owner']);
    assert.deepEqual((await person.api('GET', '/v1/sites', c)).body.data.map((s: { id: string }) => s.id), [site]);
    assert.equal((await person.api('POST', '/dashboard/api/switch', c, { account_id: other.id })).status, 200);
    assert.deepEqual((await person.api('GET', '/v1/sites', c)).body.data.map((s: { id: string }) => s.id), [theirSite]);
    assert.equal((await person.api('POST', '/dashboard/api/switch', c, { account_id: 1 })).status, 404, 'not a member there');
    assert.equal((await person.api('POST', '/dashboard/api/switch', c, { account_id: 'x' })).status, 400);
    assert.equal((await person.api('POST', '/dashboard/api/switch', c, { account_id: 99_999_999_999 })).status, 400);
    assert.equal((await person.api('DELETE', '/dashboard/api/members/99999999999999', c)).status, 404);
  });

  it('keeps the rules of roles for invitations, changes and removals', async () => {
    const admin = await addMember(t.team, accountId, 'admin');
    const adminBrowser = new Browser(t.app);
    const ac = await logIn(adminBrowser, admin.email);
    const invite = (body: unknown, b = adminBrowser, c = ac) => b.api('POST', '/dashboard/api/invitations', c, body);
    assert.equal((await invite({ email: 'x@example.test', role: 'owner' })).status, 400, 'admins do not make owners');
    assert.ok((await invite({ email: 'not an email', role: 'viewer' })).body.errors.email);
    assert.ok((await invite({ email: 'x@example.test', role: 'viewer', site_ids: ['AAAAAAAA'] })).body.errors.site_ids);
    assert.ok((await invite({ email: 'x@example.test', role: 'admin', site_ids: [site] })).body.errors.site_ids);
    assert.ok((await invite({ email: 'x@example.test', role: 'king' })).body.errors);
    assert.equal((await invite({ email: 'x@example.test', role: 'viewer', extra: 1 })).status, 400);
    assert.equal((await invite({ email: admin.email, role: 'viewer' })).status, 400, 'already a member');
    const limited = await invite({ email: `limited.${process.pid}@example.test`, role: 'viewer', site_ids: [site] });
    assert.deepEqual(limited.body.site_ids, [site]);
    assert.equal((await adminBrowser.api('DELETE', `/dashboard/api/invitations/${limited.body.id}`, ac)).status, 200);
    assert.equal((await new Browser(t.app).get(pathOf(limited.body.link))).statusCode, 404, 'a withdrawn invitation is dead');

    const members = (await owner.api('GET', '/dashboard/api/members', csrf)).body.data as { user_id: number; role: string; you: boolean }[];
    const ownerId = members.find((m) => m.you)!.user_id;
    assert.equal((await adminBrowser.api('DELETE', `/dashboard/api/members/${ownerId}`, ac)).status, 400, 'admins do not remove owners');
    assert.equal((await adminBrowser.api('POST', `/dashboard/api/members/${ownerId}`, ac, { role: 'viewer' })).status, 400);
    assert.equal((await owner.api('POST', `/dashboard/api/members/${ownerId}`, csrf, { role: 'admin' })).status, 400, 'the last owner stays');
    assert.equal((await owner.api('DELETE', `/dashboard/api/members/${ownerId}`, csrf)).status, 400);
    assert.equal((await owner.api('DELETE', '/dashboard/api/members/999999', csrf)).status, 404);
    assert.equal((await owner.api('DELETE', '/dashboard/api/members/abc', csrf)).status, 404);

    const viewer = await addMember(t.team, accountId, 'viewer');
    const vb = new Browser(t.app);
    const vc = await logIn(vb, viewer.email);
    assert.equal((await vb.api('GET', '/dashboard/api/members', vc)).status, 400, 'viewers do not manage members');
    assert.equal((await vb.api('POST', '/dashboard/api/invitations', vc, { email: 'y@example.test', role: 'viewer' })).status, 400);
    assert.equal((await adminBrowser.api('POST', `/dashboard/api/members/${viewer.userId}`, ac, { role: 'viewer', site_ids: [site] })).status, 200);
    assert.deepEqual((await vb.api('GET', '/v1/sites', vc)).body.data.map((s: { id: string }) => s.id), [site], 'now limited to one site');
    assert.equal((await adminBrowser.api('DELETE', `/dashboard/api/members/${viewer.userId}`, ac)).status, 200);
    assert.equal((await vb.api('GET', `/v1/sites/${site}`, vc)).status, 401, 'removed: refused at once');
  });

  it('refuses an expired invitation', async () => {
    const secret = `expired-${process.pid}-secret-value`;
    await t.team.createInvitation({
      tokenHash: hashToken(secret), accountId, email: 'late@example.test', role: 'viewer', siteIds: null, invitedBy: 1,
      expiresAt: new Date(Date.now() - 1000),
    });
    assert.equal((await new Browser(t.app).get(`/invite/${secret}`)).statusCode, 404);
  });
});

describe('invitations without mail', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp()));
  after(() => t.close());

  it('shows the link to the inviter and says mail is not configured', async () => {
    const login = await newLogin(t.meta);
    const owner = new Browser(t.app);
    const csrf = await logIn(owner, login.email);
    assert.equal((await owner.api('GET', '/dashboard/api/me', csrf)).body.mail_configured, false);
    const res = await owner.api('POST', '/dashboard/api/invitations', csrf, { email: 'someone@example.test', role: 'viewer' });
    assert.equal(res.status, 200);
    assert.equal(res.body.emailed, false);
    assert.match(res.body.link, /^http:\/\/localhost(:\d+)?\/invite\/plumb_/);
    assert.equal((await new Browser(t.app).get(pathOf(res.body.link))).statusCode, 200);
    // An account sends at most 50 invitations an hour.
    for (let i = 1; i < 50; i++) {
      assert.equal((await owner.api('POST', '/dashboard/api/invitations', csrf, { email: `many${i}@example.test`, role: 'viewer' })).status, 200);
    }
    const over = await owner.api('POST', '/dashboard/api/invitations', csrf, { email: 'one.more@example.test', role: 'viewer' });
    assert.equal(over.status, 429);
    assert.ok(Number(over.headers['retry-after']) > 0);
  });
});

describe('invitations and email changes when the mail server is down', () => {
  let t: TestApp;
  before(async () => (t = await startTestApp({ mail: { smtpUrl: 'smtp://127.0.0.1:9', publicUrl: PUBLIC_URL } })));
  after(() => t.close());

  it('still shows the invitation link, says the mail failed, and answers an email change with 502', async () => {
    const login = await newLogin(t.meta);
    const owner = new Browser(t.app);
    const csrf = await logIn(owner, login.email);
    const res = await owner.api('POST', '/dashboard/api/invitations', csrf, { email: 'someone@example.test', role: 'viewer' });
    assert.equal(res.status, 200);
    assert.deepEqual([res.body.emailed, typeof res.body.mail_error, res.body.link.startsWith(`${PUBLIC_URL}/invite/`)], [false, 'string', true]);
    const change = await owner.api('POST', '/dashboard/api/account/email', csrf, { email: 'new@example.test', current_password: PASSWORD });
    assert.equal(change.status, 502);
    assert.match(change.body.error, /mail server/);
  });
});
