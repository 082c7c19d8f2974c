// Hostile ids in every path parameter, property-based: each route with one, listed from the running app, answers
// huge, negative, fractional, non-ASCII, overlong, empty and malformed ids with a 400 or 404 in SPEC.md's error
// shapes (the dashboard's pages with an HTML page), never a 5xx, with valid authentication for the route.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, formField, givePassword, logIn } from '../dashboard/helpers.js';
import { BODIES, isJsonRoute, listRoutes, PARAM, type Target } from '../helpers/routes.js';

/**
 * A hostile path segment, as it appears in the URL: beyond every integer column (PostgreSQL's INTEGER ends at
 * 2147483647, BIGINT at 9223372036854775807), negative, zero, fractions and exponents, JavaScript's own numbers,
 * NUL and control bytes, broken percent-encoding, non-ASCII, longer than any id, and random text and numbers.
 */
const RAW_IDS = [
  '', '999999999999999999999999999999', '2147483648', '4294967296', '9223372036854775808', '18446744073709551616',
  '-1', '-2147483649', '-9223372036854775809', '0', '-0', '00', '1.5', '1.0', '1e3', '1e400', '-1e400', '0x10',
  '0b1', 'Infinity', '-Infinity', 'NaN', '%20', '%201', '1%20', '%2B1', '%00', '1%00', '%01', '%7F', '%FF', '%C3%28',
  '%ED%A0%80', '%', '%2', '%25', '%2F', '%5C', '%C3%A9', '%E6%97%A5', '%F0%9F%98%80', '%EF%BC%91', '%D9%A1', "'", '%22',
  ';', '--', '*', 'null', 'undefined', 'true', '__proto__', 'constructor', 'toString', '1'.repeat(100), '9'.repeat(101),
  'a'.repeat(100), 'a'.repeat(101), 'a'.repeat(5000),
];
const hostileSegment = fc.oneof(
  fc.constantFrom(...RAW_IDS),
  // Integers of every size, except the few small ones that may name a real row here.
  fc.bigInt({ min: -(2n ** 128n), max: 2n ** 128n }).filter((n) => n < 1n || n > 1000n).map(String),
  fc.double().map(String),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }).map(encodeURIComponent),
  fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 120 }).map(encodeURIComponent),
);

/** SPEC.md's retired wipe endpoints: 410 for whatever they name. */
const isRetired = (target: Target) => target.method === 'DELETE' && /^\/v1\/sites\/.*\/data$/.test(target.path);

