// DuckDB migrations that change recorded data: version 7 gives every hit and visit of history its visit's
// first-touch attribution, as new hits get it; version 8 moves visits to a table without a primary key, and
// writes then replace a visit's row instead of adding a second; version 10 turns each account's login into a user;
// version 28 numbers the pages of recorded journeys.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { MIGRATIONS, migrate } from '../../src/store/duckdb/migrations.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import { SqlTeamStore } from '../../src/store/sql-team-store.js';
import { storedHit } from '../helpers/stored-hits.js';
import { LOADER, sourceModuleUrl } from '../helpers/root.js';

describe('DuckDB migration 7: attribution belongs to the visit', () => {
  it("rewrites recorded hits and visits with their visit's first hit's attribution", async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db, 6);
    const text = (o: Record<string, string>) =>
      ['hostname', 'pathname', 'referrer_hostname', 'referrer_pathname', 'referrer_source', 'utm_campaign', 'utm_content', 'utm_medium', 'utm_source', 'utm_term', 'ref', 'keyword', 'browser', 'operating_system', 'device_type', 'country_code', 'region', 'state', 'city']
        .map((c) => `'${o[c] ?? ''}'`)
        .join(', ');
    const hit = (visit: number, at: string, o: Record<string, string>) =>
      `('S', 'pageview', TIMESTAMP '${at}', 1, ${visit}, ${text(o)}, '', 0, false)`;
    await db.serial(async (q) => {
      await q.exec(`INSERT INTO hits VALUES
        ${hit(1, '2026-01-01 10:00:01', { pathname: '/b', referrer_hostname: 'https://www.google.com', referrer_source: 'Google' })},
        ${hit(1, '2026-01-01 10:00:00', { pathname: '/a', referrer_hostname: 'https://news.ycombinator.com', referrer_pathname: '/item', referrer_source: 'Hacker News', utm_source: 'hn', keyword: 'k' })},
        ${hit(1, '2026-01-01 10:00:02', { pathname: '/c' })},
        ${hit(2, '2026-01-01 11:00:00', { pathname: '/d' })},
        ${hit(2, '2026-01-01 11:00:01', { pathname: '/e', utm_source: 'late' })}`);
      await q.exec(`INSERT INTO visits VALUES
        (1, 'S', 1, TIMESTAMP '2026-01-01 10:00:00', TIMESTAMP '2026-01-01 10:00:02', '/a', '/c', 'https://e.test', 3, 0, 'https://news.ycombinator.com', '/item', true),
        (2, 'S', 1, TIMESTAMP '2026-01-01 11:00:00', TIMESTAMP '2026-01-01 11:00:01', '/d', '/e', 'https://e.test', 2, 0, '', '', true)`);
    });
    assert.deepEqual(await migrate(db, 7), [7]);
    const store = await DuckEventStore.open(db);
    const hits = await store.listHits('S');
    assert.deepEqual(
      hits.map((h) => [h.pathname, h.referrerHostname, h.referrerPathname, h.referrerSource, h.utmSource, h.keyword]),
      [
        ['/a', 'https://news.ycombinator.com', '/item', 'Hacker News', 'hn', 'k'],
        ['/b', 'https://news.ycombinator.com', '/item', 'Hacker News', 'hn', 'k'],
        ['/c', 'https://news.ycombinator.com', '/item', 'Hacker News', 'hn', 'k'],
        ['/d', '', '', '', '', ''],
        ['/e', '', '', '', '', ''],
      ],
    );
    const visits = await store.listVisits('S');
    assert.deepEqual(visits.map((v) => [v.referrerSource, v.utmSource, v.keyword]), [['Hacker News', 'hn', 'k'], ['', '', '']]);
    await store.close();
    await db.close();
  });

  it('version 8 keeps every visit, and a visit written again still has one row', async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db, 7);
    await db.serial((q) =>
      q.exec(`INSERT INTO visits (visit_id, site_id, visitor_id, started_at, last_seen_at, entry_page, exit_page, exit_hostname, pageviews, events,
                referrer_hostname, referrer_pathname, paths_exact, utm_source)
              VALUES (1, 'S', 9, TIMESTAMP '2026-01-01 10:00:00', TIMESTAMP '2026-01-01 10:05:00', '/a', '/b', 'https://e.test', 2, 0, '', '', true, 'hn')`),
    );
    assert.deepEqual(await migrate(db, 8), [8]);
    // Written by this release's store, whose rows have the later versions' columns too.
    await migrate(db);
    const store = await DuckEventStore.open(db);
    const [before] = await store.listVisits('S');
    assert.deepEqual([before?.visitId, before?.pageviews, before?.utmSource], [1n, 2, 'hn']);
    // The same visit, later and started earlier (a late hit), written twice as a batch of the write buffer would.
    const later = { ...before!, startedAt: new Date('2026-01-01T09:59:00Z'), lastSeenAt: new Date('2026-01-01T10:07:00Z'), pageviews: 3 };
    await store.write([], [later]);
    await store.write([], [{ ...later, pageviews: 4 }]);
    const after = await store.listVisits('S');
    assert.deepEqual(after.map((v) => [v.visitId, v.pageviews, v.startedAt.toISOString()]), [[1n, 4, '2026-01-01T09:59:00.000Z']]);
    await store.close();
    await db.close();
  });
});

