// Upgrades of the embedded store: a data directory written by an earlier release (test/fixtures/upgrade/, made by
// that release's own server and CLI) opens with today's server, is migrated and answers every recorded /v1 report as
// that release did; a data directory from a newer release is refused at start with a message, and left unchanged.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { MIGRATIONS } from '../../src/store/duckdb/migrations.js';
import { runServerExpectingExit, startServer, type ServerProcess } from '../helpers/process.js';
import { ROOT } from '../helpers/root.js';

const FIXTURE = join(ROOT, 'test/fixtures/upgrade');
/** The tokens the earlier release was started with (make-fixture.mjs). */
const OWNER_TOKEN = 'upgrade-owner-token-0123456789abcdef';
const ADMIN_TOKEN = 'upgrade-admin-token-0123456789abcdef';

interface Recorded {
  made: string;
  sites: { blog: string; demo: string };
  management: { accounts: unknown[]; sites: unknown[]; goals: unknown[]; tokens: unknown[] };
  answers: { query: string; answer: Record<string, unknown>[] }[];
}
const recorded = JSON.parse(readFileSync(join(FIXTURE, 'answers.json'), 'utf8')) as Recorded;

/** The fixture's data directory, unpacked into a new temporary folder. */
function unpack(): { root: string; dataDir: string } {
  const root = mkdtempSync(join(tmpdir(), 'plumb-upgrade-'));
  execFileSync('tar', ['-xzf', join(FIXTURE, 'data.tar.gz'), '-C', root]);
  return { root, dataDir: join(root, 'data') };
}

/** Rows in a stable order: groups of equal sort keys may come in either order, and the set is what is compared. */
const unordered = (rows: Record<string, unknown>[]) => rows.map((r) => JSON.stringify(r)).sort();

describe('a data directory written by an earlier release', () => {
  let server: ServerProcess;
  let root: string;
  const call = async (token: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(server.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };

  let fixtureVersion: number;
  before(async () => {
    const unpacked = unpack();
    root = unpacked.root;
    const db = await DuckDatabase.open(join(unpacked.dataDir, 'plumb.duckdb'));
    fixtureVersion = (await db.serial((q) => q.rows<{ v: number }>('SELECT max(version) AS v FROM schema_migrations')))[0]!.v;
    await db.close();
    server = await startServer({ PLUMB_DATA_DIR: unpacked.dataDir, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN, PLUMB_RATE_LIMITS: 'off' });
  });
  after(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('was made by a release with fewer migrations than this one', () => {
    // Otherwise this test would migrate nothing: remake the fixture from a newer commit then (its README).
    assert.equal(fixtureVersion, 19);
    assert.ok(MIGRATIONS.at(-1)!.version > fixtureVersion);
  });

  it('answers every report the earlier release gave, unchanged', async () => {
    assert.ok(recorded.answers.length >= 15);
    for (const { query, answer } of recorded.answers) {
      const res = await call(OWNER_TOKEN, 'GET', `/v1/aggregations?${query}`);
      assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(unordered(res.body), unordered(answer), query);
    }
  });

  it('keeps accounts, tokens, sites and goals', async () => {
    assert.deepEqual((await call(ADMIN_TOKEN, 'GET', '/admin/accounts')).body, recorded.management.accounts);
    const sites = (await call(OWNER_TOKEN, 'GET', '/v1/sites?limit=100')).body.data as { id: string; name: string; timezone: string }[];
    assert.deepEqual(sites.map((s) => ({ id: s.id, name: s.name, timezone: s.timezone })), recorded.management.sites);
    const goals = (await call(OWNER_TOKEN, 'GET', `/v1/sites/${recorded.sites.blog}/events`)).body.data as { id: string; name: string }[];
    assert.deepEqual(goals.map((g) => [g.id, g.name]), (recorded.management.goals as { id: string; name: string }[]).map((g) => [g.id, g.name]));
    const second = (recorded.management.accounts as { id: number }[]).at(-1)!.id;
    const tokens = (await call(ADMIN_TOKEN, 'GET', `/admin/accounts/${second}/tokens`)).body.data as { id: string; name: string; abilities: string[] }[];
    assert.deepEqual(tokens.map((t) => ({ id: t.id, name: t.name, abilities: t.abilities })), recorded.management.tokens);
  });

  it('is migrated: what later versions added works on it, and it records new hits', async () => {
    // Version 21: Plausible script ids of sites.
    const site = await call(OWNER_TOKEN, 'POST', `/v1/sites/${recorded.sites.blog}`, { plausible_script_id: 'AbCdEfGh' });
    assert.equal(site.status, 200, JSON.stringify(site.body));
    assert.equal((await call(OWNER_TOKEN, 'GET', `/v1/sites/${recorded.sites.blog}`)).body.plausible_script_id, 'AbCdEfGh');
    const totals = async () =>
      (await call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${recorded.sites.blog}&aggregates=pageviews&date_from=2026-11-19`)).body[0].pageviews;
    const before = Number(await totals());
    const hit = await fetch(`${server.url}/?sid=${recorded.sites.blog}&h=https%3A%2F%2Fblog.example&p=%2Fnew`, { headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64) Chrome/126.0.0.0 Safari/537.36' } });
    assert.equal(hit.status, 200);
    for (let i = 0; i < 50 && Number(await totals()) === before; i++) await new Promise((r) => setTimeout(r, 200));
    assert.equal(Number(await totals()), before + 1);
  });
});

describe('a data directory written by a newer release', () => {
  it('is refused at start with a message saying so, and left as it was', async () => {
    const { root, dataDir } = unpack();
    try {
      const file = join(dataDir, 'plumb.duckdb');
      // A newer release: its schema has a version past this code's newest.
      const newer = MIGRATIONS.at(-1)!.version + 5;
      const db = await DuckDatabase.open(file);
      await db.serial((q) => q.exec("INSERT INTO schema_migrations VALUES (?, 'from a later release', now())", [newer]));
      await db.close();
      const hash = () => createHash('sha256').update(readFileSync(file)).digest('hex');
      const before = hash();

      const { code, output } = await runServerExpectingExit({ PLUMB_DATA_DIR: dataDir, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN });
      assert.equal(code, 1, output);
      assert.match(output, new RegExp(`Plumb cannot start: .*plumb\\.duckdb: the database has schema version ${newer}, written by a newer release of Plumb; this release knows versions up to ${MIGRATIONS.at(-1)!.version}`));
      assert.doesNotMatch(output, /\n\s+at /, 'a message, not a stack trace');
      assert.equal(hash(), before, 'the database file is unchanged');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
