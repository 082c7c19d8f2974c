// Current visitors on the scale-out store count a hit as soon as the collector answers it, whichever process took
// it: two apps share PostgreSQL, ClickHouse and Redis, and each one's visits in progress are read from Redis (the
// live set the visit commit keeps), laid over the stored rows; once the batches are written the answer is the one
// the stored rows alone give. The apps hold their batches for an hour, so what shows before a flush came from Redis.
// Also: a bounded, trimmed live set, docs that are not visits, and Redis away (503 with Retry-After, never 500).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Redis } from 'ioredis';
import { assemble, type Plumb } from '../../src/assemble.js';
import { bootstrap } from '../../src/bootstrap.js';
import { formatTimestamp } from '../../src/domain/time.js';
import { buildTrackerScript, type TrackerScript } from '../../src/http/tracker-script.js';
import { ClickHouseDialect } from '../../src/report/clickhouse-dialect.js';
import { ReportCompiler } from '../../src/report/compiler.js';
import { ReportEngine } from '../../src/report/engine.js';
import { QueryGate } from '../../src/report/query-gate.js';
import type { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { liveVisitOfDoc, RedisLiveVisits } from '../../src/store/redis/live-visits.js';
import { LIVE_KEEP_MS } from '../../src/store/redis/visit-state.js';
import { cuttableProxy, type CuttableProxy } from '../helpers/cuttable-proxy.js';
import { eventually } from '../helpers/eventually.js';
import { REDIS_URL } from '../helpers/redis.js';
import { freshScaleOut, type ScaleOutFixture } from '../helpers/scale-out.js';

const ADMIN = 'live-scale-out-admin-token-0123456789';
const OWNER = 'live-scale-out-owner-token-0123456789';
const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** Every batch held for an hour unless flushed: nothing reaches ClickHouse behind a test's back. */
const HELD = { flushIntervalMs: 3_600_000, batchSize: 1_000_000 };

describe('scale-out current visitors before the rows are written', () => {
  let fixture: ScaleOutFixture;
  let tracker: TrackerScript;
  let redis: Redis;
  let proxy: CuttableProxy;
  const apps: Plumb[] = [];
  /** Two processes on the same stores; b reaches Redis through a proxy the outage test cuts. */
  let a: Plumb;
  let b: Plumb;
  let site: string;

  const start = async (redisUrl: string, now?: () => Date) => {
    const plumb = await assemble({
      dbPath: ':memory:',
      scaleOut: { ...fixture.options, redisUrl },
      redisPrefix: fixture.redisPrefix,
      adminToken: ADMIN,
      rateLimits: false,
      excludedHosts: [],
      trustProxy: false,
      authCacheMs: 0,
      buffer: HELD,
      trackerScript: tracker,
      reportEmailTimer: false,
      ...(now ? { reportsNow: now } : {}),
    });
    apps.push(plumb);
    await plumb.app.ready();
    return plumb;
  };

  /** A live pageview through the collector, from the visitor at `ip`; resolves once it is answered. */
  const view = async (app: Plumb, ip: string, path: string, referrer = '', siteId = site) => {
    const params = new URLSearchParams({ sid: siteId, h: 'https://shop.example', p: path, r: referrer });
    const res = await app.app.inject({ method: 'GET', url: `/?${params}`, headers: { 'user-agent': CHROME }, remoteAddress: ip });
    assert.equal(res.statusCode, 200, res.body);
  };
  const call = async (app: Plumb, url: string) => {
    const res = await app.app.inject({ method: 'GET', url, headers: { authorization: `Bearer ${OWNER}` } });
    return { status: res.statusCode, retryAfter: res.headers['retry-after'], body: JSON.parse(res.body) };
  };
  const current = async (app: Plumb, siteId = site, detailed = true) => {
    const res = await call(app, `/v1/current_visitors?site_id=${siteId}${detailed ? '&detailed=true' : ''}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };
  /** The answer the stored rows alone give (no visits in progress laid over them), as the API shapes it. */
  const stored = async (siteId = site) => {
    const engine = new ReportEngine(a.events, new ReportCompiler(new ClickHouseDialect((a.events as ClickHouseEventStore).features)), new QueryGate());
    return JSON.parse(JSON.stringify(await engine.currentVisitors(siteId, true)));
  };
  const flushBoth = async () => {
    await a.ingest.flush();
    await b.ingest.flush();
  };

  before(async () => {
    fixture = await freshScaleOut();
    tracker = await buildTrackerScript();
    redis = new Redis(REDIS_URL);
    const u = new URL(fixture.options.redisUrl);
    proxy = await cuttableProxy(u.hostname, Number(u.port || 6379));
    a = await start(fixture.options.redisUrl);
    await bootstrap(a.meta, OWNER);
    const through = new URL(fixture.options.redisUrl);
    through.hostname = '127.0.0.1';
    through.port = String(proxy.port);
    b = await start(through.toString());
    site = (await a.app.inject({ method: 'POST', url: '/v1/sites', headers: { authorization: `Bearer ${OWNER}` }, payload: { name: 'Live' } })).json().id;
  });

  after(async () => {
    for (const app of apps) await app.close();
    await proxy?.close();
    await redis?.quit();
    await fixture?.drop();
  });

  it("counts answered hits of both processes at once, one visit across them by its newest page, and the same once written", async () => {
    await view(a, '203.0.113.1', '/pricing', 'https://news.ycombinator.com/item?id=1');
    await view(b, '203.0.113.2', '/docs');
    // The first visitor goes on at the other process: still one visit, its exit page the new one.
    await view(b, '203.0.113.1', '/signup');
    const expected = {
      total: 2,
      content: [{ hostname: 'https://shop.example', pathname: '/docs', total: 1 }, { hostname: 'https://shop.example', pathname: '/signup', total: 1 }],
      referrers: [{ referrer_hostname: 'https://news.ycombinator.com', referrer_pathname: '/item', total: 1 }],
    };
    assert.deepEqual(await current(a), expected);
    assert.deepEqual(await current(b), expected);
    assert.deepEqual(await current(a, site, false), { total: 2 });
    assert.equal((await a.events.listHits(site)).length, 0, 'nothing was written yet: the answer came from Redis');
    assert.deepEqual(await stored(), { total: 0, content: [], referrers: [] });

    await flushBoth();
    assert.equal((await a.events.listHits(site)).length, 3);
    assert.deepEqual(await stored(), expected, 'the stored rows give the same answer');
    assert.deepEqual(await current(a), expected);
    assert.deepEqual(await current(b), expected);
  });

  it('lays a continued visit over its stored row, and adds visits only the store has', async () => {
    await view(a, '203.0.113.1', '/thanks');
    // An import of a visit happening now reaches the store without the shared visit state.
    const line = { type: 'pageview', site_id: site, timestamp: formatTimestamp(new Date()), url: 'https://shop.example/blog', referrer: 'https://www.google.com/', user_agent: CHROME, ip: '203.0.113.9' };
    const imported = await a.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/x-ndjson' }, payload: JSON.stringify(line) });
    assert.equal(imported.statusCode, 200, imported.body);
    await flushBoth();
    await view(b, '203.0.113.2', '/docs/install');
    const answer = await current(b);
    assert.equal(answer.total, 3);
    assert.deepEqual(answer.content.map((c: { pathname: string; total: number }) => [c.pathname, c.total]), [['/blog', 1], ['/docs/install', 1], ['/thanks', 1]]);
    assert.deepEqual(answer.referrers.map((r: { referrer_hostname: string }) => r.referrer_hostname), ['https://news.ycombinator.com', 'https://www.google.com']);
    assert.equal((await stored()).content.some((c: { pathname: string }) => c.pathname === '/docs/install'), false, 'the last hit is not stored yet');
    await flushBoth();
    assert.deepEqual(await stored(), answer);
    assert.deepEqual(await current(a), answer);
  });

  it("leaves out visits idle for five minutes, and other sites' visits", async () => {
    const other = (await a.app.inject({ method: 'POST', url: '/v1/sites', headers: { authorization: `Bearer ${OWNER}` }, payload: { name: 'Elsewhere' } })).json().id;
    await view(b, '198.51.100.7', '/', '', other);
    assert.equal((await current(a, other, false)).total, 1);
    assert.equal((await current(a)).total, 3, 'not counted on this site');
    // Six minutes on, every visit is idle: the report's clock moved, not the visits (nor Redis' live set).
    const later = await start(fixture.options.redisUrl, () => new Date(Date.now() + 6 * 60_000));
    assert.deepEqual(await current(later), { total: 0, content: [], referrers: [] });
    assert.deepEqual(await current(later, other, false), { total: 0 });
  });

  it('keeps the live set of the last minutes only, and reads at most the bound it is given', async () => {
    const key = `${fixture.redisPrefix}{${site}}:live`;
    // An entry older than the set keeps, as a write long ago would have left it: the next commit trims it.
    await redis.zadd(key, Date.now() - LIVE_KEEP_MS - 60_000, '12345');
    await view(a, '203.0.113.3', '/trim');
    assert.equal(await redis.zscore(key, '12345'), null);
    const ttl = await redis.pttl(key);
    assert.ok(ttl > 0 && ttl <= LIVE_KEEP_MS, `the set expires with its site's traffic (${ttl} ms)`);
    const reader = new RedisLiveVisits(fixture.options.redisUrl, fixture.redisPrefix);
    try {
      const since = Date.now() - 5 * 60_000;
      const visits = (await reader.since(site, since, 100))!;
      // The two visitors of the tests above and this one's (the import's visit never was in Redis).
      assert.equal(visits.length, 3);
      assert.ok(visits.every((v) => /^\d+$/.test(v.visitId) && v.lastSeenMs >= since && v.exitHostname === 'https://shop.example'));
      assert.equal(await reader.since(site, since, 2), null, 'more than the bound: the caller counts the stored rows alone');
      assert.deepEqual(await reader.since(site, Date.now() + 60_000, 100), []);
      assert.deepEqual(await reader.since('no{such}site', since, 100), []);
    } finally {
      await reader.close();
    }
  });

  it('counts a visit whose doc is not one from its row alone, and skips ids whose visit expired', async () => {
    const before = await current(a);
    const visitKey = (id: string) => `${fixture.redisPrefix}{${site}}:visit:${id}`;
    const key = `${fixture.redisPrefix}{${site}}:live`;
    await redis.hset(visitKey('777'), 'doc', 'not json');
    await redis.hset(visitKey('778'), 'doc', JSON.stringify({ r: { visitId: '778', lastSeenAt: 'soon' } }));
    await redis.zadd(key, Date.now(), '777', Date.now(), '778', Date.now(), '779');
    assert.deepEqual(await current(a), before);
    await redis.del(visitKey('777'), visitKey('778'));
    await redis.zrem(key, '777', '778', '779');
  });

  it('reads docs as the visit commit writes them, and refuses what is not one', () => {
    const doc = { r: { visitId: '42', lastSeenAt: 1_700_000_000_000, pageviews: 2, exitHostname: 'https://a.example', exitPage: '/x', referrerHostname: '', referrerPathname: '' } };
    assert.deepEqual(liveVisitOfDoc(JSON.stringify(doc)), {
      visitId: '42', lastSeenMs: 1_700_000_000_000, pageviews: 2, exitHostname: 'https://a.example', exitPage: '/x', referrerHostname: '', referrerPathname: '',
    });
    for (const bad of ['', 'null', '[]', '{}', '{"r":null}', '{"r":"x"}', JSON.stringify({ r: { ...doc.r, visitId: 'abc' } }),
      JSON.stringify({ r: { ...doc.r, pageviews: '2' } }), JSON.stringify({ r: { ...doc.r, exitPage: null } }), JSON.stringify({ r: { ...doc.r, referrerHostname: 1 } })]) {
      assert.equal(liveVisitOfDoc(bad), undefined, bad);
    }
  });

  it('answers 503 with Retry-After while Redis is away, never 500, then counts again', async () => {
    await proxy.cut();
    try {
      const refused = await call(b, `/v1/current_visitors?site_id=${site}&detailed=true`);
      assert.deepEqual([refused.status, refused.retryAfter], [503, '5'], JSON.stringify(refused.body));
    } finally {
      await proxy.restore();
    }
    await eventually(async () => ((await call(b, `/v1/current_visitors?site_id=${site}`)).status === 200 ? true : undefined), 'an answer again', 15_000);
    assert.deepEqual(await current(b), await current(a));
  });
});
