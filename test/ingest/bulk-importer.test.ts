// The main thread's side of set-based imports against a real DuckDB store: bodies imported through the import
// thread, which is stopped once idle (its memory goes back to the system) and started again by the next import.

import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { BulkImporter } from '../../src/ingest/bulk-importer.js';
import { SiteDirectory } from '../../src/ingest/site-directory.js';
import { Metrics } from '../../src/metrics.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

describe('BulkImporter', () => {
  let db: DuckDatabase;
  let events: DuckEventStore;
  let importer: BulkImporter;
  let siteId: string;

  before(async () => {
    db = await DuckDatabase.open(':memory:');
    await migrate(db);
    events = await DuckEventStore.open(db);
    const meta = new SqlMetaStore(db);
    const account = await meta.createAccount({ name: 'A', email: 'a@a.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    siteId = (await meta.createSite({ accountId: account.id, name: 'S', sharing: 'none', sharePasswordHash: null, timezone: 'UTC', multiDomain: false, multiDomainOption: null })).id;
    importer = new BulkImporter({ sites: new SiteDirectory(meta), load: (rows) => events.writeCsv(rows), metrics: new Metrics(), excludedHosts: [], idleMs: 20 });
  });
  after(async () => {
    await importer.close();
    await events.close();
    await db.close();
  });

  const body = (path: string) =>
    Readable.from([Buffer.from(`${JSON.stringify({ type: 'pageview', site_id: siteId, timestamp: '2026-01-01 10:00:00', url: `https://ex.test${path}`, user_agent: UA, ip: '81.2.69.142' })}\n{bad\n`)]);

  it('answers an empty chunk and a chunk of bad and blank lines with nothing imported, and the import goes on', async () => {
    const session = 'bad-chunks';
    assert.deepEqual(await importer.importChunk(session, Readable.from([]), 1), { imported: 0, rejected: 0, errors: [] });
    const bad = await importer.importChunk(session, Readable.from([Buffer.from('\n{bad\n[]\n\n')]), 10);
    assert.deepEqual(bad, {
      imported: 0,
      rejected: 2,
      errors: [
        { line: 11, message: 'not valid JSON' },
        { line: 12, message: 'must be a JSON object' },
      ],
    });
    const good = await importer.importChunk(session, body('/c'), 20);
    assert.deepEqual(good, { imported: 1, rejected: 1, errors: [{ line: 21, message: 'not valid JSON' }] });
    assert.ok((await events.listHits(siteId)).some((h) => h.pathname === '/c'));
  });

  it('stops the import thread once idle and starts it again for the next import', async () => {
    const first = await importer.importChunk(undefined, body('/a'), 1);
    assert.deepEqual(first, { imported: 1, rejected: 1, errors: [{ line: 2, message: 'not valid JSON' }] });
    // Waits for the idle stop (the test's own timeout bounds the wait).
    while (importer.threadRunning) await sleep(10);
    const second = await importer.importChunk(undefined, body('/b'), 1);
    assert.equal(second.imported, 1);
    assert.deepEqual((await events.listHits(siteId)).map((h) => h.pathname).filter((p) => p !== '/c'), ['/a', '/b']);
  });
});
