// Two real server processes on different ports sharing PostgreSQL, ClickHouse and Redis (scale-out mode): one
// visit of hits sent to both, a token revoked on one refused by the other within seconds, one shared limit, and
// acknowledged hits surviving SIGKILL of one process. Runs in the scale-out pass (PLUMB_TEST_STORE=scale-out).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { runServerExpectingExit, startServer, type ServerProcess } from '../helpers/process.js';
import { freshScaleOut, scaleOutServerEnv, type ScaleOutFixture } from '../helpers/scale-out.js';
import { eventually as pollUntil } from '../helpers/eventually.js';

const ADMIN = 'two-process-admin-token-0123456789';
const OWNER = 'two-process-owner-token-0123456789';
const AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

/** The server's environment: the fixture's three URLs, its own data directory, fixed tokens. */
const scaleOutEnv = (f: ScaleOutFixture, dataDir: string): Record<string, string> => ({
  ...scaleOutServerEnv(f, dataDir),
  PLUMB_ADMIN_TOKEN: ADMIN,
  PLUMB_BOOTSTRAP_TOKEN: OWNER,
  PLUMB_TRUST_PROXY: 'true',
  PLUMB_LOG_LEVEL: 'warn',
});

async function api(server: ServerProcess, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}

const hit = (server: ServerProcess, site: string, path: string, ip = '81.2.69.142') =>
  fetch(`${server.url}/?sid=${site}&h=${encodeURIComponent('https://shop.example')}&p=${encodeURIComponent(path)}`, {
    headers: { 'user-agent': AGENT, 'x-forwarded-for': ip },
  });

/** Polls until `check` returns a value (hits reach ClickHouse within about a second). */
const eventually = <T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 15_000) => pollUntil(check, what, timeoutMs);

