// Import uploads from the dashboard: an owner's session (with its header) uploads Umami's export and Plausible's
// export zip for its own site, lists and deletes them; viewers, other accounts and strangers cannot, and nothing of
// their bodies is stored.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { generateUmamiExport } from '../helpers/umami-export.js';
import { addMember, Browser, logIn, newLogin } from './helpers.js';

describe('dashboard import uploads', () => {
  let t: TestApp;
  let owner: Browser;
  let csrf: string;
  let site: string;
  let accountId: number;
  const umami = generateUmamiExport({ websiteId: '94db1cb1-74f4-4a40-ad6c-962362670409', hostname: 'dash.example', start: Date.UTC(2026, 1, 1), days: 2, visitsPerDay: 40 });
  const plausibleZip = zipSync({ 'imported_visitors.csv': strToU8('date,visitors,pageviews,bounces,visits,visit_duration\n2025-12-01,5,12,2,6,300\n') });
  const fathomZip = zipSync({ 'Site.csv': strToU8('Timestamp,Pageviews,Visits\n2025-11-01 10:00:00,4,2\n2025-11-01 11:00:00,3,1\n') });

  const upload = (browser: Browser, token: string | undefined, kind: string, body: Uint8Array | string, contentType: string, siteId = site) =>
    browser.request({
      method: 'POST',
      url: `/dashboard/api/sites/${siteId}/imports/${kind}?file_name=export`,
      headers: { 'content-type': contentType, ...(token === undefined ? {} : { 'x-plumb-csrf': token }) },
      payload: Buffer.from(body),
    });

  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    accountId = login.id;
    owner = new Browser(t.app);
    csrf = await logIn(owner, login.email);
    site = (await owner.api('POST', '/v1/sites', csrf, { name: 'Dash', domain: 'dash.example' })).body.id;
  });
  after(() => t.close());

  it("uploads Umami's export, Plausible's zip and Fathom's, lists them and deletes one", async () => {
    const u = await upload(owner, csrf, 'umami', umami.csv, 'text/csv');
    assert.equal(u.statusCode, 200, u.body);
    assert.equal(u.json().imported, umami.numbers.pageviews + [...umami.numbers.eventsByName.values()].reduce((a, b) => a + b, 0));
    const p = await upload(owner, csrf, 'plausible', plausibleZip, 'application/zip');
    assert.equal(p.statusCode, 200, p.body);
    assert.deepEqual([p.json().kind, p.json().imported], ['plausible', 1]);
    const f = await upload(owner, csrf, 'fathom', fathomZip, 'application/zip');
    assert.equal(f.statusCode, 200, f.body);
    assert.deepEqual([f.json().kind, f.json().imported, f.json().first_hit_at], ['fathom', 2, '2025-11-01 00:00:00']);
    assert.equal((await upload(owner, csrf, 'matomo', fathomZip, 'application/zip')).statusCode, 404);
    const list = await owner.api('GET', `/dashboard/api/sites/${site}/imports`, csrf);
    assert.deepEqual(list.body.data.map((i: { kind: string }) => i.kind), ['umami', 'plausible', 'fathom']);
    const deleted = await owner.api('DELETE', `/dashboard/api/sites/${site}/imports/${u.json().id}`, csrf);
    assert.deepEqual(deleted.body, { id: u.json().id, object: 'import', deleted: true });
    await t.flushHits();
    assert.equal((await t.events.listHits(site)).length, 0);
  });

  it('refuses strangers, a missing header, viewers and other accounts before reading anything', async () => {
    const before = (await owner.api('GET', `/dashboard/api/sites/${site}/imports`, csrf)).body.data.length;
    assert.equal((await upload(new Browser(t.app), undefined, 'umami', umami.csv, 'text/csv')).statusCode, 401);
    assert.equal((await upload(owner, undefined, 'umami', umami.csv, 'text/csv')).statusCode, 401);
    const viewer = await addMember(t.team, accountId, 'viewer');
    const viewerBrowser = new Browser(t.app);
    const viewerCsrf = await logIn(viewerBrowser, viewer.email);
    const refused = await upload(viewerBrowser, viewerCsrf, 'umami', umami.csv, 'text/csv');
    assert.equal(refused.statusCode, 400);
    assert.equal(typeof refused.json().error, 'string');
    const other = await newLogin(t.meta);
    const otherBrowser = new Browser(t.app);
    const otherCsrf = await logIn(otherBrowser, other.email);
    assert.equal((await upload(otherBrowser, otherCsrf, 'umami', umami.csv, 'text/csv')).statusCode, 404);
    assert.equal((await otherBrowser.api('GET', `/dashboard/api/sites/${site}/imports`, otherCsrf)).status, 404);
    assert.equal((await upload(owner, csrf, 'matomo', 'x', 'text/csv')).statusCode, 404);
    assert.equal((await upload(owner, csrf, 'umami', '{}', 'application/json')).statusCode, 400);
    assert.equal((await owner.api('GET', `/dashboard/api/sites/${site}/imports`, csrf)).body.data.length, before);
  });
});
