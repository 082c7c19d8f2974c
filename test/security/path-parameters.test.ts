// The same bound on every path parameter for every kind of caller: each route with one, listed from the running app,
// called with huge, negative, exponent, traversal, NUL, overlong, prototype and non-ASCII values by each caller that
// can reach it (admin token, owner token, the owner's, a one-site viewer's and a share page's dashboard sessions,
// no one) and with HEAD as well as its own methods, answers a 4xx in SPEC.md's error shapes (a page: a page), never a
// 5xx; the files the server reads by name never answer a value that is no file of theirs. (test/security/path-ids.test.ts
// tries many more ids, with the route's own credential only.)

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { InjectOptions, LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { BODIES, isJsonRoute, listRoutes, PARAM, type Target } from '../helpers/routes.js';
import { SHARE_REQUESTS_PER_MINUTE } from '../../src/http/v1/access.js';
import { addMember, Browser, formField, givePassword, logIn, pageCsrf } from '../dashboard/helpers.js';

/**
 * The values, as they appear in the URL: beyond every stored integer (and 1e30, which JavaScript's Number reads as
 * an integer), negative, traversal out of a directory (encoded: a raw `../` never reaches a route), NUL, longer
 * than any id, an object's own keys, and non-ASCII digits, letters, an emoji and a direction override.
 */
const HOSTILE = [
  '9999999999999999999999', '-1', '1e30', '..%2Fx', '..%2F..%2F..%2Fpackage.json', '%2E%2E%2F%2E%2E%2Fsrc%2Fmain.ts', '%00',
  '1%00', 'a'.repeat(5000), '__proto__', 'constructor', '%C3%A9t%C3%A9', '%F0%9F%98%80', '%EF%BC%91', '%D9%A1', '%E2%80%AE1',
];

/** Routes that answer a file the server reads by the parameter's name: nothing but their own files, ever. */
const isFileRoute = (path: string) => /^\/(js|dashboard\/fonts|dashboard\/flags)\//.test(path);
/** SPEC.md's retired wipe endpoints: 410 for whatever they name. */
const isRetired = (target: Target) => target.method === 'DELETE' && /^\/v1\/sites\/.*\/data$/.test(target.path);

/** Someone who calls routes: which routes they can reach, and how a request of theirs is sent. */
interface Caller {
  name: string;
  reaches(path: string): boolean;
  send(method: string, url: string, body: unknown): Promise<LightMyRequestResponse>;
}

describe('every path parameter, every kind of caller', () => {
  let t: TestApp;
  let targets: Target[] = [];
  let callers: Caller[] = [];
  /** Real ids for the parameters that are not the hostile one: a route then gets as far as that one's lookup. */
  const real: Record<string, string> = {};

  /** A caller through a browser's session: cookies, and the session's anti-CSRF value on the JSON routes. */
  const sessionCaller = (name: string, browser: Browser, csrf: string, reaches: (path: string) => boolean): Caller => ({
    name,
    reaches,
    send: (method, url, body) => {
      const headers: Record<string, string> = { accept: 'application/json', 'x-plumb-csrf': csrf };
      return browser.request({ method: method as InjectOptions['method'], url, headers, ...(body === undefined ? {} : { payload: body as object }) });
    },
  });
  const tokenCaller = (name: string, token: string, prefix: string): Caller => ({
    name,
    reaches: (path) => path.startsWith(prefix),
    send: (method, url, body) =>
      t.app.inject({ method: method as InjectOptions['method'], url, headers: { authorization: `Bearer ${token}` }, ...(body === undefined ? {} : { payload: body as object }) }),
  });

  before(async () => {
    t = await startTestApp();
    await givePassword(t.meta);
    real.site_id = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Hostile parameters', sharing: 'public' })).body.id;
    const other = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Not the viewer\'s' })).body.id as string;
    real.event_id = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${real.site_id}/events`, { name: 'Signup' })).body.id;
    real.milestone_id = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${real.site_id}/milestones`, { name: 'Launch', milestone_date: '2026-01-01' })).body.id;
    real.id = '1'; // the owner account, under /admin/accounts

    const owner = new Browser(t.app);
    const ownerCsrf = await logIn(owner);
    const { email } = await addMember(t.team, 1, 'viewer', [other]);
    const viewer = new Browser(t.app);
    const viewerCsrf = await logIn(viewer, email);
    /** A share page's visitor: a new one (its own address and session) before the page's limit per minute runs out. */
    let visitor = new Browser(t.app);
    let shareCsrf = pageCsrf((await visitor.get(`/share/${real.site_id}`)).body);
    let shared = 0;
    const shareVisitor = async () => {
      if (++shared % (SHARE_REQUESTS_PER_MINUTE - 1) === 0) {
        visitor = new Browser(t.app);
        shareCsrf = pageCsrf((await visitor.get(`/share/${real.site_id}`)).body);
      }
      return { browser: visitor, csrf: shareCsrf };
    };
    // The anonymous forms' value (share password, invitation, reset): it holds for every such form of this browser.
    const stranger = new Browser(t.app);
    const formCsrf = formField((await stranger.get('/login')).body);

    const signedIn = (path: string) => !path.startsWith('/admin/');
    callers = [
      tokenCaller('admin token', ADMIN_TOKEN, '/admin/'),
      tokenCaller('owner token', OWNER_TOKEN, '/v1/'),
      sessionCaller("the owner's session", owner, ownerCsrf, signedIn),
      sessionCaller("a one-site viewer's session", viewer, viewerCsrf, signedIn),
      {
        name: "a share page's session",
        reaches: (path) => /^\/(v1|dashboard\/api|share)\//.test(path),
        send: async (method, url, body) => {
          const { browser, csrf } = await shareVisitor();
          return sessionCaller('', browser, csrf, () => true).send(method, url, body);
        },
      },
      {
        name: 'no one (the pages and their forms)',
        reaches: (path) => !isJsonRoute(path),
        send: (method, url) => {
          if (method !== 'POST') return stranger.request({ method: method as InjectOptions['method'], url });
          const form = new URLSearchParams({ csrf: formCsrf, password: 'a long enough password 1', password_again: 'a long enough password 1' });
          return stranger.request({ method: 'POST', url, headers: { 'content-type': 'application/x-www-form-urlencoded' }, payload: form.toString() });
        },
      },
    ];
    // Each session is what it claims to be, so that its refusals below are of the values, not of the caller.
    assert.equal((await callers[2]!.send('GET', `/v1/sites/${real.site_id}`, undefined)).statusCode, 200);
    assert.equal((await callers[3]!.send('GET', `/v1/sites/${other}`, undefined)).statusCode, 200);
    assert.equal((await callers[4]!.send('GET', `/v1/sites/${real.site_id}/milestones`, undefined)).statusCode, 200);
    // OPTIONS is CORS for the collector's paths (none with a parameter).
    targets = listRoutes(t.app.printRoutes({ commonPrefix: false })).filter((r) => r.path.includes(':') && r.method !== 'OPTIONS');
  });
  after(() => t.close());

  /** The route's path with `value` in parameter number `position`, real ids in the others. */
  const urlFor = (target: Target, position: number, value: string): string => {
    let n = 0;
    return target.path.replace(PARAM, (name) => (n++ === position ? value : (real[name.slice(1).split('|')[0]!] ?? 'none')));
  };

  /** Why this answer is wrong, or undefined when it is a refusal in the route's shape. */
  const fault = (target: Target, res: LightMyRequestResponse): string | undefined => {
    if (res.statusCode >= 500) return 'a server fault';
    const type = String(res.headers['content-type'] ?? '');
    if (isFileRoute(target.path) && res.statusCode < 400) return 'a file answered for a name that is none';
    if (!isJsonRoute(target.path)) {
      if (res.statusCode >= 400 && !/^(text\/html|application\/json)/.test(type)) return `a refusal as ${type}`;
      return undefined;
    }
    if (res.statusCode < 400) return 'accepted';
    if (!type.startsWith('application/json')) return `a refusal as ${type}`;
    if (isRetired(target) && res.statusCode === 410) return undefined;
    if (target.method === 'HEAD') return undefined; // no body to read
    const body = JSON.parse(res.body) as Record<string, unknown>;
    const keys = Object.keys(body);
    if (keys.length === 1 && keys[0] === 'error' && typeof body.error === 'string' && body.error !== '') return undefined;
    const fields = keys.length === 1 && keys[0] === 'errors' ? Object.values(body.errors as Record<string, unknown>) : [];
    const wellFormed = fields.length > 0 && fields.every((m) => Array.isArray(m) && m.length > 0 && m.every((s) => typeof s === 'string'));
    if (res.statusCode === 400 && wellFormed) return undefined;
    return 'not an error shape of SPEC.md';
  };

  it('lists the routes with parameters from the app itself, HEAD included', () => {
    const listed = new Set(targets.map((r) => `${r.method} ${r.path}`));
    // A few known ones, so a change in Fastify's listing cannot leave this suite testing nothing.
    for (const known of ['PUT /admin/accounts/:id/password', 'HEAD /v1/sites/:site_id/events/:event_id', 'DELETE /dashboard/api/members/:user_id', 'GET /dashboard/fonts/:name']) {
      assert.ok(listed.has(known), `${known} in ${[...listed].join(', ')}`);
    }
    assert.ok(targets.length >= 60, `${targets.length} routes with a path parameter`);
  });

  it('every caller, every route it reaches, every parameter: a refusal in the route\'s shape', async () => {
    // Every failure at once: one route's fault should not hide another's.
    const failures: string[] = [];
    let asked = 0;
    for (const caller of callers) {
      for (const target of targets.filter((r) => caller.reaches(r.path))) {
        const count = target.path.match(PARAM)!.length;
        const body = isJsonRoute(target.path) && !['GET', 'HEAD', 'DELETE'].includes(target.method) ? (BODIES[`${target.method} ${target.path}`] ?? {}) : undefined;
        for (let position = 0; position < count; position++) {
          for (const value of HOSTILE) {
            const res = await caller.send(target.method, urlFor(target, position, value), body);
            asked++;
            const wrong = fault(target, res);
            if (wrong) failures.push(`${caller.name}: ${target.method} ${target.path} with ${value.slice(0, 40)}: ${wrong} (${res.statusCode} ${res.body.slice(0, 160)})`);
          }
        }
      }
    }
    assert.equal(failures.length, 0, `${failures.length} wrong answers:\n${failures.join('\n')}`);
    assert.ok(asked > 2000, `${asked} requests`);
  });
});
