// The DuckDB MetaStore on a real database file: migrations, persistence across restarts, last-use batching.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import { MIGRATIONS, migrate } from '../../src/store/duckdb/migrations.js';

describe('SqlMetaStore on a file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-store-'));
  const path = join(dir, 'plumb.duckdb');
  after(() => rmSync(dir, { recursive: true, force: true }));

  const open = async () => {
    const db = await DuckDatabase.open(path);
    const ran = await migrate(db);
    return { store: new SqlMetaStore(db), ran };
  };

  it('keeps everything across a close and reopen, migrating only once', async () => {
    const first = await open();
    assert.deepEqual(first.ran, MIGRATIONS.map((m) => m.version));
    const account = await first.store.createAccount({ name: 'A', email: 'a@a.test', timezone: 'UTC', tier: 2, subscriptionStatus: 'active' });
    const token = await first.store.createToken({ accountId: account.id, name: 't', abilities: ['*'], hash: 'h1', expiresAt: null });
    const site = await first.store.createSite({
      accountId: account.id, name: 'S', sharing: 'public', sharePasswordHash: null, timezone: 'Asia/Kolkata',
      multiDomain: true, multiDomainOption: 'combined',
    });
    const goal = await first.store.createGoal({ siteId: site.id, name: 'Buy', currency: 'euro' });
    const milestone = await first.store.createMilestone({ siteId: site.id, name: 'Launch', milestoneDate: '2024-02-29' });
    await first.store.touchTokens(new Map([[token.id, new Date('2026-01-02T03:04:05Z')]]));
    await first.store.close();

    const second = await open();
    assert.deepEqual(second.ran, []);
    assert.deepEqual(await second.store.getAccount(account.id), account);
    assert.deepEqual(await second.store.getSite(site.id), site);
    assert.deepEqual(await second.store.getGoal(site.id, goal.id), goal);
    assert.deepEqual(await second.store.getMilestone(site.id, milestone.id), milestone);
    assert.equal((await second.store.findTokenByHash('h1'))?.lastUsedAt?.toISOString(), '2026-01-02T03:04:05.000Z');
    // A later touch never moves last use backwards.
    await second.store.touchTokens(new Map([[token.id, new Date('2025-01-01T00:00:00Z')]]));
    assert.equal((await second.store.findTokenByHash('h1'))?.lastUsedAt?.toISOString(), '2026-01-02T03:04:05.000Z');
    const next = await second.store.createAccount({ name: 'B', email: 'b@b.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    assert.equal(next.id, account.id + 1, 'account ids continue after a restart');
    await second.store.close();
  });

  it('rolls a failed transaction back', async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db);
    await assert.rejects(
      db.transaction(async (q) => {
        await q.exec("INSERT INTO accounts (name, email, timezone, tier, subscription_status, created_at, updated_at) VALUES ('x','x','UTC',1,'active',now(),now())");
        throw new Error('boom');
      }),
      /boom/,
    );
    assert.deepEqual(await new SqlMetaStore(db).listAccounts(), []);
    await db.close();
  });

  it('opens with the memory limit it is given', async () => {
    const limited = await DuckDatabase.open(':memory:', { memoryLimit: '256MB' });
    const [row] = await limited.serial((q) => q.rows<{ limit: string }>("SELECT current_setting('memory_limit') AS limit"));
    assert.match(row!.limit, /^(256|244)\.\d* ?Mi?B$/);
    await limited.close();
  });
});
