// Property-based hostile input: random and malformed parameters and bodies for the collector, the reports and
// the management API never produce a 500 or a hang, always answer in the error shapes, and a refused hit is
// never stored.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** Names every plain object answers to through its prototype: `name in object` and `object[name]` find them. */
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf', 'propertyIsEnumerable', 'toLocaleString'];
const protoName = fc.constantFrom(...PROTOTYPE_NAMES);

/** Dates at and far beyond the accepted bounds, in every form the reports read (and some they do not). */
const extremeDate = fc.oneof(
  fc.constantFrom(
    '0100-01-01 00:00:00', '9999-12-31 23:59:59', '0000-01-01 00:00:00', '0001-01-01', '9999-12-31', '1970-01-01 00:00:00',
    '1999-12-31 23:59:59', '2000-01-01 00:00:00', '2099-12-31 23:59:59', '2100-01-01 00:00:00', '2000-01-01', '2099-12-31',
    '2000-01-01T00:00:00-23:59', '2099-12-31T23:59:59.999999999+23:59', '2099-12-31T23:59:59Z', '1999-12-31T23:00:00-02:00',
    '+275760-09-13T00:00:00.000Z', '-000001-01-01T00:00:00Z', '2026-03-29 02:30:00', '2026-10-25 02:30:00', '2026-10-01T00:00:00 02:00',
  ),
  fc.date({ min: new Date(-8.64e15), max: new Date(8.64e15), noInvalidDate: true }).map((d) => d.toISOString()),
  fc.date({ min: new Date('1990-01-01'), max: new Date('2110-01-01'), noInvalidDate: true }).map((d) => d.toISOString().slice(0, 19).replace('T', ' ')),
);

/** Text that is likely to break naive code: quotes, escapes, control characters, JSON, huge, unicode. */
const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', "'", '"', '\\', '\u0000', '%', '%ZZ', '{', '[]', '{"_value":-1}', 'null', 'NaN', '1e309', '-0', '/', '//', 'javascript:alert(1)', 'https://', 'a'.repeat(5000)),
  fc.json({ maxDepth: 2 }),
  protoName,
  protoName.map((n) => `${n}:asc`),
  extremeDate,
);

/** Keys a client may add to a query string: prototype names, and nested `filters…` keys, right and wrong. */
const extraKey = fc.oneof(
  protoName,
  fc.constantFrom(
    'filters[0][property]', 'filters[0][operator]', 'filters[0][value]', 'filters[1][value]', 'filters[][property]', 'filters[][operator]',
    'filters[][value]', 'filters[0][foo]', 'filters[x]', 'filtersX', 'filters[]', 'filters[0]', 'filters[-1][value]', 'filters[00][value]',
    'filters[50][value]', 'filters[0][property][0]', 'filters[__proto__][value]', 'filters[0][__proto__]', 'filters[constructor]',
  ),
  protoName.map((n) => `filters[0][${n}]`),
  protoName.map((n) => `filters[${n}][property]`),
);
const extraKeys = fc.array(fc.tuple(extraKey, fc.oneof(fc.constantFrom('pathname', 'is', '/a', 'browser', 'is not'), nasty)), { maxLength: 6 });

function assertErrorShape(status: number, body: unknown): void {
  if (status < 400) return;
  assert.ok(body && typeof body === 'object', `status ${status} without a JSON body`);
  const b = body as Record<string, unknown>;
  assert.ok(typeof b.error === 'string' || typeof b.errors === 'object' || typeof b.message === 'string', JSON.stringify(b));
}

