// The shared visit state on Redis Cluster: a cluster-mode redis-server of its own (one node owning every slot,
// which refuses scripts whose keys span slots exactly as a many-node cluster does), and visits kept across two
// processes and across midnight (a visitor's keys of two days), as test/ingest/visits.test.ts does on one Redis.

import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { SharedVisitTracker, type VisitHit } from '../../src/ingest/visits.js';
import { RedisVisitStateStore } from '../../src/store/redis/visit-state.js';
import { freePort } from '../helpers/free-port.js';

const installed = spawnSync('redis-server', ['--version']).status === 0;

describe('shared visit state on Redis Cluster', { skip: installed ? false : 'redis-server is not installed' }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-redis-cluster-'));
  let server: ChildProcess;
  let url = '';
  const stores: RedisVisitStateStore[] = [];

  before(async () => {
    const port = await freePort();
    url = `redis://127.0.0.1:${port}`;
    // The cluster bus listens on the port + 10000 unless told otherwise: a free port above 55535 would leave it none.
    server = spawn('redis-server', ['--port', String(port), '--cluster-port', String(await freePort()), '--bind', '127.0.0.1', '--cluster-enabled', 'yes', '--cluster-config-file', join(dir, 'nodes.conf'), '--dir', dir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    const admin = new Redis(url, { lazyConnect: true, retryStrategy: () => 50 });
    admin.on('error', () => undefined); // refused until the server listens: retried below
    for (let i = 0; i < 100; i++) {
      try {
        await admin.connect();
        break;
      } catch {
        await sleep(50);
      }
    }
    await admin.call('CLUSTER', 'ADDSLOTSRANGE', '0', '16383');
    while (!String(await admin.call('CLUSTER', 'INFO')).includes('cluster_state:ok')) await sleep(50);
    // The check this test relies on: keys of different slots in one script are refused.
    await assert.rejects(admin.eval('return 1', 2, 'a', 'b'), /CROSSSLOT/);
    await admin.quit();
  });
  after(async () => {
    for (const s of stores) await s.close();
    server?.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  const tracker = (prefix: string) => {
    const store = new RedisVisitStateStore(url, prefix);
    stores.push(store);
    return new SharedVisitTracker(store);
  };
  const T0 = Date.UTC(2026, 2, 7, 23, 50);
  const hit = (at: number, pathname: string): VisitHit => ({
    type: 'pageview' as const, timestamp: new Date(at), hostname: 'https://example.com', pathname, referrerHostname: '', referrerPathname: '',
    referrerSource: '', utmCampaign: '', utmContent: '', utmMedium: '', utmSource: '', utmTerm: '', ref: '', keyword: '',
  });

  it('makes one visit of hits sent to two processes, across midnight (two visitor keys), and none of another site', async () => {
    const [a, b] = [tracker('plumb-cluster:'), tracker('plumb-cluster:')];
    const first = await a.record('SITEAAAA', 1n, undefined, hit(T0, '/a'));
    const second = await b.record('SITEAAAA', 1n, undefined, hit(T0 + 60_000, '/b'));
    // After midnight the visitor has a new id; the visit is found under yesterday's key and continued.
    const third = await a.record('SITEAAAA', 2n, 1n, hit(T0 + 20 * 60_000, '/c'));
    assert.deepEqual([second.visitId, third.visitId], [first.visitId, first.visitId]);
    assert.equal(third.pageviews, 3);
    const other = await b.record('SITEBBBB', 1n, undefined, hit(T0 + 60_000, '/a'));
    assert.notEqual(other.visitId, first.visitId);
  });

  it('keeps one visit under concurrent hits of both processes', async () => {
    const [a, b] = [tracker('plumb-cluster-2:'), tracker('plumb-cluster-2:')];
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => (i % 2 ? a : b).record('SITECCCC', 7n, undefined, hit(T0 + i, `/p${i % 3}`))));
    assert.equal(new Set(results.map((r) => r.visitId)).size, 1);
    assert.equal(Math.max(...results.map((r) => r.pageviews)), 20);
  });
});
