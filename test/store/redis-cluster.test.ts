// Plumb on a Redis Cluster of three masters (redis-server processes of its own, behind a password, plain and TLS):
// REDIS_URL with `cluster=on` through the real client factory (src/store/redis/connect.ts), the limit store's
// decisions and the visit state on keys whose slots are on different masters, readiness, clearing every master, TLS,
// a cluster that cannot be reached and a lost master failing within the deadline, and a real scale-out server
// recording hits on the cluster.

import assert from 'node:assert/strict';
import { execFile, spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Cluster, Redis } from 'ioredis';
import { loadConfig } from '../../src/config.js';
import { isServiceOutage } from '../../src/http/service-outage.js';
import { SharedVisitTracker, type VisitHit } from '../../src/ingest/visits.js';
import { redisClient } from '../../src/store/redis/connect.js';
import { RedisLimitStore } from '../../src/store/redis/limit-store.js';
import { RedisVisitStateStore } from '../../src/store/redis/visit-state.js';
import { eventually } from '../helpers/eventually.js';
import { startServer, type ServerProcess } from '../helpers/process.js';
import { CLICKHOUSE_URL, freshScaleOut, scaleOutServerEnv, type ScaleOutFixture } from '../helpers/scale-out.js';
import { freePort } from '../helpers/free-port.js';
import { LOADER, sourceModuleUrl } from '../helpers/root.js';

const installed = spawnSync('redis-server', ['--version']).status === 0;
const execFileAsync = promisify(execFile);
// With an '@', which the URL must carry percent-encoded: both clients have to decode it.
const PASSWORD = 'plumb@cluster-test';