describe('DuckDB migration 27: journeys of visits', () => {
  it('reads visits written before as journeys not known, and keeps the journeys of new ones', async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db, 26);
    await db.serial((q) =>
      q.exec(`INSERT INTO visits (visit_id, site_id, visitor_id, started_at, last_seen_at, entry_page, exit_page, exit_hostname, pageviews, events,
                referrer_hostname, referrer_pathname, paths_exact)
              VALUES (1, 'S', 9, TIMESTAMP '2026-01-01 10:00:00', TIMESTAMP '2026-01-01 10:05:00', '/a', '/b', 'https://e.test', 2, 0, '', '', true)`),
    );
    assert.deepEqual(await migrate(db, 27), [27]);
    await migrate(db); // the store writes the newest schema's rows
    const store = await DuckEventStore.open(db);
    const [before] = await store.listVisits('S');
    assert.deepEqual([before?.journeyLength, before?.journeyPages], [0, []]);
    await store.write([], [{ ...before!, visitId: 2n, journeyLength: 3, journeyPages: ['/b', '/a'] }]);
    const visits = await store.listVisits('S');
    assert.deepEqual(visits.map((v) => [v.visitId, v.journeyLength, v.journeyPages]), [[1n, 0, []], [2n, 3, ['/b', '/a']]]);
    await store.close();
    await db.close();
  });
});

