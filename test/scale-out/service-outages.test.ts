// A scale-out server process whose services go away while it runs: PostgreSQL, ClickHouse and Redis are reached
// through TCP proxies the test cuts (connections reset, the port closed) and restores. The process never exits;
// requests that need a missing service are answered 503 with Retry-After, never 500; /readyz names what is away
// while /healthz stays up; hits acknowledged during a ClickHouse outage are stored once it returns. Runs in the
// scale-out pass (PLUMB_TEST_STORE=scale-out).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { startServer, type ServerProcess } from '../helpers/process.js';
import { proxyFor, through, type CuttableProxy } from '../helpers/cuttable-proxy.js';
import { freshScaleOut, scaleOutServerEnv, type ScaleOutFixture } from '../helpers/scale-out.js';
import { eventually } from '../helpers/eventually.js';

const ADMIN = 'outage-admin-token-0123456789abcdef';
const OWNER = 'outage-owner-token-0123456789abcdef';
/**
 * On a test cluster (`npm run test:cluster`) ClickHouse's proxy keeps the node's port: without ZooKeeper Plumb reaches
 * the other nodes at CLICKHOUSE_URL's port (README, Running at scale).
 */
const ON_CLUSTER = process.env.CLICKHOUSE_CLUSTER !== undefined;
const AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

describe('service outages in scale-out', () => {
  let fixture: ScaleOutFixture;
  let dir: string;
  let server: ServerProcess;
  let pg: CuttableProxy;
  let clickhouse: CuttableProxy;
  let redis: CuttableProxy;
  let site: string;

  const get = async (path: string, token = OWNER) => {
    const res = await fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } });
    return { status: res.status, retryAfter: res.headers.get('retry-after'), body: (await res.json()) as any };
  };
  const hit = (path: string) =>
    fetch(`${server.url}/?sid=${site}&h=${encodeURIComponent('https://shop.example')}&p=${encodeURIComponent(path)}`, {
      headers: { 'user-agent': AGENT, 'x-forwarded-for': '81.2.69.142' },
    });
  const pageviews = `/v1/aggregations?entity=pageview&entity_id=${'SITE'}&aggregates=pageviews&date_from=2020-01-01%2000:00:00`;
  const report = () => get(pageviews.replace('SITE', site));
  const alive = () => assert.equal(server.child.exitCode, null, `the process is still running:\n${server.stdout().slice(-2000)}`);
  /** `eventually`, failing with the tail of the server's log: what it met is the story of a slow recovery. */
  const until = <T>(check: () => Promise<T | undefined>, what: string, timeoutMs?: number) =>
    eventually(check, what, timeoutMs).catch((err: Error) => {
      throw new Error(`${err.message}; the server's log ends:\n${server.stdout().slice(-3000)}`);
    });

  before(async () => {
    fixture = await freshScaleOut();
    const o = fixture.options;
    pg = await proxyFor(o.databaseUrl, 5432);
    clickhouse = await proxyFor(o.clickhouseUrl, 8123, { samePort: ON_CLUSTER });
    redis = await proxyFor(o.redisUrl, 6379);
    dir = mkdtempSync(join(tmpdir(), 'plumb-outage-'));
    const env = scaleOutServerEnv(fixture, dir);
    server = await startServer({
      ...env,
      DATABASE_URL: through(env.DATABASE_URL!, pg),
      CLICKHOUSE_URL: through(env.CLICKHOUSE_URL!, clickhouse),
      REDIS_URL: through(env.REDIS_URL!, redis),
      PLUMB_ADMIN_TOKEN: ADMIN,
      PLUMB_BOOTSTRAP_TOKEN: OWNER,
      PLUMB_TRUST_PROXY: 'true',
      PLUMB_LOG_LEVEL: 'warn',
    });
    assert.equal((await fetch(`${server.url}/admin/accounts/1`, { method: 'POST', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/json' }, body: JSON.stringify({ tier: 6 }) })).status, 200);
    const created = await fetch(`${server.url}/v1/sites`, { method: 'POST', headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Outages' }) });
    site = ((await created.json()) as { id: string }).id;
  });

  after(async () => {
    if (server?.child.exitCode === null) await server.stop();
    for (const p of [pg, clickhouse, redis]) await p?.close();
    await fixture?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('is ready with every service up', async () => {
    const ready = await get('/readyz');
    assert.deepEqual([ready.status, ready.body], [200, { status: 'ready', services: { postgresql: 'ok', clickhouse: 'ok', redis: 'ok' } }]);
    assert.equal((await hit('/before')).status, 200);
    await until(async () => ((await report()).body[0]?.pageviews === '1' ? true : undefined), 'the first hit stored');
  });

  it('without ClickHouse: reports 503 with Retry-After, hits still acknowledged and stored once it returns', async () => {
    await clickhouse.cut();
    try {
      const refused = await report();
      assert.deepEqual([refused.status, refused.retryAfter], [503, '5'], JSON.stringify(refused.body));
      assert.match(refused.body.error, /unavailable; retry shortly/);
      const ready = await get('/readyz');
      assert.deepEqual([ready.status, ready.retryAfter, ready.body.services], [503, '5', { postgresql: 'ok', clickhouse: 'unavailable', redis: 'ok' }]);
      assert.equal((await fetch(`${server.url}/healthz`)).status, 200, 'the process itself is fine');
      for (const path of ['/during-1', '/during-2']) assert.equal((await hit(path)).status, 200, 'acknowledged from the hit log');
      alive();
    } finally {
      await clickhouse.restore();
    }
    await until(async () => ((await report()).body[0]?.pageviews === '3' ? true : undefined), 'the hits of the outage stored', 30_000);
    assert.equal((await get('/readyz')).status, 200);
  });

  it('without Redis: hits and API requests 503 with Retry-After, then served again', async () => {
    await redis.cut();
    try {
      const refused = await hit('/no-redis');
      assert.equal(refused.status, 503);
      assert.equal(refused.headers.get('retry-after'), '5');
      const ready = await get('/readyz');
      assert.deepEqual([ready.status, ready.body.services.redis], [503, 'unavailable']);
      const api = await get(`/v1/sites/${site}`);
      assert.deepEqual([api.status, api.retryAfter], [503, '5'], JSON.stringify(api.body));
      alive();
    } finally {
      await redis.restore();
    }
    await until(async () => ((await hit('/redis-back')).status === 200 ? true : undefined), 'a hit accepted again');
    assert.equal((await get(`/v1/sites/${site}`)).status, 200);
    await until(async () => ((await report()).body[0]?.pageviews === '4' ? true : undefined), 'the refused hit not stored, the next one stored');
  });

  it('without PostgreSQL: the process keeps running, requests 503, then served again', async () => {
    await pg.cut();
    try {
      // A token checked in the last 3 seconds is still known without PostgreSQL (the token cache): until then 200.
      const refused = await until(async () => {
        const r = await get('/v1/account');
        return r.status === 200 ? undefined : r;
      }, 'a request that needs PostgreSQL', 15_000);
      assert.deepEqual([refused.status, refused.retryAfter], [503, '5'], JSON.stringify(refused.body));
      const ready = await get('/readyz');
      assert.deepEqual([ready.status, ready.body.services.postgresql], [503, 'unavailable']);
      alive();
    } finally {
      await pg.restore();
    }
    await until(async () => ((await get('/v1/account')).status === 200 ? true : undefined), 'the account served again');
    assert.equal((await get('/readyz')).status, 200);
    alive();
  });
});
