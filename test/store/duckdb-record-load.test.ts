// The collector's fast path into DuckDB (record files read by DuckDB's JSON reader, EventStore.loadRecords) must
// store exactly the rows the appender path (EventStore.write) stores for the same hits and visit states: the same
// records go both ways into two fresh databases, and every column of every row is compared.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { StoredHit, VisitRecord } from '../../src/domain/hits.js';
import { encodeRecord } from '../../src/ingest/live/hit-record.js';
import { keepNewest } from '../../src/ingest/visits.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { ROW_GROUP_ROWS } from '../../src/store/duckdb/row-group-checkpoints.js';
import { storedHit } from '../helpers/stored-hits.js';

const HOSTILE = ["/it's", '/back\\slash\\', '/nul\u0000byte', '/new\nline\ttab\r', '/ünïcödé ✓ 😀', '/re.*+?()[]{}|^$', "'); DROP TABLE hits; --", '"quoted"'];

const dir = mkdtempSync(join(tmpdir(), 'plumb-record-load-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function freshStore(path = ':memory:') {
  const db = await DuckDatabase.open(path);
  await migrate(db);
  const store = await DuckEventStore.open(db);
  return { db, store, done: async () => (await store.close(), await db.close()) };
}

function visitOf(hit: StoredHit, o: Partial<VisitRecord> = {}): VisitRecord {
  return {
    siteId: hit.siteId,
    visitId: hit.visitId,
    visitorId: hit.visitorId,
    // A visit's start never moves later (the stores rely on it): one start per visit, before all its hits.
    startedAt: new Date(Date.parse('2026-03-01T09:00:00.000Z') + Number(hit.visitId % 1000n) * 1_001),
    lastSeenAt: hit.timestamp,
    entryPage: '/entry',
    exitPage: hit.pathname,
    exitHostname: hit.hostname,
    pageviews: 1,
    events: 0,
    pathsExact: true,
    journeyLength: 4,
    journeyPages: ['/two', '/three, "3"', '/four'],
    referrerHostname: hit.referrerHostname,
    referrerPathname: hit.referrerPathname,
    referrerSource: hit.referrerSource,
    utmCampaign: hit.utmCampaign,
    utmContent: hit.utmContent,
    utmMedium: hit.utmMedium,
    utmSource: hit.utmSource,
    utmTerm: hit.utmTerm,
    ref: hit.ref,
    keyword: hit.keyword,
    ...o,
  };
}

/** Hits of many kinds, and a visit state for each: visits with several hits (versions), hostile text, props, events. */
function batch(siteId: string): { hit: StoredHit; visit: VisitRecord }[] {
  const out: { hit: StoredHit; visit: VisitRecord }[] = [];
  const base = Date.parse('2026-03-01T10:00:00.000Z');
  for (let i = 0; i < 300; i++) {
    const text = HOSTILE[i % HOSTILE.length]!;
    const visitId = i % 7 === 0 ? 18_446_744_073_709_551_615n - BigInt(i % 3) : 9_007_199_254_740_993n + BigInt(i % 40);
    const event = i % 5 === 0;
    const hit = storedHit(siteId, new Date(base + i * 1_337).toISOString(), {
      visitId,
      visitorId: 9_223_372_036_854_775_807n + BigInt(i),
      pathname: `${text}/${i}`,
      city: text,
      utmCampaign: text,
      type: event ? 'event' : 'pageview',
      eventName: event ? `Signup ${text}` : '',
      value: event ? i * 100 : 0,
      firstView: i % 3 !== 0,
      ...(i % 4 === 0 ? { props: [['url', `https://example.com${text}`], [text, 'ünï ✓'], ['n', String(i)]] as const } : {}),
    });
    // Versions grow along the batch; some visits get two states of the same version (the later one wins).
    // Some visits differ from their hit where records leave the visit's value out when it is the hit's: a visit
    // started under the day before's visitor, and (never from the pipeline, but a record must keep it) a campaign of
    // its own.
    const own = i % 6 === 1 ? { visitorId: 5n + BigInt(i), utmSource: `visit ${text}` } : {};
    out.push({ hit, visit: visitOf(hit, { pageviews: 1 + Math.floor(i / 40), events: event ? 1 : 0, exitPage: text, pathsExact: i % 11 !== 0, ...own }) });
  }
  return out;
}

const rowsOf = (db: DuckDatabase, table: string, order: string) =>
  db.serial((q) => q.rows<Record<string, unknown>>(`SELECT * FROM ${table} ORDER BY ${order}`));

describe('DuckDB record files (the collector path) against the appender', () => {
  it('stores the same hits, visits and log watermark, column for column', async () => {
    const a = await freshStore();
    const b = await freshStore();
    const records = batch('SITE');
    // In two batches, as the write buffer and the thread would cut them; the second replaces visits of the first.
    const halves = [records.slice(0, 170), records.slice(170)];
    // The first file starts visits (it holds their first hit, version 1) and the second only continues them.
    const starts = (half: typeof records) => new Set(half.filter((r) => r.visit.pageviews + r.visit.events === 1).map((r) => r.visit.visitId));
    assert.ok(starts(halves[0]!).size > 0 && halves[0]!.some((r) => !starts(halves[0]!).has(r.visit.visitId)));
    assert.ok(starts(halves[1]!).size === 0);
    let seq = 0;
    for (const [i, half] of halves.entries()) {
      const visits = new Map<bigint, VisitRecord>();
      const lines: string[] = [];
      for (const { hit, visit } of half) {
        keepNewest(visits, visit);
        lines.push(encodeRecord(++seq, hit, visit));
      }
      await a.store.write(half.map((r) => r.hit), [...visits.values()], seq);
      const file = join(dir, `batch-${i}.ndjson`);
      writeFileSync(file, lines.join(''));
      await b.store.loadRecords!(file, seq);
      // After each load: a visit the first file starts and the second continues must be there in between too.
      for (const [table, order] of [['hits', 'ts, visit_id, pathname'], ['visits', 'visit_id']] as const) {
        const expected = await rowsOf(a.db, table, order);
        const actual = await rowsOf(b.db, table, order);
        assert.equal(actual.length, expected.length, `${table}: row count after load ${i}`);
        assert.ok(expected.length > 0);
        actual.forEach((row, n) => assert.deepEqual(row, expected[n], `${table} row ${n} after load ${i}`));
      }
    }
    assert.equal(await b.store.logWatermark(), await a.store.logWatermark());
    assert.equal(await b.store.logWatermark(), 300);
    // The props came through both ways (not merely both empty).
    const withProps = await rowsOf(b.db, 'hits', 'ts');
    assert.equal(withProps.filter((r) => Array.isArray(r.prop_keys) && (r.prop_keys as unknown[]).length === 3).length, 75);
    await a.done();
    await b.done();
  });

  it('stores nothing of a file it cannot read, and leaves the watermark where it was', async () => {
    const { store, db, done } = await freshStore();
    const file = join(dir, 'torn.ndjson');
    const [first] = batch('TORN');
    writeFileSync(file, encodeRecord(1, first!.hit, first!.visit) + encodeRecord(2, first!.hit, first!.visit).slice(0, 40));
    await assert.rejects(store.loadRecords!(file, 2));
    assert.equal((await rowsOf(db, 'hits', 'ts')).length, 0);
    assert.equal(await store.logWatermark(), 0);
    await done();
  });

  it('writes the hits out once a row group of them has been loaded, not before (DuckDB\'s own checkpoints wait)', async () => {
    const path = join(dir, 'row-groups.duckdb');
    const { store, db, done } = await freshStore(path);
    const seq = await loadRecordFiles(store, 0, ROW_GROUP_FILES, async (f, last) => {
      if (last) return;
      // Fewer hits than a row group: all still in the write-ahead log (16 MB of it used to be a checkpoint).
      assert.deepEqual((await rowGroups(db)).filter((g) => g.written), [], `row groups written after file ${f}`);
      assert.ok(statSync(`${path}.wal`).size > 16 * 2 ** 20 || f < 3, `the log holds file ${f}`);
    });
    // A row group's worth: every row written to the file (how DuckDB splits them into groups is its own), the log
    // emptied.
    const written = await rowGroups(db);
    assert.equal(written.reduce((n, g) => n + Number(g.n), 0), seq);
    assert.ok(written.every((g) => g.written));
    assert.ok(!existsSync(`${path}.wal`) || statSync(`${path}.wal`).size < 2 ** 20);
    assert.equal(store.checkpoints.taken, 1);
    assert.equal((await rowsOf(db, 'hits', 'ts')).length, seq);
    await done();
  });

  it('takes its checkpoint while a report that began before the loads is still reading (the watermark is never updated in place)', async () => {
    const path = join(dir, 'under-reports.duckdb');
    const { store, db, done } = await freshStore(path);
    // The watermark's row exists before the loads below, so that confirming it again could be an update.
    const first = await loadRecordFiles(store, 0, 1);
    assert.equal(await store.logWatermark(), first);
    // A report's transaction, open across every load and the checkpoint that follows them. DuckDB refuses to
    // checkpoint while a transaction older than a committed UPDATE runs: with the watermark updated in each load's
    // transaction, the checkpoint failed here.
    const report = await db.connection();
    await report.serial(async (q) => {
      await q.exec('BEGIN TRANSACTION');
      assert.equal((await q.rows<{ n: bigint }>('SELECT count(*) AS n FROM hits'))[0]!.n, BigInt(first));
    });
    // The rest of a row group: its last load checkpoints.
    const seq = await loadRecordFiles(store, first, ROW_GROUP_FILES - 1);
    assert.equal(store.checkpoints.taken, 1);
    assert.ok((await rowGroups(db)).every((g) => g.written));
    await report.serial(async (q) => {
      // The report still sees what it saw when it began.
      assert.equal((await q.rows<{ n: bigint }>('SELECT count(*) AS n FROM hits'))[0]!.n, BigInt(first));
      await q.exec('COMMIT');
    });
    assert.equal(await store.logWatermark(), seq);
    // A load confirming less than the watermark leaves it where it was.
    const file = join(dir, 'late.ndjson');
    const [late] = batch('GROUPS');
    writeFileSync(file, encodeRecord(1, late!.hit, late!.visit));
    await store.loadRecords!(file, 1);
    assert.equal(await store.logWatermark(), seq);
    await done();
  });

  it('keeps no memory for the visit states it staged once they are stored', async () => {
    const { store, db, done } = await freshStore(join(dir, 'staging.duckdb'));
    // What DuckDB holds for in-memory tables once the file's tables are checkpointed: the staging table's last batch.
    const inMemoryTables = async () => {
      await db.serial((q) => q.exec('CHECKPOINT'));
      const [held] = await db.serial((q) =>
        q.rows<{ bytes: bigint }>("SELECT memory_usage_bytes AS bytes FROM duckdb_memory() WHERE tag = 'IN_MEMORY_TABLE'"),
      );
      return Number(held!.bytes);
    };
    // Loads of 20,000 hits, each a visit of its own: 20,000 visit states staged a load.
    const seq = await loadRecordFiles(store, 0, 2);
    const afterTwo = await inMemoryTables();
    await loadRecordFiles(store, seq, 8);
    const afterTen = await inMemoryTables();
    // A staging table emptied with DELETE kept every state it was ever given: about four times as much after ten.
    assert.ok(afterTen < afterTwo * 1.5, `in-memory tables: ${afterTwo} bytes after two loads, ${afterTen} after ten`);
    assert.equal((await rowsOf(db, 'visits', 'visit_id')).length, 200_000);
    await done();
  });
});

/** The hits table's row groups: their rows, and whether they are written to the database file. */
function rowGroups(db: DuckDatabase) {
  return rowsOf(
    db,
    "(SELECT row_group_id, sum(count) AS n, bool_and(persistent) AS written FROM pragma_storage_info('hits') WHERE column_path = '[0]' GROUP BY row_group_id)",
    'row_group_id',
  );
}

/** Hits in each record file loadRecordFiles loads. */
const FILE_HITS = 20_000;
/** Files of FILE_HITS that make a row group's worth of hits. */
const ROW_GROUP_FILES = Math.ceil(ROW_GROUP_ROWS / FILE_HITS);

/**
 * Loads `files` record files of FILE_HITS hits, each a visit of its own, log sequence numbers from `seq` + 1, calling
 * `afterFile` after each load; answers the last sequence number.
 */
async function loadRecordFiles(
  store: DuckEventStore,
  seq: number,
  files: number,
  afterFile?: (f: number, last: boolean) => Promise<void>,
): Promise<number> {
  const [sample] = batch('GROUPS');
  for (let f = 0; f < files; f++) {
    const lines: string[] = [];
    for (let i = 0; i < FILE_HITS; i++) {
      seq++;
      const hit = { ...sample!.hit, visitId: BigInt(seq), timestamp: new Date(Date.parse('2026-03-02T00:00:00Z') + seq) };
      lines.push(encodeRecord(seq, hit, { ...sample!.visit, visitId: hit.visitId, startedAt: hit.timestamp, lastSeenAt: hit.timestamp }));
    }
    const file = join(dir, `group-${seq}.ndjson`);
    writeFileSync(file, lines.join(''));
    await store.loadRecords!(file, seq);
    await afterFile?.(f, f === files - 1);
  }
  return seq;
}
