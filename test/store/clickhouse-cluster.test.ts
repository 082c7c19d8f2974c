// The ClickHouse event store on a cluster (CLICKHOUSE_CLUSTER): CLICKHOUSE_CLUSTER's validation always; the rest
// only when scripts/run-cluster-tests.mjs runs this file against a cluster it started (PLUMB_TEST_CLUSTER_NODES):
// tables on every node, migrations once, a visit's rows on one shard, deletions and the hit-log recovery on every
// shard, an unknown cluster refused at open.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { NO_ATTRIBUTION, type VisitRecord } from '../../src/domain/hits.js';
import { loadConfig } from '../../src/config.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { MIGRATIONS } from '../../src/store/clickhouse/migrations.js';
import { testConnection, testEngine } from '../helpers/clickhouse.js';
import { storedHit } from '../helpers/stored-hits.js';

const CLUSTER = process.env.CLICKHOUSE_CLUSTER;
const NODES: { name: string; url: string; shard: number }[] = JSON.parse(process.env.PLUMB_TEST_CLUSTER_NODES ?? '[]');
const freshName = () => `plumb_test_${randomBytes(6).toString('hex')}`;

/** Rows of `sql` on one node, straight over HTTP (not through the Distributed tables). */
async function onNode(url: string, sql: string): Promise<string[]> {
  const res = await fetch(`${url}/`, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`${url}: ${text}`);
  return text.split('\n').filter((l) => l !== '');
}

describe('CLICKHOUSE_CLUSTER', () => {
  const scaleOut = { DATABASE_URL: 'postgres://h/db', CLICKHOUSE_URL: 'http://h:8123/plumb', REDIS_URL: 'redis://h:6379' };
  it('is read with the ClickHouse URL', () => {
    assert.equal(loadConfig({ ...scaleOut, CLICKHOUSE_CLUSTER: 'plumb' }).clickhouseCluster, 'plumb');
    assert.equal(loadConfig(scaleOut).clickhouseCluster, undefined);
  });
  it('refuses a name ClickHouse would not read unquoted, and a cluster without CLICKHOUSE_URL', () => {
    for (const bad of ['a-b', '1x', "x'; DROP", 'a b']) {
      assert.throws(() => loadConfig({ ...scaleOut, CLICKHOUSE_CLUSTER: bad }), /CLICKHOUSE_CLUSTER must be a cluster name/);
    }
    assert.throws(() => loadConfig({ CLICKHOUSE_CLUSTER: 'plumb' }), /CLICKHOUSE_CLUSTER is set but CLICKHOUSE_URL is not/);
  });
});