describe('hostile input, property-based', () => {
  let t: TestApp;
  let site = '';
  before(async () => {
    t = await startTestApp();
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Fuzzed' })).body.id;
    assert.equal((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events`, { name: 'Signup' })).status, 200);
  });
  after(() => t.close());

  it('collector: any parameters give 200/204 or a 400 that stores nothing', async () => {
    const params = fc.record(
      {
        sid: fc.oneof(fc.constant('SITE'), nasty),
        h: fc.oneof(fc.constant('https://ex.test'), nasty),
        p: fc.oneof(fc.constant('/page'), nasty),
        r: nasty,
        qs: nasty,
        name: nasty,
        payload: nasty,
        gcode: nasty,
        gval: nasty,
        cid: nasty,
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(params, fc.constantFrom('GET', 'POST'), fc.array(fc.tuple(protoName, nasty), { maxLength: 3 }), async (raw, method, extra) => {
        const query = new URLSearchParams();
        for (const [k, v] of Object.entries(raw)) query.set(k, v === 'SITE' ? site : v);
        for (const [k, v] of extra) query.append(k, v);
        await t.flushHits();
        const before = (await t.events.listHits(site)).length;
        const res = await t.app.inject({ method: method as 'GET' | 'POST', url: `/?${query}`, headers: { 'user-agent': CHROME } });
        assert.ok([200, 204, 400].includes(res.statusCode), `${res.statusCode} for ${query}: ${res.body.slice(0, 200)}`);
        if (res.statusCode === 400) {
          assertErrorShape(400, JSON.parse(res.body));
          await t.flushHits();
          assert.equal((await t.events.listHits(site)).length, before, `a refused hit was stored: ${query}`);
        }
      }),
      { numRuns: 250, seed: 1 },
    );
  });

  it('aggregations: any parameters give 200, 400, 404 or 422 in the spec shapes', async () => {
    // Mostly valid requests with a hostile value here and there, so hostile values reach the later stages too.
    const mostly = <T,>(valid: fc.Arbitrary<T>, hostile: fc.Arbitrary<T>) => fc.oneof({ arbitrary: valid, weight: 3 }, { arbitrary: hostile, weight: 1 });
    const entity = mostly<Record<string, string>>(
      fc.constantFrom<Record<string, string>>(
        { entity: 'pageview', entity_id: 'SITE', aggregates: 'pageviews' },
        { entity: 'pageview', entity_id: 'SITE', aggregates: 'visits,uniques,pageviews,avg_duration,bounce_rate' },
        { entity: 'event', entity_id: '', site_id: 'SITE', entity_name: 'Signup', aggregates: 'conversions,unique_conversions,value' },
      ),
      fc.record(
        {
          entity: mostly(fc.constantFrom('pageview', 'event'), nasty),
          entity_id: mostly(fc.constantFrom('SITE', ''), nasty),
          site_id: mostly(fc.constant('SITE'), nasty),
          entity_name: mostly(fc.constant('Signup'), nasty),
          aggregates: mostly(fc.constantFrom('visits,pageviews', 'uniques', 'conversions,value', 'avg_duration,bounce_rate'), fc.oneof(nasty, protoName.map((n) => `pageviews,${n}`))),
        },
        { requiredKeys: [] },
      ),
    );
    const params = fc.record(
      {
        date_grouping: mostly(fc.constantFrom('hour', 'day', 'month', 'year', 'none'), nasty),
        field_grouping: mostly(fc.constantFrom('pathname', 'entry_page,browser', 'domain', 'keyword'), fc.oneof(nasty, protoName, protoName.map((n) => `pathname,${n}`))),
        sort_by: mostly(fc.constantFrom('pageviews:desc', 'timestamp:asc', 'pathname:asc'), fc.oneof(nasty, protoName.map((n) => `${n}:desc`))),
        date_from: mostly(fc.constantFrom('2026-01-01 00:00:00', '2026-01-01', '2026-01-01T00:00:00.000Z'), fc.oneof(extremeDate, nasty)),
        date_to: mostly(fc.constantFrom('2026-02-01 00:00:00', '2026-02-01', '2026-02-01T00:00:00+02:00'), fc.oneof(extremeDate, nasty)),
        timezone: mostly(fc.constantFrom('UTC', 'Europe/Berlin', 'Pacific/Chatham', 'America/Santiago'), nasty),
        limit: mostly(fc.integer({ min: 1, max: 1000 }).map(String), fc.oneof(fc.integer({ min: -5, max: 2000 }).map(String), nasty)),
        filters: mostly(
          fc.array(fc.record({ property: mostly(fc.constantFrom('pathname', 'browser', 'domain', 'entry_page'), fc.oneof(protoName, nasty)), operator: mostly(fc.constantFrom('is', 'is not', 'is like', 'matching', 'not matching'), fc.oneof(protoName, nasty)), value: nasty }), { maxLength: 3 }).map((f) => JSON.stringify(f)),
          nasty,
        ),
      },
      { requiredKeys: [] },
    );
    const extraOrNone = fc.oneof({ arbitrary: fc.constant([] as [string, string][]), weight: 2 }, { arbitrary: extraKeys, weight: 1 });
    await fc.assert(
      fc.asyncProperty(entity, params, extraOrNone, async (base, raw, extra) => {
        const query = new URLSearchParams();
        for (const [k, v] of Object.entries({ ...base, ...raw })) query.set(k, v === 'SITE' ? site : v);
        for (const [k, v] of extra) query.append(k, v);
        const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${query}`);
        assert.ok([200, 400, 404, 422].includes(res.status), `${res.status} for ${query}: ${JSON.stringify(res.body).slice(0, 300)}`);
        assertErrorShape(res.status, res.body);
        if (res.status === 200) assert.ok(Array.isArray(res.body));
        // An unknown filters… key is never ignored.
        if (extra.some(([k]) => k.startsWith('filters') && !/^filters\[(0|)\]\[(property|operator|value)\]$/.test(k))) assert.notEqual(res.status, 200, String(query));
      }),
      { numRuns: 400, seed: 2 },
    );
  });

  // A range that took minutes (the hostile campaign's stalls) fails by the test's own timeout, not a time budget.
  it('aggregations: the widest ranges in zones with DST answer, never a 500', { timeout: 300_000 }, async () => {
    const zones = fc.constantFrom('Europe/Berlin', 'America/Santiago', 'Australia/Lord_Howe', 'Africa/Casablanca', 'Asia/Gaza', 'Pacific/Apia', 'UTC');
    await fc.assert(
      fc.asyncProperty(zones, fc.constantFrom('year', 'month', 'day', 'hour'), extremeDate, extremeDate, async (zone, grouping, from, to) => {
        const query = new URLSearchParams({ entity: 'pageview', entity_id: site, aggregates: 'pageviews,visits,bounce_rate', date_grouping: grouping, date_from: from, date_to: to, timezone: zone });
        const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${query}`);
        assert.ok([200, 400].includes(res.status), `${res.status} for ${query}: ${JSON.stringify(res.body).slice(0, 300)}`);
        assertErrorShape(res.status, res.body);
      }),
      { numRuns: 60, seed: 5 },
    );
  });

  it('current_visitors: any parameters give 200, 400 or 404 in the spec shapes', async () => {
    const params = fc.record({ site_id: fc.oneof(fc.constant('SITE'), nasty), detailed: fc.oneof(fc.constantFrom('true', 'false', '1', '0', ''), nasty) }, { requiredKeys: [] });
    await fc.assert(
      fc.asyncProperty(params, extraKeys, async (raw, extra) => {
        const query = new URLSearchParams();
        for (const [k, v] of Object.entries(raw)) query.set(k, v === 'SITE' ? site : v);
        for (const [k, v] of extra) query.append(k, v);
        const res = await t.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?${query}`);
        assert.ok([200, 400, 404].includes(res.status), `${res.status} for ${query}: ${JSON.stringify(res.body).slice(0, 300)}`);
        assertErrorShape(res.status, res.body);
      }),
      { numRuns: 100, seed: 6 },
    );
  });

  it('every GET and DELETE route: prototype names and nasty text in paths and query strings never give a 500', async () => {
    const routes = [
      '/v1/account', '/v1/token', '/v1/sites', '/v1/sites/ID', '/v1/sites/ID/events', '/v1/sites/ID/events/ID', '/v1/sites/ID/milestones',
      '/v1/sites/ID/milestones/ID', '/admin/accounts', '/admin/accounts/ID', '/admin/accounts/ID/tokens', '/share/ID', '/login', '/setup', '/sites',
      '/settings/api', '/dashboard/api/tokens', '/script.js', '/healthz', '/openapi.json', '/ID',
    ];
    const params = fc.array(fc.tuple(fc.oneof(protoName, fc.constantFrom('limit', 'starting_after', 'ending_before', 'next', 'site_id', 'sid', 'h', 'p')), nasty), { maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...routes), fc.oneof(protoName, fc.constant('SITE'), nasty), params, fc.constantFrom('GET', 'DELETE'), async (route, id, extra, method) => {
        const query = new URLSearchParams(extra);
        const segment = encodeURIComponent(id === 'SITE' ? site : id);
        const url = `${route.replace(/ID/g, segment)}?${query}`;
        const token = route.startsWith('/admin') ? ADMIN_TOKEN : OWNER_TOKEN;
        const res = await t.app.inject({ method: method as 'GET' | 'DELETE', url, headers: { authorization: `Bearer ${token}`, 'user-agent': CHROME } });
        assert.ok(res.statusCode < 500, `${res.statusCode} for ${method} ${url}: ${res.body.slice(0, 200)}`);
        if (res.statusCode >= 400 && (res.headers['content-type'] ?? '').toString().includes('json')) assertErrorShape(res.statusCode, JSON.parse(res.body));
        // Keep the fuzzed site for the other properties.
        if (method === 'DELETE' && res.statusCode === 200 && segment === site && route === '/v1/sites/ID') {
          site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Fuzzed again' })).body.id;
        }
      }),
      { numRuns: 200, seed: 7 },
    );
  });

  it('form-encoded and JSON bodies with prototype-named keys: a success or a 4xx in the spec shapes', async () => {
    const targets = ['/v1/sites', '/v1/sites/SITE', '/v1/sites/SITE/events', '/v1/sites/SITE/milestones', '/admin/accounts', '/admin/accounts/1', '/admin/accounts/1/tokens', '/login', '/setup', '/share/SITE', '/'];
    const fields = fc.array(fc.tuple(fc.oneof(protoName, fc.constantFrom('name', 'timezone', 'sharing', 'share_password', 'email', 'password', 'abilities', 'milestone_date', 'sid', 'h', 'p', 'currency', 'multi_domain', 'multi_domain_option', 'subscription_status')), fc.oneof(protoName, nasty)), { maxLength: 5 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), fields, fc.constantFrom('form', 'json'), async (target, pairs, encoding) => {
        const url = target.replace('SITE', site);
        const payload =
          encoding === 'form'
            ? new URLSearchParams(pairs).toString()
            : `{${pairs.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`;
        const token = url.startsWith('/admin') ? ADMIN_TOKEN : OWNER_TOKEN;
        const res = await t.app.inject({
          method: 'POST',
          url,
          headers: { authorization: `Bearer ${token}`, 'content-type': encoding === 'form' ? 'application/x-www-form-urlencoded' : 'application/json', 'user-agent': CHROME },
          payload,
        });
        assert.ok(res.statusCode < 500, `${res.statusCode} for ${url} (${encoding}) ${payload.slice(0, 200)}: ${res.body.slice(0, 200)}`);
        if (res.statusCode >= 400 && (res.headers['content-type'] ?? '').toString().includes('json')) assertErrorShape(res.statusCode, JSON.parse(res.body));
      }),
      { numRuns: 250, seed: 8 },
    );
  });

  it('management bodies: any JSON gives a success or a 400 in the spec shapes', async () => {
    const targets = [
      { method: 'POST' as const, url: () => '/v1/sites' },
      { method: 'POST' as const, url: () => `/v1/sites/${site}` },
      { method: 'POST' as const, url: () => `/v1/sites/${site}/events` },
      { method: 'POST' as const, url: () => `/v1/sites/${site}/milestones` },
    ];
    const body = fc.oneof(
      fc.record({ name: nasty, sharing: nasty, share_password: nasty, timezone: nasty, multi_domain: fc.oneof(fc.boolean(), nasty), multi_domain_option: nasty, currency: nasty, milestone_date: nasty }, { requiredKeys: [] }),
      fc.json({ maxDepth: 3 }).map((j) => JSON.parse(j) as unknown),
    );
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...targets), body, async (target, payload) => {
        const res = await t.app.inject({
          method: target.method,
          url: target.url(),
          headers: { authorization: `Bearer ${OWNER_TOKEN}`, 'content-type': 'application/json' },
          payload: JSON.stringify(payload),
        });
        assert.ok([200, 201, 400].includes(res.statusCode), `${res.statusCode} for ${target.url()} ${JSON.stringify(payload).slice(0, 200)}: ${res.body.slice(0, 200)}`);
        assertErrorShape(res.statusCode, JSON.parse(res.body));
      }),
      { numRuns: 300, seed: 3 },
    );
  });

  it('admin bodies and raw bytes: never a 500', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/admin/accounts', '/admin/accounts/1', '/admin/accounts/1/tokens', '/admin/import'), fc.string({ maxLength: 300 }), fc.constantFrom('application/json', 'application/x-ndjson', 'application/x-www-form-urlencoded', 'text/plain'), async (url, payload, type) => {
        const res = await t.app.inject({ method: 'POST', url, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': type }, payload });
        assert.ok(res.statusCode < 500, `${res.statusCode} for ${url} (${type}) ${JSON.stringify(payload)}: ${res.body.slice(0, 200)}`);
        assertErrorShape(res.statusCode, JSON.parse(res.body));
      }),
      { numRuns: 200, seed: 4 },
    );
  });
});
