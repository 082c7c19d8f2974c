// First-start bootstrap: one owner account and token, never a second, and a half-finished first start completed;
// the first-start banner, which names the /setup address where the token is used, in the real server process too.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { bootstrap, firstStartBanner, openableAddress } from '../src/bootstrap.js';
import { hashToken } from '../src/domain/secrets.js';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { SqlMetaStore } from '../src/store/sql-meta-store.js';
import { migrate } from '../src/store/duckdb/migrations.js';
import { startServer } from './helpers/process.js';

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

describe('first-start banner', () => {
  const created = {
    account: { id: 1, name: 'Owner' },
    shownToken: 'plumb_0123456789abcdef',
  } as Parameters<typeof firstStartBanner>[0];

  it('prints the token, then the /setup address to open with it, the dashboard and the script tag', () => {
    assert.equal(
      firstStartBanner(created, 'http://127.0.0.1:8080'),
      [
        'Plumb created the first account ("Owner", id 1).',
        '  Owner API token (shown once, store it now): plumb_0123456789abcdef',
        '  Set up your dashboard login: open http://127.0.0.1:8080/setup and paste the token',
        '  Dashboard and API: http://127.0.0.1:8080',
        '  Tracking script: <script src="http://127.0.0.1:8080/script.js" data-site="SITE_ID" defer></script>',
      ].join('\n'),
    );
    const chosen = firstStartBanner({ ...created, shownToken: undefined }, 'http://127.0.0.1:8080');
    assert.match(chosen, /^ {2}Owner API token: the value of PLUMB_BOOTSTRAP_TOKEN$/m);
    assert.match(chosen, /^ {2}Set up your dashboard login: open http:\/\/127\.0\.0\.1:8080\/setup and paste the token$/m);
  });

  it('shows a wildcard listening host as 127.0.0.1, and PLUMB_PUBLIC_URL when it is set', () => {
    for (const listening of ['http://0.0.0.0:8080', 'http://[::]:8080']) {
      assert.equal(openableAddress(listening), 'http://127.0.0.1:8080');
      assert.match(firstStartBanner(created, listening), /open http:\/\/127\.0\.0\.1:8080\/setup /);
    }
    for (const listening of ['http://127.0.0.1:8080', 'http://192.168.1.20:8080', 'http://[::1]:8080', 'http://plumb.lan:8080']) {
      assert.equal(openableAddress(listening), listening);
    }
    const behindProxy = firstStartBanner(created, 'http://0.0.0.0:8080', 'https://stats.example.com');
    assert.match(behindProxy, /open https:\/\/stats\.example\.com\/setup /);
    assert.match(behindProxy, /Dashboard and API: https:\/\/stats\.example\.com$/m);
    assert.match(behindProxy, /<script src="https:\/\/stats\.example\.com\/script\.js"/);
  });

  it('the server listening on 0.0.0.0 prints a /setup address that opens the setup form, and no banner on a restart', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plumb-banner-'));
    try {
      const server = await startServer({ PLUMB_DATA_DIR: dataDir, HOST: '0.0.0.0' });
      const port = new URL(server.url).port;
      const setup = /Set up your dashboard login: open (\S+) and paste the token/.exec(server.stdout())?.[1];
      assert.equal(setup, `http://127.0.0.1:${port}/setup`, server.stdout());
      const form = await fetch(setup!);
      assert.equal(form.status, 200);
      assert.match(await form.text(), /Owner API token/);
      assert.equal(await server.stop(), 0);
      const again = await startServer({ PLUMB_DATA_DIR: dataDir, HOST: '0.0.0.0' });
      assert.doesNotMatch(again.stdout(), /\/setup/);
      assert.equal(await again.stop(), 0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('with PLUMB_PUBLIC_URL, the server prints the public /setup address', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'plumb-banner-'));
    try {
      const server = await startServer({ PLUMB_DATA_DIR: dataDir, PLUMB_PUBLIC_URL: 'https://stats.example.com/' });
      assert.match(server.stdout(), /^ {2}Set up your dashboard login: open https:\/\/stats\.example\.com\/setup and paste the token$/m);
      assert.equal(await server.stop(), 0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