describe('ClickHouseEventStore on a cluster', { skip: NODES.length === 0 || CLUSTER === undefined ? 'no cluster (scripts/run-cluster-tests.mjs)' : false }, () => {
  const cleanup: ClickHouseEventStore[] = [];
  after(async () => {
    for (const s of cleanup) await s.dropDatabase().catch(() => undefined);
    for (const s of cleanup) await s.close();
  });
  const open = async (database: string, node = 'node-a') => {
    const store = await ClickHouseEventStore.open({ ...testEngine(), database, node, cluster: CLUSTER! });
    cleanup.push(store);
    return store;
  };
  const shards = [...new Set(NODES.map((n) => n.shard))];

  it('refuses an unknown cluster at open, naming the clusters the server has', async () => {
    await assert.rejects(
      ClickHouseEventStore.open({ ...testEngine(), database: freshName(), node: 'n', cluster: 'no_such_cluster' }),
      new RegExp(`CLICKHOUSE_CLUSTER is "no_such_cluster", but the ClickHouse server at .* defines no such cluster .*${CLUSTER}`),
    );
  });

  it('refuses a database made for one server', async () => {
    const database = freshName();
    const conn = testConnection();
    try {
      await conn.exec(`CREATE DATABASE ${database}`);
      await conn.exec(`CREATE TABLE ${database}.hits (site_id String) ENGINE = MergeTree ORDER BY site_id`);
    } finally {
      await conn.close();
    }
    await assert.rejects(open(database), /database plumb_test_\w+ was made for one ClickHouse server \(its hits is a MergeTree table\)/);
  });

  it('creates the local and Distributed tables on every node and migrates once', async () => {
    const database = freshName();
    const stores = await Promise.all([open(database), open(database)]);
    for (const node of NODES) {
      const tables = await onNode(node.url, `SELECT name, engine FROM system.tables WHERE database = '${database}' ORDER BY name FORMAT TSV`);
      assert.ok(tables.includes('hits\tDistributed'), `${node.name}: ${tables.join(', ')}`);
      assert.ok(tables.some((t) => /^hits_local\t(Replicated)?MergeTree$/.test(t)), `${node.name}: ${tables.join(', ')}`);
      assert.ok(tables.some((t) => /^visits_local\t(Replicated)?ReplacingMergeTree$/.test(t)), `${node.name}: ${tables.join(', ')}`);
      // Each node counts the hits inserted into its own local table (day rollups' counts).
      assert.ok(tables.some((t) => /^day_changes_local\t(Replicated)?SummingMergeTree$/.test(t)), `${node.name}: ${tables.join(', ')}`);
      assert.ok(tables.includes('day_changes_view_local\tMaterializedView'), `${node.name}: ${tables.join(', ')}`);
      assert.ok(tables.includes('day_edges_view_local\tMaterializedView'), `${node.name}: ${tables.join(', ')}`);
      assert.ok(tables.includes('day_rollups\tDistributed'), `${node.name}: ${tables.join(', ')}`);
    }
    // Whichever node answers, the cluster's one record of versions (processes opening at once may both record one).
    const versions = await stores[0]!.query('SELECT DISTINCT version FROM schema_migrations ORDER BY version', []);
    assert.deepEqual(versions.map((r) => Number(r.version)), MIGRATIONS.map((m) => m.version));
    for (const node of NODES) {
      const n = await onNode(node.url, `SELECT count(DISTINCT version) FROM ${database}.schema_migrations FORMAT TSV`);
      assert.deepEqual(n, [String(MIGRATIONS.length)], `${node.name} reads every version`);
    }
  });

  it('keeps every version of a visit and all its hits (past midnight too) on one shard', async () => {
    const database = freshName();
    const store = await open(database);
    const visit = (id: bigint, pageviews: number): VisitRecord => ({
      siteId: 'S', visitId: id, visitorId: 7n, startedAt: new Date('2026-03-01T23:50:00Z'), lastSeenAt: new Date(Date.parse('2026-03-01T23:50:00Z') + pageviews * 60_000),
      entryPage: '/', exitPage: `/p${pageviews}`, exitHostname: 'https://e.test', pageviews, events: 0, pathsExact: true, journeyLength: 0, journeyPages: [], ...NO_ATTRIBUTION,
    });
    for (let id = 1n; id <= 40n; id++) {
      // The hit after midnight carries the next day's visitor id, as the ingest writes it.
      await store.write(
        [storedHit('S', '2026-03-01T23:55:00Z', { visitId: id, visitorId: 7n }), storedHit('S', '2026-03-02T00:05:00Z', { visitId: id, visitorId: 8n })],
        [visit(id, 1), visit(id, 2)],
      );
    }
    const perShard = await Promise.all(
      shards.map(async (shard) => {
        const node = NODES.find((n) => n.shard === shard)!;
        const hits = await onNode(node.url, `SELECT DISTINCT visit_id FROM ${database}.hits_local ORDER BY visit_id FORMAT TSV`);
        const visits = await onNode(node.url, `SELECT DISTINCT visit_id FROM ${database}.visits_local ORDER BY visit_id FORMAT TSV`);
        return { hits, visits };
      }),
    );
    for (const { hits, visits } of perShard) assert.deepEqual(hits, visits, 'a visit\'s hits are where its versions are');
    if (shards.length > 1) assert.ok(perShard.every((s) => s.hits.length > 0), 'visits are spread over the shards');
    assert.equal(perShard.reduce((n, s) => n + s.hits.length, 0), 40);
    const listed = await store.listVisits('S');
    assert.equal(listed.length, 40);
    assert.ok(listed.every((v) => v.exitPage === '/p2'), 'FINAL keeps the newest version of each visit');
  });

  it('deletes a site and recovers the hit log on every shard', async () => {
    const database = freshName();
    const store = await open(database, 'node-a');
    await store.write(Array.from({ length: 20 }, (_, i) => storedHit('S', `2026-03-01T10:${String(i).padStart(2, '0')}:00Z`)), [], 10);
    // A batch cut short: its hits on their shards, its mark never written.
    // (The test cluster's profile makes every client's Distributed inserts synchronous, this one's too.)
    const conn = testConnection(database);
    await conn.insert(
      `INSERT INTO hits (site_id, type, ts, visit_id, pathname, log_node, log_seq) VALUES ` +
        Array.from({ length: 20 }, (_, i) => `('S', 'pageview', ${Date.parse('2026-03-01T11:00:00Z') + i}, ${1000 + i}, '/cut', 'node-a', 20)`).join(','),
    );
    await conn.close();
    assert.equal(await store.logWatermark(), 10);
    const hits = await store.listHits('S');
    assert.equal(hits.length, 20);
    assert.ok(hits.every((h) => h.pathname !== '/cut'), 'the unfinished batch is gone from every shard');
    await store.deleteSite('S');
    for (const node of NODES) {
      const [left] = await onNode(node.url, `SELECT count() FROM ${database}.hits_local FORMAT TSV`);
      assert.equal(left, '0', `${node.name} keeps none of the site's hits`);
    }
  });
});
