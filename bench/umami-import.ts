// Umami import: `plumb import umami` (the CLI in a process of its own, streaming the file) into a real server
// process, at two file sizes, with the peak resident memory of the server and of the CLI during each: the import
// streams, so the peaks should not grow with the file. Rows per second, CPU time of each process per row, the
// slowest /healthz meanwhile, and a check that every row was stored. BENCH_UMAMI_ROWS sets the larger size
// (default 4,100,000 rows, about 1 GB of CSV); the smaller is a tenth of it.

import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminClient } from '../src/cli/admin-client.js';
import { startServer } from '../test/helpers/process.js';
import { cpuSeconds, rss, runCli, watchServer } from './server-watch.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const OWNER = 'bench-bootstrap-token-0123456789';
const HEADER = 'event_id,website_id,session_id,visit_id,created_at,hostname,url_path,url_query,referrer_domain,referrer_path,referrer_query,page_title,event_type,event_name,browser,os,device,screen,language,country,region,city';

/** Writes `rows` rows of an Umami export, oldest first: visits of 1-6 pageviews spread over 30 days. */
async function writeExport(file: string, rows: number): Promise<void> {
  const out = createWriteStream(file);
  const write = (line: string) => (out.write(line) ? Promise.resolve() : new Promise<void>((resolve) => out.once('drain', () => resolve())));
  await write(`${HEADER}\n`);
  let seed = 12345;
  const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const pages = ['/', '/pricing', '/blog', '/blog/launch', '/docs', '/docs/install', '/about'];
  const browsers = ['chrome', 'safari', 'ios', 'firefox', 'edge-chromium'];
  const hex = (n: number) => Math.floor(n * 2 ** 32).toString(16).padStart(8, '0');
  const start = Date.UTC(2026, 0, 1);
  const span = 30 * 86_400_000;
  let written = 0;
  let t = start;
  const step = span / rows;
  while (written < rows) {
    const session = `${hex(next())}-0000-4000-8000-${hex(next())}abcd`;
    const visit = `${hex(next())}-1111-4000-8000-${hex(next())}abcd`;
    const n = Math.min(rows - written, 1 + Math.floor(next() * 6));
    const browser = browsers[Math.floor(next() * browsers.length)];
    for (let i = 0; i < n; i++) {
      t += step;
      const at = new Date(t).toISOString().replace('T', ' ').replace('Z', '+00');
      await write(`${hex(next())}-2222-4000-8000-${hex(next())}abcd,w,${session},${visit},${at},bench.example,${pages[Math.floor(next() * pages.length)]},,${i === 0 ? 'google.com' : ''},${i === 0 ? '/search' : ''},,Title,1,,${browser},Windows 10,desktop,1920x1080,en-US,US,US-CA,Springfield\n`);
      written++;
    }
  }
  await new Promise<void>((resolve) => out.end(resolve));
}

/** `plumb import umami ... --json` in a process of its own: the summary it prints, its peak RSS and CPU seconds. */
async function importUmami(args: string[], env: Record<string, string>): Promise<{ imported: number; rejected: number; cliPeak: number; cliCpu: number }> {
  let cliPeak = 0;
  let cliCpu = 0;
  const { code, out } = await runCli(args, env, (pid) => {
    const sampler = setInterval(() => {
      cliPeak = Math.max(cliPeak, rss(pid));
      cliCpu = Math.max(cliCpu, cpuSeconds(pid));
    }, 100);
    return () => clearInterval(sampler);
  });
  try {
    const json = JSON.parse(out) as { imported: number; rejected: number };
    if (code !== 0) throw new Error(`exit ${code}`);
    return { ...json, cliPeak, cliCpu };
  } catch (err) {
    throw new Error(`plumb import umami failed (${String(err)}):\n${out.slice(0, 2000)}`);
  }
}

interface Run {
  rows: number;
  mb: number;
  seconds: number;
  peak: number;
  cliPeak: number;
  serverCpu: number;
  cliCpu: number;
  slowest: number;
  imported: number;
  stored: number;
}

async function once(rows: number, dir: string): Promise<Run> {
  const file = join(dir, `umami-${rows}.csv`);
  await writeExport(file, rows);
  const server = await startServer({
    PLUMB_DATA_DIR: join(dir, `data-${rows}`),
    PLUMB_ADMIN_TOKEN: ADMIN,
    PLUMB_BOOTSTRAP_TOKEN: OWNER,
    PLUMB_RATE_LIMITS: 'off',
    PLUMB_LOG_LEVEL: 'warn',
  });
  try {
    const client = new AdminClient(server.url, ADMIN);
    const site = (await client.api<{ id: string }>('POST', '/v1/sites', OWNER, { name: 'Umami bench', domain: 'bench.example' })).id;
    const watch = watchServer(server.child.pid!, { everyMs: 100, healthz: server.url });
    const cpuBefore = cpuSeconds(server.child.pid!);
    const started = performance.now();
    const result = await importUmami(['import', 'umami', file, '--site', site, '--json'], { PLUMB_URL: server.url, PLUMB_ADMIN_TOKEN: ADMIN });
    const seconds = (performance.now() - started) / 1000;
    const serverCpu = cpuSeconds(server.child.pid!) - cpuBefore;
    const { peak, slowestHealthz: slowest } = await watch.stop();
    const report = await client.api<{ pageviews: string }[]>('GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-01-01`, OWNER);
    return {
      rows, mb: statSync(file).size / 1e6, seconds, peak, cliPeak: result.cliPeak, serverCpu, cliCpu: result.cliCpu, slowest,
      imported: result.imported, stored: Number(report[0]?.pageviews ?? 0),
    };
  } finally {
    await server.stop();
    rmSync(file, { force: true });
    rmSync(join(dir, `data-${rows}`), { recursive: true, force: true });
  }
}

export async function benchUmamiImport(rows = 4_100_000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-bench-umami-'));
  try {
    const load = loadavg().map((l) => l.toFixed(1)).join(' ');
    const runs = [await once(Math.round(rows / 10), dir), await once(rows, dir)];
    console.log(`\nUmami import benchmark: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; load average before: ${load}, after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    console.log('| rows | CSV MB | wall s | rows/s | server CPU s | server CPU µs/row | CLI CPU s | server peak RSS MiB | CLI peak RSS MiB | slowest /healthz ms | stored pageviews |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of runs) {
      console.log(
        `| ${r.rows.toLocaleString('en')} | ${r.mb.toFixed(0)} | ${r.seconds.toFixed(1)} | ${Math.round(r.rows / r.seconds).toLocaleString('en')} | ` +
          `${r.serverCpu.toFixed(1)} | ${((r.serverCpu / r.rows) * 1e6).toFixed(1)} | ${r.cliCpu.toFixed(1)} | ${(r.peak / 2 ** 20).toFixed(0)} | ` +
          `${(r.cliPeak / 2 ** 20).toFixed(0)} | ${r.slowest.toFixed(0)} | ${r.stored.toLocaleString('en')} |`,
      );
      if (r.imported !== r.rows || r.stored !== r.rows) {
        console.log(`ROWS LOST: ${r.rows} rows, ${r.imported} imported, ${r.stored} stored`);
        process.exitCode = 1;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
