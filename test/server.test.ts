// The real server process: first-start bootstrap printed once, data kept across restarts, clean SIGTERM,
// refusal of bad configuration.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { DuckEventStore } from '../src/store/duckdb/event-store.js';
import { runServerExpectingExit, startServer } from './helpers/process.js';

describe('server process', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'plumb-server-'));
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  it('bootstraps once, keeps data across a restart and stops cleanly on SIGTERM', async () => {
    const first = await startServer({ PLUMB_DATA_DIR: dataDir });
    const token = /Owner API token \(shown once, store it now\): (plumb_\S+)/.exec(first.stdout())?.[1];
    assert.ok(token, first.stdout());
    const auth = { authorization: `Bearer ${token}`, 'content-type': 'application/json' };
    const created = await fetch(`${first.url}/v1/sites`, { method: 'POST', headers: auth, body: JSON.stringify({ name: 'Kept' }) });
    assert.equal(created.status, 200);
    const site = (await created.json()) as { id: string };
    assert.equal(await first.stop(), 0);

    const second = await startServer({ PLUMB_DATA_DIR: dataDir });
    assert.doesNotMatch(second.stdout(), /Owner API token/, 'a restart never bootstraps again');
    const got = await fetch(`${second.url}/v1/sites/${site.id}`, { headers: auth });
    assert.equal(got.status, 200);
    assert.equal(((await got.json()) as { name: string }).name, 'Kept');
    const account = (await (await fetch(`${second.url}/v1/account`, { headers: auth })).json()) as { id: number; name: string };
    assert.deepEqual([account.id, account.name], [1, 'Owner']);
    assert.equal(await second.stop(), 0);
  });

  it('uses PLUMB_BOOTSTRAP_TOKEN as the owner token without printing it', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-boot-'));
    const chosen = 'chosen-bootstrap-token-0123456789';
    const server = await startServer({ PLUMB_DATA_DIR: dir, PLUMB_BOOTSTRAP_TOKEN: chosen });
    assert.doesNotMatch(server.stdout(), new RegExp(chosen));
    const res = await fetch(`${server.url}/v1/token`, { headers: { authorization: `Bearer ${chosen}` } });
    assert.equal(res.status, 200);
    assert.deepEqual(((await res.json()) as { abilities: string[] }).abilities, ['*']);
    await server.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('writes every accepted hit before exiting on SIGTERM', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-flush-'));
    const token = 'flush-bootstrap-token-0123456789';
    const server = await startServer({ PLUMB_DATA_DIR: dir, PLUMB_BOOTSTRAP_TOKEN: token });
    const created = await fetch(`${server.url}/v1/sites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Flushed' }),
    });
    const site = ((await created.json()) as { id: string }).id;
    const agent = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
    let accepted = 0;
    for (let i = 0; i < 300; i += 30) {
      const batch = await Promise.all(
        Array.from({ length: 30 }, (_, j) =>
          fetch(`${server.url}/?sid=${site}&h=https%3A%2F%2Fex.test&p=%2Fpage-${i + j}`, { headers: { 'user-agent': agent } }),
        ),
      );
      accepted += batch.filter((r) => r.status === 200).length;
    }
    assert.equal(accepted, 300);
    // SIGTERM right away, long before the next timed flush.
    assert.equal(await server.stop(), 0);
    const db = await DuckDatabase.open(join(dir, 'plumb.duckdb'));
    const events = await DuckEventStore.open(db);
    const hits = await events.listHits(site);
    assert.equal(hits.length, 300);
    assert.equal(new Set(hits.map((h) => h.pathname)).size, 300);
    await events.close();
    await db.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second server on the same data directory with a message, not a crash', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-server-'));
    const first = await startServer({ PLUMB_DATA_DIR: dir });
    try {
      const { code, output } = await runServerExpectingExit({ PLUMB_DATA_DIR: dir });
      assert.equal(code, 1);
      assert.match(output, /is in use by another Plumb process \(pid \d+\).*PLUMB_DATA_DIR of its own/);
      assert.doesNotMatch(output, /triggerUncaughtException|IO Error/);
    } finally {
      await first.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses to start on bad configuration, naming the variable', async () => {
    const { code, output } = await runServerExpectingExit({ PORT: 'http', PLUMB_ADMIN_TOKEN: 'short' });
    assert.equal(code, 2);
    assert.match(output, /PORT must be an integer/);
    assert.match(output, /PLUMB_ADMIN_TOKEN must be at least 24 characters/);
  });
});
