// Import speed: `plumb import` of generated NDJSON (the CLI in a process of its own, sending chunks to /admin/import
// of the real server, another process) against DuckDB's own read_ndjson loading the same file in the same run; the
// server's CPU time per hit, its resident memory (before, peak during, and 10 s after the import) and its /healthz
// answer times while the import runs (slowest and p99, asked from this process, which does nothing else meanwhile:
// an event-loop stall seen from outside); then a check that every imported hit was stored. A second baseline is the
// store's part alone: the rows the import stored, copied out as the CSV files an import's load reads, loaded by
// EventStore.writeCsv into an empty database in one load as an import's loads run (DuckDB on one thread, the new
// visits beside the hits on a second connection): the best case for DuckDB's insert into this schema, and a ceiling
// for any import that stores these rows.
// BENCH_IMPORT_HITS sets the size (default 1,000,000), BENCH_ROUNDS the rounds (default 3), each with a fresh server
// and its own baselines.

import { rmSync, writeFileSync, mkdtempSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { AdminClient } from '../src/cli/admin-client.js';
import { demoTraffic } from '../src/cli/demo-traffic.js';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { DuckEventStore, sqlText } from '../src/store/duckdb/event-store.js';
import { migrate } from '../src/store/duckdb/migrations.js';
import { HIT_CSV_COLUMNS, VISIT_CSV_COLUMNS, csvFiles, type CsvColumn } from '../src/store/event-csv.js';
import { startServer } from '../test/helpers/process.js';
import { median } from './median.js';
import { cpuSeconds, describeThreads, rss, runCli, watchServer, type Watched } from './server-watch.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const OWNER = 'bench-bootstrap-token-0123456789';

/** Generated traffic of about `hits` hits for `siteId`, one JSON object per line. */
export function generate(siteId: string, hits: number): string {
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

/** `plumb import FILE` in a process of its own; the summary it prints. */
async function importFile(args: string[], env: Record<string, string>): Promise<{ imported: number; rejected: number; cliCpu: number; cliPeak: number }> {
  // The CLI's CPU time, read every 200 ms while it runs (its /proc entry is gone once it has exited).
  let cliCpu = 0;
  let cliPeak = 0;
  const watchCli = (pid: number) => {
    const timer = setInterval(() => {
      cliCpu = Math.max(cliCpu, cpuSeconds(pid));
      cliPeak = Math.max(cliPeak, rss(pid));
    }, 200);
    return () => clearInterval(timer);
  };
  const { code, out } = await runCli(args, env, watchCli);
  const m = /imported (\d+) hits, rejected (\d+)/.exec(out);
  if (code !== 0 || !m) throw new Error(`plumb import failed (${code}):\n${out}`);
  return { imported: Number(m[1]), rejected: Number(m[2]), cliCpu, cliPeak };
}

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

/** `table`'s rows of `site` as a CSV file with `columns` (src/store/event-csv.ts); the number of rows. */
async function copyOut(db: DuckDatabase, table: string, columns: readonly CsvColumn[], site: string, file: string): Promise<number> {
  const value = (c: CsvColumn) =>
    c.type === 'EPOCH_MS' ? `epoch_ms(${c.name})` : c.type === 'TEXT_LIST' ? `coalesce(CAST(to_json(${c.name}) AS VARCHAR), '[]')` : c.name;
  const select = `SELECT ${columns.map(value).join(', ')} FROM ${table} WHERE site_id = ?`;
  // DuckDB writes empty texts as "" and quotes what needs it, as csvText does.
  const rows = await db.serial((q) => q.rows<{ Count: bigint }>(`COPY (${select}) TO ${sqlText(file)} (HEADER false)`, [site]));
  return Number(rows[0]!.Count);
}

/** Seconds (wall and CPU of this process) for DuckDB to store the import's rows from `source` in one load. */
async function storeFinishedRows(source: string, site: string, dir: string): Promise<{ seconds: number; cpu: number; hits: number }> {
  const files = csvFiles(dir, 'finished');
  const from = await DuckDatabase.open(source);
  const hits = await copyOut(from, 'hits', HIT_CSV_COLUMNS, site, files.hitsFile);
  const visits = await copyOut(from, 'visits', VISIT_CSV_COLUMNS, site, files.newVisitsFile);
  await from.close();
  const db = await DuckDatabase.open(join(dir, 'finished.duckdb'));
  await migrate(db);
  const events = await DuckEventStore.open(db);
  const cpuBefore = process.cpuUsage();
  const started = performance.now();
  await events.writeCsv({ ...files, hits, visits: 0, newVisits: visits });
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpuBefore);
  await events.close();
  await db.close();
  return { seconds, cpu: (used.user + used.system) / 1e6, hits };
}

/** What one round measured: a fresh server importing the file, and the file's baselines in the same round. */
interface Round {
  lines: number;
  bytes: number;
  seconds: number;
  baseline: number;
  finished: { seconds: number; cpu: number; hits: number };
  serverCpu: number;
  cliCpu: number;
  cliPeak: number;
  rssBefore: number;
  /** The server watched during the import: its peak RSS, /healthz and CPU by thread. */
  watched: Watched;
  rssAfter: number;
  load: number[];
  imported: number;
  rejected: number;
  stored: number;
}

/** A fresh server and data directory; the generated file for its site; the import and both baselines. */
async function importRound(hits: number): Promise<Round> {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-bench-import-'));
  try {
    const server = await startServer({
      PLUMB_DATA_DIR: join(dir, 'data'),
      PLUMB_ADMIN_TOKEN: ADMIN,
      PLUMB_BOOTSTRAP_TOKEN: OWNER,
      PLUMB_RATE_LIMITS: 'off',
      PLUMB_LOG_LEVEL: 'warn',
      // Compiled, as `npm start` runs it: under the TypeScript loader the import's threads, which start with the
      // first chunk, would compile their modules inside the timed import.
    }, { compiled: true });
    const client = new AdminClient(server.url, ADMIN);
    const site = (await client.api<{ id: string }>('POST', '/v1/sites', OWNER, { name: 'Import bench' })).id;
    const text = generate(site, hits);
    const file = join(dir, 'hits.ndjson');
    writeFileSync(file, text);
    const lines = text.split('\n').length;

    const baseline = await duckdbReadNdjson(file);

    // While the import runs: the server's memory every 200 ms and /healthz answered one after another.
    const load = loadavg();
    const rssBefore = rss(server.child.pid!);
    const watch = watchServer(server.child.pid!, { everyMs: 200, healthz: server.url });
    const cpuBefore = cpuSeconds(server.child.pid!);
    const started = performance.now();
    const summary = await importFile(['import', file], { PLUMB_URL: server.url, PLUMB_ADMIN_TOKEN: ADMIN });
    const seconds = (performance.now() - started) / 1000;
    const serverCpu = cpuSeconds(server.child.pid!) - cpuBefore;
    const watched = await watch.stop();
    // Whether the memory the import took is given back: the server idle for a while after it.
    await new Promise((resolve) => setTimeout(resolve, 10_000));
    const rssAfter = rss(server.child.pid!);
    await server.stop();

    const db = await DuckDatabase.open(join(dir, 'data', 'plumb.duckdb'));
    const events = await DuckEventStore.open(db);
    const stored = Number((await events.query('SELECT count(*) AS n FROM hits WHERE site_id = ?', [site]))[0]!.n);
    await events.close();
    await db.close();
    const finished = await storeFinishedRows(join(dir, 'data', 'plumb.duckdb'), site, dir);
    return {
      lines, bytes: text.length, seconds, baseline, finished, serverCpu, cliCpu: summary.cliCpu, cliPeak: summary.cliPeak,
      rssBefore, watched, rssAfter, load, imported: summary.imported, rejected: summary.rejected, stored,
    };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const rate = (n: number, seconds: number) => Math.round(n / seconds).toLocaleString('en');

/**
 * BENCH_ROUNDS rounds (default 3), each with a fresh server and its own baselines: the machine's speed drifts by
 * 10% within minutes (docs/benchmarks.md, "How figures are reported"), so the figures are each round's and
 * their median, and the details are the median round's.
 */
export async function benchImport(hits = 1_000_000): Promise<void> {
  const count = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));
  const rounds: Round[] = [];
  for (let i = 0; i < count; i++) rounds.push(await importRound(hits));

  const first = rounds[0]!;
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`\nImport benchmark: ${first.lines.toLocaleString('en')} generated hits (${(first.bytes / 1e6).toFixed(0)} MB NDJSON), ${count} round${count === 1 ? '' : 's'}, ${cpus().length} cores, ${cpu}\n`);
  console.log('| round | DuckDB read_ndjson of the file (baseline), hits/s | plumb import (enrichment, hashing, visits, stored), hits/s | DuckDB storing the import\'s finished rows (CSV files of its hits and visits, one load as the import\'s run: the store\'s part alone), hits/s | import / read_ndjson | import / store\'s part | server CPU µs per hit |');
  console.log('|---|---|---|---|---|---|---|');
  for (const [i, r] of rounds.entries()) {
    console.log(
      `| ${i + 1} | ${rate(r.lines, r.baseline)} | ${rate(r.lines, r.seconds)} | ${rate(r.finished.hits, r.finished.seconds)} | ${(r.baseline / r.seconds).toFixed(3)} | ${(r.finished.seconds / r.seconds).toFixed(3)} | ${((r.serverCpu * 1e6) / r.lines).toFixed(1)} |`,
    );
  }
  const mid = median(rounds.map((r) => r.seconds));
  const r = rounds.find((x) => x.seconds === mid)!;
  console.log(
    `\nmedians of the rounds: plumb import ${rate(r.lines, mid)} hits/s; plumb import / baseline ${median(rounds.map((x) => x.baseline / x.seconds)).toFixed(3)}; plumb import / the store's part alone ${median(rounds.map((x) => x.finished.seconds / x.seconds)).toFixed(3)}`,
  );
  console.log(`\nthe median round (${rounds.indexOf(r) + 1}):`);
  console.log(`DuckDB's CPU storing the finished rows: ${((r.finished.cpu * 1e6) / r.finished.hits).toFixed(1)} µs per hit`);
  console.log(`server CPU during the import: ${r.serverCpu.toFixed(1)} s, ${((r.serverCpu * 1e6) / r.lines).toFixed(1)} µs per hit (all threads)`);
  console.log(`server CPU by thread: ${describeThreads(r.watched.threads, r.lines)}`);
  const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(0)} MiB`;
  console.log(`CLI (reading, sorting and sending the file): CPU ${r.cliCpu.toFixed(1)} s, ${((r.cliCpu * 1e6) / r.lines).toFixed(1)} µs per hit; peak RSS ${mib(r.cliPeak)}`);
  console.log(`server RSS: ${mib(r.rssBefore)} before the import, peak ${mib(r.watched.peak)} during it, ${mib(r.rssAfter)} 10 s after it`);
  console.log(`/healthz during the import (${r.watched.healthzAsked} asked one after another): slowest ${r.watched.slowestHealthz.toFixed(0)} ms, p99 ${r.watched.p99Healthz.toFixed(0)} ms`);
  // How much of the machine the import kept busy: what is left is where neither process had work (the server
  // before the CLI's first chunk, the CLI at the end while the server stores its last loads).
  console.log(`cores in use on average during the import (server and CLI): ${((r.serverCpu + r.cliCpu) / r.seconds).toFixed(2)} of ${cpus().length}`);
  console.log(`load average before the import: ${r.load.map((l) => l.toFixed(2)).join(', ')}`);
  console.log(`\nevery round: server RSS peak ${rounds.map((x) => mib(x.watched.peak)).join(' / ')}; /healthz p99 ${rounds.map((x) => `${x.watched.p99Healthz.toFixed(0)} ms`).join(' / ')}`);
  for (const [i, x] of rounds.entries()) {
    console.log(`round ${i + 1}: imported ${x.imported}, refused ${x.rejected} (bots and the like), stored ${x.stored}`);
    if (x.stored !== x.imported) {
      console.log('STORED HITS DIFFER FROM IMPORTED');
      process.exitCode = 1;
    }
  }
}
