// Import speed: `plumb import` of generated NDJSON (the CLI in a process of its own, sending chunks to /admin/import
// of the real server, another process) against DuckDB's own read_ndjson loading the same file in the same run; the
// server's peak resident memory and the slowest /healthz answer while the import runs (asked from this process,
// which does nothing else meanwhile); then a check that every imported hit was stored. BENCH_IMPORT_HITS sets the
// size (default 1,000,000).

import { spawn } from 'node:child_process';
import { readFileSync, rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { AdminClient } from '../src/cli/admin-client.js';
import { demoTraffic } from '../src/ingest/demo-traffic.js';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { DuckEventStore } from '../src/store/duckdb/event-store.js';
import { startServer } from '../test/helpers/process.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const OWNER = 'bench-bootstrap-token-0123456789';

/** Generated traffic of about `hits` hits for `siteId`, one JSON object per line. */
function generate(siteId: string, hits: number): string {
  const days = 30;
  // demoTraffic makes about 2.3 hits a visit (pageviews and conversions).
  const visitsPerDay = Math.max(1, Math.round(hits / days / 2.3));
  const lines: string[] = [];
  for (const hit of demoTraffic({ siteId, start: new Date('2026-01-01T00:00:00Z'), days, visitsPerDay, seed: 11 })) {
    lines.push(JSON.stringify(hit));
    if (lines.length === hits) break;
  }
  return lines.join('\n');
}

/** Resident memory of a process in bytes (Linux), 0 where /proc is not there. */
function rss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Runs `plumb` (from source) in a child process; resolves with the import summary it prints. */
function runCli(args: string[], env: Record<string, string>): Promise<{ imported: number; rejected: number }> {
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', CLI_MAIN, '--', ...args], { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve, reject) =>
    child.on('exit', (code) => {
      const m = /imported (\d+) hits, rejected (\d+)/.exec(out);
      if (code !== 0 || !m) return reject(new Error(`plumb import failed (${code}):\n${out}`));
      resolve({ imported: Number(m[1]), rejected: Number(m[2]) });
    }),
  );
}

const CLI_MAIN = `const { run } = await import(${JSON.stringify(new URL('../src/cli/main.ts', import.meta.url).href)});
process.exitCode = await run(process.argv.slice(1), process.env, (l) => console.log(l), (l) => console.error(l));`;

async function duckdbReadNdjson(file: string): Promise<number> {
  const instance = await DuckDBInstance.create(':memory:');
  const conn = await instance.connect();
  const started = performance.now();
  await conn.run(`CREATE TABLE staged AS SELECT * FROM read_ndjson('${file.replace(/'/g, "''")}')`);
  const seconds = (performance.now() - started) / 1000;
  conn.closeSync();
  instance.closeSync();
  return seconds;
}

export async function benchImport(hits = 1_000_000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-bench-import-'));
  try {
    const server = await startServer({
      PLUMB_DATA_DIR: join(dir, 'data'),
      PLUMB_ADMIN_TOKEN: ADMIN,
      PLUMB_BOOTSTRAP_TOKEN: OWNER,
      PLUMB_RATE_LIMITS: 'off',
      PLUMB_LOG_LEVEL: 'warn',
    });
    const client = new AdminClient(server.url, ADMIN);
    const site = (await client.api<{ id: string }>('POST', '/v1/sites', OWNER, { name: 'Import bench' })).id;
    const text = generate(site, hits);
    const file = join(dir, 'hits.ndjson');
    writeFileSync(file, text);
    const lines = text.split('\n').length;

    const baseline = await duckdbReadNdjson(file);

    // While the import runs: the server's memory every 200 ms and /healthz answered one after another.
    const pid = server.child.pid!;
    let peak = rss(pid);
    let slowestHealthz = 0;
    let importing = true;
    const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), 200);
    const health = (async () => {
      while (importing) {
        const started = performance.now();
        await (await fetch(`${server.url}/healthz`)).text();
        slowestHealthz = Math.max(slowestHealthz, performance.now() - started);
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    const started = performance.now();
    const summary = await runCli(['import', file], { PLUMB_URL: server.url, PLUMB_ADMIN_TOKEN: ADMIN });
    const seconds = (performance.now() - started) / 1000;
    importing = false;
    clearInterval(sampler);
    await health;
    await server.stop();

    const db = await DuckDatabase.open(join(dir, 'data', 'plumb.duckdb'));
    const events = await DuckEventStore.open(db);
    const stored = (await events.listHits(site)).length;
    await events.close();
    await db.close();

    const cpu = cpus()[0]?.model ?? 'unknown CPU';
    console.log(`\nImport benchmark: ${lines.toLocaleString('en')} generated hits (${(text.length / 1e6).toFixed(0)} MB NDJSON), ${cpus().length} cores, ${cpu}\n`);
    console.log('| run | seconds | hits/s |');
    console.log('|---|---|---|');
    console.log(`| DuckDB read_ndjson of the file (baseline) | ${baseline.toFixed(2)} | ${Math.round(lines / baseline).toLocaleString('en')} |`);
    console.log(`| plumb import (enrichment, hashing, visits, stored) | ${seconds.toFixed(2)} | ${Math.round(lines / seconds).toLocaleString('en')} |`);
    console.log(`\nplumb import / baseline: ${(baseline / seconds).toFixed(3)}`);
    console.log(`server peak RSS during the import: ${(peak / 2 ** 20).toFixed(0)} MiB; slowest /healthz meanwhile: ${slowestHealthz.toFixed(0)} ms`);
    console.log(`imported ${summary.imported}, refused ${summary.rejected} (bots and the like), stored ${stored}`);
    if (stored !== summary.imported) {
      console.log('STORED HITS DIFFER FROM IMPORTED');
      process.exitCode = 1;
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
