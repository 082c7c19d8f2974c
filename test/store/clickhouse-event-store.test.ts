// What the ClickHouse event store adds to the EventStore contract: the one literal function (checked by
// ClickHouse itself reading every literal back), connection URLs, concurrent migrations, visit versions written
// out of order by different processes, a hit-log watermark per node, batches retried after a connection reset, and
// batches built as text on the ingest thread.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { NO_ATTRIBUTION, type VisitRecord } from '../../src/domain/hits.js';
import { InsertBatches, type InsertBatch } from '../../src/ingest/live/insert-batches.js';
import { keepNewest } from '../../src/ingest/visits.js';
import { parseClickHouseUrl } from '../../src/store/clickhouse/client.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { identifier, sqlLiteral } from '../../src/store/clickhouse/literal.js';
import { MIGRATIONS } from '../../src/store/clickhouse/migrations.js';
import { NewerSchemaError } from '../../src/store/newer-schema.js';
import { httpTransport, type OpenTransport } from '../../src/store/clickhouse/transport.js';
import { testConnection, testEngine } from '../helpers/clickhouse.js';
import { storedHit } from '../helpers/stored-hits.js';

const freshName = () => `plumb_test_${randomBytes(6).toString('hex')}`;

describe('sqlLiteral on ClickHouse', () => {
  const conn = testConnection();
  after(() => conn.close());

  const STRINGS = [
    '', "'", "''", '\\', "\\'", "'\\", '\\\\\'', 'a\u0000b', '\u0000', 'new\nline', 'cr\rtab\t', '\\0', '\\n',
    'ünïcödé ✓ 😀', '\u2028\u2029', '%_*', '.*+?()[]{}|^$', "'); DROP TABLE hits; --", '$1 ? :name {x:String}',
    '\x7f\x01\x1b', 'a'.repeat(5000),
  ];

  it('reads every string back exactly', async () => {
    const sql = `SELECT ${STRINGS.map((s, i) => `${sqlLiteral(s)} AS s${i}`).join(', ')}`;
    const [row] = await conn.rows(sql);
    STRINGS.forEach((s, i) => assert.equal(row![`s${i}`], s, JSON.stringify(s)));
  });

  it('reads numbers, 64-bit integers, booleans, dates and NULL back', async () => {
    const values = [0, 1, -1, 42.5, -0.125, 1e21, 2 ** 53, 18_446_744_073_709_551_615n, -9_223_372_036_854_775_808n, true, false];
    const [row] = await conn.rows(`SELECT ${values.map((v, i) => `toString(${sqlLiteral(v)}) AS v${i}`).join(', ')}, ${sqlLiteral(null)} AS nothing`);
    assert.deepEqual(
      values.map((_, i) => row![`v${i}`]),
      ['0', '1', '-1', '42.5', '-0.125', '1e21', '9007199254740992', '18446744073709551615', '-9223372036854775808', '1', '0'],
    );
    assert.equal(row!.nothing, null);
    const at = new Date('2026-03-07T04:59:59.999Z');
    const [t] = await conn.rows(`SELECT ${sqlLiteral(at)} = 1772859599999 AS same`);
    assert.equal(t!.same, 1, 'a Date is its epoch milliseconds, as times are stored');
  });

  it('refuses what has no exact literal', () => {
    for (const v of [NaN, Infinity, -Infinity]) assert.throws(() => sqlLiteral(v), RangeError);
    assert.throws(() => sqlLiteral(new Date(NaN)), RangeError);
    assert.throws(() => identifier('plumb; DROP'), RangeError);
    assert.throws(() => identifier('`x`'), RangeError);
  });
});

describe('ClickHouse connection URLs', () => {
  it('reads credentials and the database, defaulting to plumb', () => {
    assert.deepEqual(parseClickHouseUrl('http://u%40x:p%3Ass@ch.internal:8123/analytics'), {
      origin: 'http://ch.internal:8123', username: 'u@x', password: 'p:ss', database: 'analytics',
    });
    assert.deepEqual(parseClickHouseUrl('https://ch.internal:8443'), { origin: 'https://ch.internal:8443', username: 'default', password: '', database: 'plumb' });
    assert.equal(parseClickHouseUrl('http://h:1/a', 'b').database, 'b');
    assert.throws(() => parseClickHouseUrl('tcp://h:9000'));
    assert.throws(() => parseClickHouseUrl('http://h:1/a-b'));
  });
});

