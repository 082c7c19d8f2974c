// Bulk loads on DuckDB (an import's CSV files, EventStore.writeCsv, and the collector's record files,
// EventStore.loadRecords) run on one DuckDB thread; the database gets its own thread count back afterwards, whether
// the load was stored or failed (and then stored nothing). An import's load stores its new visits beside its hits
// and replaced visits (on a second connection): all of them are there once it is done.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { encodeRecord } from '../../src/ingest/live/hit-record.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { writeCsvRows } from '../../src/store/event-csv.js';
import { storedHit } from '../helpers/stored-hits.js';
import type { StoredHit, VisitRecord } from '../../src/domain/hits.js';

/**
 * A store on a fresh in-memory database whose thread count is 3 (not the machine's core count, so that a count reset
 * to DuckDB's default would show), with its thread count and `site`'s stored hits at hand.
 */
async function withStore(
  site: string,
  work: (t: { store: DuckEventStore; dir: string; threads: () => Promise<number>; count: () => Promise<number> }) => Promise<void>,
): Promise<void> {
  const db = await DuckDatabase.open(':memory:');
  const dir = await mkdtemp(join(tmpdir(), 'plumb-bulk-load-'));
  try {
    await migrate(db);
    await db.serial((q) => q.exec('SET threads = 3'));
    const store = await DuckEventStore.open(db);
    const threads = async () => Number((await store.query("SELECT current_setting('threads') AS n", []))[0]!.n);
    const count = async () => Number((await store.query('SELECT count(*) AS n FROM hits WHERE site_id = ?', [site]))[0]!.n);
    await work({ store, dir, threads, count });
    await store.close();
  } finally {
    await db.close();
    await rm(dir, { recursive: true, force: true });
  }
}

describe('DuckDB bulk loads', () => {
  it('an import\'s load gives the database its thread count back after a load, stored or failed', () =>
    withStore('SITETHRD', async ({ store, dir, threads, count }) => {
      await store.writeCsv(await writeCsvRows(dir, 'a', [storedHit('SITETHRD', '2026-03-01T10:00:00Z')], []));
      assert.equal(await count(), 1);
      assert.equal(await threads(), 3);

      // Hits counted but no file: the load fails, its transaction is rolled back.
      const missing = { ...(await writeCsvRows(dir, 'b', [storedHit('SITETHRD', '2026-03-01T11:00:00Z')], [])), hitsFile: join(dir, 'no-such-file.csv') };
      await assert.rejects(store.writeCsv(missing));
      assert.equal(await count(), 1);
      assert.equal(await threads(), 3);
    }));

  it('an import\'s load stores its hits, the visits it replaces and its new visits; new visits that fail take the hits with them', () =>
    withStore('SITEVIST', async ({ store, dir, threads, count }) => {
      const first = storedHit('SITEVIST', '2026-03-01T10:00:00Z');
      const second = storedHit('SITEVIST', '2026-03-01T10:05:00Z', { visitId: first.visitId });
      const other = storedHit('SITEVIST', '2026-03-01T10:06:00Z');
      const visitOf = (h: StoredHit, pageviews: number, lastSeenAt = h.timestamp): VisitRecord => ({
        siteId: h.siteId, visitId: h.visitId, visitorId: h.visitorId, startedAt: first.timestamp, lastSeenAt,
        entryPage: h.pathname, exitPage: h.pathname, exitHostname: h.hostname, pageviews, events: 0, pathsExact: true, journeyLength: 3, journeyPages: ['/b', '/c,"x"'],
        referrerHostname: '', referrerPathname: '', referrerSource: '', utmCampaign: '', utmContent: '', utmMedium: '',
        utmSource: '', utmTerm: '', ref: '', keyword: '',
      });
      const visits = async () =>
        (await store.query('SELECT visit_id, pageviews FROM visits WHERE site_id = ? ORDER BY visit_id', ['SITEVIST'])).map((r) => [r.visit_id, r.pageviews]);

      await store.writeCsv(await writeCsvRows(dir, 'a', [first], [], [visitOf(first, 1)]));
      // The second load continues the first's visit (its row replaced) and starts another (appended).
      await store.writeCsv(await writeCsvRows(dir, 'b', [second, other], [visitOf(first, 2, second.timestamp)], [visitOf(other, 1)]));
      assert.equal(await count(), 3);
      assert.deepEqual(await visits(), [[first.visitId, 2], [other.visitId, 1]]);

      // New visits that cannot be read: the load fails and its hits are not stored either.
      const late = storedHit('SITEVIST', '2026-03-01T11:00:00Z');
      const rows = await writeCsvRows(dir, 'c', [late], [], [visitOf(late, 1)]);
      await assert.rejects(store.writeCsv({ ...rows, newVisitsFile: join(dir, 'no-such-file.csv') }));
      assert.equal(await count(), 3);
      assert.deepEqual(await visits(), [[first.visitId, 2], [other.visitId, 1]]);
      assert.equal(await threads(), 3);
    }));

  it('a record file\'s load gives the database its thread count back, stored or failed', () =>
    withStore('SITERECT', async ({ store, dir, threads, count }) => {
      const hit = storedHit('SITERECT', '2026-03-01T10:00:00Z');
      const visit = {
        siteId: hit.siteId, visitId: hit.visitId, visitorId: hit.visitorId, startedAt: hit.timestamp, lastSeenAt: hit.timestamp,
        entryPage: hit.pathname, exitPage: hit.pathname, exitHostname: hit.hostname, pageviews: 1, events: 0, pathsExact: true, journeyLength: 1, journeyPages: [],
        referrerHostname: '', referrerPathname: '', referrerSource: '', utmCampaign: '', utmContent: '', utmMedium: '',
        utmSource: '', utmTerm: '', ref: '', keyword: '',
      };
      const file = join(dir, 'records.ndjson');
      await writeFile(file, encodeRecord(1, hit, visit));

      await store.loadRecords(file, 1);
      assert.equal(await count(), 1);
      assert.equal(await threads(), 3);

      await assert.rejects(store.loadRecords(join(dir, 'no-such-file.ndjson'), 2));
      assert.equal(await count(), 1);
      assert.equal(await store.logWatermark(), 1);
      assert.equal(await threads(), 3);
    }));
});