describe('two scale-out processes', () => {
  let fixture: ScaleOutFixture;
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-node-'));
    dirs.push(dir);
    return dir;
  };
  const start = async (dir: string) => {
    const server = await startServer(scaleOutEnv(fixture, dir));
    servers.push(server);
    return server;
  };

  before(async () => {
    fixture = await freshScaleOut();
    // Both start at once on the empty database: migrations and the first-start bootstrap happen exactly once.
    [a, b] = await Promise.all([start(dataDir()), start(dataDir())]);
    // The owner polls reports while waiting for hits: the top tier's 1,200 a minute, not tier 1's 10.
    assert.equal((await api(a, ADMIN, 'POST', '/admin/accounts/1', { tier: 6 })).status, 200);
  });

  after(async () => {
    for (const s of servers) if (s.child.exitCode === null) await s.stop();
    await fixture.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('bootstraps one owner account when both start at once, and both serve it', async () => {
    const accounts = await api(a, ADMIN, 'GET', '/admin/accounts');
    assert.equal(accounts.body.length, 1);
    assert.equal((await api(b, OWNER, 'GET', '/v1/account')).status, 200);
    assert.equal(a.stdout().includes('Plumb created the first account') !== b.stdout().includes('Plumb created the first account'), true);
  });

  it("carries a visit's first-touch attribution across processes, to its pageviews and its conversion", async () => {
    const site = (await api(a, OWNER, 'POST', '/v1/sites', { name: 'Attribution' })).body.id as string;
    assert.equal((await api(a, OWNER, 'POST', `/v1/sites/${site}/events`, { name: 'Signup' })).status, 200);
    const send = (server: ServerProcess, method: 'GET' | 'POST', params: Record<string, string>) =>
      fetch(`${server.url}/?${new URLSearchParams({ sid: site, h: 'https://shop.example', ...params })}`, {
        method,
        headers: { 'user-agent': AGENT, 'x-forwarded-for': '81.2.69.170' },
      });
    // Arrives on a from Hacker News with a campaign, continues on b (internal, then a Google search), converts on b.
    assert.equal((await send(a, 'GET', { p: '/', r: 'https://news.ycombinator.com/item?id=1', qs: '{"utm_source":"hn"}' })).status, 200);
    assert.equal((await send(b, 'GET', { p: '/pricing', r: 'https://shop.example/' })).status, 200);
    assert.equal((await send(b, 'GET', { p: '/pricing', r: 'https://www.google.com/', qs: '{"utm_source":"ads"}' })).status, 200);
    assert.equal((await send(b, 'POST', { p: '/signup', name: 'Signup' })).status, 204);
    const range = 'date_from=2020-01-01%2000:00:00';
    const referrers = await eventually(async () => {
      const r = await api(a, OWNER, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews,visits&field_grouping=referrer_hostname,utm_source&${range}`);
      const rows = Array.isArray(r.body) ? r.body : [];
      return rows.reduce((n: number, row: any) => n + Number(row.pageviews), 0) === 3 ? rows : undefined;
    }, '3 stored pageviews');
    assert.deepEqual(referrers, [{ referrer_hostname: 'https://news.ycombinator.com', utm_source: 'hn', pageviews: '3', visits: '1' }]);
    const conversions = await eventually(async () => {
      const r = await api(b, OWNER, 'GET', `/v1/aggregations?entity=event&site_id=${site}&entity_name=Signup&aggregates=conversions&field_grouping=utm_source,referrer_source&${range}`);
      return Array.isArray(r.body) && r.body.length > 0 ? r.body : undefined;
    }, 'the conversion');
    assert.deepEqual(conversions, [{ utm_source: 'hn', referrer_source: 'Hacker News', conversions: '1' }]);
  });

  it('refuses a second process on the same data directory', async () => {
    const dir = dataDir();
    const first = await start(dir);
    const second = await runServerExpectingExit(scaleOutEnv(fixture, dir));
    assert.notEqual(second.code, 0);
    assert.match(second.output, /in use by another Plumb process/);
    await first.stop();
  });

  it('makes one visit of hits sent alternately and concurrently to both processes', async () => {
    const site = (await api(a, OWNER, 'POST', '/v1/sites', { name: 'Alternating' })).body.id as string;
    // In order first (entry page /p0), then a burst racing on both processes.
    for (let i = 0; i < 6; i++) assert.equal((await hit(i % 2 ? b : a, site, `/p${i}`)).status, 200);
    await sleep(5); // the exit page is the last pageview by time: keep the burst strictly later
    const burst = await Promise.all(Array.from({ length: 20 }, (_, i) => hit(i % 2 ? a : b, site, `/burst${i % 4}`)));
    assert.ok(burst.every((r) => r.status === 200));
    await sleep(5);
    assert.equal((await hit(b, site, '/last')).status, 200);

    const query = `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=visits,pageviews,uniques&date_from=2020-01-01%2000:00:00`;
    // Each process writes its hits about once a second, so for that long a report may see the visit's newest
    // state (written by one process) before the other process's hits: wait until every hit is stored.
    await eventually(async () => {
      const r = await api(a, OWNER, 'GET', `${query.replace('visits,pageviews,uniques', 'pageviews')}&field_grouping=pathname`);
      const stored = Array.isArray(r.body) ? r.body.reduce((n: number, row: any) => n + Number(row.pageviews), 0) : 0;
      return stored === 27 ? true : undefined;
    }, '27 stored pageviews');
    const totals = (await api(a, OWNER, 'GET', query)).body[0];
    assert.deepEqual(totals, { visits: '1', pageviews: '27', uniques: '11' }, 'one visit of 27 pageviews on 11 pages');
    const entry = await api(b, OWNER, 'GET', `${query}&field_grouping=entry_page`);
    assert.deepEqual(entry.body.map((r: any) => [r.entry_page, r.visits]), [['/p0', '1']]);
    const exit = await api(b, OWNER, 'GET', `${query}&field_grouping=exit_page`);
    assert.deepEqual(exit.body.map((r: any) => [r.exit_page, r.visits]), [['/last', '1']]);
    // A different visitor is a different visit, wherever its hits land.
    await hit(b, site, '/other', '81.2.69.160');
    await eventually(async () => {
      const r = await api(b, OWNER, 'GET', query);
      return r.body?.[0]?.visits === '2' ? true : undefined;
    }, 'a second visit');
  });

  it('refuses a token on one process within seconds of its revocation on the other', async () => {
    const created = await api(a, ADMIN, 'POST', '/admin/accounts/1/tokens', { name: 'short-lived', abilities: ['*'] });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    const { id, token } = created.body as { id: string; token: string };
    assert.equal((await api(b, token, 'GET', '/v1/account')).status, 200, 'b knows the token (and caches it)');
    assert.equal((await api(a, ADMIN, 'DELETE', `/admin/accounts/1/tokens/${id}`)).status, 200);
    const revokedAt = Date.now();
    await eventually(async () => ((await api(b, token, 'GET', '/v1/account')).status === 401 ? true : undefined), 'refusal on b', 10_000);
    const delay = Date.now() - revokedAt;
    assert.ok(delay <= 5_000, `refused after ${delay} ms`);
    assert.equal((await api(a, token, 'GET', '/v1/account')).status, 401);
  });

  it('shares one per-minute budget across both processes', async () => {
    // A tier-1 account of its own: 10 report requests per minute, whichever process answers them.
    const account = await api(a, ADMIN, 'POST', '/admin/accounts', { name: 'Limited', email: 'limited@example.com', tier: 1 });
    assert.equal(account.status, 200, JSON.stringify(account.body));
    const token = (await api(a, ADMIN, 'POST', `/admin/accounts/${account.body.id}/tokens`, { name: 't', abilities: ['*'] })).body.token as string;
    const site = (await api(b, token, 'POST', '/v1/sites', { name: 'Limited site' })).body.id as string;
    const statuses: number[] = [];
    for (let i = 0; i < 14; i++) {
      statuses.push((await api(i % 2 ? b : a, token, 'GET', `/v1/current_visitors?site_id=${site}`)).status);
    }
    assert.deepEqual(statuses, [...Array(10).fill(200), ...Array(4).fill(429)]);
  });

  it('stores every acknowledged hit exactly once when a process is killed and restarted', async () => {
    const dir = dataDir();
    const victim = await start(dir);
    const site = (await api(a, OWNER, 'POST', '/v1/sites', { name: 'Killed' })).body.id as string;
    const acknowledged = new Set<string>();
    let stop = false;
    let n = 0;
    const sender = async () => {
      // At most 900 paths: the answer below lists at most 1,000 rows.
      while (!stop && n < 900) {
        const path = `/k-${n++}`;
        try {
          if ((await hit(victim, site, path, `10.0.${n % 200}.1`)).status === 200) acknowledged.add(path);
        } catch {
          // the connection died with the server: not acknowledged
        }
      }
    };
    const senders = Array.from({ length: 8 }, sender);
    await eventually(async () => (acknowledged.size >= 300 || n >= 900 ? true : undefined), '300 acknowledged hits');
    victim.child.kill('SIGKILL');
    stop = true;
    await Promise.all(senders);
    assert.ok(acknowledged.size > 50, `only ${acknowledged.size} hits acknowledged before the kill`);

    // The same data directory: the restarted process replays what its log still owes to ClickHouse.
    const again = await start(dir);
    const query = `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&field_grouping=pathname&date_from=2020-01-01%2000:00:00&limit=1000`;
    const rows = await eventually(async () => {
      const r = await api(again, OWNER, 'GET', query);
      const got = (Array.isArray(r.body) ? r.body : []) as { pathname: string; pageviews: string }[];
      return got.length >= acknowledged.size ? got : undefined;
    }, 'the acknowledged hits');
    // The restart had something to replay (a kill during sustained sending always leaves the last second's hits).
    const metrics = await (await fetch(`${again.url}/metrics`)).text();
    const replayed = Number(/^plumb_hits_replayed_total (\d+)/m.exec(metrics)?.[1] ?? 0);
    assert.ok(replayed > 0, 'hits were replayed from the log');
    const stored = new Map(rows.map((r) => [r.pathname, r.pageviews]));
    for (const path of acknowledged) assert.equal(stored.get(path), '1', `${path} stored once`);
    assert.ok([...stored.values()].every((count) => count === '1'), 'no hit stored twice');
    await again.stop();
  });
});
