// Bulk loads on DuckDB (an import's CSV files, EventStore.writeCsv, and the collector's record files,
// EventStore.loadRecords) run on one DuckDB thread; the database gets its own thread count back afterwards, whether
// the load was stored or failed (and then stored nothing).

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { encodeRecord } from '../../src/ingest/hit-record.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { writeCsvRows } from '../../src/store/event-csv.js';
import { storedHit } from '../helpers/stored-hits.js';

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

  it('a record file\'s load gives the database its thread count back, stored or failed', () =>
    withStore('SITERECT', async ({ store, dir, threads, count }) => {
      const hit = storedHit('SITERECT', '2026-03-01T10:00:00Z');
      const visit = {
        siteId: hit.siteId, visitId: hit.visitId, visitorId: hit.visitorId, startedAt: hit.timestamp, lastSeenAt: hit.timestamp,
        entryPage: hit.pathname, exitPage: hit.pathname, exitHostname: hit.hostname, pageviews: 1, events: 0, pathsExact: true,
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
