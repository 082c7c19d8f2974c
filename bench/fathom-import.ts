// Fathom import: `plumb import fathom FOLDER` (the CLI in a process of its own: it zips the folder into a
// temporary file, then streams it) into a real server process, at two export sizes, with the peak resident memory
// of the server and of the CLI during each: both stream, so the peaks should not grow with the export. Wall time,
// hourly rows per second, CPU seconds of each process, and a check that every page view reached the reports.
// BENCH_FATHOM_MB sets the larger export's CSV size (default 950: a 1 GB export stays under the upload cap of
// 1 GiB); the smaller is a tenth of it.

import { createWriteStream, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminClient } from '../src/cli/admin-client.js';
import { startServer } from '../test/helpers/process.js';
import { runCli, rss, watchServer } from './server-watch.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const OWNER = 'bench-bootstrap-token-0123456789';
const HOUR = 3_600_000;

/** CPU seconds (user + system) a process has used so far (Linux), 0 where /proc is not there. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Writes a Fathom export folder of about `mb` MB: hourly site totals and, per hour, page views of up to 400 pages. */
async function writeExport(dir: string, mb: number): Promise<{ rows: number; pageviews: number; firstDay: string; lastDay: string }> {
  mkdirSync(dir, { recursive: true });
  const open = (name: string, header: string) => {
    const out = createWriteStream(join(dir, name));
    out.write(`${header}\n`);
    return out;
  };
  const site = open('Site.csv', 'Timestamp,Visitors,Pageviews,Visits,Bounce Rate,Avg Duration');
  const pages = open('Pages.csv', 'Timestamp,Hostname,Pathname,Views,Uniques');
  const write = (out: ReturnType<typeof createWriteStream>, line: string) =>
    out.write(line) ? Promise.resolve() : new Promise<void>((resolve) => out.once('drain', () => resolve()));
  let seed = 99;
  const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const start = Date.UTC(2020, 0, 1);
  let bytes = 0;
  let rows = 0;
  let pageviews = 0;
  let hour = start;
  for (; bytes < mb * 1e6; hour += HOUR) {
    const at = new Date(hour).toISOString().replace('T', ' ').slice(0, 19);
    let views = 0;
    const count = 100 + Math.floor(next() * 300);
    for (let p = 0; p < count; p++) {
      const n = 1 + Math.floor(next() * 9);
      views += n;
      const line = `${at},bench.example,/blog/post-${p},${n},${n}\n`;
      bytes += line.length;
      rows++;
      await write(pages, line);
    }
    const visits = Math.max(1, Math.floor(views / 2));
    const line = `${at},${visits},${views},${visits},0.5,60\n`;
    bytes += line.length;
    rows++;
    pageviews += views;
    await write(site, line);
  }
  await Promise.all([site, pages].map((s) => new Promise<void>((resolve) => s.end(resolve))));
  const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
  return { rows, pageviews, firstDay: day(start), lastDay: day(hour - HOUR) };
}

interface Run {
  mb: number;
  rows: number;
  seconds: number;
  serverPeak: number;
  cliPeak: number;
  serverCpu: number;
  cliCpu: number;
  slowest: number;
  imported: number;
  pageviews: number;
  stored: number;
}

async function once(mb: number, dir: string): Promise<Run> {
  const folder = join(dir, `fathom-${mb}`);
  const made = await writeExport(folder, mb);
  const size = ['Site.csv', 'Pages.csv'].reduce((a, f) => a + statSync(join(folder, f)).size, 0);
  const server = await startServer({
    PLUMB_DATA_DIR: join(dir, `data-${mb}`),
    PLUMB_ADMIN_TOKEN: ADMIN,
    PLUMB_BOOTSTRAP_TOKEN: OWNER,
    PLUMB_RATE_LIMITS: 'off',
    PLUMB_LOG_LEVEL: 'warn',
  });
  try {
    const client = new AdminClient(server.url, ADMIN);
    const site = (await client.api<{ id: string }>('POST', '/v1/sites', OWNER, { name: 'Fathom bench', timezone: 'UTC' })).id;
    const watch = watchServer(server.child.pid!, { everyMs: 100, healthz: server.url });
    const cpuBefore = cpuSeconds(server.child.pid!);
    const started = performance.now();
    let cliPeak = 0;
    let cliCpu = 0;
    const cli = runCli(['import', 'fathom', folder, '--site', site, '--json'], { PLUMB_URL: server.url, PLUMB_ADMIN_TOKEN: ADMIN }, (pid) => {
      const sampler = setInterval(() => {
        cliPeak = Math.max(cliPeak, rss(pid));
        cliCpu = Math.max(cliCpu, cpuSeconds(pid));
      }, 100);
      return () => clearInterval(sampler);
    });
    const { code, out } = await cli;
    const seconds = (performance.now() - started) / 1000;
    const serverCpu = cpuSeconds(server.child.pid!) - cpuBefore;
    const { peak, slowestHealthz } = await watch.stop();
    if (code !== 0) throw new Error(`plumb import fathom failed (exit ${code}):\n${out.slice(0, 2000)}`);
    const result = JSON.parse(out) as { imported: number };
    const report = await client.api<{ pageviews: string }[]>(
      'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=${made.firstDay}&date_to=${made.lastDay}`, OWNER,
    );
    return {
      mb: size / 1e6, rows: made.rows, seconds, serverPeak: peak, cliPeak, serverCpu, cliCpu, slowest: slowestHealthz,
      imported: result.imported, pageviews: made.pageviews, stored: Number(report[0]?.pageviews ?? 0),
    };
  } finally {
    await server.stop();
    rmSync(folder, { recursive: true, force: true });
  }
}

export async function benchFathomImport(mb = 950): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-bench-fathom-'));
  try {
    const load = loadavg().map((l) => l.toFixed(1)).join(' ');
    const runs = [await once(Math.round(mb / 10), dir), await once(mb, dir)];
    console.log(`\nFathom import benchmark: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; load average before: ${load}, after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    console.log('| CSV MB | hourly rows | wall s | rows/s | server CPU s | CLI CPU s | server peak RSS MiB | CLI peak RSS MiB | slowest /healthz ms |');
    console.log('|---|---|---|---|---|---|---|---|---|');
    for (const r of runs) {
      console.log(
        `| ${r.mb.toFixed(0)} | ${r.rows.toLocaleString('en')} | ${r.seconds.toFixed(1)} | ${Math.round(r.rows / r.seconds).toLocaleString('en')} | ` +
          `${r.serverCpu.toFixed(1)} | ${r.cliCpu.toFixed(1)} | ${(r.serverPeak / 2 ** 20).toFixed(0)} | ${(r.cliPeak / 2 ** 20).toFixed(0)} | ${r.slowest.toFixed(0)} |`,
      );
      if (r.imported !== r.rows || r.stored !== r.pageviews) {
        console.log(`ROWS LOST: ${r.rows} rows, ${r.imported} imported; ${r.pageviews} page views, ${r.stored} reported`);
        process.exitCode = 1;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
