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

describe('DuckDB bulk loads', () => {
  it('an import\'s load gives the database its thread count back after a load, stored or failed', async () => {
    const db = await DuckDatabase.open(':memory:');
    const dir = await mkdtemp(join(tmpdir(), 'plumb-csv-load-'));
    try {
      await migrate(db);
      // Not the machine's core count, so that a count reset to DuckDB's default would show.
      await db.serial((q) => q.exec('SET threads = 3'));
      const store = await DuckEventStore.open(db);
      const threads = async () => Number((await store.query("SELECT current_setting('threads') AS n", []))[0]!.n);
      const count = async () => Number((await store.query("SELECT count(*) AS n FROM hits WHERE site_id = 'SITETHRD'", []))[0]!.n);

      await store.writeCsv(await writeCsvRows(dir, 'a', [storedHit('SITETHRD', '2026-03-01T10:00:00Z')], []));
      assert.equal(await count(), 1);
      assert.equal(await threads(), 3);

      // Hits counted but no file: the load fails, its transaction is rolled back.
      const missing = { ...(await writeCsvRows(dir, 'b', [storedHit('SITETHRD', '2026-03-01T11:00:00Z')], [])), hitsFile: join(dir, 'no-such-file.csv') };
      await assert.rejects(store.writeCsv(missing));
      assert.equal(await count(), 1);
      assert.equal(await threads(), 3);
      await store.close();
    } finally {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a record file\'s load gives the database its thread count back, stored or failed', async () => {
    const db = await DuckDatabase.open(':memory:');
    const dir = await mkdtemp(join(tmpdir(), 'plumb-record-threads-'));
    try {
      await migrate(db);
      await db.serial((q) => q.exec('SET threads = 3'));
      const store = await DuckEventStore.open(db);
      const threads = async () => Number((await store.query("SELECT current_setting('threads') AS n", []))[0]!.n);
      const count = async () => Number((await store.query("SELECT count(*) AS n FROM hits WHERE site_id = 'SITERECT'", []))[0]!.n);
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
      await store.close();
    } finally {
      await db.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
