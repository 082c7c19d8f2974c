// Limits as a client sees them: 429 bodies and a truthful Retry-After, tier changes that apply at once,
// the concurrency cap over real connections, usage counting, and one budget shared by two processes on Redis.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { RedisLimitStore } from '../../src/store/redis/limit-store.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { startServer } from '../helpers/process.js';
import { REDIS_URL } from '../helpers/redis.js';

describe('limits over /v1', () => {
  let t: TestApp;
  let now = Date.UTC(2026, 10, 21, 9, 0, 0);
  before(async () => {
    t = await startTestApp({ limits: { now: () => now } });
  });
  after(() => t.close());

  it('refuses request 501 of the hour on Tier 1 with {message} and a Retry-After that works', async () => {
    const start = now;
    for (let i = 0; i < 500; i++) {
      now = start + i * 1000; // one request a second: the window's oldest leaves at start + 3600 s
      const res = await t.call(OWNER_TOKEN, 'GET', '/v1/token');
      assert.equal(res.status, 200, `request ${i + 1}`);
    }
    now = start + 1000 * 1000;
    const refused = await t.call(OWNER_TOKEN, 'GET', '/v1/sites');
    assert.equal(refused.status, 429);
    assert.deepEqual(Object.keys(refused.body), ['message']);
    assert.match(String(refused.headers['content-type']), /application\/json/);
    assert.equal(refused.headers['retry-after'], String(3600 - 1000));
    now += (Number(refused.headers['retry-after']) - 1) * 1000;
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/account')).status, 429, 'a second early is still too early');
    now += 1000;
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/account')).status, 200);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/account')).status, 429, 'only one request left the window');
  });

  it('applies a tier change at once', async () => {
    const res = await t.call(ADMIN_TOKEN, 'POST', '/admin/accounts/1', { tier: 2 });
    assert.equal(res.status, 200);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/account')).status, 200);
    await t.call(ADMIN_TOKEN, 'POST', '/admin/accounts/1', { tier: 1 });
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/account')).status, 429);
  });

  it('counts every authenticated request toward the month, refused ones included', async () => {
    const usage = await t.call(ADMIN_TOKEN, 'GET', '/admin/accounts/1/usage');
    assert.equal(usage.status, 200);
    assert.deepEqual(usage.body, { object: 'usage', account_id: 1, data: [{ month: new Date().toISOString().slice(0, 7), api_requests: 506 }] });
    await t.call('not-a-token', 'GET', '/v1/token');
    await t.call(undefined, 'DELETE', '/v1/sites/ABCDEFGH/data');
    assert.equal((await t.call(ADMIN_TOKEN, 'GET', '/admin/accounts/1/usage')).body.data[0].api_requests, 506, 'unauthenticated requests are not counted');
    assert.equal((await t.call(ADMIN_TOKEN, 'GET', '/admin/accounts/99/usage')).status, 404);
  });

  it('counts aggregations and current visitors in the per-minute window, apart from the hourly one', async () => {
    const other = await t.meta.createAccount({ name: 'M', email: 'm@m.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const token = await t.token(['*'], { accountId: other.id });
    const site = (await t.call(token, 'POST', '/v1/sites', { name: 'Minute' })).body.id;
    const start = now;
    for (let i = 0; i < 10; i++) {
      now = start + i * 1000;
      const url = i % 2 === 0
        ? `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews`
        : `/v1/current_visitors?site_id=${site}`;
      assert.equal((await t.call(token, 'GET', url)).status, 200, `request ${i + 1}`);
    }
    now = start + 30_000;
    const refused = await t.call(token, 'GET', `/v1/current_visitors?site_id=${site}`);
    assert.equal(refused.status, 429);
    assert.deepEqual(Object.keys(refused.body), ['message']);
    assert.equal(refused.headers['retry-after'], '30');
    assert.equal((await t.call(token, 'GET', `/v1/sites/${site}`)).status, 200, 'the hourly budget is separate');
    now = start + 60_000;
    assert.equal((await t.call(token, 'GET', `/v1/current_visitors?site_id=${site}`)).status, 200, 'Retry-After was truthful');
  });

  it("keeps accounts' budgets apart", async () => {
    const other = await t.meta.createAccount({ name: 'B', email: 'b@b.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const token = await t.token(['*'], { accountId: other.id });
    assert.equal((await t.call(token, 'GET', '/v1/account')).status, 200);
  });
});

/** Starts a POST whose body never finishes, so the request stays in flight; returns how to finish it. */
function slowRequest(port: number, token: string): { done: Promise<number>; finish: () => void } {
  const body = JSON.stringify({ name: 'slow' });
  let finish = () => undefined as void;
  const done = new Promise<number>((resolve, reject) => {
    const req = httpRequest(
      { host: '127.0.0.1', port, method: 'POST', path: '/v1/sites', headers: {
        authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body),
      } },
      (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      },
    );
    req.on('error', reject);
    req.write(body.slice(0, 3));
    finish = () => void req.end(body.slice(3));
  });
  return { done, finish };
}

describe('the concurrency cap over real connections', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await startTestApp({ limits: {} });
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = Number(new URL(address).port);
  });
  after(() => t.close());

  it('refuses exactly one of six requests in flight on Tier 1 (cap 5), then frees the slots', async () => {
    const slow = Array.from({ length: 6 }, () => slowRequest(port, OWNER_TOKEN));
    await sleep(300); // let all six reach the server; the sixth is answered at once
    const refused = await fetch(`http://127.0.0.1:${port}/v1/token`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } });
    assert.equal(refused.status, 429);
    const body = (await refused.json()) as { error: { code: string; limit: number; next_tier: unknown } };
    assert.equal(body.error.code, 'api_concurrency_limit_reached');
    assert.equal(body.error.limit, 5);
    assert.deepEqual(body.error.next_tier, { name: 'Tier 2', concurrent_queries: 5, price: '19' });
    assert.equal(refused.headers.get('retry-after'), '1');
    for (const s of slow) s.finish();
    const statuses = (await Promise.all(slow.map((s) => s.done))).sort();
    assert.deepEqual(statuses, [200, 200, 200, 200, 200, 429]);
    const after = await fetch(`http://127.0.0.1:${port}/v1/token`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } });
    assert.equal(after.status, 200, 'finished requests gave their slots back');
  });

  it('frees the slot of a client that hangs up', async () => {
    const gone = Array.from({ length: 5 }, () => {
      const req = httpRequest({ host: '127.0.0.1', port, method: 'POST', path: '/v1/sites', headers: {
        authorization: `Bearer ${OWNER_TOKEN}`, 'content-type': 'application/json', 'content-length': 100,
      } });
      req.on('error', () => undefined);
      req.write('{"na');
      return req;
    });
    await sleep(300);
    for (const req of gone) req.destroy();
    await sleep(300);
    const res = await fetch(`http://127.0.0.1:${port}/v1/token`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } });
    assert.equal(res.status, 200);
  });
});

