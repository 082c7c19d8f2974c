// One EventStore contract, two databases: the embedded DuckDB file and ClickHouse (the scale-out event store).
// Each ClickHouse test gets a fresh database, dropped afterwards.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { VisitRecord } from '../../src/domain/hits.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import type { EventStore } from '../../src/store/types.js';
import { TEST_CLICKHOUSE, testEngine } from '../helpers/clickhouse.js';
import { writeCsvRows } from '../../src/store/event-csv.js';
import { storedHit as hit } from '../helpers/stored-hits.js';


interface Backend {
  name: string;
  open(): Promise<{ store: EventStore; done: () => Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'DuckDB',
    async open() {
      const db = await DuckDatabase.open(':memory:');
      await migrate(db);
      const store = await DuckEventStore.open(db);
      return { store, done: async () => (await store.close(), await db.close()) };
    },
  },
  {
    name: `ClickHouse (${TEST_CLICKHOUSE})`,
    async open() {
      const store = await ClickHouseEventStore.open({ ...testEngine(), database: `plumb_test_${randomBytes(6).toString('hex')}`, node: 'node-a' });
      return { store, done: async () => (await store.dropDatabase(), await store.close()) };
    },
  },
];

// Values that have broken SQL text before: quotes, backslashes, NUL, newlines, non-ASCII, regex metacharacters.
const HOSTILE = ["/it's", '/back\\slash\\', '/nul\u0000byte', '/new\nline\ttab\r', '/ünïcödé ✓ 😀', '/re.*+?()[]{}|^$', "'); DROP TABLE hits; --"];

function visit(siteId: string, visitId: bigint, o: Partial<VisitRecord> = {}): VisitRecord {
  return {
    siteId,
    visitId,
    visitorId: 9_223_372_036_854_775_809n,
    startedAt: new Date('2026-03-01T10:00:00.123Z'),
    lastSeenAt: new Date('2026-03-01T10:05:00.456Z'),
    entryPage: '/a',
    exitPage: '/b',
    exitHostname: 'https://example.com',
    pageviews: 2,
    events: 0,
    pathsExact: true,
    journeyLength: 5,
    journeyPages: ['/2', '/3', '/4', '/5'],
    referrerHostname: 'https://t.co',
    referrerPathname: '/x',
    referrerSource: 'Twitter',
    utmCampaign: "it's",
    utmContent: 'c\\d',
    utmMedium: 'social',
    utmSource: 'tw',
    utmTerm: 'ünï',
    ref: 'r',
    keyword: 'k',
    ...o,
  };
}

