// /admin: accounts and tokens for the instance operator, behind PLUMB_ADMIN_TOKEN.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { TokenAuthenticator } from '../../src/auth/token-authenticator.js';
import { buildApp } from '../../src/http/app.js';
import { buildTrackerScript } from '../../src/http/tracker-script.js';
import { Limiter } from '../../src/limits/limiter.js';
import { MemoryLimitStore } from '../../src/store/memory/limit-store.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

describe('/admin', () => {
  let t: TestApp;
  const admin = (method: 'GET' | 'POST' | 'DELETE', url: string, body?: unknown) => t.call(ADMIN_TOKEN, method, url, body);
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('refuses requests without the admin token, or with an API token', async () => {
    for (const token of [undefined, 'wrong-admin-token-0123456789', OWNER_TOKEN]) {
      const res = await t.call(token, 'GET', '/admin/accounts');
      assert.equal(res.status, 401);
      assert.equal(typeof res.body.error, 'string');
    }
  });

  it('is off (404) when PLUMB_ADMIN_TOKEN is unset', async () => {
    const app = await buildApp({
      meta: t.meta,
      team: t.team,
      events: t.events,
      ingest: t.ingest,
      imports: t.imports,
      reports: t.reports,
      metrics: t.metrics,
      trackerScript: await buildTrackerScript(),
      auth: new TokenAuthenticator(t.meta),
      limiter: new Limiter(new MemoryLimitStore(), { enabled: false }),
      usage: t.usage,
      adminToken: undefined,
    });
    const res = await app.inject({ method: 'GET', url: '/admin/accounts', headers: { authorization: 'Bearer anything-at-all-here' } });
    assert.equal(res.statusCode, 404);
    assert.match(JSON.parse(res.body).error, /PLUMB_ADMIN_TOKEN/);
    await app.close();
  });

  it('creates, lists, reads and updates accounts', async () => {
    const created = await admin('POST', '/admin/accounts', { name: 'Acme', email: 'ops@acme.test', timezone: 'Europe/Paris', tier: 3 });
    assert.equal(created.status, 200);
    assert.equal(created.body.object, 'account');
    assert.deepEqual(
      [created.body.name, created.body.email, created.body.timezone, created.body.tier, created.body.subscription_status],
      ['Acme', 'ops@acme.test', 'Europe/Paris', 3, 'active'],
    );
    const id = created.body.id;
    assert.equal((await admin('GET', `/admin/accounts/${id}`)).body.name, 'Acme');
    assert.ok((await admin('GET', '/admin/accounts')).body.some((a: { id: number }) => a.id === id));
    const updated = await admin('POST', `/admin/accounts/${id}`, { tier: 6, subscription_status: 'lapsed' });
    assert.deepEqual([updated.body.tier, updated.body.subscription_status, updated.body.name], [6, 'lapsed', 'Acme']);
  });

  it('validates account bodies', async () => {
    const cases: [unknown, string][] = [
      [{ email: 'a@b.c' }, 'name'],
      [{ name: 'x' }, 'email'],
      [{ name: 'x', email: 'not-an-email' }, 'email'],
      [{ name: 'x', email: 'a@b.c', tier: 7 }, 'tier'],
      [{ name: 'x', email: 'a@b.c', tier: 0 }, 'tier'],
      [{ name: 'x', email: 'a@b.c', timezone: 'Moon/Base' }, 'timezone'],
    ];
    for (const [body, field] of cases) {
      const res = await admin('POST', '/admin/accounts', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(res.body.errors[field], JSON.stringify(res.body));
    }
    assert.equal((await admin('POST', '/admin/accounts/1', { subscription_status: 'paused' })).status, 400);
    assert.equal((await admin('GET', '/admin/accounts/999')).status, 404);
    assert.equal((await admin('GET', '/admin/accounts/abc')).status, 400);
  });

  it('issues a token whose secret is shown once and works on /v1', async () => {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Scoped' })).body;
    const res = await admin('POST', '/admin/accounts/1/tokens', { name: 'Reporting', abilities: [`read:${site.id}`] });
    assert.equal(res.status, 200);
    assert.match(res.body.token, /^plumb_/);
    assert.equal(res.body.version, 1);
    assert.deepEqual(res.body.abilities, [`read:${site.id}`]);
    const stored = (await t.meta.listTokens(1)).find((x) => x.id === res.body.id)!;
    assert.notEqual(stored.hash, res.body.token, 'only a hash is stored');
    assert.ok(!JSON.stringify(stored).includes(res.body.token));

    const me = await t.call(res.body.token, 'GET', '/v1/token');
    assert.equal(me.status, 200);
    assert.equal(me.body.name, 'Reporting');
    assert.equal((await t.call(res.body.token, 'GET', `/v1/sites/${site.id}`)).status, 200);

    const list = await admin('GET', '/admin/accounts/1/tokens');
    const listed = list.body.data.find((x: { id: string }) => x.id === res.body.id);
    assert.equal(listed.token, undefined, 'the secret is never listed');
    assert.match(listed.last_used_at, /^\d{4}-/, 'last use is recorded');
  });

  it('validates token bodies', async () => {
    const cases: [unknown, string][] = [
      [{ abilities: ['*'] }, 'name'],
      [{ name: 'x' }, 'abilities'],
      [{ name: 'x', abilities: [] }, 'abilities'],
      [{ name: 'x', abilities: ['root'] }, 'abilities'],
      [{ name: 'x', abilities: ['read:lowercase'] }, 'abilities'],
      [{ name: 'x', abilities: ['manage:ZZZZZZZZ'] }, 'abilities'],
      [{ name: 'x', abilities: ['*'], expires_at: 'tomorrow' }, 'expires_at'],
    ];
    for (const [body, field] of cases) {
      const res = await admin('POST', '/admin/accounts/1/tokens', body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(res.body.errors[field], JSON.stringify(res.body));
    }
  });

  it("refuses abilities naming another account's site", async () => {
    const other = (await admin('POST', '/admin/accounts', { name: 'B', email: 'b@b.test' })).body;
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Mine' })).body;
    const res = await admin('POST', `/admin/accounts/${other.id}/tokens`, { name: 'x', abilities: [`manage:${site.id}`] });
    assert.equal(res.status, 400);
  });

  it('revokes a token at once and honours expires_at', async () => {
    const res = await admin('POST', '/admin/accounts/1/tokens', { name: 'Short', abilities: ['*'] });
    assert.equal((await t.call(res.body.token, 'GET', '/v1/account')).status, 200);
    const del = await admin('DELETE', `/admin/accounts/1/tokens/${res.body.id}`);
    assert.deepEqual(del.body, { id: res.body.id, object: 'token', deleted: true });
    assert.equal((await t.call(res.body.token, 'GET', '/v1/account')).status, 401);
    assert.equal((await admin('DELETE', `/admin/accounts/1/tokens/${res.body.id}`)).status, 404);
    assert.equal((await admin('DELETE', '/admin/accounts/1/tokens/nope')).status, 404);

    const past = await admin('POST', '/admin/accounts/1/tokens', { name: 'Old', abilities: ['*'], expires_at: '2020-01-01 00:00:00' });
    assert.equal(past.body.expires_at, '2020-01-01 00:00:00');
    assert.equal((await t.call(past.body.token, 'GET', '/v1/token')).status, 401);
    const future = await admin('POST', '/admin/accounts/1/tokens', { name: 'New', abilities: ['*'], expires_at: '2999-01-01 00:00:00' });
    assert.equal((await t.call(future.body.token, 'GET', '/v1/token')).status, 200);
  });

  it("does not revoke another account's token through the wrong account", async () => {
    const res = await admin('POST', '/admin/accounts/1/tokens', { name: 'Mine', abilities: ['*'] });
    const other = (await admin('POST', '/admin/accounts', { name: 'C', email: 'c@c.test' })).body;
    assert.equal((await admin('DELETE', `/admin/accounts/${other.id}/tokens/${res.body.id}`)).status, 404);
    assert.equal((await t.call(res.body.token, 'GET', '/v1/token')).status, 200);
  });
});
