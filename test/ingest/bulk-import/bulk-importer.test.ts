// The main thread's side of set-based imports against a real DuckDB store: bodies imported through the import
// thread, which is stopped once idle (its memory goes back to the system) and started again by the next import.

import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { BulkImporter } from '../../../src/ingest/bulk-import/bulk-importer.js';
import type { ImportResult } from '../../../src/ingest/line-import.js';
import { SiteDirectory } from '../../../src/ingest/site-directory.js';
import { Metrics } from '../../../src/metrics.js';
import { DuckDatabase } from '../../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../../src/store/duckdb/event-store.js';
import { migrate } from '../../../src/store/duckdb/migrations.js';
import { SqlMetaStore } from '../../../src/store/sql-meta-store.js';

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

  describe('loads of a row group across chunks (5 hits here)', () => {
    /** A chunk of `n` pageviews on pages `/{tag}{i}`, at distinct times after those of earlier tags. */
    const chunkOf = (tag: string, n: number, minute: number, more = '', ip = (_i: number) => '81.2.69.142') =>
      Readable.from([
        Buffer.from(
          Array.from({ length: n }, (_, i) =>
            JSON.stringify({ type: 'pageview', site_id: siteId, timestamp: `2026-02-01 10:${String(minute).padStart(2, '0')}:${String(i).padStart(2, '0')}`, url: `https://ex.test/${tag}${i}`, user_agent: UA, ip: ip(i) }),
          ).join('\n') + more,
        ),
      ]);

    /**
     * An importer whose site look-ups wait until `gate` opens (so that a session's later chunks are handed over
     * while its first is worked on, as the CLI's are), and whose loads are counted and may fail.
     */
    function gatedImporter(failLoad?: number, visitRows?: number) {
      let open!: () => void;
      const gate = new Promise<void>((resolve) => (open = resolve));
      const directory = new (class extends SiteDirectory {
        override async site(id: string) {
          await gate;
          return super.site(id);
        }
        override async goalByName(id: string, name: string) {
          if (name === 'boom') throw new Error('the meta store is down');
          return super.goalByName(id, name);
        }
      })(new SqlMetaStore(db));
      const loads: number[] = [];
      const visits: number[] = [];
      const gated = new BulkImporter({
        sites: directory,
        load: async (rows) => {
          loads.push(rows.hits);
          visits.push(rows.visits + rows.newVisits);
          // Loads of visits take their time: an answer given before its visits are stored would be seen.
          if (visitRows !== undefined && rows.visits + rows.newVisits > 0) await new Promise((resolve) => setTimeout(resolve, 100));
          if (loads.length === failLoad) throw new Error('disk full');
          await events.writeCsv(rows);
        },
        metrics: new Metrics(),
        excludedHosts: [],
        loadHits: 5,
        visitRows,
      });
      return { gated, loads, visits, open };
    }

    const paths = async (tag: string) => (await events.listHits(siteId)).map((h) => h.pathname).filter((p) => p.startsWith(`/${tag}`)).length;

    /**
     * Hands `bodies` over as one import's chunks, one after another (as the admin route does with the CLI's numbered
     * chunks), then opens the gate; each chunk's answer, or its error's message.
     */
    async function importInOrder(gated: BulkImporter, open: () => void, session: string, bodies: Readable[]): Promise<Promise<ImportResult | string>[]> {
      const answers: Promise<ImportResult | string>[] = [];
      let first = 1;
      for (const body of bodies) {
        let handedOver!: () => void;
        const handed = new Promise<void>((resolve) => (handedOver = resolve));
        answers.push(gated.importChunk(session, body, first, handedOver).catch((err: Error) => err.message));
        first += 7;
        await handed;
      }
      open();
      return answers;
    }

    it('fills each load before it is stored, and answers a chunk once its last rows are', async () => {
      const { gated, loads, open } = gatedImporter();
      try {
        const tags = ['x', 'y', 'z'];
        const answers = await importInOrder(gated, open, 'carry', tags.map((tag, i) => chunkOf(tag, 7, 10 + i)));
        for (const [i, answer] of answers.entries()) {
          assert.deepEqual(await answer, { imported: 7, rejected: 0, errors: [] });
          assert.equal(await paths(tags[i]!), 7, 'every row of a chunk is stored when it is answered');
        }
        // 21 hits in loads of 5: the last rows of the first two chunks waited for the next chunk's first.
        assert.deepEqual(loads, [5, 5, 5, 5, 1]);
      } finally {
        await gated.close();
      }
    });

    it('stores visits once a load of them is waiting, and answers a chunk once its visits are stored', async () => {
      const { gated, loads, visits, open } = gatedImporter(undefined, 12);
      try {
        const tags = ['v', 'w', 'u'];
        // Every hit from an address of its own: a visit each.
        const answers = await importInOrder(gated, open, 'visits', tags.map((tag, i) => chunkOf(tag, 7, 40 + i, '', (n) => `81.2.${i}.${n + 1}`)));
        for (const [i, answer] of answers.entries()) {
          assert.deepEqual(await answer, { imported: 7, rejected: 0, errors: [] });
          const entries = (await events.listVisits(siteId)).filter((v) => v.entryPage.startsWith(`/${tags[i]}`));
          assert.equal(entries.length, 7, 'every visit of a chunk is stored when it is answered');
        }
        // 21 visits: the first two loads' 10 wait (fewer than 12); from the third load on no next chunk is there
        // (the import may be ending), so each load takes the visits waiting.
        assert.deepEqual(loads, [5, 5, 5, 5, 1]);
        assert.deepEqual(visits, [0, 0, 15, 5, 1]);
      } finally {
        await gated.close();
      }
    });

    it('answers a chunk held for its load when the next chunk fails before it has rows', async () => {
      const { gated, loads, open } = gatedImporter();
      try {
        // An event whose goal cannot be looked up: the chunk fails before any of its rows is worked out.
        const event = JSON.stringify({ type: 'event', site_id: siteId, timestamp: '2026-02-01 10:21:00', url: 'https://ex.test/q', name: 'boom', user_agent: UA, ip: '81.2.69.142' });
        const [first, second] = await importInOrder(gated, open, 'held', [chunkOf('p', 7, 20), Readable.from([Buffer.from(event)])]);
        assert.deepEqual(await first, { imported: 7, rejected: 0, errors: [] });
        assert.equal(await paths('p'), 7);
        assert.equal(await second, 'the meta store is down');
        // The first chunk's last 2 rows waited for the second, then went on their own.
        assert.deepEqual(loads, [5, 2]);
      } finally {
        await gated.close();
      }
    });

    it('fails every chunk with rows in a load that fails, and stores none of the rows after it', async () => {
      const { gated, loads, open } = gatedImporter(2);
      try {
        const answers = await importInOrder(gated, open, 'failing', ['f', 'g', 'h'].map((tag, i) => chunkOf(tag, 7, 30 + i)));
        // The second load held rows of the first two chunks; the third chunk's rows come after a failed load.
        assert.deepEqual(await Promise.all(answers), ['disk full', 'disk full', 'disk full']);
        assert.deepEqual(loads, [5, 5]);
        assert.equal(await paths('f'), 5, 'the first load was stored');
        assert.equal(await paths('g'), 0);
        assert.equal(await paths('h'), 0);
      } finally {
        await gated.close();
      }
    });
  });

  it('names its threads for the operating system, so that a reading of the threads tells them apart', { skip: !existsSync('/proc/thread-self') }, async () => {
    const running = new BulkImporter({ sites: new SiteDirectory(new SqlMetaStore(db)), load: (rows) => events.writeCsv(rows), metrics: new Metrics(), excludedHosts: [], idleMs: 60_000 });
    try {
      assert.equal((await running.importChunk(undefined, body('/named'), 1)).imported, 1);
      const names = readdirSync('/proc/self/task').map((tid) => {
        try {
          return readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
        } catch {
          return ''; // a thread that ended meanwhile
        }
      });
      assert.ok(names.includes('plumb-import'), names.join(', '));
      assert.ok(names.includes('plumb-reader'), names.join(', '));
    } finally {
      await running.close();
    }
  });

  it('stops the import thread once idle and starts it again for the next import', async () => {
    const first = await importer.importChunk(undefined, body('/a'), 1);
    assert.deepEqual(first, { imported: 1, rejected: 1, errors: [{ line: 2, message: 'not valid JSON' }] });
    // Waits for the idle stop (the test's own timeout bounds the wait).
    while (importer.threadRunning) await sleep(10);
    const second = await importer.importChunk(undefined, body('/b'), 1);
    assert.equal(second.imported, 1);
    assert.deepEqual((await events.listHits(siteId)).map((h) => h.pathname).filter((p) => p === '/a' || p === '/b').sort(), ['/a', '/b']);
  });
});
