// Engagement hits over HTTP (the collector's `e`/`sd` and Plausible's `engagement` events): stored as rows of type
// engagement with their values and the visit in progress, never changing the visit nor /v1's pageviews, visits or
// durations; dropped without a visit; bad values answered 400, never a 500, storing nothing.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StoredHit, VisitRecord } from '../../src/domain/hits.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

/** A Chrome agent of its own version per test: each test's hits are one visitor of their own. */
const chrome = (version: number) =>
  `Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/${version}.0.0.0 Safari/537.36`;
const HOST = 'https://engaged.example';

describe('engagement collection', () => {
  let t: TestApp;
  let site: string;

  const hit = (method: 'GET' | 'POST', params: Record<string, string>, ua: string) =>
    t.app.inject({ method, url: `/?${new URLSearchParams(params).toString()}`, headers: { 'user-agent': ua } });
  const pageview = (path: string, ua: string) => hit('GET', { sid: site, h: HOST, p: path }, ua);
  const engagement = (path: string, ua: string, values: Record<string, string>, method: 'GET' | 'POST' = 'POST') =>
    hit(method, { sid: site, h: HOST, p: path, ...values }, ua);
  const stored = async (): Promise<StoredHit[]> => {
    await t.flushHits();
    return t.events.listHits(site);
  };
  const visitOf = async (visitId: bigint): Promise<VisitRecord | undefined> => {
    await t.flushHits();
    return (await t.events.listVisits(site)).find((v) => v.visitId === visitId);
  };
  const totals = async () => {
    await t.flushHits();
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews,visits,avg_duration,bounce_rate&date_from=2000-01-01`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body[0];
  };
  const metric = async (pattern: RegExp) => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => pattern.test(l));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };
  /** Hits of one visitor agent: found by the visit of its pageview. */
  const hitsOfVisit = (hits: StoredHit[], visitId: bigint) => hits.filter((h) => h.visitId === visitId);

  before(async () => {
    t = await startTestApp();
    const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Engaged', domain: 'engaged.example' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    site = res.body.id;
  });
  after(() => t.close());

  it('stores engagement hits with their values and the visit of the pageview, leaving the visit and /v1 totals as they were', async () => {
    const ua = chrome(120);
    assert.equal((await pageview('/article/', ua)).statusCode, 200);
    assert.equal((await pageview('/next', ua)).statusCode, 200);
    const [view] = (await stored()).filter((h) => h.type === 'pageview' && h.pathname === '/article');
    assert.ok(view);
    const visitBefore = await visitOf(view.visitId);
    assert.ok(visitBefore);
    const totalsBefore = await totals();
    // Later than the pageviews, so that a hit counted into the visit would move its last hit and duration.
    await new Promise((resolve) => setTimeout(resolve, 30));

    const first = await engagement('/article/', ua, { e: '1500', sd: '40' });
    assert.equal(first.statusCode, 204);
    assert.equal(first.headers['access-control-allow-origin'], '*');
    // Sent by GET too (the collector's fast lane takes it), and with only one of the two values.
    assert.equal((await engagement('/article', ua, { e: '2500', sd: '75' }, 'GET')).statusCode, 200);
    assert.equal((await engagement('/next', ua, { e: '800' })).statusCode, 204);

    const mine = hitsOfVisit(await stored(), view.visitId);
    const engaged = mine.filter((h) => h.type === 'engagement');
    assert.deepEqual(
      engaged.map((h) => [h.pathname, h.scrollDepth ?? 0, h.engagedMs ?? 0]).sort(),
      [['/article', 40, 1500], ['/article', 75, 2500], ['/next', 0, 800]],
    );
    for (const h of engaged) {
      assert.equal(h.visitorId, view.visitorId);
      assert.equal(h.hostname, HOST);
      assert.deepEqual(
        [h.eventName, h.value, h.firstView, h.props, h.browser, h.operatingSystem, h.deviceType, h.countryCode, h.referrerSource],
        ['', 0, false, undefined, view.browser, view.operatingSystem, view.deviceType, view.countryCode, view.referrerSource],
      );
      assert.ok(h.timestamp.getTime() > visitBefore.lastSeenAt.getTime(), 'the engagement came after the visit last changed');
    }
    // Pageviews carry no engagement values.
    assert.ok(mine.filter((h) => h.type === 'pageview').every((h) => h.scrollDepth === undefined && h.engagedMs === undefined));

    assert.deepEqual(await visitOf(view.visitId), visitBefore);
    assert.deepEqual(await totals(), totalsBefore);
    assert.equal(totalsBefore.pageviews, '2');
    assert.equal(totalsBefore.visits, '1');
  });

  it('drops an engagement hit whose visitor has no visit in progress, answered as a recorded one', async () => {
    const before = (await stored()).length;
    const drops = await metric(/plumb_hits_dropped_total\{reason="no-visit"\}/);
    const res = await engagement('/lonely', chrome(121), { e: '1000', sd: '10' });
    assert.equal(res.statusCode, 204);
    assert.equal((await stored()).length, before);
    assert.equal(await metric(/plumb_hits_dropped_total\{reason="no-visit"\}/), drops + 1);
    // No visit was made by it either: a pageview after it starts one, and only one.
    const totalsBefore = await totals();
    await pageview('/lonely', chrome(121));
    assert.equal((await totals()).visits, String(Number(totalsBefore.visits) + 1));
  });

  const bad: [string, Record<string, string>, RegExp][] = [
    ['a scroll depth over 100', { sd: '101', e: '10' }, /sd/],
    ['a negative scroll depth', { sd: '-1', e: '10' }, /sd/],
    ['a fractional scroll depth', { sd: '4.5', e: '10' }, /sd/],
    ['an engaged time over 30 minutes', { e: '1800001' }, /\be\b/],
    ['an engaged time that is not a number', { e: 'soon' }, /\be\b/],
    ['an engaged time past the safe integers', { e: '99999999999999999999' }, /\be\b/],
    ['an engagement that names an event too', { e: '10', name: 'Signup' }, /event/],
    ['an engagement that gives a goal code too', { e: '10', gcode: 'ABCD1234' }, /event/],
  ];
  for (const method of ['POST', 'GET'] as const) {
    for (const [what, values, message] of bad) {
      it(`answers ${method} with ${what} 400 and stores nothing`, async () => {
        const ua = chrome(122);
        await pageview('/bad', ua);
        const before = (await stored()).length;
        const res = await engagement('/bad', ua, values, method);
        assert.equal(res.statusCode, 400, res.body);
        assert.match(res.headers['content-type'] as string, /application\/json/);
        const body = JSON.parse(res.body) as { error: string };
        assert.match(body.error, /^Malformed hit: /);
        assert.match(body.error, message);
        assert.equal((await stored()).length, before);
      });
    }
  }

  it('answers a parameter given twice 400', async () => {
    const ua = chrome(123);
    await pageview('/twice', ua);
    const res = await t.app.inject({ method: 'POST', url: `/?sid=${site}&h=${encodeURIComponent(HOST)}&p=/twice&e=1&e=2`, headers: { 'user-agent': ua } });
    assert.equal(res.statusCode, 400);
    assert.match(JSON.parse(res.body).error, /e must be given once/);
  });

  it("stores Plausible's engagement events, values clamped as Plausible reads them, and never as pageviews or goals", async () => {
    const ua = chrome(124);
    const plausible = (body: object) =>
      t.app.inject({ method: 'POST', url: '/api/event', headers: { 'user-agent': ua, 'content-type': 'text/plain' }, payload: JSON.stringify(body) });
    assert.equal((await plausible({ n: 'pageview', u: `${HOST}/docs`, d: 'engaged.example', r: null })).statusCode, 202);
    const totalsBefore = await totals();
    const goalsBefore = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events`)).body.data.length;
    for (const [sd, e] of [[35, 4200], [150, 99_999_999], ['x', -5]] as const) {
      const res = await plausible({ n: 'engagement', u: `${HOST}/docs`, d: 'engaged.example', r: null, sd, e, p: { ignored: 'yes' } });
      assert.equal(res.statusCode, 202);
      assert.equal(res.body, 'ok');
    }
    const [view] = (await stored()).filter((h) => h.type === 'pageview' && h.pathname === '/docs');
    assert.ok(view);
    const engaged = hitsOfVisit(await stored(), view.visitId).filter((h) => h.type === 'engagement');
    assert.deepEqual(
      engaged.map((h) => [h.scrollDepth ?? 0, h.engagedMs ?? 0, h.props]).sort(),
      [[0, 0, undefined], [100, 1_800_000, undefined], [35, 4200, undefined]].sort(),
    );
    assert.deepEqual(await totals(), totalsBefore);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events`)).body.data.length, goalsBefore);
  });
});
