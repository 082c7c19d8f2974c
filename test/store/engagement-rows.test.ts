// Engagement values through every way a hit reaches the embedded store: the hit record (new, and of versions before
// the values, still read on replay), the appender (EventStore.write) and DuckDB's record-file load
// (EventStore.loadRecords) store the same rows; migration 25 gives earlier rows 0 and refuses NULL.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { StoredHit, VisitRecord } from '../../src/domain/hits.js';
import { decodeRecord, encodeRecord, RECORD_FIELDS } from '../../src/ingest/live/hit-record.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { hitRowStart } from '../../src/store/clickhouse/insert-text.js';
import { storedHit } from '../helpers/stored-hits.js';

const dir = mkdtempSync(join(tmpdir(), 'plumb-engagement-rows-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const visitOf = (hit: StoredHit): VisitRecord => ({
  siteId: hit.siteId, visitId: hit.visitId, visitorId: hit.visitorId, startedAt: new Date('2026-03-01T09:00:00Z'),
  lastSeenAt: new Date('2026-03-01T10:00:00Z'), entryPage: '/entry', exitPage: '/exit', exitHostname: hit.hostname,
  pageviews: 1, events: 0, pathsExact: true, journeyLength: 1, journeyPages: [], referrerHostname: hit.referrerHostname, referrerPathname: hit.referrerPathname,
  referrerSource: hit.referrerSource, utmCampaign: hit.utmCampaign, utmContent: hit.utmContent, utmMedium: hit.utmMedium,
  utmSource: hit.utmSource, utmTerm: hit.utmTerm, ref: hit.ref, keyword: hit.keyword,
});

/** A pageview and engagement hits of its visit: one with both values at their largest, one with a value of 0. */
function visitHits(siteId: string): StoredHit[] {
  const view = storedHit(siteId, '2026-03-01T10:00:00Z');
  const base = { visitId: view.visitId, pathname: view.pathname, type: 'engagement' as const, firstView: false };
  return [
    view,
    storedHit(siteId, '2026-03-01T10:00:05Z', { ...base, scrollDepth: 100, engagedMs: 1_800_000 }),
    storedHit(siteId, '2026-03-01T10:00:09Z', { ...base, engagedMs: 700 }),
  ];
}

async function freshStore() {
  const db = await DuckDatabase.open(':memory:');
  await migrate(db);
  const store = await DuckEventStore.open(db);
  return { db, store, done: async () => (await store.close(), await db.close()) };
}

describe('engagement values in records and the embedded store', () => {
  it('round-trip through a hit record, and a record written before them reads as none', () => {
    const [view, full, partial] = visitHits('REC');
    for (const hit of [view!, full!, partial!]) assert.deepEqual(decodeRecord(encodeRecord(3, hit, visitOf(hit))), { seq: 3, hit, visit: visitOf(hit) });
    const values = JSON.parse(encodeRecord(4, full!, visitOf(full!))) as unknown[];
    const depthAt = RECORD_FIELDS.indexOf('hit.scrollDepth');
    assert.deepEqual(values.slice(depthAt, depthAt + 2), [100, 1_800_000]);
    // A record of the version before: these two values and the journey's (which came later) missing.
    const earlier = decodeRecord(JSON.stringify(values.slice(0, depthAt))).hit;
    assert.equal(earlier.scrollDepth, undefined);
    assert.equal(earlier.engagedMs, undefined);
    assert.equal(earlier.type, 'engagement');
    assert.throws(() => decodeRecord(JSON.stringify(values.slice(0, depthAt + 1))), /values/);
  });

  it('are stored alike by the appender and the record-file load, and read back as written', async () => {
    const appended = await freshStore();
    const loaded = await freshStore();
    try {
      const hits = visitHits('DUCK');
      await appended.store.write(hits, [visitOf(hits[0]!)]);
      const file = join(dir, 'records.jsonl');
      writeFileSync(file, hits.map((h, i) => encodeRecord(i + 1, h, visitOf(h))).join(''));
      await loaded.store.loadRecords(file, hits.length);
      assert.deepEqual(await appended.store.listHits('DUCK'), hits);
      assert.deepEqual(await loaded.store.listHits('DUCK'), hits);
      const raw = await loaded.db.serial((q) => q.rows('SELECT type, scroll_depth, engaged_ms FROM hits ORDER BY ts'));
      assert.deepEqual(raw.map((r) => [r.type, Number(r.scroll_depth), Number(r.engaged_ms)]), [['pageview', 0, 0], ['engagement', 100, 1_800_000], ['engagement', 0, 700]]);
    } finally {
      await appended.done();
      await loaded.done();
    }
  });

  it('are the last two values of a ClickHouse row, 0 for every other hit', () => {
    const [view, full] = visitHits('CH');
    assert.match(hitRowStart(view!), /,\[\],\[\],0,0$/);
    assert.match(hitRowStart(full!), /,\[\],\[\],100,1800000$/);
  });

  it('migration 25 gives rows recorded before 0 and refuses NULL', async () => {
    const db = await DuckDatabase.open(':memory:');
    try {
      await migrate(db, 24);
      await db.serial((q) =>
        q.exec(`INSERT INTO hits BY NAME SELECT 'OLD' AS site_id, 'pageview' AS type, TIMESTAMP '2026-01-01 00:00:00' AS ts,
          1::UBIGINT AS visitor_id, 2::UBIGINT AS visit_id, '' AS hostname, '/' AS pathname, '' AS referrer_hostname,
          '' AS referrer_pathname, '' AS referrer_source, '' AS utm_campaign, '' AS utm_content, '' AS utm_medium,
          '' AS utm_source, '' AS utm_term, '' AS ref, '' AS keyword, '' AS browser, '' AS operating_system,
          '' AS device_type, '' AS country_code, '' AS region, '' AS state, '' AS city, '' AS event_name, 0 AS value`),
      );
      assert.deepEqual(await migrate(db, 25), [25]);
      const [row] = await db.serial((q) => q.rows('SELECT scroll_depth, engaged_ms FROM hits'));
      assert.deepEqual([Number(row!.scroll_depth), Number(row!.engaged_ms)], [0, 0]);
      await assert.rejects(db.serial((q) => q.exec('UPDATE hits SET engaged_ms = NULL')), /NOT NULL/);
      await assert.rejects(db.serial((q) => q.exec('UPDATE hits SET scroll_depth = 256')), /out of range|Conversion|overflow/i);
    } finally {
      await db.close();
    }
  });
});
