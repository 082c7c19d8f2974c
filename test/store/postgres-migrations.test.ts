// PostgreSQL migration 4 on a database that has data: each account's login becomes its first user and owner
// (accounts sharing an email share one user, with the lowest id's password), open sessions keep going as that user.
// And a database a newer release migrated is refused, left as it was.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { PgDatabase } from '../../src/store/postgres/database.js';
import { NewerSchemaError } from '../../src/store/newer-schema.js';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import { SqlTeamStore } from '../../src/store/sql-team-store.js';
import { DATABASE_URL, freshSchema } from '../helpers/postgres.js';

describe('PostgreSQL migration 4: people', () => {
  it("makes each account's login its first user, owner of the account, and keeps open sessions open", async () => {
    const { schema, drop } = await freshSchema();
    const db = new PgDatabase(DATABASE_URL, { schema });
    try {
      // The schema as it was before version 4.
      await db.transaction(async (q) => {
        await q.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)');
        for (const m of PG_MIGRATIONS.filter((m) => m.version < 4)) {
          await q.exec(m.sql);
          await q.exec('INSERT INTO schema_migrations VALUES (?, ?, now())', [m.version, m.name]);
        }
        const at = new Date('2026-11-01T10:00:00Z');
        const account = (id: number, email: string) =>
          q.exec('INSERT INTO accounts (id, name, email, timezone, tier, subscription_status, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [id, `A${id}`, email, 'UTC', 1, 'active', at, at]);
        await account(1, 'Owner@Example.test');
        await account(2, 'owner@example.test');
        await account(3, 'other@example.test');
        await account(4, 'nologin@example.test');
        for (const [id, hash] of [[1, 'scrypt$one'], [2, 'scrypt$two'], [3, 'scrypt$three']] as const) {
          await q.exec('INSERT INTO account_passwords VALUES (?, ?, ?)', [id, hash, at]);
        }
        await q.exec("INSERT INTO dashboard_sessions VALUES ('h1', 'owner', 3, NULL, 'c', NULL, ?, ?)", [at, new Date('2030-01-01T00:00:00Z')]);
      });
      assert.ok((await migratePostgres(db)).includes(4));
      const store = new SqlMetaStore(db);
      const team = new SqlTeamStore(db);
      const owner = await store.findLogin('OWNER@example.test');
      assert.deepEqual([owner?.account?.id, owner?.passwordHash], [1, 'scrypt$one'], 'the lowest id wins, as it logged in before');
      assert.deepEqual((await team.listMemberships(owner!.userId)).map((m) => [m.accountId, m.role]), [[1, 'owner'], [2, 'owner']]);
      const other = await store.findLogin('other@example.test');
      assert.equal(other?.passwordHash, 'scrypt$three');
      assert.equal(await store.getPasswordHash(4), undefined, 'no password, no user');
      assert.equal((await store.findSession('h1'))?.userId, other?.userId, 'the open session is its owner');
      // New users get ids after the migrated ones.
      const fresh = await team.createUser('new@example.test', null);
      assert.ok(fresh.id > other!.userId);
    } finally {
      await db.close();
      await drop();
    }
  });
});

describe('PostgreSQL written by a newer release', () => {
  it('is refused before anything changes, naming the versions', async () => {
    const { schema, drop } = await freshSchema();
    const db = new PgDatabase(DATABASE_URL, { schema });
    try {
      const known = PG_MIGRATIONS.at(-1)!.version;
      assert.equal((await migratePostgres(db)).length, PG_MIGRATIONS.length);
      // A newer release's migration: a version past this code's newest, with a table of its own.
      await db.transaction(async (q) => {
        await q.exec('CREATE TABLE from_the_future (id INTEGER)');
        await q.exec('INSERT INTO schema_migrations VALUES (?, ?, now())', [known + 1, 'from the future']);
      });
      const versions = async () => (await db.transaction((q) => q.rows<{ version: number }>('SELECT version FROM schema_migrations ORDER BY version'))).map((r) => r.version);
      const before = await versions();
      await assert.rejects(migratePostgres(db), (err: unknown) => {
        assert.ok(err instanceof NewerSchemaError);
        assert.deepEqual([err.found, err.known], [known + 1, known]);
        assert.match(err.message, new RegExp(`^PostgreSQL \\(DATABASE_URL\\): the database has schema version ${known + 1}, written by a newer release of Plumb; this release knows versions up to ${known}\\.`));
        return true;
      });
      assert.deepEqual(await versions(), before, 'left as it was');
      // The control: this release's own newest schema migrates (to nothing) without complaint.
      await db.transaction((q) => q.exec('DELETE FROM schema_migrations WHERE version = ?', [known + 1]));
      assert.deepEqual(await migratePostgres(db), []);
    } finally {
      await db.close();
      await drop();
    }
  });
});
