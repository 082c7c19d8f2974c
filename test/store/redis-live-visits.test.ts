// Current visitors' read of the visits in progress in Redis (src/store/redis/live-visits.ts) against what the shared
// visit state writes: two trackers (two processes) record, the reader sees every visit of a site with its newest
// page, on one Redis and on a Redis Cluster of three masters (REDIS_URL with `cluster=on`), where each site's live
// set, visits and visitor keys share its slot, so the commit script and the read both reach one master.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { SharedVisitTracker, type VisitHit } from '../../src/ingest/visits.js';
import { RedisLiveVisits } from '../../src/store/redis/live-visits.js';
import { RedisVisitStateStore } from '../../src/store/redis/visit-state.js';
import { REDIS_URL } from '../helpers/redis.js';
import { freePort } from '../helpers/free-port.js';

const installed = spawnSync('redis-server', ['--version']).status === 0;

const hit = (at: number, pathname: string, referrer = ''): VisitHit => ({
  type: 'pageview' as const, timestamp: new Date(at), hostname: 'https://example.com', pathname,
  referrerHostname: referrer ? 'https://news.ycombinator.com' : '', referrerPathname: referrer, referrerSource: '', utmCampaign: '',
  utmContent: '', utmMedium: '', utmSource: '', utmTerm: '', ref: '', keyword: '',
});

/** Records on two trackers of `url` and reads back with the reader, for the sites given. */
async function recordAndRead(url: string, prefix: string, sites: readonly string[]) {
  const stores = [new RedisVisitStateStore(url, prefix), new RedisVisitStateStore(url, prefix)];
  const reader = new RedisLiveVisits(url, prefix);
  try {
    const [a, b] = stores.map((s) => new SharedVisitTracker(s));
    const now = Date.now();
    for (const [i, site] of sites.entries()) {
      // Visitor 1 arrives on a from Hacker News and goes on at b; visitor 2 stays on b.
      await a!.record(site, 1n, undefined, hit(now - 2000, `/first-${i}`, '/item'));
      await b!.record(site, 1n, undefined, hit(now - 1000, `/second-${i}`));
      await b!.record(site, 2n, undefined, hit(now - 500, `/other-${i}`));
    }
    return await Promise.all(sites.map(async (site) => {
      const visits = (await reader.since(site, now - 5 * 60_000, 100))!;
      return visits.map((v) => [v.exitPage, v.pageviews, v.referrerHostname, v.referrerPathname, v.exitHostname]).sort();
    }));
  } finally {
    await reader.close();
    for (const s of stores) {
      await s.clear();
      await s.close();
    }
  }
}

describe('visits in progress read from Redis', () => {
  it('reads every process\'s visits of a site with their newest state, on one Redis', async () => {
    const prefix = `plumb-test-live-${randomBytes(4).toString('hex')}:`;
    const [one, two] = await recordAndRead(REDIS_URL, prefix, ['SITEAAAA', 'SITEBBBB']);
    assert.deepEqual(one, [['/other-0', 1, '', '', 'https://example.com'], ['/second-0', 2, 'https://news.ycombinator.com', '/item', 'https://example.com']]);
    assert.deepEqual(two, [['/other-1', 1, '', '', 'https://example.com'], ['/second-1', 2, 'https://news.ycombinator.com', '/item', 'https://example.com']]);
    const redis = new Redis(REDIS_URL);
    try {
      assert.deepEqual(await redis.keys(`${prefix}*`), [], 'clear() takes the live sets too');
    } finally {
      await redis.quit();
    }
  });
});

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (await check().catch(() => false)) return;
    await sleep(50);
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('visits in progress read from a Redis Cluster of three masters', { skip: installed ? false : 'redis-server is not installed' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-live-cluster-'));
  const servers: ChildProcess[] = [];
  const nodes: Redis[] = [];
  const ports: number[] = [];

  before(async () => {
    for (let i = 0; i < 3; i++) ports.push(await freePort());
    for (const port of ports) {
      servers.push(spawn('redis-server', [
        '--port', String(port), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, `nodes-${port}.conf`),
        '--dir', dir, '--save', '', '--appendonly', 'no', '--cluster-node-timeout', '2000',
      ], { stdio: 'ignore' }));
      // Refused until the server listens: the client reconnects every 50 ms, and a ping fails until it has.
      const node = new Redis({ port, retryStrategy: () => 50 });
      node.on('error', () => undefined);
      nodes.push(node);
      await until(`redis-server on ${port}`, () => node.ping().then(() => true));
    }
    // A third of the slots to each master, distinct epochs, each node introduced to the first.
    const third = Math.ceil(16384 / ports.length);
    for (const [i, node] of nodes.entries()) {
      await node.call('CLUSTER', 'ADDSLOTSRANGE', String(i * third), String(Math.min(16383, (i + 1) * third - 1)));
      await node.call('CLUSTER', 'SET-CONFIG-EPOCH', String(i + 1));
    }
    for (const port of ports.slice(1)) await nodes[0]!.call('CLUSTER', 'MEET', '127.0.0.1', String(port));
    for (const node of nodes) {
      await until('cluster_state:ok', async () => {
        const info = String(await node.call('CLUSTER', 'INFO'));
        return info.includes('cluster_state:ok') && info.includes(`cluster_known_nodes:${ports.length}`);
      });
    }
  });

  after(async () => {
    for (const node of nodes) node.disconnect();
    await Promise.all(servers.map(async (server) => {
      if (server.exitCode !== null || server.signalCode !== null) return;
      const exited = new Promise((resolve) => server.once('exit', resolve));
      server.kill('SIGTERM');
      if ((await Promise.race([exited, sleep(3000, 'late')])) === 'late') server.kill('SIGKILL');
    }));
    rmSync(dir, { recursive: true, force: true });
  });

  it('reads each site from the master of its slot, sites spread over all three', async () => {
    // One site per master: the first names whose hash tag lands on each.
    const bySlotOwner = new Map<number, string>();
    for (let i = 0; i < 300 && bySlotOwner.size < 3; i++) {
      const site = `SITE${String(i).padStart(4, '0')}`;
      const slot = Number(await nodes[0]!.call('CLUSTER', 'KEYSLOT', `{${site}}`));
      const owner = Math.floor(slot / Math.ceil(16384 / 3));
      if (!bySlotOwner.has(owner)) bySlotOwner.set(owner, site);
    }
    const sites = [...bySlotOwner.values()];
    assert.equal(sites.length, 3);
    const answers = await recordAndRead(`redis://127.0.0.1:${ports[0]}?cluster=on`, 'plumb-live:', sites);
    answers.forEach((visits, i) => assert.deepEqual(visits, [
      [`/other-${i}`, 1, '', '', 'https://example.com'], [`/second-${i}`, 2, 'https://news.ycombinator.com', '/item', 'https://example.com'],
    ]));
  });
});
