// Durability: a hit the collector acknowledged survives SIGKILL during sustained ingestion (hit log, replayed
// on start), is stored exactly once, and the log holds no IP address or user agent.

import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { DuckEventStore } from '../src/store/duckdb/event-store.js';
import { startServer } from './helpers/process.js';

const AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const TOKEN = 'durability-bootstrap-token-0123456789';

describe('acknowledged hits survive SIGKILL', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-kill-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('loses none and duplicates none', async () => {
    const first = await startServer({ PLUMB_DATA_DIR: dir, PLUMB_BOOTSTRAP_TOKEN: TOKEN, PLUMB_TRUST_PROXY: 'true' });
    const created = await fetch(`${first.url}/v1/sites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Killed' }),
    });
    const site = ((await created.json()) as { id: string }).id;

    // 16 senders send hits back to back, each with a unique path; remember every acknowledged one.
    const acknowledged = new Set<string>();
    let stop = false;
    let n = 0;
    const sender = async () => {
      while (!stop) {
        const path = `/p-${n++}`;
        try {
          const res = await fetch(`${first.url}/?sid=${site}&h=https%3A%2F%2Fex.test&p=${encodeURIComponent(path)}`, {
            headers: { 'user-agent': AGENT, 'x-forwarded-for': '81.2.69.142' },
          });
          if (res.status === 200) acknowledged.add(path);
        } catch {
          // the connection died with the server: not acknowledged
        }
      }
    };
    const senders = Array.from({ length: 16 }, sender);
    // Killed once 200 hits are acknowledged (however long a busy machine takes), while the senders keep going.
    for (let waited = 0; acknowledged.size < 200 && waited < 120_000; waited += 50) await sleep(50);
    first.child.kill('SIGKILL'); // no flush, no goodbye
    stop = true;
    await Promise.all(senders);
    assert.ok(acknowledged.size >= 200, `only ${acknowledged.size} hits acknowledged before the kill`);

    // The log, and the record files waiting for the store beside it, hold stored-hit fields only.
    const logDir = join(dir, 'hit-log');
    const logText = readdirSync(logDir, { recursive: true, withFileTypes: true })
      .filter((f) => f.isFile())
      .map((f) => readFileSync(join(f.parentPath, f.name), 'utf8'))
      .join('');
    assert.ok(logText.length > 0, 'something was logged');
    assert.ok(!logText.includes('81.2.69.142'), 'no IP address in the log');
    assert.ok(!logText.includes('Gecko/20100101'), 'no user agent in the log');

    // Restart: the log is replayed; then stop cleanly and look at the database itself.
    const second = await startServer({ PLUMB_DATA_DIR: dir, PLUMB_BOOTSTRAP_TOKEN: TOKEN });
    assert.equal(await second.stop(), 0);
    const db = await DuckDatabase.open(join(dir, 'plumb.duckdb'));
    const events = await DuckEventStore.open(db);
    const hits = await events.listHits(site);
    await events.close();
    await db.close();
    const stored = new Map<string, number>();
    for (const h of hits) stored.set(h.pathname, (stored.get(h.pathname) ?? 0) + 1);
    const lost = [...acknowledged].filter((p) => !stored.has(p));
    assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.size} acknowledged hits lost`);
    const twice = [...stored].filter(([, count]) => count > 1);
    assert.deepEqual(twice, [], 'no hit stored twice');
  });
});
