// WriteBuffer over a real DuckDB EventStore: flush by size and time, close, visit coalescing, back-pressure, faults.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { NO_ATTRIBUTION, type StoredHit, type VisitRecord } from '../../../src/domain/hits.js';
import { WriteBuffer, type WriteBufferOptions } from '../../../src/ingest/live/write-buffer.js';
import { DuckDatabase } from '../../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../../src/store/duckdb/event-store.js';
import { migrate } from '../../../src/store/duckdb/migrations.js';
import type { EventStore } from '../../../src/store/types.js';

const SITE = 'SITEAAAA';
const T0 = Date.parse('2026-03-04T12:00:00Z');

function storedHit(n: number, visitId = BigInt(n + 1)): StoredHit {
  return {
    siteId: SITE,
    type: 'pageview',
    firstView: true,
    timestamp: new Date(T0 + n * 1000),
    visitorId: 77n,
    visitId,
    hostname: 'https://example.com',
    pathname: `/p${n}`,
    referrerHostname: '',
    referrerPathname: '',
    referrerSource: '',
    utmCampaign: '',
    utmContent: '',
    utmMedium: '',
    utmSource: '',
    utmTerm: '',
    ref: '',
    keyword: '',
    browser: 'Chrome',
    operatingSystem: 'Windows',
    deviceType: 'Desktop',
    countryCode: 'GB',
    region: '',
    state: '',
    city: '',
    eventName: '',
    value: 0,
  };
}

function visitOf(hit: StoredHit, overrides: Partial<VisitRecord> = {}): VisitRecord {
  return {
    siteId: hit.siteId,
    visitId: hit.visitId,
    visitorId: hit.visitorId,
    startedAt: hit.timestamp,
    lastSeenAt: hit.timestamp,
    entryPage: hit.pathname,
    exitPage: hit.pathname,
    exitHostname: hit.hostname,
    pageviews: 1,
    events: 0,
    pathsExact: true,
    journeyLength: 1,
    journeyPages: [],
    ...NO_ATTRIBUTION,
    ...overrides,
  };
}

/** Polls until `check` is true (no timing assertion: the test runner's timeout is the only limit). */
async function until(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await sleep(5);
}

const pathnames = async (store: EventStore) => (await store.listHits(SITE)).map((h) => h.pathname).sort();
const range = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `/p${from + i}`).sort();

