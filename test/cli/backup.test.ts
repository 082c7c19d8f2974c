// `plumb backup DIR` and `plumb restore DIR` on real server processes: a backup taken while hits keep arriving holds
// exactly the hits acknowledged up to one moment (every one acknowledged before the command, none sent after its
// answer, no gaps), and after a restore every /v1 report equals the original server's at that moment. Restore
// refuses while the server runs, and refuses incomplete or altered backups without touching the data directory.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.js';
import { startServer, type ServerProcess } from '../helpers/process.js';

const OWNER_TOKEN = 'backup-owner-token-0123456789abcdef';
const ADMIN_TOKEN = 'backup-admin-token-0123456789abcdef';
const CHROME = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36';
type Row = Record<string, string>;

/**
 * An RE2 expression for the numbers 1..k written with four digits: a pathname `/during/0042` matches for k >= 42.
 * Built digit by digit (0000 never occurs).
 */
function upTo(k: number): string {
  const d = String(k).padStart(4, '0');
  const alternatives = [];
  for (let i = 0; i < 4; i++) {
    const digit = Number(d[i]);
    if (digit > 0) alternatives.push(`${d.slice(0, i)}[0-${digit - 1}]${'\\d'.repeat(3 - i)}`);
  }
  alternatives.push(d);
  return alternatives.join('|');
}