describe('hostile ids in every path parameter', () => {
  let t: TestApp;
  let browser: Browser;
  let csrf = '';
  let formCsrf = '';
  /** Real ids, for the parameters that are not the hostile one: a route then gets as far as that one's lookup. */
  const real: Record<string, string> = {};
  let targets: Target[] = [];

  before(async () => {
    t = await startTestApp();
    await givePassword(t.meta);
    browser = new Browser(t.app);
    // The anonymous forms' value (share password, invitation, reset): it holds for every such form of this browser.
    formCsrf = formField((await browser.get('/login')).body);
    csrf = await logIn(browser);
    real.site_id = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Hostile ids', sharing: 'private', share_password: 'secret' })).body.id;
    real.event_id = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${real.site_id}/events`, { name: 'Signup' })).body.id;
    real.milestone_id = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${real.site_id}/milestones`, { name: 'Launch', milestone_date: '2026-01-01' })).body.id;
    real.id = '1'; // the owner account, under /admin/accounts
    // HEAD answers as GET does, OPTIONS is CORS for the collector's paths (none with a parameter).
    targets = listRoutes(t.app.printRoutes({ commonPrefix: false })).filter((r) => r.path.includes(':') && !['HEAD', 'OPTIONS'].includes(r.method));
  });
  after(() => t.close());

  /** The route's path with the hostile segment in parameter number `position`, real ids in the others. */
  const urlFor = (target: Target, position: number, segment: string): string => {
    let n = 0;
    return target.path.replace(PARAM, (name) => (n++ === position ? segment : (real[name.slice(1).split('|')[0]!] ?? 'none')));
  };
  /**
   * An empty last segment leaves a trailing slash, which Fastify ignores: the URL is then the collection's own route
   * (`/v1/sites/` lists sites), no id at all. An empty segment inside a path is sent (and names no route).
   */
  const namesAnotherRoute = (target: Target, position: number, segment: string) => urlFor(target, position, segment).endsWith('/');

  /** The request with the hostile segment in parameter number `position`, and the route's valid credentials. */
  const send = (target: Target, position: number, segment: string): Promise<LightMyRequestResponse> => {
    const url = urlFor(target, position, segment);
    const headers: Record<string, string> = { accept: 'application/json' };
    if (url.startsWith('/admin/')) headers.authorization = `Bearer ${ADMIN_TOKEN}`;
    else if (url.startsWith('/v1/')) headers.authorization = `Bearer ${OWNER_TOKEN}`;
    else if (url.startsWith('/dashboard/api/')) headers['x-plumb-csrf'] = csrf;
    const key = `${target.method} ${target.path}`;
    if (target.method === 'GET' || target.method === 'DELETE') return browser.request({ method: target.method, url, headers });
    if (isJsonRoute(target.path)) return browser.request({ method: target.method as 'POST', url, headers, payload: (BODIES[key] ?? {}) as object });
    // The pages' forms, with this browser's form value and the fields they read.
    const form = new URLSearchParams({ csrf: formCsrf, password: 'a long enough password 1', password_again: 'a long enough password 1' });
    return browser.request({ method: target.method as 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
  };

  /** Never a server fault; an API route's refusal is a 400 or 404 in SPEC.md's shapes, a page's is a page. */
  const check = (target: Target, segment: string, res: LightMyRequestResponse) => {
    const what = `${target.method} ${target.path} with ${JSON.stringify(segment.slice(0, 120))}: ${res.statusCode} ${res.body.slice(0, 300)}`;
    assert.ok(res.statusCode < 500, what);
    const type = String(res.headers['content-type'] ?? '');
    if (isJsonRoute(target.path)) {
      // (A URL the router cannot read, or a segment longer than any id, is refused before the route: 400, 404.)
      assert.ok([400, 404, ...(isRetired(target) ? [410] : [])].includes(res.statusCode), what);
      assert.match(type, /^application\/json/, what);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      const keys = Object.keys(body);
      if (keys[0] === 'errors') {
        assert.equal(res.statusCode, 400, what);
        assert.deepEqual(keys, ['errors'], what);
        const fields = Object.entries(body.errors as Record<string, unknown>);
        assert.ok(fields.length > 0, what);
        for (const [, messages] of fields) assert.ok(Array.isArray(messages) && messages.length > 0 && messages.every((m) => typeof m === 'string'), what);
      } else {
        assert.deepEqual(keys, ['error'], what);
        assert.ok(typeof body.error === 'string' && body.error.length > 0, what);
      }
    } else if (res.statusCode >= 400) {
      // A URL that is no route or cannot be read is refused before any page exists: then the JSON shape.
      assert.match(type, /^(text\/html|application\/json)/, what);
      if (type.startsWith('application/json')) assert.deepEqual(Object.keys(JSON.parse(res.body) as object), ['error'], what);
    }
  };

  it('lists the routes with ids from the app itself', () => {
    const listed = new Set(targets.map((r) => `${r.method} ${r.path}`));
    // A few known ones, so a change in Fastify's listing cannot leave this suite testing nothing.
    for (const known of ['DELETE /admin/accounts/:id/tokens/:token_id', 'GET /v1/sites/:site_id/milestones/:milestone_id', 'DELETE /dashboard/api/members/:user_id', 'GET /share/:site_id']) {
      assert.ok(listed.has(known), `${known} in ${[...listed].join(', ')}`);
    }
    assert.ok(targets.length >= 40, `${targets.length} routes with a path parameter`);
  });

  it('the ids of issue 44 are 404s', async () => {
    const huge = '999999999999999999999999999999';
    for (const [method, url, body] of [
      ['DELETE', `/admin/accounts/${huge}/tokens/100`],
      ['POST', `/admin/accounts/${huge}`, { name: 'Renamed' }],
      ['GET', `/admin/accounts/${huge}/usage`],
      ['GET', '/admin/accounts/2147483648'],
      ['GET', '/admin/accounts/0'],
      ['GET', '/admin/accounts/-1'],
    ] as const) {
      const res = await t.call(ADMIN_TOKEN, method, url, body);
      assert.equal(res.status, 404, `${method} ${url}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, { error: 'Account not found' });
    }
    // Text that is no integer at all stays the documented field error, also where a loose reading of numbers would
    // have found account 1 (and set its password).
    for (const id of ['abc', '1.0', '0b1', '0x1', '1e0', '%201', '1%20']) {
      const res = await t.call(ADMIN_TOKEN, 'PUT', `/admin/accounts/${id}/password`, { password: 'a long enough password 1' });
      assert.deepEqual(res.body, { errors: { id: ['must be an integer'] } }, id);
    }
  });

  it('every parameter of every route, with each of the known hostile ids', async () => {
    // Every failure at once: one route's fault should not hide another's.
    const failures: string[] = [];
    for (const target of targets) {
      const count = target.path.match(PARAM)!.length;
      for (let position = 0; position < count; position++) {
        for (const segment of RAW_IDS) {
          if (namesAnotherRoute(target, position, segment)) continue;
          const res = await send(target, position, segment);
          try {
            check(target, segment, res);
          } catch (err) {
            failures.push((err as Error).message.split('\n')[0]!);
          }
        }
      }
    }
    assert.deepEqual(failures, []);
  });

  it('every parameter of every route, with random hostile ids', async () => {
    const pick = fc
      .constantFrom(...targets)
      .chain((target) => fc.tuple(fc.constant(target), fc.nat({ max: target.path.match(PARAM)!.length - 1 }), hostileSegment));
    await fc.assert(
      fc.asyncProperty(pick, async ([target, position, segment]) => {
        fc.pre(!namesAnotherRoute(target, position, segment));
        check(target, segment, await send(target, position, segment));
      }),
      { numRuns: 600, seed: 44 },
    );
  });
});