describe('WriteBuffer', () => {
  let db: DuckDatabase;
  let store: DuckEventStore;
  const buffers: WriteBuffer[] = [];
  const open = (s: EventStore, options: WriteBufferOptions) => {
    const b = new WriteBuffer(s, options);
    buffers.push(b);
    return b;
  };

  beforeEach(async () => {
    db = await DuckDatabase.open(':memory:');
    await migrate(db);
    store = await DuckEventStore.open(db);
  });
  afterEach(async () => {
    for (const b of buffers.splice(0)) await b.close().catch(() => undefined);
    await db.close();
  });

  it('writes a batch as soon as batchSize hits wait, without a flush call', async () => {
    const buffer = open(store, { batchSize: 3, flushIntervalMs: 3_600_000 });
    for (let i = 0; i < 2; i++) buffer.add(storedHit(i), visitOf(storedHit(i)));
    assert.equal(buffer.pending, 2);
    buffer.add(storedHit(2), visitOf(storedHit(2)));
    await until(async () => (await store.listHits(SITE)).length === 3);
    assert.deepEqual(await pathnames(store), range(3));
    assert.equal((await store.listVisits(SITE)).length, 3);
    await until(async () => buffer.stats.written === 3);
    assert.equal(buffer.pending, 0);
  });

  it('writes whatever waits every flushIntervalMs', async () => {
    const buffer = open(store, { batchSize: 1000, flushIntervalMs: 50 });
    buffer.add(storedHit(0), visitOf(storedHit(0)));
    await until(async () => (await store.listHits(SITE)).length === 1);
    buffer.add(storedHit(1), visitOf(storedHit(1)));
    await until(async () => (await store.listHits(SITE)).length === 2);
    assert.deepEqual(await pathnames(store), range(2));
  });

  it('writes everything on close()', async () => {
    const written: number[] = [];
    const buffer = open(store, { batchSize: 4, flushIntervalMs: 3_600_000, onWritten: (n) => written.push(n) });
    // 10 hits: two size-triggered batches may start on their own; close() must finish the rest.
    for (let i = 0; i < 10; i++) buffer.add(storedHit(i), visitOf(storedHit(i)));
    await buffer.close();
    assert.deepEqual(await pathnames(store), range(10));
    assert.equal((await store.listVisits(SITE)).length, 10);
    assert.equal(written.reduce((a, b) => a + b, 0), 10);
    assert.ok(written.every((n) => n <= 4), `batches ${written}`);
    assert.equal(buffer.pending, 0);
    assert.equal(buffer.stats.written, 10);
  });

  it('coalesces visit updates: one row per visit, with the latest state', async () => {
    const buffer = open(store, { batchSize: 1000, flushIntervalMs: 3_600_000 });
    const h0 = storedHit(0, 42n);
    const h1 = { ...storedHit(1, 42n), pathname: '/second' };
    buffer.add(h0, visitOf(h0));
    buffer.add(h1, visitOf(h0, { lastSeenAt: h1.timestamp, exitPage: '/second', pageviews: 2 }));
    await buffer.flush();
    let visits = await store.listVisits(SITE);
    assert.equal(visits.length, 1);
    assert.equal(visits[0]!.visitId, 42n);
    assert.equal(visits[0]!.pageviews, 2);
    assert.equal(visits[0]!.exitPage, '/second');
    assert.equal(visits[0]!.lastSeenAt.getTime(), h1.timestamp.getTime());
    assert.equal((await store.listHits(SITE)).length, 2);

    // A later flush rewrites the same row rather than adding one.
    const h2 = { ...storedHit(2, 42n), pathname: '/third' };
    buffer.add(h2, visitOf(h0, { lastSeenAt: h2.timestamp, exitPage: '/third', pageviews: 3 }));
    await buffer.flush();
    visits = await store.listVisits(SITE);
    assert.equal(visits.length, 1);
    assert.equal(visits[0]!.pageviews, 3);
    assert.equal(visits[0]!.exitPage, '/third');
    assert.equal(visits[0]!.entryPage, '/p0');
  });

  it('reports isFull once maxPending hits wait, and not after they are written', async () => {
    const buffer = open(store, { batchSize: 1000, flushIntervalMs: 3_600_000, maxPending: 3 });
    buffer.add(storedHit(0), visitOf(storedHit(0)));
    buffer.add(storedHit(1), visitOf(storedHit(1)));
    assert.equal(buffer.isFull, false);
    buffer.add(storedHit(2), visitOf(storedHit(2)));
    assert.equal(buffer.isFull, true);
    assert.equal(buffer.pending, 3);
    await buffer.flush();
    assert.equal(buffer.isFull, false);
    assert.equal(buffer.pending, 0);
  });

  it('keeps every hit when the store fails and writes each exactly once on the next flush', async () => {
    let failuresLeft = 2;
    let calls = 0;
    const flaky: EventStore = {
      ...bind(store),
      write(hits, visits) {
        calls++;
        if (failuresLeft > 0) {
          failuresLeft--;
          return Promise.reject(new Error('disk on fire'));
        }
        return store.write(hits, visits);
      },
    };
    const errors: unknown[] = [];
    const buffer = open(flaky, { batchSize: 1000, flushIntervalMs: 3_600_000, onError: (err) => errors.push(err) });
    for (let i = 0; i < 5; i++) buffer.add(storedHit(i), visitOf(storedHit(i)));

    await assert.rejects(buffer.flush(), /disk on fire/);
    assert.equal(buffer.pending, 5);
    assert.equal(errors.length, 1);
    assert.match(String(errors[0]), /disk on fire/);
    // Hits arriving between failures join the queue.
    buffer.add(storedHit(5), visitOf(storedHit(5)));
    await assert.rejects(buffer.flush(), /disk on fire/);
    assert.equal(errors.length, 2);
    assert.equal(buffer.pending, 6);
    assert.equal(buffer.stats.failures, 2);
    assert.deepEqual(await store.listHits(SITE), []);

    await buffer.flush();
    assert.equal(calls, 3);
    assert.equal(buffer.pending, 0);
    assert.deepEqual(await pathnames(store), range(6));
    assert.equal((await store.listVisits(SITE)).length, 6);
    assert.equal(errors.length, 2);
    // Nothing is written twice by a later flush.
    await buffer.flush();
    assert.equal((await store.listHits(SITE)).length, 6);
  });

  it('keeps the batches that failed when an earlier batch of the same flush was written', async () => {
    let call = 0;
    const flaky: EventStore = {
      ...bind(store),
      write(hits, visits) {
        call++;
        return call === 2 ? Promise.reject(new Error('second batch refused')) : store.write(hits, visits);
      },
    };
    const errors: unknown[] = [];
    const buffer = open(flaky, { batchSize: 2, flushIntervalMs: 3_600_000, onError: (err) => errors.push(err) });
    // Flush explicitly so that size-triggered flushes and ours all go through one drain.
    const hits = Array.from({ length: 5 }, (_, i) => storedHit(i));
    for (const h of hits) buffer.add(h, visitOf(h));
    await buffer.flush().catch(() => undefined);
    await until(async () => errors.length >= 1);
    await buffer.flush();
    assert.equal(errors.length, 1);
    assert.deepEqual(await pathnames(store), range(5));
    assert.equal((await store.listVisits(SITE)).length, 5);
  });

  it('does not lose hits added while a flush is running', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let blocked = true;
    const slow: EventStore = {
      ...bind(store),
      async write(hits, visits) {
        if (blocked) {
          blocked = false;
          await gate;
        }
        return store.write(hits, visits);
      },
    };
    const buffer = open(slow, { batchSize: 1000, flushIntervalMs: 3_600_000 });
    for (let i = 0; i < 3; i++) buffer.add(storedHit(i), visitOf(storedHit(i)));
    const first = buffer.flush();
    // The first batch is in the store's hands now; these arrive meanwhile.
    for (let i = 3; i < 6; i++) buffer.add(storedHit(i), visitOf(storedHit(i)));
    const second = buffer.flush();
    for (let i = 6; i < 8; i++) buffer.add(storedHit(i), visitOf(storedHit(i)));
    release();
    await Promise.all([first, second]);
    await buffer.flush();
    assert.deepEqual(await pathnames(store), range(8));
    assert.equal((await store.listVisits(SITE)).length, 8);
    assert.equal(buffer.pending, 0);
  });

  it('does not lose hits added while a failing flush is running', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    let failNext = true;
    const slowThenFail: EventStore = {
      ...bind(store),
      async write(hits, visits) {
        if (failNext) {
          failNext = false;
          await gate;
          throw new Error('timeout');
        }
        return store.write(hits, visits);
      },
    };
    const buffer = open(slowThenFail, { batchSize: 1000, flushIntervalMs: 3_600_000, onError: () => undefined });
    const h0 = storedHit(0, 9n);
    buffer.add(h0, visitOf(h0));
    const first = buffer.flush();
    const h1 = storedHit(1, 9n);
    buffer.add(h1, visitOf(h0, { lastSeenAt: h1.timestamp, exitPage: h1.pathname, pageviews: 2 }));
    const h2 = storedHit(2);
    buffer.add(h2, visitOf(h2));
    release();
    await assert.rejects(first, /timeout/);
    await buffer.flush();
    assert.deepEqual(await pathnames(store), range(3));
    const visits = await store.listVisits(SITE);
    assert.equal(visits.length, 2);
    // The newer state of visit 9, added during the failed write, wins over the one that failed.
    assert.equal(visits.find((v) => v.visitId === 9n)?.pageviews, 2);
  });
});

/** The real store's methods, bound, for fault-injecting wrappers to spread over. */
function bind(store: DuckEventStore): EventStore {
  return {
    query: (sql, params) => store.query(sql, params),
    queryAfter: (first, next) => store.queryAfter(first, next),
    logWatermark: () => store.logWatermark(),
    write: (hits, visits, seq) => store.write(hits, visits, seq),
    visitsSeenSince: (since) => store.visitsSeenSince(since),
    listHits: (siteId) => store.listHits(siteId),
    listVisits: (siteId) => store.listVisits(siteId),
    deleteSite: (siteId) => store.deleteSite(siteId),
    deleteVisitRange: (siteId, from, to) => store.deleteVisitRange(siteId, from, to),
    writeImportedDays: (rows) => store.writeImportedDays(rows),
    hasImportedDays: (siteId) => store.hasImportedDays(siteId),
    deleteImportedDays: (siteId, importId) => store.deleteImportedDays(siteId, importId),
    close: () => store.close(),
  };
}
