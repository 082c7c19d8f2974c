// What dashboard tests share: a cookie jar over app.inject, reading the values a page embeds, logging in.

import assert from 'node:assert/strict';
import type { FastifyInstance, InjectOptions, LightMyRequestResponse } from 'fastify';
import { hashPassword } from '../../src/domain/secrets.js';
import type { Role, TeamStore } from '../../src/store/team-types.js';
import type { MetaStore } from '../../src/store/types.js';
import { ADMIN_TOKEN } from '../helpers/app.js';

export const PASSWORD = 'correct horse battery';
export const EMAIL = 'owner@example.test';

let clients = 0;

/**
 * Cookies as a browser keeps them (by name; Max-Age=0 deletes), sent with every request through it. Each
 * browser has its own client address (unless given one), as separate people would.
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  readonly remoteAddress: string;
  constructor(
    private readonly app: FastifyInstance,
    private readonly defaults: { headers?: Record<string, string>; remoteAddress?: string } = {},
  ) {
    clients += 1;
    this.remoteAddress = defaults.remoteAddress ?? `198.51.100.${clients % 250}`;
  }

  async request(o: InjectOptions): Promise<LightMyRequestResponse> {
    const cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const headers = { ...this.defaults.headers, ...(o.headers as Record<string, string> | undefined), ...(cookie ? { cookie } : {}) };
    const res = await this.app.inject({ ...o, headers, remoteAddress: this.remoteAddress });
    this.keep(res);
    return res;
  }

  get(url: string, headers: Record<string, string> = {}) {
    return this.request({ method: 'GET', url, headers });
  }

  /** A form post, as a browser sends it from our own page. */
  post(url: string, form: Record<string, string>, headers: Record<string, string> = {}) {
    return this.request({
      method: 'POST',
      url,
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: new URLSearchParams(form).toString(),
    });
  }

  /** A /v1 or dashboard JSON call as the page script makes it. */
  async api(method: InjectOptions['method'], url: string, csrf: string | undefined, body?: unknown) {
    const res = await this.request({
      method,
      url,
      headers: { accept: 'application/json', ...(csrf === undefined ? {} : { 'x-plumb-csrf': csrf }) },
      ...(body === undefined ? {} : { payload: body as object }),
    });
    return { status: res.statusCode, body: res.body ? JSON.parse(res.body) : null, headers: res.headers };
  }

  private keep(res: LightMyRequestResponse): void {
    for (const c of res.cookies as { name: string; value: string; maxAge?: number }[]) {
      if (c.maxAge === 0) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }
}

/** The hidden `csrf` field of the page's form. */
export function formField(html: string, name = 'csrf'): string {
  const m = new RegExp(`name="${name}" value="([^"]*)"`).exec(html);
  assert.ok(m, `the page has a ${name} field`);
  return m[1]!;
}

/** The session's anti-CSRF value the page gives its script. */
export function pageCsrf(html: string): string {
  const m = /<meta name="plumb-csrf" content="([^"]+)">/.exec(html);
  assert.ok(m, 'the page carries its anti-CSRF value');
  return m[1]!;
}

export async function givePassword(meta: MetaStore, accountId = 1, email = EMAIL, password = PASSWORD): Promise<void> {
  await meta.updateAccount(accountId, { email });
  await meta.setPasswordHash(accountId, await hashPassword(password));
}

let logins = 0;
/** A new account with a login (own email, PASSWORD): tests that log in often stay clear of the per-email limit. */
export async function newLogin(meta: MetaStore): Promise<{ id: number; email: string }> {
  logins += 1;
  const email = `user${logins}.${process.pid}@example.test`;
  const account = await meta.createAccount({ name: `User ${logins}`, email, timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
  await meta.setPasswordHash(account.id, await hashPassword(PASSWORD));
  return { id: account.id, email };
}

/** Logs in through the login form; returns the session's anti-CSRF value (from the sites page). */
export async function logIn(browser: Browser, email = EMAIL, password = PASSWORD): Promise<string> {
  const form = await browser.get('/login');
  const res = await browser.post('/login', { csrf: formField(form.body), email, password, next: '/sites' });
  assert.equal(res.statusCode, 303, res.body);
  const page = await browser.get('/sites');
  assert.equal(page.statusCode, 200);
  return pageCsrf(page.body);
}

let members = 0;
/** A new user with PASSWORD who belongs to `accountId` with this role (and, for viewers, maybe some sites only). */
export async function addMember(
  team: TeamStore,
  accountId: number,
  role: Role,
  siteIds: string[] | null = null,
): Promise<{ userId: number; email: string }> {
  members += 1;
  const email = `member${members}.${process.pid}@example.test`;
  const user = await team.createUser(email, await hashPassword(PASSWORD));
  await team.putMembership(accountId, user.id, role, siteIds);
  return { userId: user.id, email };
}

const REPORT_AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

/**
 * `visits` visits of the email-report tests from the day `from` on, one a day round the week, at `hourUtc`: two
 * pages from Google, or one (a bounce); every fourth converts to the goal "Signup". NDJSON import lines.
 */
export function reportTraffic(site: string, from: string, visits: number, seed: number, hourUtc: number): string[] {
  const lines: string[] = [];
  for (let i = 0; i < visits; i++) {
    const day = new Date(Date.parse(`${from}T00:00:00Z`) + (i % 7) * 86_400_000).toISOString().slice(0, 10);
    const at = (minute: number) => `${day} ${String(hourUtc).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00`;
    const base = { site_id: site, user_agent: REPORT_AGENT, ip: `203.0.${seed}.${i + 1}` };
    const bounce = i % 3 === 2;
    lines.push(JSON.stringify({ ...base, type: 'pageview', timestamp: at(0), url: bounce ? 'https://shop.example/blog' : 'https://shop.example/', referrer: bounce ? '' : 'https://www.google.com/' }));
    if (!bounce) lines.push(JSON.stringify({ ...base, type: 'pageview', timestamp: at(2), url: 'https://shop.example/pricing', referrer: '' }));
    if (i % 4 === 0) lines.push(JSON.stringify({ ...base, type: 'event', timestamp: at(3), url: 'https://shop.example/pricing', name: 'Signup' }));
  }
  return lines;
}

/** Imports NDJSON lines through /admin/import in time order, asserting every line was imported. */
export async function importInOrder(app: FastifyInstance, lines: string[]): Promise<void> {
  const sorted = [...lines].sort((a, b) => (JSON.parse(a).timestamp as string).localeCompare(JSON.parse(b).timestamp));
  const res = await app.inject({
    method: 'POST',
    url: '/admin/import',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
    payload: sorted.join('\n'),
  });
  assert.equal(JSON.parse(res.body).imported, sorted.length, res.body);
}
