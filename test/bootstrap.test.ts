// First-start bootstrap: one owner account and token, never a second, and a half-finished first start completed.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { bootstrap } from '../src/bootstrap.js';
import { hashToken } from '../src/domain/secrets.js';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { SqlMetaStore } from '../src/store/sql-meta-store.js';
import { migrate } from '../src/store/duckdb/migrations.js';

const fresh = async () => {
  const db = await DuckDatabase.open(':memory:');
  await migrate(db);
  return new SqlMetaStore(db);
};

describe('bootstrap', () => {
  it('creates the owner and a full-access token once', async () => {
    const meta = await fresh();
    const created = await bootstrap(meta, undefined);
    const shown = created?.shownToken ?? '';
    assert.ok(shown.startsWith('plumb_'));
    const token = await meta.findTokenByHash(hashToken(shown));
    assert.deepEqual(token?.abilities, ['*']);
    assert.equal(await bootstrap(meta, undefined), undefined);
    assert.equal((await meta.listAccounts()).length, 1);
    assert.equal((await meta.listTokens(created!.account.id)).length, 1);
    await meta.close();
  });

  it('uses the chosen token without showing it', async () => {
    const meta = await fresh();
    const created = await bootstrap(meta, 'chosen-token-0123456789abcdef');
    assert.equal(created?.shownToken, undefined);
    assert.ok(await meta.findTokenByHash(hashToken('chosen-token-0123456789abcdef')));
    await meta.close();
  });

  it('finishes a first start that died between the account and its token', async () => {
    const meta = await fresh();
    const owner = await meta.createAccount({ name: 'Owner', email: 'owner@localhost', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const created = await bootstrap(meta, undefined);
    assert.equal(created?.account.id, owner.id, 'no second account');
    assert.equal((await meta.listAccounts()).length, 1);
    assert.equal((await meta.listTokens(owner.id)).length, 1);
    // Revoking every token later is the operator's choice, not a half-finished start: no new token appears.
    await meta.revokeToken(owner.id, (await meta.listTokens(owner.id))[0]!.id);
    assert.equal(await bootstrap(meta, undefined), undefined);
    await meta.close();
  });
});
