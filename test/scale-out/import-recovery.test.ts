// Imports in scale-out mode, where processes share PostgreSQL and ClickHouse: a process that dies mid-import has its
// import undone by another process once its heartbeat is older than the lease, while a live process's running
// import, seen by the same sweep, is left to finish; a process restarted on its data directory undoes its own
// earlier run's import at once. Runs in the scale-out pass (PLUMB_TEST_STORE=scale-out).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { assemble, type Plumb } from '../../src/assemble.js';
import { bootstrap } from '../../src/bootstrap.js';
import type { ImportTiming } from '../../src/ingest/peer-imports/import-owner.js';
import type { ImportRecord } from '../../src/store/types.js';
import { heldUpload, type HeldUpload } from '../helpers/held-upload.js';
import { startServer, type ServerProcess } from '../helpers/process.js';
import { freshScaleOut, scaleOutServerEnv, type ScaleOutFixture } from '../helpers/scale-out.js';
import { generateUmamiExport } from '../helpers/umami-export.js';
import { eventually } from '../helpers/eventually.js';

const ADMIN = 'import-recovery-admin-token-012345';
const OWNER = 'import-recovery-owner-token-012345';
const VISIT_RANGE = (1n << 32n) - 1n;


describe('imports of processes that die, in scale-out', () => {
  let fixture: ScaleOutFixture;
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  const plumbs: Plumb[] = [];
  let site: string;
  const source = generateUmamiExport({ websiteId: '94db1cb1-74f4-4a40-ad6c-962362670409', hostname: 'shop.example', start: Date.UTC(2026, 2, 1), days: 10, visitsPerDay: 100 });
  const lines = source.csv.split('\n');
  const half = `${lines.slice(0, Math.floor(lines.length / 2)).join('\n')}\n`;
  const rest = lines.slice(Math.floor(lines.length / 2)).join('\n');

  const dataDir = () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-node-'));
    dirs.push(dir);
    return dir;
  };
  const startReal = async (dir: string) => {
    const server = await startServer({ ...scaleOutServerEnv(fixture, dir), PLUMB_ADMIN_TOKEN: ADMIN, PLUMB_RATE_LIMITS: 'off', PLUMB_LOG_LEVEL: 'warn' });
    servers.push(server);
    return server;
  };
  /** A process in this one, with its own owner id and short import timing, listening on a port. */
  const startHere = async (owner: string, timing: Partial<ImportTiming>) => {
    const plumb = await assemble({
      dbPath: ':memory:',
      scaleOut: fixture.options,
      redisPrefix: fixture.redisPrefix,
      adminToken: ADMIN,
      rateLimits: false,
      reportEmailTimer: false,
      importOwner: owner,
      importTiming: timing,
    });
    plumbs.push(plumb);
    await plumb.app.listen({ port: 0, host: '127.0.0.1' });
    return { plumb, url: `http://127.0.0.1:${(plumb.app.server.address() as AddressInfo).port}` };
  };
  const uploads: HeldUpload[] = [];
  const upload = (url: string, name: string): HeldUpload => {
    const held = heldUpload(`${url}/admin/imports/umami?site_id=${site}&file_name=${name}`, ADMIN, 'text/csv');
    uploads.push(held);
    return held;
  };
  const importNamed = async (plumb: Plumb, name: string): Promise<ImportRecord | undefined> =>
    (await plumb.meta.listImports(site)).find((i) => i.fileName === name);
  /** Stored hits of an import (its visit id range). */
  const hitsOf = async (plumb: Plumb, record: ImportRecord) =>
    (await plumb.events.listHits(site)).filter((h) => h.visitId >= record.visitIdBase && h.visitId <= record.visitIdBase + VISIT_RANGE).length;
  const kill = async (server: ServerProcess) => {
    const exited = new Promise((resolve) => server.child.once('exit', resolve));
    server.child.kill('SIGKILL');
    await exited;
  };

  before(async () => {
    fixture = await freshScaleOut();
    const first = await startHere('setup', {});
    await bootstrap(first.plumb.meta, OWNER);
    const res = await fetch(`${first.url}/v1/sites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Shop', domain: 'shop.example', timezone: 'UTC' }),
    });
    site = ((await res.json()) as { id: string }).id;
  });

  after(async () => {
    // A test that failed midway leaves uploads open, which a closing server would wait for.
    for (const u of uploads) u.destroy();
    for (const s of servers) if (s.child.exitCode === null && s.child.signalCode === null) await s.stop();
    for (const p of plumbs) await p.close();
    await fixture.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it("undoes a dead process's import after its lease, and leaves a live process's running import alone", async () => {
    // A lives throughout, renewing its import's heartbeat every 200 ms; the real process is killed mid-import.
    const a = await startHere('process-a', { heartbeatMs: 200, leaseMs: 2000, sweepMs: 60_000 });
    const real = await startReal(dataDir());
    const live = upload(a.url, 'live.csv');
    const dying = upload(real.url, 'dying.csv');
    await live.write(half);
    await dying.write(half);
    const [liveRecord, dyingRecord] = await eventually(async () => {
      const l = await importNamed(a.plumb, 'live.csv');
      const d = await importNamed(a.plumb, 'dying.csv');
      return l && d && (await hitsOf(a.plumb, l)) > 0 && (await hitsOf(a.plumb, d)) > 0 ? [l, d] : undefined;
    }, 'both imports to have stored hits');
    await kill(real);
    await dying.answer.catch(() => undefined);

    // B takes imports whose heartbeat is over 2 s old for orphans, and looks every 300 ms.
    const b = await startHere('process-b', { heartbeatMs: 200, leaseMs: 2000, sweepMs: 300 });
    const undone = await eventually(async () => {
      const d = await b.plumb.meta.getImport(dyingRecord.id);
      return d?.status === 'failed' ? d : undefined;
    }, "the dead process's import to be undone");
    assert.equal(undone.owner, 'process-b', 'undone by the sweeping process');
    assert.match(undone.failure ?? '', /^interrupted: the server stopped during the import/);
    assert.equal(await hitsOf(b.plumb, dyingRecord), 0, 'none of its hits is left');

    // Swept many times meanwhile (B looks every 300 ms), the live import is still running and still has its hits.
    const stillRunning = await b.plumb.meta.getImport(liveRecord.id);
    assert.deepEqual([stillRunning?.status, stillRunning?.owner], ['running', 'process-a']);
    assert.ok((await hitsOf(b.plumb, liveRecord)) > 0);
    assert.deepEqual(await b.plumb.importSweeper.sweep(), [], 'a sweep now undoes nothing');

    await live.write(rest);
    const done = await live.end();
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.deepEqual([done.body.status, done.body.failure_reason], ['done', null]);
    assert.equal(await hitsOf(a.plumb, liveRecord), done.body.imported, 'every hit of the live import, and only those, is stored');

    const listed = await b.plumb.app.inject({ method: 'GET', url: `/admin/imports?site_id=${site}`, headers: { authorization: `Bearer ${ADMIN}` } });
    const byName = new Map(listed.json().data.map((i: any) => [i.file_name, [i.status, i.failure_reason?.slice(0, 12) ?? null]]));
    assert.deepEqual([byName.get('live.csv'), byName.get('dying.csv')], [['done', null], ['failed', 'interrupted:']]);
  });

  it('a process restarted on its data directory undoes its own earlier run\'s import at start', async () => {
    // Only the restarted process may undo this import. The in-process ones above stop sweeping: B looks every 300 ms
    // with a lease of 2 s, so on a loaded machine it took the import over while the process restarted, and was
    // still undoing it when the restarted process looked (which then left it to B, its owner by then).
    for (const p of plumbs) await p.importSweeper.close();
    const dir = dataDir();
    const first = await startReal(dir);
    const held = upload(first.url, 'restarted.csv');
    await held.write(half);
    const probe = plumbs[0]!;
    const record = await eventually(async () => {
      const r = await importNamed(probe, 'restarted.csv');
      return r && (await hitsOf(probe, r)) > 0 ? r : undefined;
    }, 'the import to have stored hits');
    await kill(first);
    await held.answer.catch(() => undefined);
    // Its heartbeat is seconds old, well within the default lease of a minute: only the owner's own node id tells.
    const second = await startReal(dir);
    const after = await probe.meta.getImport(record.id);
    assert.equal(after?.status, 'failed');
    assert.match(after?.failure ?? '', /^interrupted/);
    assert.equal(await hitsOf(probe, record), 0);
    assert.equal(await second.stop(), 0);
  });
});