describe('DuckDB migration 28: journey page numbers', () => {
  it("numbers each site's recorded journey pages, and numbers new pages after them as visits are written", async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db, 27);
    const visit = (id: number, site: string, length: number, pages: string[]) =>
      `(${id}, '${site}', 9, TIMESTAMP '2026-01-01 10:00:00', TIMESTAMP '2026-01-01 10:05:00', '${pages[0]}', '/x', 'https://e.test', 2, 0, '', '', true,
        ${length}, ${[1, 2, 3, 4].map((i) => `'${pages[i] ?? ''}'`).join(', ')})`;
    await db.serial((q) =>
      q.exec(`INSERT INTO visits (visit_id, site_id, visitor_id, started_at, last_seen_at, entry_page, exit_page, exit_hostname, pageviews, events,
                referrer_hostname, referrer_pathname, paths_exact, journey_length, journey_2, journey_3, journey_4, journey_5)
              VALUES ${visit(1, 'S', 3, ['/b', '/a', '/c'])}, ${visit(2, 'S', 1, ['/a'])}, ${visit(3, 'T', 2, ['/z', '/a'])}, ${visit(4, 'S', 0, ['/not-known'])}`),
    );
    assert.deepEqual(await migrate(db, 28), [28]);
    const rows = (sql: string) => db.serial((q) => q.rows(sql));
    // Numbered from 1 per site in page order; a visit whose journey is not known keeps 0.
    assert.deepEqual(
      (await rows('SELECT site_id, pathname, page_id FROM journey_pages ORDER BY site_id, page_id')).map((r) => [r.site_id, r.pathname, Number(r.page_id)]),
      [['S', '/a', 1], ['S', '/b', 2], ['S', '/c', 3], ['T', '/a', 1], ['T', '/z', 2]],
    );
    const ids = async () =>
      (await rows('SELECT visit_id, journey_id_1, journey_id_2, journey_id_3, journey_id_4, journey_id_5 FROM visits ORDER BY visit_id')).map((r) =>
        [r.visit_id, r.journey_id_1, r.journey_id_2, r.journey_id_3, r.journey_id_4, r.journey_id_5].map(Number),
      );
    assert.deepEqual(await ids(), [[1, 2, 1, 3, 0, 0], [2, 1, 0, 0, 0, 0], [3, 2, 1, 0, 0, 0], [4, 0, 0, 0, 0, 0]]);

    const store = await DuckEventStore.open(db);
    const [first] = await store.listVisits('S');
    await store.write([], [{ ...first!, visitId: 5n, entryPage: '/c', journeyLength: 3, journeyPages: ['/new', '/a'] }]);
    assert.deepEqual((await ids()).at(-1), [5, 3, 4, 1, 0, 0], "a new page gets the site's next number");
    await store.deleteSite('S');
    assert.deepEqual((await rows('SELECT DISTINCT site_id FROM journey_pages')).map((r) => r.site_id), ['T'], "a deleted site's pages go with it");
    await store.close();
    await db.close();
  });
});

describe('DuckDB migration 18: custom properties', () => {
  it('keeps hits recorded before as hits without properties, and stores properties of new ones', async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db, 17);
    await db.serial((q) =>
      q.exec(`INSERT INTO hits SELECT 'S', 'pageview', TIMESTAMP '2026-01-01 10:00:00', 1, 1, ${Array(19).fill("'x'").join(', ')}, '', 0, true`),
    );
    assert.deepEqual(await migrate(db, 18), [18]);
    await migrate(db); // and the rest: today's row writer writes today's columns
    const after = await DuckEventStore.open(db);
    const withProps = storedHit('S', '2026-01-01T10:00:01Z', { props: [['plan', 'pro']] });
    await after.write([withProps], []);
    const hits = await after.listHits('S');
    assert.deepEqual(hits.map((h) => h.props), [undefined, [['plan', 'pro']]]);
    await after.close();
    await db.close();
  });
});

describe('DuckDB migration 19: owners and failures of imports', () => {
  it('keeps imports recorded before, without an owner, heartbeat or reason, and records them for new ones', async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db, 18);
    await db.serial((q) =>
      q.exec(`INSERT INTO imports (id, site_id, kind, file_name, digest, status, imported, rejected, visit_id_base, created_at)
              VALUES ('00000000-0000-4000-8000-000000000001', 'S', 'umami', 'old.csv', 'abc', 'running', 5, 1, 18446744069414584320, TIMESTAMP '2026-01-01 10:00:00')`),
    );
    assert.equal((await migrate(db))[0], 19); // then any later ones
    const meta = new SqlMetaStore(db);
    const [old] = await meta.runningImports();
    assert.deepEqual(
      [old?.fileName, old?.digest, old?.imported, old?.rejected, old?.visitIdBase, old?.owner, old?.heartbeatAt, old?.failure],
      ['old.csv', 'abc', 5, 1, 18446744069414584320n, null, null, null],
    );
    const fresh = await meta.createImport({ siteId: 'S', kind: 'fathom', fileName: 'new.zip', visitIdBase: 0n, owner: 'me' });
    assert.equal(fresh.owner, 'me');
    assert.ok(fresh.heartbeatAt instanceof Date);
    const failed = await meta.finishImport(fresh.id, 'me', { status: 'failed', digest: null, imported: 0, rejected: 0, firstHitAt: null, lastHitAt: null, failure: 'why' });
    assert.equal(failed?.failure, 'why');
    await db.close();
  });
});

