// DuckDB migration 21 makes the sites table again with a Plausible script id column: every site recorded before
// keeps its settings, domains and Umami id, and has no script id until one is given.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';

describe('DuckDB migration 21: Plausible script ids of sites', () => {
  it('keeps the sites recorded before, and their order, and stores a script id afterwards', async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db, 20);
    await db.serial((q) =>
      q.exec(`INSERT INTO sites (id, account_id, name, sharing, share_password_hash, timezone, multi_domain, multi_domain_option,
                created_at, updated_at, domains, umami_website_id)
              VALUES ('AAAAAAAA', 1, 'First', 'none', NULL, 'UTC', false, NULL, TIMESTAMP '2026-01-01 10:00:00', TIMESTAMP '2026-01-01 10:00:00', 'a.example', '94db1cb1-74f4-4a40-ad6c-962362670409'),
                     ('BBBBBBBB', 1, 'Second', 'public', NULL, 'Europe/Berlin', true, 'combined', TIMESTAMP '2026-01-01 10:00:00', TIMESTAMP '2026-01-01 10:00:00', '', NULL)`),
    );
    assert.ok((await migrate(db)).includes(21));
    const meta = new SqlMetaStore(db);
    const page = await meta.listSites(1, { limit: 10 });
    assert.deepEqual(
      page.items.map((s) => [s.id, s.name, s.sharing, s.timezone, s.multiDomainOption, s.domains, s.umamiWebsiteId, s.plausibleScriptId]),
      [
        ['AAAAAAAA', 'First', 'none', 'UTC', null, ['a.example'], '94db1cb1-74f4-4a40-ad6c-962362670409', null],
        ['BBBBBBBB', 'Second', 'public', 'Europe/Berlin', 'combined', [], null, null],
      ],
    );
    await meta.updateSite('BBBBBBBB', { plausibleScriptId: 'gYyxvZhkMzdzXBAtSeSNz' });
    assert.equal((await meta.findSiteByPlausibleScriptId('gYyxvZhkMzdzXBAtSeSNz'))?.id, 'BBBBBBBB');
    const created = await meta.createSite({
      accountId: 1, name: 'Third', sharing: 'none', sharePasswordHash: null, timezone: 'UTC', multiDomain: false, multiDomainOption: null,
    });
    assert.equal(created.plausibleScriptId, null);
    await db.close();
  });
});
