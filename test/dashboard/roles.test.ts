// Roles on the server: a viewer reads but cannot change anything (through /v1 or the dashboard's routes), a viewer
// of chosen sites sees no other site, an admin manages but not owners, and a removed member's session is
// refused on its very next request.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { addMember, Browser, logIn, newLogin } from './helpers.js';

describe('roles', () => {
  let t: TestApp;
  let accountId: number;
  let ownerCsrf: string;
  let owner: Browser;
  let siteA: string;
  let siteB: string;
  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    accountId = login.id;
    owner = new Browser(t.app);
    ownerCsrf = await logIn(owner, login.email);
    siteA = (await owner.api('POST', '/v1/sites', ownerCsrf, { name: 'A' })).body.id;
    siteB = (await owner.api('POST', '/v1/sites', ownerCsrf, { name: 'B' })).body.id;
    assert.equal((await owner.api('POST', `/v1/sites/${siteA}/events`, ownerCsrf, { name: 'Signup' })).status, 200);
  });
  after(() => t.close());

  const report = (site: string) => `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews`;

  it('lets a viewer read every site and change nothing', async () => {
    const { email } = await addMember(t.team, accountId, 'viewer');
    const viewer = new Browser(t.app);
    const csrf = await logIn(viewer, email);
    assert.equal((await viewer.get(`/sites/${siteA}`)).statusCode, 200);
    assert.equal((await viewer.api('GET', '/v1/sites', csrf)).body.data.length, 2);
    assert.equal((await viewer.api('GET', report(siteB), csrf)).status, 200);
    assert.equal((await viewer.api('GET', `/v1/sites/${siteA}/events`, csrf)).status, 200);
    const writes: [string, string, unknown][] = [
      ['POST', '/v1/sites', { name: 'Mine' }],
      ['POST', `/v1/sites/${siteA}`, { name: 'Renamed' }],
      ['DELETE', `/v1/sites/${siteA}`, undefined],
      ['POST', `/v1/sites/${siteA}/events`, { name: 'X' }],
      ['POST', `/v1/sites/${siteA}/milestones`, { name: 'X', milestone_date: '2026-11-02' }],
      ['GET', '/v1/account', undefined],
      ['GET', '/dashboard/api/tokens', undefined],
      ['POST', '/dashboard/api/tokens', { name: 'T', abilities: ['*'] }],
    ];
    for (const [method, url, body] of writes) {
      assert.equal((await viewer.api(method as 'GET', url, csrf, body)).status, 400, `${method} ${url}`);
    }
    for (const page of [`/sites/${siteA}/settings`, `/sites/${siteA}/goals`, '/settings/api', '/settings/members']) {
      assert.equal((await viewer.get(page)).statusCode, 403, page);
    }
    assert.equal((await t.call(await t.token(['*'], { accountId }), 'GET', `/v1/sites/${siteA}`)).body.name, 'A', 'nothing changed');
  });

  it('shows a viewer of chosen sites those sites only', async () => {
    const { email } = await addMember(t.team, accountId, 'viewer', [siteA]);
    const viewer = new Browser(t.app);
    const csrf = await logIn(viewer, email);
    assert.equal((await viewer.api('GET', report(siteA), csrf)).status, 200);
    assert.equal((await viewer.api('GET', report(siteB), csrf)).status, 404);
    assert.equal((await viewer.api('GET', `/v1/sites/${siteB}`, csrf)).status, 404);
    assert.equal((await viewer.api('GET', `/v1/current_visitors?site_id=${siteB}`, csrf)).status, 404);
    assert.deepEqual((await viewer.api('GET', '/v1/sites', csrf)).body.data.map((s: { id: string }) => s.id), [siteA], 'its sites only');
    assert.equal((await viewer.get(`/sites/${siteA}`)).statusCode, 200);
    assert.equal((await viewer.get(`/sites/${siteB}`)).statusCode, 404);
  });

  it('lets an admin manage sites and tokens', async () => {
    const { email } = await addMember(t.team, accountId, 'admin');
    const admin = new Browser(t.app);
    const csrf = await logIn(admin, email);
    assert.equal((await admin.api('POST', `/v1/sites/${siteB}`, csrf, { name: 'B by admin' })).status, 200);
    assert.equal((await admin.api('GET', '/dashboard/api/tokens', csrf)).status, 200);
    assert.equal((await admin.get(`/sites/${siteB}/settings`)).statusCode, 200);
  });

  it("refuses a removed member's session on the next request, and a changed role at once", async () => {
    const { userId, email } = await addMember(t.team, accountId, 'admin');
    const member = new Browser(t.app);
    const csrf = await logIn(member, email);
    assert.equal((await member.api('POST', `/v1/sites/${siteB}`, csrf, { name: 'B again' })).status, 200);
    await t.team.putMembership(accountId, userId, 'viewer', null);
    assert.equal((await member.api('POST', `/v1/sites/${siteB}`, csrf, { name: 'B once more' })).status, 400, 'now a viewer');
    await t.team.removeMembership(accountId, userId);
    assert.equal((await member.api('GET', report(siteA), csrf)).status, 401);
    const page = await member.get('/sites');
    assert.equal(page.statusCode, 303);
    assert.match(String(page.headers.location), /^\/login/);
  });

  it("ends the owner's sessions only when the operator sets the owner's password", async () => {
    const { id, email } = await newLogin(t.meta);
    const ownerBrowser = new Browser(t.app);
    const ownerCsrfHere = await logIn(ownerBrowser, email);
    const member = await addMember(t.team, id, 'admin');
    const admin = new Browser(t.app);
    const adminCsrf = await logIn(admin, member.email);
    const set = await t.call(ADMIN_TOKEN, 'PUT', `/admin/accounts/${id}/password`, { password: 'the operator chose this one' });
    assert.equal(set.status, 200, JSON.stringify(set.body));
    assert.equal(set.body.sessions_ended, 1);
    assert.equal((await ownerBrowser.api('GET', '/v1/sites', ownerCsrfHere)).status, 401, 'the owner logs in again');
    assert.equal((await admin.api('GET', '/v1/sites', adminCsrf)).status, 200, 'the admin stays logged in');
  });
});
