// Imports are whole or not at all, even when the server dies: a real server is killed (SIGKILL) while an Umami import
// has written part of its hits and a Fathom upload is spooled to disk; imported days a killed import had written
// are left in its database too. The next start finishes both imports as failed with a reason, removes every row
// they wrote (reports count none of it) and their spool, and the same file then imports whole.

import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { heldUpload } from './helpers/held-upload.js';
import { startServer, type ServerProcess } from './helpers/process.js';
import { generateUmamiExport } from './helpers/umami-export.js';
import { eventually } from './helpers/eventually.js';

const OWNER = 'recovery-bootstrap-token-0123456789';
const ADMIN = 'recovery-admin-token-0123456789abc';
const START = Date.UTC(2026, 2, 1);

async function api(server: ServerProcess, token: string, method: string, path: string, body?: unknown) {
  const res = await fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: res.status, body: (await res.json()) as any };
}


describe('an import interrupted by the server dying', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-import-kill-'));
  const servers: ServerProcess[] = [];
  after(async () => {
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop();
    rmSync(dir, { recursive: true, force: true });
  });
  const start = async () => {
    const server = await startServer({ PLUMB_DATA_DIR: dir, PLUMB_BOOTSTRAP_TOKEN: OWNER, PLUMB_ADMIN_TOKEN: ADMIN, PLUMB_LOG_LEVEL: 'warn' });
    servers.push(server);
    return server;
  };

  it('is finished as failed at the next start, with nothing it wrote left in reports or on disk', async () => {
    const first = await start();
    // The test polls reports: the top tier's limits.
    assert.equal((await api(first, ADMIN, 'POST', '/admin/accounts/1', { tier: 6 })).status, 200);
    const created = await api(first, OWNER, 'POST', '/v1/sites', { name: 'Moving', domain: 'umami.example', timezone: 'UTC' });
    const site = created.body.id as string;
    const pageviews = async (server: ServerProcess) => {
      const res = await api(server, OWNER, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-03-01&date_to=2026-03-30`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return Number(res.body[0]?.pageviews ?? 0);
    };

    // Umami: the first half of the export sent, the rest held back; the hits written so far are stored.
    const source = generateUmamiExport({ websiteId: '94db1cb1-74f4-4a40-ad6c-962362670409', hostname: 'umami.example', start: START, days: 30, visitsPerDay: 100 });
    const lines = source.csv.split('\n');
    const half = Math.floor(lines.length / 2);
    const umami = heldUpload(`${first.url}/admin/imports/umami?site_id=${site}&file_name=umami.csv`, ADMIN, 'text/csv');
    await umami.write(`${lines.slice(0, half).join('\n')}\n`);
    const partial = await eventually(async () => ((await pageviews(first)) > 0 ? pageviews(first) : undefined), 'the first hits of the import to be stored');
    assert.ok(partial < source.numbers.pageviews, `${partial} of ${source.numbers.pageviews} pageviews stored before the kill`);

    // Fathom: part of a zip uploaded (a zip is read only once whole), waiting in the spool.
    const fathom = heldUpload(`${first.url}/admin/imports/fathom?site_id=${site}&file_name=fathom.zip`, ADMIN, 'application/zip');
    await fathom.write(new Uint8Array(256 * 1024).fill(7));
    const spoolRoot = join(dir, 'import-spool');
    await eventually(async () => (existsSync(spoolRoot) && readdirSync(spoolRoot).some((d) => existsSync(join(spoolRoot, d, 'export.zip'))) ? true : undefined), 'the upload to be spooled');
    const running = await api(first, ADMIN, 'GET', `/admin/imports?site_id=${site}`);
    assert.deepEqual(running.body.data.map((i: any) => [i.kind, i.status, i.failure_reason]), [['umami', 'running', null], ['fathom', 'running', null]]);
    const fathomId = running.body.data[1].id as string;

    first.child.kill('SIGKILL');
    await Promise.allSettled([umami.answer, fathom.answer]);
    await new Promise((resolve) => (first.child.exitCode === null && first.child.signalCode === null ? first.child.once('exit', resolve) : resolve(undefined)));

    // A process killed while writing imported days leaves some behind: written here into its database as it would.
    const db = await DuckDatabase.open(join(dir, 'plumb.duckdb'));
    await db.serial((q) =>
      q.exec(
        `INSERT INTO imported_daily (import_id, site_id, day, dimension, value, pageviews, visits, visitors, bounces, visit_duration, lacks)
         VALUES (?, ?, DATE '2026-03-02', '', '', 500, 0, 0, 0, 0, 15), (?, ?, DATE '2026-03-03', '', '', 700, 0, 0, 0, 0, 15)`,
        [fathomId, site, fathomId, site],
      ),
    );
    await db.close();
    assert.ok(readdirSync(spoolRoot).length > 0, 'the spool is left on disk');

    const second = await start();
    const after = await api(second, ADMIN, 'GET', `/admin/imports?site_id=${site}`);
    assert.deepEqual(after.body.data.map((i: any) => [i.kind, i.status, i.imported]), [['umami', 'failed', 0], ['fathom', 'failed', 0]]);
    for (const i of after.body.data) assert.match(i.failure_reason, /^interrupted: the server stopped during the import/);
    assert.equal(await pageviews(second), 0, 'no hit of the interrupted Umami import and no day of the Fathom one is counted');
    const byDay = await api(second, OWNER, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_grouping=day&date_from=2026-03-01&date_to=2026-03-05`);
    assert.equal(byDay.body.reduce((n: number, r: { pageviews: string }) => n + Number(r.pageviews), 0), 0);
    assert.deepEqual(readdirSync(spoolRoot), [], 'the dead run\'s spool is removed');

    // The same file then imports whole.
    const again = heldUpload(`${second.url}/admin/imports/umami?site_id=${site}&file_name=umami.csv`, ADMIN, 'text/csv');
    await again.write(source.csv);
    const done = await again.end();
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body.status, 'done');
    assert.equal(done.body.failure_reason, null);
    assert.equal(await pageviews(second), source.numbers.pageviews);
    assert.equal(await second.stop(), 0);

    // In the database itself: nothing of the interrupted imports.
    const check = await DuckDatabase.open(join(dir, 'plumb.duckdb'));
    const [days] = await check.serial((q) => q.rows<{ n: bigint }>('SELECT count(*) AS n FROM imported_daily WHERE import_id = ?', [fathomId]));
    await check.close();
    assert.equal(Number(days!.n), 0);
  });
});