describe('DuckDB migration 10: people', () => {
  it("makes each account's login its first user, owner of the account, and keeps open sessions open", async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db, 8);
    await db.serial(async (q) => {
      const at = new Date('2026-11-01T10:00:00Z');
      const account = (id: number, email: string) =>
        q.exec('INSERT INTO accounts VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [id, `A${id}`, email, 'UTC', 1, 'active', at, at]);
      await account(1, 'Owner@Example.test');
      await account(2, 'owner@example.test'); // the same person, by email
      await account(3, 'other@example.test');
      await account(4, 'nologin@example.test');
      for (const [id, hash] of [[1, 'scrypt$one'], [2, 'scrypt$two'], [3, 'scrypt$three']] as const) {
        await q.exec('INSERT INTO account_passwords VALUES (?, ?, ?)', [id, hash, at]);
      }
      await q.exec("INSERT INTO dashboard_sessions VALUES ('h1', 'owner', 3, NULL, 'c', NULL, ?, ?)", [at, new Date('2030-01-01T00:00:00Z')]);
    });
    await migrate(db);
    const store = new SqlMetaStore(db);
    const team = new SqlTeamStore(db);
    const owner = await store.findLogin('OWNER@example.test');
    assert.deepEqual([owner?.account?.id, owner?.passwordHash], [1, 'scrypt$one'], 'the lowest id wins, as it logged in before');
    assert.deepEqual((await team.listMemberships(owner!.userId)).map((m) => [m.accountId, m.role]), [[1, 'owner'], [2, 'owner']]);
    const other = await store.findLogin('other@example.test');
    assert.equal(other?.passwordHash, 'scrypt$three');
    assert.equal(await store.getPasswordHash(4), undefined, 'no password, no user');
    const session = await store.findSession('h1');
    assert.equal(session?.userId, other?.userId, 'the open session is its owner');
    await db.close();
  });
});

describe('DuckDB migrations after a crash', () => {
  // DuckDB replays its write-ahead log on open; some statements cannot be replayed (1.5: adding a column to a table
  // whose defaults call functions fails with an internal error, and the file cannot be opened at all). Each
  // migration, committed and then killed before any checkpoint, must leave a database that opens.
  it('opens after SIGKILL right after each migration commits, with every migration applied', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-wal-'));
    try {
      for (const m of MIGRATIONS) {
        const path = join(dir, `v${m.version}.duckdb`);
        // A child process applies the migrations before m as migrate() does, then m without a checkpoint, and dies.
        const script = `
          const { DuckDatabase } = await import(${JSON.stringify(sourceModuleUrl('src/store/duckdb/database.ts'))});
          const { MIGRATIONS, migrate } = await import(${JSON.stringify(sourceModuleUrl('src/store/duckdb/migrations.ts'))});
          const db = await DuckDatabase.open(${JSON.stringify(path)});
          await migrate(db, ${m.version - 1});
          const m = MIGRATIONS.find((x) => x.version === ${m.version});
          await db.transaction(async (q) => {
            await q.exec(m.sql);
            await q.exec('INSERT INTO schema_migrations VALUES (?, ?, ?)', [m.version, m.name, new Date()]);
          });
          process.kill(process.pid, 'SIGKILL');`;
        const child = spawnSync(process.execPath, [...LOADER, '--input-type=module', '-e', script], { encoding: 'utf8' });
        assert.equal(child.signal, 'SIGKILL', `migration ${m.version}: ${child.stderr}`);
        const db = await DuckDatabase.open(path);
        const versions = (await db.serial((q) => q.rows<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version'))).map((r) => r.version);
        assert.equal(versions.at(-1), m.version, `migration ${m.version} was replayed`);
        await db.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('checkpoints after migrating, so the log holds no migration', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-wal-'));
    try {
      const path = join(dir, 'plumb.duckdb');
      const db = await DuckDatabase.open(path);
      await migrate(db);
      assert.ok(!existsSync(`${path}.wal`) || statSync(`${path}.wal`).size === 0, 'the write-ahead log is empty');
      await db.close();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