for (const backend of backends) {
  describe(`EventStore contract: ${backend.name}`, () => {
    let store: EventStore;
    let done: () => Promise<void>;
    before(async () => ({ store, done } = await backend.open()));
    after(() => done());

    it('stores hits whole: every attribute, millisecond times, 64-bit ids, hostile text', async () => {
      const site = 'SITEHITS';
      const hits = [
        hit(site, '2026-03-07T04:59:59.999Z'),
        hit(site, '2026-03-07T05:00:00.001Z', { type: 'event', eventName: "Buy 'now' \\ \u0000", value: 12_345, firstView: false }),
        ...HOSTILE.map((p, i) => hit(site, `2026-03-08T00:00:0${i}.500Z`, { pathname: p, city: p, utmTerm: p })),
      ];
      await store.write(hits, []);
      assert.deepEqual(await store.listHits(site), hits);
    });

    it('stores custom properties whole: order, hostile keys and values, prototype names, none at all', async () => {
      const site = 'SITEPROP';
      const hostile = HOSTILE.map((v, i) => [`k${i}${v}`, v] as const);
      const hits = [
        hit(site, '2026-03-09T00:00:00Z', { type: 'event', eventName: 'Signup', props: [['plan', 'pro'], ['__proto__', 'x'], ['constructor', '{}']] }),
        hit(site, '2026-03-09T00:00:01Z', { props: hostile }),
        hit(site, '2026-03-09T00:00:02Z', { props: [['k'.repeat(300), 'v'.repeat(2000)], ['ü', '😀']] }),
        hit(site, '2026-03-09T00:00:03Z'),
      ];
      await store.write(hits, []);
      assert.deepEqual(await store.listHits(site), hits);
    });

    it('loads rows from CSV files (where the store can) exactly as it stores them one by one', async (t) => {
      const writeCsv = store.writeCsv?.bind(store);
      if (!writeCsv) return t.skip('this store takes imports through write()');
      const site = 'SITECSVS';
      const hits = [
        hit(site, '2026-03-10T04:59:59.999Z', { referrerSource: '', utmCampaign: 'he said "hi", ok', props: [['plan', 'a,"b"'], ['n', '1\n2']] }),
        hit(site, '2026-03-10T05:00:00.001Z', { type: 'event', eventName: "Buy 'now' \\ \u0000", value: 12_345, firstView: false, visitorId: 0n }),
        ...HOSTILE.map((p, i) => hit(site, `2026-03-10T00:00:0${i}.500Z`, { pathname: p, city: p, utmTerm: p, props: [[p, p]] })),
      ];
      const first = visit(site, 88n, { pageviews: 1, exitPage: '/a', lastSeenAt: new Date('2026-03-01T10:00:00.123Z') });
      const second = visit(site, 88n, { pageviews: 2, entryPage: HOSTILE[3]!, exitPage: HOSTILE[4]!, utmCampaign: '', keyword: 'x,"y"' });
      const appended = visit(site, 99n, { startedAt: new Date('2026-02-28T23:00:00Z'), exitPage: "/it's, \"quoted\"" });
      const dir = await mkdtemp(join(tmpdir(), 'plumb-csv-'));
      try {
        await writeCsv(await writeCsvRows(dir, 'a', hits.slice(0, 3), [first]));
        await writeCsv(await writeCsvRows(dir, 'b', hits.slice(3), [second, visit(site, 18_446_744_073_709_551_615n)]));
        // A visit no load stored before is appended (and a replaced one beside it still replaced).
        await writeCsv(await writeCsvRows(dir, 'c', [], [{ ...second, pageviews: 3 }], [appended]));
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
      const byTime = [...hits].sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime());
      assert.deepEqual(await store.listHits(site), byTime);
      // Two visits start at the same time: in id order.
      const byId = (vs: VisitRecord[]) => vs.sort((a, b) => (a.visitId < b.visitId ? -1 : 1));
      assert.deepEqual(byId(await store.listVisits(site)), [{ ...second, pageviews: 3 }, appended, visit(site, 18_446_744_073_709_551_615n)]);
      // Raw rows too: lists only for hits with properties, NULL (as write() stores it) for the rest.
      const raw = await store.query("SELECT count(*)::INTEGER AS n FROM hits WHERE site_id = 'SITECSVS' AND prop_keys IS NULL AND prop_values IS NULL", []);
      assert.equal(raw[0]!.n, hits.filter((h) => !h.props).length);
    });

    it('lists a site\'s hits in time order, and only that site\'s', async () => {
      const site = 'SITEORDR';
      const hits = [hit(site, '2026-04-02T00:00:00Z'), hit(site, '2026-01-31T23:59:59.999Z'), hit(site, '2026-02-01T00:00:00Z')];
      // Two batches and three months: order comes from the time, not from how or where rows were written.
      await store.write(hits.slice(0, 1), []);
      await store.write([...hits.slice(1), hit('OTHERSIT', '2026-02-01T00:00:00Z')], []);
      const listed = await store.listHits(site);
      assert.deepEqual(listed.map((h) => h.timestamp.toISOString()), ['2026-01-31T23:59:59.999Z', '2026-02-01T00:00:00.000Z', '2026-04-02T00:00:00.000Z']);
      assert.deepEqual(await store.listHits('NOSUCHSI'), []);
    });

    it('keeps the newest state of a visit', async () => {
      const site = 'SITEVISI';
      const first = visit(site, 77n, { pageviews: 1, exitPage: '/a', lastSeenAt: new Date('2026-03-01T10:00:00.123Z') });
      const second = visit(site, 77n, { pageviews: 2, exitPage: "/b'\\", lastSeenAt: new Date('2026-03-01T10:05:00.456Z') });
      const third = visit(site, 77n, { pageviews: 2, events: 1, pathsExact: false });
      await store.write([], [first]);
      await store.write([], [second]);
      assert.deepEqual(await store.listVisits(site), [second]);
      await store.write([], [third, visit(site, 78n, { startedAt: new Date('2026-03-01T09:00:00Z') })]);
      const visits = await store.listVisits(site);
      assert.deepEqual(visits.map((v) => [v.visitId, v.events, v.pathsExact]), [[78n, 0, true], [77n, 1, false]], 'by start time');
    });

    it('finds visits seen at or after a time, on every site', async () => {
      const at = new Date('2026-05-01T12:00:00.500Z');
      await store.write([], [
        visit('SEENSIT1', 101n, { lastSeenAt: new Date(at.getTime() - 1) }),
        visit('SEENSIT1', 102n, { lastSeenAt: at }),
        visit('SEENSIT2', 103n, { lastSeenAt: new Date(at.getTime() + 1) }),
      ]);
      const seen = (await store.visitsSeenSince(at)).filter((v) => v.siteId.startsWith('SEENSIT'));
      assert.deepEqual(seen.map((v) => v.visitId).sort(), [102n, 103n]);
    });

    it('records the hit log watermark with the batches', async () => {
      assert.equal(await store.logWatermark(), 0);
      await store.write([hit('SITEWMRK', '2026-03-01T00:00:00Z')], [], 5);
      assert.equal(await store.logWatermark(), 5);
      await store.write([hit('SITEWMRK', '2026-03-01T00:00:01Z')], []);
      assert.equal(await store.logWatermark(), 5, 'a batch without a sequence number leaves it');
      await store.write([], [], 9);
      assert.equal(await store.logWatermark(), 9, 'a batch without hits still confirms the log');
      await store.write([hit('SITEWMRK', '2026-03-01T00:00:02Z')], [], 7);
      assert.equal(await store.logWatermark(), 9, 'never moves back');
    });

    it('deletes a site\'s hits and visits, and nothing else', async () => {
      await store.write(
        [hit('SITEDEL1', '2026-03-01T00:00:00Z'), hit('SITEDEL1', '2026-06-01T00:00:00Z'), hit('SITEDEL2', '2026-03-01T00:00:00Z')],
        [visit('SITEDEL1', 201n), visit('SITEDEL2', 202n)],
      );
      await store.deleteSite('SITEDEL1');
      assert.deepEqual(await store.listHits('SITEDEL1'), []);
      assert.deepEqual(await store.listVisits('SITEDEL1'), []);
      assert.equal((await store.listHits('SITEDEL2')).length, 1);
      assert.equal((await store.listVisits('SITEDEL2')).length, 1);
    });

    it('answers queries with 64-bit counts as bigint', async () => {
      await store.write([hit('SITEQURY', '2026-03-01T00:00:00Z'), hit('SITEQURY', '2026-03-01T00:00:01Z')], []);
      const rows = await store.query("SELECT count(*) AS n, max(pathname) AS p FROM hits WHERE site_id = 'SITEQURY'", []);
      assert.equal(rows.length, 1);
      assert.equal(rows[0]!.n, 2n);
      assert.equal(typeof rows[0]!.p, 'string');
    });

    it('treats an empty batch as nothing', async () => {
      const before = await store.logWatermark();
      await store.write([], []);
      assert.equal(await store.logWatermark(), before);
    });
  });
}