describe('ClickHouseEventStore', () => {
  const cleanup: ClickHouseEventStore[] = [];
  after(async () => {
    for (const s of cleanup) await s.dropDatabase().catch(() => undefined);
    for (const s of cleanup) await s.close();
  });
  const open = async (database: string, node = 'node-a') => {
    const store = await ClickHouseEventStore.open({ ...testEngine(), database, node });
    cleanup.push(store);
    return store;
  };

  it('migrates once when several processes open a new database at the same moment', async () => {
    const database = freshName();
    const stores = await Promise.all([open(database), open(database), open(database), open(database)]);
    const rows = await stores[0]!.query('SELECT version, count() AS n FROM schema_migrations GROUP BY version ORDER BY version', []);
    assert.deepEqual(rows.map((r) => Number(r.version)), MIGRATIONS.map((m) => m.version));
    // On a cluster (CLICKHOUSE_CLUSTER) each table also has its node-local `<name>_local` under the Distributed one,
    // and the views that count the days' hits are on the local tables only.
    const tables = await stores[0]!.query(`SELECT name FROM system.tables WHERE database = '${database}' AND NOT endsWith(name, '_local') ORDER BY name`, []);
    const views = stores[0]!.cluster ? [] : ['day_changes_view', 'day_edges_view'];
    assert.deepEqual(tables.map((t) => t.name), ['day_changes', ...views, 'day_rollups', 'hit_log_marks', 'hits', 'imported_daily', 'schema_migrations', 'visits']);
    // A later open finds nothing to do and still works.
    const again = await open(database);
    assert.deepEqual(await again.listHits('X'), []);
  });

  it('refuses a database a newer release migrated, before changing anything', async () => {
    const database = freshName();
    const first = await open(database);
    const known = MIGRATIONS.at(-1)!.version;
    const conn = testConnection(database);
    await conn.exec(`INSERT INTO schema_migrations VALUES (${known + 1}, 'from the future', now())`);
    await conn.close();
    await assert.rejects(open(database), (err: unknown) => {
      assert.ok(err instanceof NewerSchemaError, String(err));
      assert.match(err.message, new RegExp(`^ClickHouse \\(CLICKHOUSE_URL, database ${database}\\): the database has schema version ${known + 1}, written by a newer release of Plumb; this release knows versions up to ${known}\\.`));
      return true;
    });
    const versions = await first.query('SELECT DISTINCT version FROM schema_migrations ORDER BY version', []);
    assert.deepEqual(versions.map((r) => Number(r.version)), [...MIGRATIONS.map((m) => m.version), known + 1], 'left as it was');
  });

  it('keeps the highest version of a visit whichever order processes wrote them in', async () => {
    const database = freshName();
    const [a, b] = [await open(database, 'node-a'), await open(database, 'node-b')];
    const v = (pageviews: number, events: number, exitPage: string): VisitRecord => ({
      siteId: 'S', visitId: 5n, visitorId: 6n, startedAt: new Date(1000), lastSeenAt: new Date(1000 + pageviews), entryPage: '/',
      exitPage, exitHostname: 'https://e.test', pageviews, events, pathsExact: true, journeyLength: 0, journeyPages: [], ...NO_ATTRIBUTION,
    });
    // Process b wrote the visit's third hit before process a's write of the second arrived.
    await b.write([], [v(2, 1, '/third')]);
    await a.write([], [v(2, 0, '/second')]);
    assert.deepEqual((await a.listVisits('S')).map((x) => x.exitPage), ['/third']);
    assert.deepEqual((await b.visitsSeenSince(new Date(0))).map((x) => x.exitPage), ['/third']);
    // Merged on disk, it is still the one row.
    await a.query('OPTIMIZE TABLE visits FINAL', []).catch(() => undefined);
    assert.deepEqual((await a.listVisits('S')).map((x) => x.exitPage), ['/third']);
  });

  it('keeps a hit-log watermark per node', async () => {
    const database = freshName();
    const [a, b] = [await open(database, 'node-a'), await open(database, 'node-b')];
    await a.write([], [], 40);
    await b.write([], [], 3);
    assert.equal(await a.logWatermark(), 40);
    assert.equal(await b.logWatermark(), 3);
  });

  it('removes the hits of a batch whose mark never landed, so the replay stores them exactly once', async () => {
    const database = freshName();
    const a = await open(database, 'node-a');
    const other = await open(database, 'node-b');
    const hit = (pathname: string, at: string) => storedHit('S', at, { pathname });
    await a.write([hit('/committed', '2026-01-31T23:59:59Z')], [], 10);
    await other.write([hit('/other-node', '2026-02-01T00:00:00Z')], [], 30);
    // A crash after the batch's hits (here: one of its two month parts) but before its mark: the hits are there,
    // tagged with sequence 20, and no mark says the batch was stored.
    const conn = testConnection(database);
    await conn.exec(
      `INSERT INTO hits (site_id, type, ts, pathname, log_node, log_seq) VALUES ('S', 'pageview', ${Date.parse('2026-02-01T00:00:01Z')}, '/cut-short', 'node-a', 20)`,
    );
    await conn.close();
    assert.equal(await a.logWatermark(), 10, 'the unfinished batch is not confirmed');
    assert.deepEqual((await a.listHits('S')).map((h) => h.pathname), ['/committed', '/other-node'], 'and its stored part is gone');
    // The replay writes the batch again, mark included.
    await a.write([hit('/cut-short', '2026-02-01T00:00:01Z')], [], 20);
    assert.equal(await a.logWatermark(), 20);
    assert.deepEqual((await a.listHits('S')).map((h) => h.pathname), ['/committed', '/other-node', '/cut-short']);
  });

  it('stores a batch retried after a connection reset exactly once, wherever the reset fell', async () => {
    // The engine under test behind a transport whose connection can be reset around one statement: before it
    // reaches ClickHouse (nothing of it stored) or after (stored, the answer lost), as an outage does.
    type Fault = { when: RegExp; after: boolean } | undefined;
    let fault: Fault;
    const reset = () => Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    const base = testEngine();
    const real = base.transport ?? httpTransport;
    const faulty: OpenTransport = (target, useDatabase) => {
      const t = real(target, useDatabase);
      const insert = async (sql: string) => {
        const f = fault;
        if (f && f.when.test(sql)) {
          fault = undefined;
          if (!f.after) throw reset();
          await t.insert(sql);
          throw reset();
        }
        await t.insert(sql);
      };
      return { query: (sql) => t.query(sql), command: (sql) => t.command(sql), insert, close: () => t.close() };
    };
    const hit = (pathname: string) => storedHit('S', '2026-02-01T10:00:00Z', { pathname });
    const cases: { name: string; fault: Fault }[] = [
      { name: 'hits refused', fault: { when: /^INSERT INTO hits/, after: false } },
      { name: 'hits stored, answer lost', fault: { when: /^INSERT INTO hits/, after: true } },
      { name: 'hits stored, mark refused', fault: { when: /^INSERT INTO hit_log_marks/, after: false } },
      { name: 'mark stored, answer lost', fault: { when: /^INSERT INTO hit_log_marks/, after: true } },
    ];
    for (const c of cases) {
      const store = await ClickHouseEventStore.open({ ...base, transport: faulty, database: freshName(), node: 'node-a' });
      cleanup.push(store);
      await store.write([hit('/first')], [], 1);
      fault = c.fault;
      const batch = [hit('/cut'), hit('/cut-too')];
      await assert.rejects(store.write(batch, [], 2), /ECONNRESET/, c.name);
      // The write buffer keeps the batch and writes it again once ClickHouse answers; the next batch follows.
      await store.write(batch, [], 2);
      await store.write([hit('/next')], [], 3);
      assert.deepEqual((await store.listHits('S')).map((h) => h.pathname).sort(), ['/cut', '/cut-too', '/first', '/next'], c.name);
      assert.equal(await store.logWatermark(), 3, c.name);
    }
  });

  it('stores batches built on the ingest thread (InsertBatches) exactly as write() stores the same rows', async () => {
    const [viaWrite, viaText] = [await open(freshName(), 'node-a'), await open(freshName(), 'node-a')];
    // Text that needs escaping, properties, events with values, and visits whose states arrive out of order.
    const odd = "it's a \\ back\nslash\t'tab' \u0000 ünï 😀";
    const records = Array.from({ length: 8 }, (_, i) => {
      const hit = storedHit('S', `2026-03-0${1 + (i % 3)}T10:00:0${i}Z`, {
        visitId: BigInt(100 + (i % 3)),
        pathname: `/p${i}/${odd}`,
        city: odd,
        ...(i % 4 === 3 ? { type: 'event' as const, eventName: `Signup ${odd}`, value: 1299, firstView: false } : {}),
        ...(i % 2 === 0 ? { props: [['plan', odd], ['author', `a${i}`]] as [string, string][] } : {}),
      });
      const visit: VisitRecord = {
        siteId: 'S', visitId: hit.visitId, visitorId: 18_446_744_073_709_551_615n, startedAt: new Date(1000), lastSeenAt: new Date(2000 + i),
        entryPage: '/p0', exitPage: hit.pathname, exitHostname: 'https://e.test', pageviews: i === 7 ? 1 : 1 + i, events: 0, pathsExact: i !== 5, journeyLength: i === 5 ? 0 : 2, journeyPages: i === 5 ? [] : [`/j${i}`],
        ...NO_ATTRIBUTION, utmSource: odd,
      };
      // The last three were imported (not logged): sequence 0.
      return { hit, visit, seq: i < 5 ? 11 + i : 0 };
    });
    const batches: InsertBatch[] = [];
    const gather = new InsertBatches('node-a', (b) => batches.push(b), { maxRecords: 3 });
    for (const r of records) gather.add(r.hit, r.visit, r.seq);
    gather.cut();
    assert.deepEqual(batches.map((b) => [b.hits, b.seq]), [[3, 13], [3, 15], [2, 0]]);
    for (const b of batches) await viaText.writeInserts(b.inserts, b.seq > 0 ? b.seq : undefined);
    // The write buffer's way: the same batches as objects, each with the newest state of its visits.
    for (let i = 0; i < records.length; i += 3) {
      const batch = records.slice(i, i + 3);
      const visits = new Map<bigint, VisitRecord>();
      for (const r of batch) keepNewest(visits, r.visit);
      const seq = Math.max(...batch.map((r) => r.seq));
      await viaWrite.write(batch.map((r) => r.hit), [...visits.values()], seq > 0 ? seq : undefined);
    }
    const everything = async (store: ClickHouseEventStore) => ({
      hits: await store.query('SELECT * FROM hits ORDER BY pathname', []),
      visits: await store.query('SELECT * FROM visits ORDER BY visit_id, version', []),
      marks: await store.query('SELECT * FROM hit_log_marks ORDER BY seq', []),
    });
    const stored = await everything(viaText);
    assert.equal(stored.hits.length, 8);
    assert.deepEqual(stored, await everything(viaWrite));
    assert.equal(await viaText.logWatermark(), 15);
  });

  it('takes no bound parameters', async () => {
    const store = await open(freshName());
    await assert.rejects(store.query('SELECT 1', ['x']), /no bound parameters/);
  });

  it('drops its database', async () => {
    const database = freshName();
    const store = await open(database);
    await store.dropDatabase();
    const probe = testConnection();
    const [row] = await probe.rows(`SELECT count() AS n FROM system.databases WHERE name = '${database}'`);
    await probe.close();
    assert.equal(row!.n, 0n);
  });
});