describe('plumb backup and restore', () => {
  const root = mkdtempSync(join(tmpdir(), 'plumb-backup-'));
  const dataDir = join(root, 'data');
  const backupDir = join(root, 'backups', 'first');
  const serverEnv = {
    PLUMB_DATA_DIR: dataDir, PLUMB_BOOTSTRAP_TOKEN: OWNER_TOKEN, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN,
    PLUMB_RATE_LIMITS: 'off', PLUMB_TRUST_PROXY: 'true', PLUMB_LOG_LEVEL: 'warn',
  };
  let server: ServerProcess | undefined;
  let site: string;
  let backupAnswer: { hits: number; visits: number; created_at: string; sha256: string; bytes: number };
  /** During-backup hits acknowledged before the command was run, and sent before its answer. */
  let ackedBefore = 0;
  let sentBeforeAnswer = 0;
  let sentInAll = 0;
  /** The original server's answers restricted to the hits of the backup's moment, by query. */
  const original = new Map<string, Row[]>();
  let snapshotHits = 0;

  const plumb = async (args: string[], env: Record<string, string>) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(args, env, (l) => out.push(l), (l) => err.push(l));
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const call = async (method: string, path: string, body?: string, token = OWNER_TOKEN, type = 'application/json') => {
    const res = await fetch(server!.url + path, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': type }) },
      ...(body === undefined ? {} : { body }),
    });
    return { status: res.status, body: (await res.json()) as any };
  };
  const queries = () => {
    const page = `entity=pageview&entity_id=${site}&date_from=2026-11-19&aggregates=visits,visitors,uniques,pageviews,avg_duration,bounce_rate`;
    const goal = `entity=event&site_id=${site}&entity_name=Signup&date_from=2026-11-19&aggregates=conversions,unique_conversions,value`;
    return [page, `${page}&field_grouping=pathname&sort_by=pathname:asc&limit=1000`, `${page}&date_grouping=day`, goal, `${goal}&date_grouping=day`];
  };
  const report = async (query: string, filters?: unknown[]) => {
    const res = await call('GET', `/v1/aggregations?${query}${filters ? `&filters=${encodeURIComponent(JSON.stringify(filters))}` : ''}`);
    assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    return res.body as Row[];
  };
  const hit = async (path: string, ip: string) => {
    const res = await fetch(`${server!.url}/?${new URLSearchParams({ sid: site, h: 'https://shop.example', p: path })}`, { headers: { 'user-agent': CHROME, 'x-forwarded-for': ip } });
    await res.arrayBuffer();
    return res;
  };

  before(async () => {
    server = await startServer(serverEnv);
    site = (await call('POST', '/v1/sites', JSON.stringify({ name: 'Shop' }))).body.id;
    assert.equal((await call('POST', `/v1/sites/${site}/events`, JSON.stringify({ name: 'Signup', currency: 'euro' }))).status, 200);
    // History: six days of visits over several pages, some converting.
    const lines = [];
    for (let day = 0; day < 6; day++) {
      for (let v = 0; v < 15 + day; v++) {
        const ip = `203.0.${day}.${v + 1}`;
        for (let i = 0; i <= v % 3; i++) {
          const ts = `2026-11-2${day} ${String(8 + (v % 10)).padStart(2, '0')}:${String(i * 2).padStart(2, '0')}:00`;
          const path = ['/', '/pricing', '/blog/a', '/about'][(v + i) % 4];
          lines.push({ type: 'pageview', site_id: site, timestamp: ts, url: `https://shop.example${path}`, user_agent: CHROME, ip });
          if (path === '/pricing' && v % 2 === 0) lines.push({ type: 'event', site_id: site, timestamp: ts, url: 'https://shop.example/pricing', name: 'Signup', value: 900 + v, user_agent: CHROME, ip });
        }
      }
    }
    const imported = await call('POST', '/admin/import', lines.map((l) => JSON.stringify(l)).join('\n'), ADMIN_TOKEN, 'application/x-ndjson');
    assert.equal(imported.body.rejected, 0, JSON.stringify(imported.body));
    // Live hits before the backup, still in the write buffer when it starts for all this test knows.
    for (let i = 0; i < 10; i++) assert.equal((await hit(['/', '/pricing'][i % 2]!, `192.0.2.${i + 1}`)).status, 200);

    // Hits keep arriving, one at a time, each its own visitor's only pageview, on its own numbered page.
    let writing = true;
    let acked = 0;
    const writer = (async () => {
      while (writing && sentInAll < 9999) {
        const n = ++sentInAll;
        const res = await hit(`/during/${String(n).padStart(4, '0')}`, `10.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`);
        assert.equal(res.status, 200);
        acked = n;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    while (acked < 20) await new Promise((r) => setTimeout(r, 5));
    ackedBefore = acked;
    const made = await plumb(['backup', backupDir, '--json'], { PLUMB_URL: server.url, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN });
    sentBeforeAnswer = sentInAll;
    assert.equal(made.code, 0, made.err);
    backupAnswer = JSON.parse(made.out);
    // A few more after the answer: none of them may be in the backup.
    const stopAt = sentInAll + 10;
    while (acked < stopAt) await new Promise((r) => setTimeout(r, 5));
    writing = false;
    await writer;

    // The backup's moment: the during-backup hits it holds, from the number of hits it reports.
    const historyAndLive = Number((await report(queries()[0]!, [{ property: 'pathname', operator: 'is not like', value: '/during/' }]))[0]!.pageviews);
    snapshotHits = backupAnswer.hits;
    const conversions = Number((await report(queries()[3]!))[0]!.conversions);
    const during = snapshotHits - historyAndLive - conversions;
    // The original server's reports as they were then: its history, and the first `during` of the hits sent since.
    const atTheMoment = [{ property: 'pathname', operator: 'matching', value: `^/(?:$|[^d]|during/(?:${upTo(during)})$)` }];
    for (const query of queries()) original.set(query, await report(query, atTheMoment));
  });
  after(async () => {
    await server?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  it('made the backup while collection went on, holding every hit acknowledged before the command and none sent after', () => {
    const inBackup = Number(original.get(queries()[0]!)![0]!.pageviews) + Number(original.get(queries()[3]!)![0]!.conversions);
    assert.equal(inBackup, snapshotHits, 'the pages of the moment add up to the hits the backup reports');
    const during = original.get(queries()[1]!)!.filter((r) => r.pathname!.startsWith('/during/')).length;
    assert.ok(during >= ackedBefore, `the backup holds ${during} hits sent during it; ${ackedBefore} were acknowledged before the command`);
    assert.ok(during <= sentBeforeAnswer, `the backup holds ${during} hits sent during it; only ${sentBeforeAnswer} were sent before its answer`);
    assert.ok(sentInAll > during, 'hits arrived after the backup');
    assert.deepEqual(readdirSync(backupDir).sort(), ['plumb-backup.json', 'plumb.duckdb']);
    const manifest = JSON.parse(readFileSync(join(backupDir, 'plumb-backup.json'), 'utf8'));
    assert.equal(manifest.sha256, backupAnswer.sha256);
    assert.match(backupAnswer.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
  });

  it('refuses a target that is not new or empty, and bad parameters, in the documented error shapes', async () => {
    const refused = await plumb(['backup', backupDir], { PLUMB_URL: server!.url, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN });
    assert.equal(refused.code, 1);
    assert.match(refused.err, /^plumb: HTTP 400: directory .*first is not empty \(it holds 2 entries\): give a new or empty directory/);
    for (const [body, field] of [[{ directory: 'relative/dir' }, 'directory'], [{}, 'directory'], [{ directory: 'x'.repeat(5000) }, 'directory']] as const) {
      const res = await call('POST', '/admin/backup', JSON.stringify(body), ADMIN_TOKEN);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.ok(res.body.errors[field], JSON.stringify(res.body));
    }
    assert.equal((await call('POST', '/admin/backup', JSON.stringify({ directory: join(root, 'x') }))).status, 401, 'an API token is no administrator');
    const file = join(root, 'a-file');
    writeFileSync(file, 'x');
    assert.match((await call('POST', '/admin/backup', JSON.stringify({ directory: file }), ADMIN_TOKEN)).body.errors.directory[0], /is not a directory/);
  });

  it('takes one backup at a time: a second asked for while one runs is refused with 409, and can be asked again after', async () => {
    const [a, b] = [join(root, 'backups', 'concurrent-a'), join(root, 'backups', 'concurrent-b')];
    // Both sent at once: the first holds the store's copy for far longer than the second takes to arrive.
    const answers = await Promise.all([a, b].map((directory) => call('POST', '/admin/backup', JSON.stringify({ directory }), ADMIN_TOKEN)));
    assert.deepEqual(answers.map((r) => r.status).sort(), [200, 409], JSON.stringify(answers.map((r) => r.body)));
    const refused = answers.find((r) => r.status === 409)!;
    assert.deepEqual(refused.body, { error: 'A backup is already running: wait for it to finish' });
    const refusedDir = answers[0]!.status === 409 ? a : b;
    assert.equal(existsSync(refusedDir), false, 'the refused one wrote nothing');
    // Once the first has finished, the same request succeeds.
    const again = await call('POST', '/admin/backup', JSON.stringify({ directory: refusedDir }), ADMIN_TOKEN);
    assert.equal(again.status, 200, JSON.stringify(again.body));
    assert.equal(again.body.hits, answers.find((r) => r.status === 200)!.body.hits);
  });

  it('answers 507 when the disk fills up, removing the partial copy, and goes on collecting; 400 on a read-only one', async (t) => {
    // A file system too small for the copy: a 256 KiB tmpfs, where the test may mount one (root in a container).
    const small = join(root, 'small');
    mkdirSync(small);
    if (spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=256k', 'tmpfs', small]).status !== 0) {
      t.skip('cannot mount a small tmpfs here (needs root)');
      return;
    }
    try {
      const res = await call('POST', '/admin/backup', JSON.stringify({ directory: join(small, 'b') }), ADMIN_TOKEN);
      assert.equal(res.status, 507, JSON.stringify(res.body));
      assert.match(res.body.error, /^Not enough disk space for the backup: no space left on the file system of .*small\/b: the partial backup was removed; the server and its data are unaffected$/);
      assert.deepEqual(readdirSync(join(small, 'b')), []);
      assert.equal((await hit('/after-full', '198.51.100.9')).status, 200);
      // A file system the server may not write to is the directory's fault: 400, not a server error.
      assert.equal(spawnSync('mount', ['-o', 'remount,ro', small]).status, 0);
      const readOnly = await call('POST', '/admin/backup', JSON.stringify({ directory: join(small, 'b') }), ADMIN_TOKEN);
      assert.equal(readOnly.status, 400, JSON.stringify(readOnly.body));
      assert.match(readOnly.body.errors.directory[0], /^the server cannot write to .*small\/b \(EROFS\)$/);
    } finally {
      spawnSync('umount', [small]);
    }
  });

  it('refuses to restore while the server runs on the data directory, naming it', async () => {
    const res = await plumb(['restore', backupDir], { PLUMB_DATA_DIR: dataDir });
    assert.equal(res.code, 1);
    assert.match(res.err, new RegExp(`^plumb: not restored: a Plumb server \\(pid ${server!.child.pid}\\) is running on .*data: stop it first`));
  });

  it('after a restore on the stopped server, answers every report as the original did at the backup\'s moment', async () => {
    assert.equal(await server!.stop(), 0);
    server = undefined;
    const res = await plumb(['restore', backupDir, '--json'], { PLUMB_DATA_DIR: dataDir });
    assert.equal(res.code, 0, res.err);
    const restored = JSON.parse(res.out);
    assert.equal(restored.backup.hits, snapshotHits);
    assert.deepEqual(readdirSync(restored.replaced_into).sort(), ['hit-log', 'plumb.duckdb'], 'what it replaced is kept aside');

    server = await startServer(serverEnv);
    for (const query of queries()) assert.deepEqual(await report(query), original.get(query), query);
    // The restored store records again (its hit log starts after the backup's).
    const before = Number((await report(queries()[0]!))[0]!.pageviews);
    assert.equal((await hit('/after-restore', '198.51.100.7')).status, 200);
    let now = before;
    for (let i = 0; i < 50 && now === before; i++) {
      await new Promise((r) => setTimeout(r, 200));
      now = Number((await report(queries()[0]!))[0]!.pageviews);
    }
    assert.equal(now, before + 1);
  });

  it('refuses a backup that did not finish or was altered, and leaves the data directory alone', async () => {
    await server!.stop();
    server = undefined;
    const before = readdirSync(dataDir).sort();
    const incomplete = join(root, 'backups', 'incomplete');
    mkdirSync(incomplete, { recursive: true });
    writeFileSync(join(incomplete, 'plumb.duckdb'), readFileSync(join(backupDir, 'plumb.duckdb')));
    let res = await plumb(['restore', incomplete], { PLUMB_DATA_DIR: dataDir });
    assert.equal(res.code, 1);
    assert.match(res.err, /incomplete holds no backup: it has no plumb-backup\.json/);

    writeFileSync(join(incomplete, 'plumb-backup.json'), readFileSync(join(backupDir, 'plumb-backup.json')));
    const altered = readFileSync(join(backupDir, 'plumb.duckdb'));
    altered.writeUInt8(altered.readUInt8(altered.length - 1) ^ 1, altered.length - 1);
    writeFileSync(join(incomplete, 'plumb.duckdb'), altered);
    res = await plumb(['restore', incomplete], { PLUMB_DATA_DIR: dataDir });
    assert.equal(res.code, 1);
    assert.match(res.err, /is not the file its backup wrote \(size or SHA-256 differ/);
    assert.deepEqual(readdirSync(dataDir).sort(), before);
    assert.ok(!existsSync(join(dataDir, 'plumb.duckdb.restoring')));
  });
});
