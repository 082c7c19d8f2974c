// Property-based hostile input: random and malformed parameters and bodies for the collector, the reports and
// the management API never produce a 500 or a hang, always answer in the error shapes, and a refused hit is
// never stored.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** Text that is likely to break naive code: quotes, escapes, control characters, JSON, huge, unicode. */
const nasty = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom('', ' ', "'", '"', '\\', '\u0000', '%', '%ZZ', '{', '[]', '{"_value":-1}', 'null', 'NaN', '1e309', '-0', '/', '//', 'javascript:alert(1)', 'https://', 'a'.repeat(5000)),
  fc.json({ maxDepth: 2 }),
);

function assertErrorShape(status: number, body: unknown): void {
  if (status < 400) return;
  assert.ok(body && typeof body === 'object', `status ${status} without a JSON body`);
  const b = body as Record<string, unknown>;
  assert.ok(typeof b.error === 'string' || typeof b.errors === 'object' || typeof b.message === 'string', JSON.stringify(b));
}

describe('hostile input, property-based', () => {
  let t: TestApp;
  let site: string;
  before(async () => {
    t = await startTestApp();
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Fuzzed' })).body.id;
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
      fc.asyncProperty(params, fc.constantFrom('GET', 'POST'), async (raw, method) => {
        const query = new URLSearchParams();
        for (const [k, v] of Object.entries(raw)) query.set(k, v === 'SITE' ? site : v);
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
    const params = fc.record(
      {
        entity: fc.oneof(fc.constantFrom('pageview', 'event'), nasty),
        entity_id: fc.oneof(fc.constant('SITE'), nasty),
        site_id: fc.oneof(fc.constant('SITE'), nasty),
        entity_name: nasty,
        aggregates: fc.oneof(fc.constantFrom('visits,pageviews', 'uniques', 'conversions,value', 'avg_duration,bounce_rate'), nasty),
        date_grouping: fc.oneof(fc.constantFrom('hour', 'day', 'month', 'year', 'none'), nasty),
        field_grouping: fc.oneof(fc.constantFrom('pathname', 'entry_page,browser', 'domain', 'keyword'), nasty),
        sort_by: fc.oneof(fc.constantFrom('pageviews:desc', 'timestamp:asc', 'pathname:asc'), nasty),
        date_from: fc.oneof(fc.constantFrom('2026-01-01 00:00:00', '2026-13-01 00:00:00'), nasty),
        date_to: fc.oneof(fc.constantFrom('2026-02-01 00:00:00'), nasty),
        timezone: fc.oneof(fc.constantFrom('UTC', 'Europe/Berlin'), nasty),
        limit: fc.oneof(fc.integer({ min: -5, max: 2000 }).map(String), nasty),
        filters: fc.oneof(
          fc.array(fc.record({ property: fc.oneof(fc.constantFrom('pathname', 'browser', 'domain', 'entry_page'), nasty), operator: fc.oneof(fc.constantFrom('is', 'is like', 'matching', 'not matching'), nasty), value: nasty }), { maxLength: 3 }).map((f) => JSON.stringify(f)),
          nasty,
        ),
      },
      { requiredKeys: [] },
    );
    await fc.assert(
      fc.asyncProperty(params, async (raw) => {
        const query = new URLSearchParams();
        for (const [k, v] of Object.entries(raw)) query.set(k, v === 'SITE' ? site : v);
        const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${query}`);
        assert.ok([200, 400, 404, 422].includes(res.status), `${res.status} for ${query}: ${JSON.stringify(res.body).slice(0, 300)}`);
        assertErrorShape(res.status, res.body);
        if (res.status === 200) assert.ok(Array.isArray(res.body));
      }),
      { numRuns: 300, seed: 2 },
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
