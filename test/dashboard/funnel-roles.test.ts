// Funnels and the dashboard's roles: with their session, owners and admins create, change and delete a site's
// funnels; a viewer reads them and their reports but every change is SPEC's 400, and a viewer of other sites sees none.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { addMember, Browser, logIn, newLogin } from './helpers.js';

describe('funnels and roles', () => {
  let t: TestApp;
  let accountId: number;
  let site: string;
  let other: string;
  let funnel: string;
  const steps = [{ type: 'page', value: '/' }, { type: 'event', value: 'Signup' }];

  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    accountId = login.id;
    const owner = new Browser(t.app);
    const csrf = await logIn(owner, login.email);
    site = (await owner.api('POST', '/v1/sites', csrf, { name: 'A' })).body.id;
    other = (await owner.api('POST', '/v1/sites', csrf, { name: 'B' })).body.id;
    const created = await owner.api('POST', `/v1/sites/${site}/funnels`, csrf, { name: 'Owner made', steps });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    funnel = created.body.id;
  });
  after(() => t.close());

  it('lets an admin manage funnels', async () => {
    const { email } = await addMember(t.team, accountId, 'admin');
    const admin = new Browser(t.app);
    const csrf = await logIn(admin, email);
    const made = await admin.api('POST', `/v1/sites/${site}/funnels`, csrf, { name: 'Admin made', steps });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    assert.equal((await admin.api('POST', `/v1/sites/${site}/funnels/${made.body.id}`, csrf, { name: 'Renamed' })).body.name, 'Renamed');
    assert.equal((await admin.api('DELETE', `/v1/sites/${site}/funnels/${made.body.id}`, csrf)).status, 200);
  });

  it('lets a viewer read funnels and their reports, and change none', async () => {
    const { email } = await addMember(t.team, accountId, 'viewer');
    const viewer = new Browser(t.app);
    const csrf = await logIn(viewer, email);
    assert.equal((await viewer.api('GET', `/v1/sites/${site}/funnels`, csrf)).body.data.length, 1);
    const report = await viewer.api('GET', `/v1/sites/${site}/funnels/${funnel}/report?date_from=2026-01-01&date_to=2026-01-31`, csrf);
    assert.equal(report.status, 200, JSON.stringify(report.body));
    assert.deepEqual(report.body.steps.map((s: { visits: string }) => s.visits), ['0', '0']);
    for (const [method, url, body] of [
      ['POST', `/v1/sites/${site}/funnels`, { name: 'Viewer made', steps }],
      ['POST', `/v1/sites/${site}/funnels/${funnel}`, { name: 'Renamed' }],
      ['DELETE', `/v1/sites/${site}/funnels/${funnel}`, undefined],
    ] as const) {
      const res = await viewer.api(method as 'POST', url, csrf, body);
      assert.equal(res.status, 400, `${method} ${url}`);
      assert.equal(typeof res.body.error, 'string');
    }
    const kept = await t.meta.getFunnel(site, funnel);
    assert.equal(kept?.name, 'Owner made', 'nothing changed');
  });

  it('hides the funnels of sites a viewer was not given', async () => {
    const { email } = await addMember(t.team, accountId, 'viewer', [other]);
    const viewer = new Browser(t.app);
    const csrf = await logIn(viewer, email);
    assert.equal((await viewer.api('GET', `/v1/sites/${site}/funnels`, csrf)).status, 404);
    assert.equal((await viewer.api('GET', `/v1/sites/${site}/funnels/${funnel}/report`, csrf)).status, 404);
    assert.equal((await viewer.api('GET', `/v1/sites/${other}/funnels`, csrf)).body.data.length, 0);
  });
});