describe('two server processes on one Redis', () => {
  const prefix = `plumb-test:${randomUUID()}:`;
  const dirs = [0, 1].map(() => mkdtempSync(join(tmpdir(), 'plumb-limits-')));
  const token = `shared-bootstrap-${randomUUID()}`;
  after(async () => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
    const store = new RedisLimitStore(REDIS_URL, prefix);
    await store.clear();
    await store.close();
  });

  it('share one hourly budget', async () => {
    // Each process has its own embedded store; the same bootstrap token makes account 1 in both, and
    // limits are kept per account id in the shared Redis.
    const servers = await Promise.all(
      dirs.map((dir) => startServer({ PLUMB_DATA_DIR: dir, PLUMB_BOOTSTRAP_TOKEN: token, REDIS_URL, PLUMB_REDIS_PREFIX: prefix })),
    );
    try {
      const get = (i: number) => fetch(`${servers[i % 2]!.url}/v1/token`, { headers: { authorization: `Bearer ${token}` } });
      for (let i = 0; i < 500; i += 5) {
        const batch = await Promise.all([0, 1, 2, 3, 4].map((j) => get(i + j)));
        assert.deepEqual(batch.map((r) => r.status), [200, 200, 200, 200, 200], `requests ${i + 1}-${i + 5}`);
      }
      for (const i of [0, 1]) {
        const res = await get(i);
        assert.equal(res.status, 429, `server ${i} after 500 shared requests`);
        assert.ok(Number(res.headers.get('retry-after')) > 3500);
      }
    } finally {
      await Promise.all(servers.map((s) => s.stop()));
    }
  });
});