/** Polls `check` every 50 ms, at most `tries` times. */
async function until(what: string, tries: number, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < tries; i++) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('Plumb on a Redis Cluster of three masters', { skip: installed ? false : 'redis-server is not installed' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-redis-cluster3-'));
  const servers: ChildProcess[] = [];
  const ports: number[] = [];
  /** Each node's TLS port (the cluster bus, too, speaks TLS), when openssl could make a certificate. */
  const tlsPorts: number[] = [];
  const cert = join(dir, 'cert.pem');
  const tls =
    spawnSync('openssl', [
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', join(dir, 'key.pem'), '-out', cert,
      '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1',
    ], { stdio: 'ignore' }).status === 0;
  let url = '';
  /** A plain connection to each node, for setting up and for looking at what each master holds. */
  const nodes = new Map<number, Redis>();
  let admin: Redis;
  const closers: (() => Promise<unknown>)[] = [];

  before(async () => {
    // The bus ports are chosen too: the default, the port + 10000, may be taken or above 65535.
    const busPorts: number[] = [];
    for (let i = 0; i < 3; i++) {
      ports.push(await freePort());
      busPorts.push(await freePort());
      if (tls) tlsPorts.push(await freePort());
    }
    for (const [i, port] of ports.entries()) {
      servers.push(
        spawn('redis-server', [
          '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
          '--cluster-port', String(busPorts[i]), '--dir', dir, '--save', '', '--appendonly', 'no', '--requirepass', PASSWORD, '--masterauth', PASSWORD,
          // A node waits up to its node timeout (15 s by default, capped at 5 s) before it serves a newly whole cluster.
          '--cluster-node-timeout', '2000',
          // Plain and TLS clients alike: the cluster tells each client the ports of its kind.
          ...(tls
            ? ['--tls-port', String(tlsPorts[i]), '--tls-cluster', 'yes', '--tls-cert-file', cert, '--tls-key-file', join(dir, 'key.pem'), '--tls-ca-cert-file', cert, '--tls-auth-clients', 'no']
            : []),
        ], { stdio: 'ignore' }),
      );
    }
    for (const port of ports) {
      const node = new Redis({ port, password: PASSWORD, retryStrategy: () => 50 });
      node.on('error', () => undefined); // refused until the server listens: reconnects every 50 ms
      nodes.set(port, node);
      await until(`redis-server on ${port}`, 10, () => node.ping().then(() => true));
    }
    // What `redis-cli --cluster create --cluster-replicas 0` does, without its fixed waits (half of this test's time):
    // a third of the slots to each master, distinct config epochs, and each node introduced to the first.
    const third = Math.ceil(16384 / ports.length);
    for (const [i, port] of ports.entries()) {
      const node = nodes.get(port)!;
      await node.call('CLUSTER', 'ADDSLOTSRANGE', String(i * third), String(Math.min(16383, (i + 1) * third - 1)));
      await node.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1));
    }
    admin = nodes.get(ports[0]!)!;
    // With a TLS bus, a node is met at its TLS port.
    for (const i of [1, 2]) await admin.call('CLUSTER', 'MEET', '127.0.0.1', String((tls ? tlsPorts : ports)[i]), String(busPorts[i]));
    for (const [port, node] of nodes) {
      await until(`cluster_state:ok on ${port}`, 200, async () => {
        const info = String(await node.call('CLUSTER', 'INFO'));
        return info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${ports.length}`);
      });
    }
    url = `redis://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${ports[0]}?cluster=on`;
  });

  after(async () => {
    for (const close of closers) await close().catch(() => undefined);
    for (const node of nodes.values()) node.disconnect();
    await Promise.all(
      servers.map(async (server) => {
        if (server.exitCode !== null || server.signalCode !== null) return;
        const exited = new Promise((resolve) => server.once('exit', resolve));
        server.kill('SIGTERM');
        if ((await Promise.race([exited, sleep(3000, 'late')])) !== 'late') return;
        server.kill('SIGKILL');
        await Promise.race([exited, sleep(2000)]);
      }),
    );
    rmSync(dir, { recursive: true, force: true });
  });

  /** The port of the master serving `key`'s slot. */
  const masterOf = async (key: string): Promise<number> => {
    const slot = Number(await admin.call('CLUSTER', 'KEYSLOT', key));
    const ranges = (await admin.call('CLUSTER', 'SLOTS')) as [number, number, [string, number]][];
    const range = ranges.find(([from, to]) => slot >= from && slot <= to);
    assert.ok(range, `slot ${slot} is served`);
    return Number(range[2][1]);
  };
  /** One name per master: the first of `candidate(0)`, `candidate(1)`, ... whose hash tag lands on each. */
  const onEachMaster = async (candidate: (i: number) => string, tag: (name: string) => string): Promise<string[]> => {
    const found = new Map<number, string>();
    for (let i = 0; i < 200 && found.size < ports.length; i++) {
      const port = await masterOf(`{${tag(candidate(i))}}`);
      if (!found.has(port)) found.set(port, candidate(i));
    }
    assert.deepEqual([...found.keys()].sort(), [...ports].sort(), 'a name on each master');
    return [...found.values()];
  };
  /** Every key under `prefix`, master by master (straight from each node, not through the cluster client). */
  const keysByMaster = async (prefix: string): Promise<Map<number, string[]>> => {
    const out = new Map<number, string[]>();
    for (const port of ports) out.set(port, (await nodes.get(port)!.keys(`${prefix}*`)).sort());
    return out;
  };
  const limitStore = (prefix: string) => {
    const store = new RedisLimitStore(url, prefix);
    closers.push(() => store.close());
    return store;
  };

  it('makes a Cluster client for cluster=on (password decoded), one Redis otherwise, and refuses bad settings at start', async () => {
    const client = redisClient(url, { commandTimeout: 1000, maxRetriesPerRequest: 2 });
    closers.push(() => client.quit());
    assert.ok(client instanceof Cluster);
    assert.equal(await client.ping(), 'PONG');
    const plain = redisClient(url.replace('cluster=on', 'cluster=off'), { commandTimeout: 1000, maxRetriesPerRequest: 2 });
    closers.push(() => plain.quit());
    assert.ok(plain instanceof Redis && !(plain instanceof Cluster));
    assert.equal(await plain.ping(), 'PONG');

    assert.equal(loadConfig({ REDIS_URL: url }).redisUrl, url);
    for (const [env, message] of [
      [{ REDIS_URL: 'redis://127.0.0.1:6379?cluster=yes' }, /REDIS_URL's cluster parameter must be on or off \(got "yes"\)/],
      [{ REDIS_URL: 'redis://127.0.0.1:6379/2?cluster=on' }, /REDIS_URL names database 2, but a Redis Cluster has only database 0/],
      [{ REDIS_URL: 'redis://127.0.0.1:6379', PLUMB_REDIS_PREFIX: 'plumb:{eu}:' }, /PLUMB_REDIS_PREFIX must not contain \{ or \}/],
    ] as const) {
      assert.throws(() => loadConfig(env), message);
    }
    assert.equal(loadConfig({ REDIS_URL: 'rediss://:secret@cache.example:6380/0?cluster=true' }).redisUrl, 'rediss://:secret@cache.example:6380/0?cluster=true');
  });

  it('shares windows and in-flight slots between two processes, on limits whose keys are on each master', async () => {
    const prefix = 'plumb-cluster-limits:';
    const [a, b] = [limitStore(prefix), limitStore(prefix)];
    const accounts = await onEachMaster((i) => `${i + 1}:minute`, (k) => k);
    const T0 = 1_800_000_000_000;
    for (const key of accounts) {
      for (let i = 0; i < 3; i++) assert.deepEqual(await (i % 2 ? a : b).hitWindow(key, 60_000, 3, T0 + i * 1000), { allowed: true });
      assert.deepEqual(await a.hitWindow(key, 60_000, 3, T0 + 30_000), { allowed: false, retryAfterMs: 30_000 });
      assert.deepEqual(await b.hitWindow(key, 60_000, 3, T0 + 60_000), { allowed: true });
    }
    const slotKeys = await onEachMaster((i) => `${i + 1}:concurrent`, (k) => k);
    for (const key of slotKeys) {
      assert.equal(await a.acquireSlot(key, 's1', 2, 120_000, T0), true);
      assert.equal(await b.acquireSlot(key, 's2', 2, 120_000, T0), true);
      assert.equal(await a.acquireSlot(key, 's3', 2, 120_000, T0), false);
      await b.releaseSlot(key, 's1');
      assert.equal(await a.acquireSlot(key, 's3', 2, 120_000, T0), true);
      // A crashed process's lease lapses.
      assert.equal(await b.acquireSlot(key, 's4', 2, 120_000, T0 + 120_001), true);
    }
    // Every key carries its limit's key as hash tag, and they are spread over all three masters.
    const byMaster = await keysByMaster(prefix);
    for (const [port, keys] of byMaster) {
      assert.ok(keys.length >= 2, `keys on master ${port}`);
      for (const key of keys) assert.match(key, /^plumb-cluster-limits:(window|slots):\{\d+:(minute|concurrent)\}$/);
      for (const key of keys) assert.equal(await masterOf(key), port);
    }
    await a.ping();
    await a.clear();
    assert.deepEqual([...(await keysByMaster(prefix)).values()].flat(), [], 'clear() empties every master');
  });

  it('needs the cluster client: one Redis client to a node is sent elsewhere for keys of the other masters', async () => {
    const prefix = 'plumb-cluster-plain:';
    const plain = new RedisLimitStore(url.replace('cluster=on', 'cluster=off'), prefix);
    closers.push(() => plain.close());
    let elsewhere: string | undefined;
    for (const key of await onEachMaster((i) => `${i + 1}:hour`, (k) => k)) if ((await masterOf(`{${key}}`)) !== ports[0]) elsewhere ??= key;
    await assert.rejects(plain.hitWindow(elsewhere!, 60_000, 3, Date.now()), /MOVED/);
  });

  it('keeps one visit per site across two processes, for sites whose slots are on different masters', async () => {
    const prefix = 'plumb-cluster-visits:';
    const stores = [new RedisVisitStateStore(url, prefix), new RedisVisitStateStore(url, prefix)];
    for (const s of stores) closers.push(() => s.close());
    const [a, b] = stores.map((s) => new SharedVisitTracker(s));
    const sites = await onEachMaster((i) => `SITE${String(i).padStart(4, '0')}`, (s) => s);
    const T0 = Date.UTC(2026, 2, 7, 23, 50);
    const hit = (at: number, pathname: string): VisitHit => ({
      type: 'pageview' as const, timestamp: new Date(at), hostname: 'https://example.com', pathname, referrerHostname: '', referrerPathname: '',
      referrerSource: '', utmCampaign: '', utmContent: '', utmMedium: '', utmSource: '', utmTerm: '', ref: '', keyword: '',
    });
    const visits = new Set<bigint>();
    for (const site of sites) {
      const first = await a!.record(site, 1n, undefined, hit(T0, '/a'));
      const second = await b!.record(site, 1n, undefined, hit(T0 + 60_000, '/b'));
      // After midnight: yesterday's and today's visitor keys, and the visit, in one script on the site's slot.
      const third = await a!.record(site, 2n, 1n, hit(T0 + 20 * 60_000, '/c'));
      assert.deepEqual([second.visitId, third.visitId, third.pageviews], [first.visitId, first.visitId, 3]);
      const racing = await Promise.all(Array.from({ length: 10 }, (_, i) => (i % 2 ? a : b)!.record(site, 2n, 1n, hit(T0 + 21 * 60_000 + i, '/d'))));
      assert.deepEqual(new Set(racing.map((r) => r.visitId)), new Set([first.visitId]));
      visits.add(first.visitId);
    }
    assert.equal(visits.size, 3, 'one visit per site');
    const byMaster = await keysByMaster(prefix);
    for (const [port, keys] of byMaster) {
      assert.ok(keys.some((k) => k.includes(':visit:')), `a visit on master ${port}`);
      for (const key of keys) assert.equal(await masterOf(key), port);
    }
    await stores[0]!.clear();
    assert.deepEqual([...(await keysByMaster(prefix)).values()].flat(), [], 'clear() empties every master');
  });

  it('fails within the deadline, as an outage, when no node of the cluster can be reached', async () => {
    const nowhere = `redis://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${await freePort()}?cluster=on`;
    const store = new RedisLimitStore(nowhere, 'plumb-cluster-nowhere:');
    closers.push(() => store.close());
    const started = Date.now();
    const errors = await Promise.all([store.ping(), store.hitWindow('1:minute', 60_000, 3, Date.now())].map((p) => p.then(() => undefined, (e: unknown) => e)));
    for (const err of errors) {
      assert.ok(err, 'refused');
      assert.ok(isServiceOutage(err), `an outage, not a bug: ${String(err)}`);
    }
    assert.ok(Date.now() - started < 2500, `within the second's deadline (took ${Date.now() - started} ms)`);
  });

  it('connects over TLS (rediss://) to every master of the cluster, and to one node without cluster=on', { skip: tls ? false : 'openssl is not installed' }, async () => {
    // Node reads a CA of its own (NODE_EXTRA_CA_CERTS) only at start: a process of its own, with the real stores.
    const tlsUrl = `rediss://:${encodeURIComponent(PASSWORD)}@127.0.0.1:${tlsPorts[0]}`;
    const keys = await onEachMaster((i) => `${i + 1}:tls`, (k) => k);
    const script = `
      const { RedisLimitStore } = await import(${JSON.stringify(sourceModuleUrl('src/store/redis/limit-store.ts'))});
      const [cluster, one] = [new RedisLimitStore(process.env.URL + '?cluster=on', 'plumb-cluster-tls:'), new RedisLimitStore(process.env.URL, 'plumb-cluster-tls-one:')];
      const out = [];
      for (const key of ${JSON.stringify(keys)}) out.push((await cluster.hitWindow(key, 60000, 1, 1)).allowed, (await cluster.hitWindow(key, 60000, 1, 2)).allowed);
      await cluster.ping();
      await one.ping();
      await Promise.all([cluster.close(), one.close()]);
      console.log(JSON.stringify(out));`;
    const { stdout } = await execFileAsync(process.execPath, [...LOADER, '--input-type=module', '-e', script], {
      env: { ...process.env, URL: tlsUrl, NODE_EXTRA_CA_CERTS: cert },
      timeout: 20_000,
    });
    assert.deepEqual(JSON.parse(stdout), keys.flatMap(() => [true, false]));
    const byMaster = await keysByMaster('plumb-cluster-tls:');
    assert.deepEqual([...byMaster.values()].map((k) => k.length), [1, 1, 1], 'a window on each master');
  });

  describe('a scale-out server on the cluster', () => {
    let fixture: ScaleOutFixture | undefined;
    let server: ServerProcess | undefined;
    let dataDir: string | undefined;
    after(async () => {
      if (server && server.child.exitCode === null) await server.stop();
      await fixture?.drop();
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });

    it('starts, is ready, answers the API within its limits and records a visit', async (t) => {
      if (!(await fetch(CLICKHOUSE_URL).then((r) => r.ok, () => false))) return t.skip(`ClickHouse is not reachable at ${CLICKHOUSE_URL}`);
      fixture = await freshScaleOut();
      dataDir = mkdtempSync(join(tmpdir(), 'plumb-cluster-node-'));
      const OWNER = 'cluster-owner-token-0123456789abcdef';
      server = await startServer({
        ...scaleOutServerEnv(fixture, dataDir),
        REDIS_URL: url,
        PLUMB_BOOTSTRAP_TOKEN: OWNER,
        PLUMB_TRUST_PROXY: 'true',
        PLUMB_LOG_LEVEL: 'warn',
      });
      const ready = await fetch(`${server.url}/readyz`);
      assert.equal(ready.status, 200, await ready.text());
      const api = async (method: string, path: string, body?: unknown) => {
        const res = await fetch(`${server!.url}${path}`, {
          method,
          headers: { authorization: `Bearer ${OWNER}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        return { status: res.status, body: (await res.json()) as any };
      };
      const created = await api('POST', '/v1/sites', { name: 'On the cluster' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const site = created.body.id as string;
      for (const path of ['/', '/pricing']) {
        const res = await fetch(`${server.url}/?sid=${site}&h=${encodeURIComponent('https://shop.example')}&p=${encodeURIComponent(path)}`, {
          headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 'x-forwarded-for': '81.2.69.142' },
        });
        assert.equal(res.status, 200);
      }
      // Current visitors read the visits in progress from the cluster (src/store/redis/live-visits.ts).
      const current = await api('GET', `/v1/current_visitors?site_id=${site}`);
      assert.equal(current.status, 200, JSON.stringify(current.body));
      assert.equal(current.body.total, 1);
      const totals = await eventually(async () => {
        const r = await api('GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=visits,pageviews&date_from=2020-01-01%2000:00:00`);
        return Array.isArray(r.body) && r.body[0]?.pageviews === '2' ? r.body[0] : undefined;
      }, 'the two stored pageviews', 15_000);
      assert.deepEqual(totals, { visits: '1', pageviews: '2' });
      // The visit's state and the account's limits are on the cluster, under the fixture's prefix.
      const keys = [...(await keysByMaster(fixture.redisPrefix)).values()].flat();
      assert.ok(keys.some((k) => k.startsWith(`${fixture!.redisPrefix}{${site}}:visit:`)), keys.join(' '));
      assert.ok(keys.some((k) => k.startsWith(`${fixture!.redisPrefix}window:{`)), keys.join(' '));
    });
  });

  // Last: it takes a master away.
  it('is not ready, and fails requests of its slots as outages within the deadline, once a master is gone', async () => {
    const store = limitStore('plumb-cluster-lost-master:');
    const keys = await onEachMaster((i) => `${i + 1}:minute`, (k) => k);
    for (const key of keys) assert.equal((await store.hitWindow(key, 60_000, 3, Date.now())).allowed, true);
    await store.ping();
    const victim = servers[2]!;
    let lost: string | undefined;
    for (const key of keys) if ((await masterOf(`{${key}}`)) === ports[2]) lost = key;
    const exited = new Promise((resolve) => victim.once('exit', resolve));
    victim.kill('SIGKILL');
    await exited;
    const started = Date.now();
    const err = await store.hitWindow(lost!, 60_000, 3, Date.now()).then(() => undefined, (e: unknown) => e);
    assert.ok(err && isServiceOutage(err), `an outage: ${String(err)}`);
    assert.ok(Date.now() - started < 2500, `within the deadline (took ${Date.now() - started} ms)`);
    // Before the other masters declare it failed (the node timeout, 2 s here): readiness already says no.
    await until('readiness to fail', 40, () => store.ping().then(() => false, () => true));
    assert.ok(Date.now() - started < 2000, `unready before the cluster itself fails (took ${Date.now() - started} ms)`);
    // Then the cluster refuses every key (CLUSTERDOWN), those of the masters still up too: still an outage, within
    // each store's deadline, never an error taken for a bug (500).
    await until('the cluster to fail', 200, async () => String(await admin.call('CLUSTER', 'INFO')).includes('cluster_state:fail'));
    const visits = new RedisVisitStateStore(url, 'plumb-cluster-lost-master:');
    closers.push(() => visits.close());
    const [site] = await onEachMaster((i) => `SITE${String(i).padStart(4, '0')}`, (s) => s);
    const at = Date.now();
    await Promise.all(
      ([
        ['a limit', store.hitWindow(keys[0]!, 60_000, 3, Date.now()), 1000],
        ['a visit', visits.lookup([`${site}:1`]), 2000],
      ] as const).map(async ([what, attempt, deadline]) => {
        const failed = await (attempt as Promise<unknown>).then(() => undefined, (e: unknown) => e);
        assert.ok(failed && isServiceOutage(failed), `${what}: an outage, not ${String(failed)}`);
        assert.ok(Date.now() - at < deadline + 500, `${what} within its deadline (took ${Date.now() - at} ms)`);
      }),
    );
  });
});
