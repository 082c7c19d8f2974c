// A replica of a replicated ClickHouse cluster stopped in the middle of ingest: every hit the store acknowledged is
// stored exactly once, the cluster keeps answering meanwhile, and the replica catches up when it is back. Starts its
// own cluster, one shard of two replicas with ZooKeeper (scripts/clickhouse/cluster.mjs); run by
// scripts/run-cluster-tests.mjs, skipped elsewhere (it needs Debian's clickhouse-server and zookeeper packages).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { storedHit } from '../helpers/stored-hits.js';
import { startTestCluster, type ClusterNode, type TestCluster } from '../helpers/test-cluster.js';

const RUN = process.env.PLUMB_TEST_CLUSTER_LAYOUT === '1x2';
const BATCHES = 30;
const HITS_PER_BATCH = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function onNode(url: string, sql: string): Promise<string> {
  const res = await fetch(`${url}/`, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: ${text}`);
  return text.trim();
}

describe('a ClickHouse replica stopped mid-ingest', { skip: RUN ? false : 'run by scripts/run-cluster-tests.mjs (1x2 layout)' }, () => {
  let cluster: TestCluster;
  let store: ClickHouseEventStore;
  const database = `plumb_test_replica_${process.pid}`;
  before(async () => {
    cluster = await startTestCluster('1x2');
    // Opened as a restarted process would open it: on a busy machine 18.16 has been seen to drop the HTTP connection
    // of a statement ON CLUSTER (ECONNRESET) while the cluster settles, and the migrations are safe to run again.
    for (let attempt = 1; ; attempt++) {
      try {
        store = await ClickHouseEventStore.open({ url: cluster.url, database, node: 'node-a', cluster: cluster.name });
        break;
      } catch (err) {
        if (attempt === 3 || (err as { code?: string }).code !== 'ECONNRESET') throw err;
        await sleep(1000);
      }
    }
  });
  after(async () => {
    await store?.close();
    await cluster?.stop();
  });

  it('loses no acknowledged hit, keeps answering, and the replica catches up', async () => {
    const [, second] = cluster.nodes as [ClusterNode, ClusterNode];
    const acknowledged = new Set<string>();
    let restart: (() => Promise<void>) | undefined;
    let answeredWhileDown = 0;
    for (let seq = 1; seq <= BATCHES; seq++) {
      if (seq === 10) restart = await cluster.stopNode(second);
      if (seq === 20) {
        await restart!();
        restart = undefined;
      }
      const hits = Array.from({ length: HITS_PER_BATCH }, (_, i) => storedHit('S', new Date(Date.UTC(2026, 2, 1, 0, seq, i)).toISOString()));
      // As the write buffer does: a failed batch is retried until stored (bounded here).
      for (let attempt = 1; ; attempt++) {
        try {
          await store.write(hits, [], seq);
          for (const h of hits) acknowledged.add(h.pathname);
          break;
        } catch (err) {
          if (attempt === 20) throw err;
          await sleep(250);
        }
      }
      if (restart) {
        const rows = await store.query("SELECT count() AS n FROM hits WHERE site_id = 'S'", []);
        assert.ok(Number(rows[0]!.n) >= acknowledged.size - HITS_PER_BATCH, 'the cluster answers with a replica down');
        answeredWhileDown++;
      }
    }
    assert.equal(answeredWhileDown, 10);
    const stored = (await store.listHits('S')).map((h) => h.pathname);
    assert.equal(stored.length, acknowledged.size, 'each acknowledged hit stored once');
    assert.deepEqual(new Set(stored), acknowledged);
    assert.equal(await store.logWatermark(), BATCHES);
    // The replica that was down has every hit too once it has caught up (it fetches the parts it missed in the
    // background, once its ZooKeeper session is back: waited for, bounded).
    for (const node of cluster.nodes) {
      const deadline = Date.now() + 60_000;
      let count = '';
      while (Date.now() < deadline) {
        await onNode(node.url, `SYSTEM SYNC REPLICA ${database}.hits_local`).catch(() => undefined);
        count = await onNode(node.url, `SELECT count() FROM ${database}.hits_local`);
        if (count === String(acknowledged.size)) break;
        await sleep(250);
      }
      assert.equal(count, String(acknowledged.size), node.name);
    }
  });
});