// A report with a prelude (CompiledQuery.prelude) binds the prelude's answer into its statement: both must read one
// state of the data, or a visit written between them could be counted by one and missed by the other.
describe('DuckEventStore.queryAfter', () => {
  it('runs both statements on one snapshot: hits written between them are seen by neither', async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db);
    const store = await DuckEventStore.open(db);
    try {
      await store.write([hit('SNAPSHOT', '2026-03-01T10:00:00Z')], []);
      const count = { sql: "SELECT count(*) AS n FROM hits WHERE site_id = 'SNAPSHOT'", params: [] };
      let seenFirst = -1;
      const rows = await store.queryAfter(count, async (first) => {
        seenFirst = Number(first[0]!.n);
        // Committed by the writer's connection while the reader's transaction is open.
        await store.write([hit('SNAPSHOT', '2026-03-01T10:01:00Z')], []);
        assert.equal(Number((await store.query(count.sql, []))[0]!.n), 2, 'the write is committed');
        return count;
      });
      assert.equal(seenFirst, 1);
      assert.equal(Number(rows[0]!.n), 1, 'the second statement reads the first one’s snapshot');
      assert.equal(Number((await store.queryAfter(count, () => count))[0]!.n), 2, 'the next pair reads the new state');
    } finally {
      await store.close();
      await db.close();
    }
  });
});
