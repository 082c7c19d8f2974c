// The API settings routes: tokens made from the dashboard work on /v1 with exactly their permissions, are
// listed with their last use, and stop working when revoked. Only the owner's session (with its header) may.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, logIn, newLogin } from './helpers.js';

describe('API settings: tokens', () => {
  let t: TestApp;
  let browser: Browser;
  let csrf: string;
  let accountId: number;
  let siteA: string;
  let siteB: string;
  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    accountId = login.id;
    browser = new Browser(t.app);
    csrf = await logIn(browser, login.email);
    siteA = (await browser.api('POST', '/v1/sites', csrf, { name: 'A' })).body.id;
    siteB = (await browser.api('POST', '/v1/sites', csrf, { name: 'B' })).body.id;
  });
  after(() => t.close());

  it('creates a site-specific token whose secret is shown once and reads only its site', async () => {
    const created = await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'Reporting', abilities: [`read:${siteA}`] });
    assert.equal(created.status, 200);
    assert.match(created.body.token, /^plumb_/);
    assert.deepEqual(created.body.abilities, [`read:${siteA}`]);
    const secret = created.body.token as string;
    assert.equal((await t.call(secret, 'GET', `/v1/sites/${siteA}`)).status, 200);
    assert.equal((await t.call(secret, 'GET', `/v1/sites/${siteB}`)).status, 404);
    assert.equal((await t.call(secret, 'POST', `/v1/sites/${siteA}`, { name: 'x' })).status, 400);

    const list = await browser.api('GET', '/dashboard/api/tokens', csrf);
    const row = list.body.data.find((x: { id: string }) => x.id === created.body.id);
    assert.equal(row.token, undefined, 'the secret is never listed');
    assert.notEqual(row.last_used_at, null, 'last use shows');
    assert.equal(JSON.stringify(list.body).includes(secret), false);
  });

  it('creates full-admin and all-sites read-only tokens, and manage tokens for one site', async () => {
    const full = (await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'Admin', abilities: ['*'] })).body.token;
    assert.equal((await t.call(full, 'GET', '/v1/account')).body.id, accountId);
    const ro = (await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'RO', abilities: ['all-sites-readonly'] })).body.token;
    assert.equal((await t.call(ro, 'GET', '/v1/sites')).body.data.length, 2);
    assert.equal((await t.call(ro, 'POST', '/v1/sites', { name: 'no' })).status, 400);
    const manage = (await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'M', abilities: [`manage:${siteB}`] })).body.token;
    assert.equal((await t.call(manage, 'POST', `/v1/sites/${siteB}`, { name: 'B2' })).status, 200);
    assert.equal((await t.call(manage, 'POST', `/v1/sites/${siteA}`, { name: 'A2' })).status, 404);
  });

  it('refuses abilities naming another account\'s site or nonsense', async () => {
    const other = await t.meta.createAccount({ name: 'O', email: 'other@example.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const theirs = (await t.call(await t.token(['*'], { accountId: other.id }), 'POST', '/v1/sites', { name: 'Theirs' })).body.id;
    const res = await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'x', abilities: [`read:${theirs}`] });
    assert.equal(res.status, 400);
    assert.ok(res.body.errors.abilities);
    assert.equal((await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'x', abilities: ['root'] })).status, 400);
    assert.equal((await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'x', abilities: [] })).status, 400);
  });

  it('revokes: the secret then gets 401, and the list says revoked', async () => {
    const created = (await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'Short-lived', abilities: ['*'] })).body;
    assert.equal((await t.call(created.token, 'GET', '/v1/account')).status, 200);
    assert.equal((await browser.api('DELETE', `/dashboard/api/tokens/${created.id}`, csrf)).status, 200);
    assert.equal((await t.call(created.token, 'GET', '/v1/account')).status, 401);
    const row = (await browser.api('GET', '/dashboard/api/tokens', csrf)).body.data.find((x: { id: string }) => x.id === created.id);
    assert.notEqual(row.revoked_at, null);
    assert.equal((await browser.api('DELETE', `/dashboard/api/tokens/${created.id}`, csrf)).status, 404, 'once');
  });

  it('needs the owner session and its header: not a cookie alone, not an API token, not another account', async () => {
    assert.equal((await browser.api('GET', '/dashboard/api/tokens', undefined)).status, 401);
    assert.equal((await browser.api('POST', '/dashboard/api/tokens', undefined, { name: 'csrf', abilities: ['*'] })).status, 401);
    const full = await t.token(['*'], { accountId });
    const viaToken = await t.app.inject({ method: 'GET', url: '/dashboard/api/tokens', headers: { authorization: `Bearer ${full}` } });
    assert.equal(viaToken.statusCode, 401);
    const other = await newLogin(t.meta);
    const otherBrowser = new Browser(t.app);
    const otherCsrf = await logIn(otherBrowser, other.email);
    const theirs = (await otherBrowser.api('GET', '/dashboard/api/tokens', otherCsrf)).body.data;
    assert.equal(theirs.length, 0, 'another owner sees none of these tokens');
    const mine = (await browser.api('GET', '/dashboard/api/tokens', csrf)).body.data[0].id;
    assert.equal((await otherBrowser.api('DELETE', `/dashboard/api/tokens/${mine}`, otherCsrf)).status, 404);
  });
});
