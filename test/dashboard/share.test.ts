// /share/{site_id} over HTTP: public, private (password, attempts limited) and none; the share session reads
// /v1 for its one site only, never another site nor anything that changes data; changing sharing ends it; one
// address starts a bounded number of sessions.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { SHARE_SESSIONS_PER_CLIENT } from '../../src/http/dashboard/share.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, formField, pageCsrf } from './helpers.js';

const SHARE_PASSWORD = 'share me please';

describe('share pages', () => {
  let t: TestApp;
  let owner: string;
  let publicSite: string;
  let privateSite: string;
  let hiddenSite: string;
  let otherAccountSite: string;
  before(async () => {
    t = await startTestApp();
    owner = await t.token(['*']);
    const make = async (body: object) => (await t.call(owner, 'POST', '/v1/sites', body)).body.id as string;
    publicSite = await make({ name: 'Public', sharing: 'public' });
    privateSite = await make({ name: 'Private', sharing: 'private', share_password: SHARE_PASSWORD });
    hiddenSite = await make({ name: 'Hidden' });
    await t.call(owner, 'POST', `/v1/sites/${publicSite}/milestones`, { name: 'Launch', milestone_date: '2026-11-01' });
    const other = await t.meta.createAccount({ name: 'Other', email: 'o@example.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    otherAccountSite = (await t.call(await t.token(['*'], { accountId: other.id }), 'POST', '/v1/sites', { name: 'Theirs', sharing: 'public' })).body.id;
  });
  after(() => t.close());

  const report = (site: string) => `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=visits,pageviews`;

  it('shows nothing for a site that is not shared or does not exist', async () => {
    for (const id of [hiddenSite, 'NOSUCHID', 'lower']) {
      const res = await new Browser(t.app).get(`/share/${id}`);
      assert.equal(res.statusCode, 404, id);
      assert.doesNotMatch(res.body, /Hidden|plumb-csrf/);
    }
  });

  it('opens a public report whose session reads that site through /v1 and nothing else', async () => {
    const browser = new Browser(t.app);
    const page = await browser.get(`/share/${publicSite}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /data-page="report"/);
    assert.match(page.body, /data-mode="share"/);
    const cookie = ([] as string[]).concat(page.headers['set-cookie'] as string[]).find((c) => c.startsWith(`plumb_share_${publicSite}=`));
    assert.match(cookie!, /HttpOnly; SameSite=Lax/);
    const csrf = pageCsrf(page.body);

    assert.equal((await browser.api('GET', report(publicSite), csrf)).status, 200);
    assert.equal((await browser.api('GET', `/v1/current_visitors?site_id=${publicSite}`, csrf)).status, 200);
    assert.equal((await browser.api('GET', `/v1/sites/${publicSite}/milestones`, csrf)).body.data[0].name, 'Launch');
    assert.equal((await browser.api('GET', report(publicSite), undefined)).status, 401, 'the cookie alone is not enough');

    // The report page's own API (custom properties) under the same rules.
    const props = encodeURIComponent(JSON.stringify([{ key: 'plan', operator: 'is', value: 'pro' }]));
    const ownApi = (site: string) => `/dashboard/api/report/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&props=${props}`;
    assert.equal((await browser.api('GET', ownApi(publicSite), csrf)).status, 200);
    assert.equal((await browser.api('GET', ownApi(publicSite), undefined)).status, 401);

    // Other sites, of this account or another: as if they did not exist.
    for (const other of [hiddenSite, privateSite, otherAccountSite]) {
      assert.equal((await browser.api('GET', ownApi(other), csrf)).status, 404, other);
      assert.equal((await browser.api('GET', report(other), csrf)).status, 404, other);
      assert.equal((await browser.api('GET', `/v1/current_visitors?site_id=${other}`, csrf)).status, 404, other);
      assert.equal((await browser.api('GET', `/v1/sites/${other}`, csrf)).status, 404, other);
    }
    // Nothing that lists the account or changes anything.
    assert.equal((await browser.api('GET', '/v1/sites', csrf)).status, 400);
    assert.equal((await browser.api('GET', '/v1/account', csrf)).status, 400);
    assert.equal((await browser.api('POST', '/v1/sites', csrf, { name: 'Sneaky' })).status, 400);
    assert.equal((await browser.api('POST', `/v1/sites/${publicSite}`, csrf, { name: 'Renamed' })).status, 400);
    assert.equal((await browser.api('POST', `/v1/sites/${publicSite}/milestones`, csrf, { name: 'X', milestone_date: '2026-11-02' })).status, 400);
    assert.equal((await browser.api('DELETE', `/v1/sites/${publicSite}`, csrf)).status, 400);
    assert.equal((await t.meta.getSite(publicSite))?.name, 'Public');
    // Nor the owner's dashboard.
    assert.equal((await browser.api('GET', '/dashboard/api/tokens', csrf)).status, 401);
    assert.equal((await browser.get('/sites')).statusCode, 303);
    assert.equal((await browser.get(`/sites/${publicSite}`)).statusCode, 303);
  });

  it('asks for the password of a private report, refuses a wrong one, and opens with the right one', async () => {
    const browser = new Browser(t.app);
    const form = await browser.get(`/share/${privateSite}`);
    assert.equal(form.statusCode, 200);
    assert.match(form.body, /<label for="share_password">Share password<\/label>/);
    assert.doesNotMatch(form.body, /plumb-csrf/, 'no session before the password');
    const csrf = formField(form.body);
    const wrong = await browser.post(`/share/${privateSite}`, { csrf, password: 'not the password' });
    assert.equal(wrong.statusCode, 401);
    assert.match(wrong.body, /Wrong password/);
    assert.equal(browser.cookies.has(`plumb_share_${privateSite}`), false);
    assert.equal((await browser.post(`/share/${privateSite}`, { password: SHARE_PASSWORD })).statusCode, 403, 'no form value');
    const ok = await browser.post(`/share/${privateSite}`, { csrf, password: SHARE_PASSWORD });
    assert.equal(ok.statusCode, 303);
    const page = await browser.get(`/share/${privateSite}`);
    assert.match(page.body, /data-mode="share"/);
    const session = pageCsrf(page.body);
    assert.equal((await browser.api('GET', report(privateSite), session)).status, 200);
    assert.equal((await browser.api('GET', report(publicSite), session)).status, 404, 'the private grant is for its own site only');

    // A new password ends the sessions granted with the old one; so does unsharing.
    await t.call(owner, 'POST', `/v1/sites/${privateSite}`, { sharing: 'private', share_password: 'a different secret' });
    assert.equal((await browser.api('GET', report(privateSite), session)).status, 401);
    assert.match((await browser.get(`/share/${privateSite}`)).body, /Share password/);
  });

  it('ends public share sessions when the site stops being shared', async () => {
    const site = (await t.call(owner, 'POST', '/v1/sites', { name: 'Briefly public', sharing: 'public' })).body.id;
    const browser = new Browser(t.app);
    const csrf = pageCsrf((await browser.get(`/share/${site}`)).body);
    assert.equal((await browser.api('GET', report(site), csrf)).status, 200);
    await t.call(owner, 'POST', `/v1/sites/${site}`, { sharing: 'none' });
    assert.equal((await browser.api('GET', report(site), csrf)).status, 401);
    assert.equal((await browser.get(`/share/${site}`)).statusCode, 404);
  });

  it('limits password attempts per address', async () => {
    const browser = new Browser(t.app);
    const csrf = formField((await browser.get(`/share/${privateSite}`)).body);
    for (let i = 0; i < 10; i++) assert.equal((await browser.post(`/share/${privateSite}`, { csrf, password: `guess ${i}` })).statusCode, 401);
    const limited = await browser.post(`/share/${privateSite}`, { csrf, password: 'a different secret' });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    const someoneElse = new Browser(t.app);
    const form = formField((await someoneElse.get(`/share/${privateSite}`)).body);
    assert.equal((await someoneElse.post(`/share/${privateSite}`, { csrf: form, password: 'a different secret' })).statusCode, 303);
  });

  it('bounds the share sessions one address starts, while those it has keep working', async () => {
    const fresh = await startTestApp();
    try {
      const site = (await fresh.call(await fresh.token(['*']), 'POST', '/v1/sites', { name: 'Popular', sharing: 'public' })).body.id as string;
      const reader = new Browser(fresh.app);
      assert.equal((await reader.get(`/share/${site}`)).statusCode, 200);
      // Each load without a cookie (a new visitor, or an embedded frame) starts a session; the reader's was the first.
      for (let i = 1; i < SHARE_SESSIONS_PER_CLIENT; i++) {
        const page = i % 2 === 0 ? `/share/${site}` : `/share/${site}?embed=true`;
        assert.equal((await fresh.app.inject({ method: 'GET', url: page, remoteAddress: reader.remoteAddress })).statusCode, 200, `load ${i + 1}`);
      }
      for (const page of [`/share/${site}`, `/share/${site}?embed=true`]) {
        const refused = await fresh.app.inject({ method: 'GET', url: page, remoteAddress: reader.remoteAddress });
        assert.equal(refused.statusCode, 429, page);
        assert.ok(Number(refused.headers['retry-after']) > 0);
      }
      const kept = await reader.get(`/share/${site}`);
      assert.equal(kept.statusCode, 200);
      assert.equal((await reader.get(report(site), { 'x-plumb-csrf': pageCsrf(kept.body) })).statusCode, 200);
      // Another address is not held up by this one.
      assert.equal((await new Browser(fresh.app).get(`/share/${site}`)).statusCode, 200);
    } finally {
      await fresh.close();
    }
  });
});
