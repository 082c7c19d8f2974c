// Plausible import: `plumb import plausible FILE.zip` (the CLI in a process of its own, streaming the file) into a
// real server process, at two export sizes, with the peak resident memory of the server and of the CLI during each:
// both stream (the server spools the upload to a temporary file and reads one zip entry and CSV row at a time), so
// the peaks should not grow with the export. Wall time, rows per second, CPU time of each process per row, and a
// check that every row was imported and every page view reached the reports. BENCH_PLAUSIBLE_MB sets the larger
// export's CSV size (default 1000); the smaller is a tenth of it. The zip is deflated, as Plausible CE writes it.

import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Zip, ZipDeflate } from 'fflate';
import { AdminClient } from '../src/cli/admin-client.js';
import { startServer } from '../test/helpers/process.js';
import { cpuSeconds, rss, runCli, watchServer } from './server-watch.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const OWNER = 'bench-bootstrap-token-0123456789';
const DAY_MS = 86_400_000;
/** Pages a day in imported_pages (almost all of the export's bytes). */
const PAGES_A_DAY = 2000;
const CHUNK = 1 << 20;

interface Made {
  rows: number;
  csvBytes: number;
  pageviews: number;
  firstDay: string;
  lastDay: string;
}

/**
 * Writes a Plausible CE export zip of about `mb` MB of CSV to `file`, a table at a time, each a chunk at a time
 * through a streaming zip (never built in memory): daily totals, 2,000 pages a day, and a day's sources, browsers,
 * systems, devices, countries, entry and exit pages and custom events.
 */
async function writeExport(file: string, mb: number): Promise<Made> {
  const out = createWriteStream(file);
  const pending: Uint8Array[] = [];
  let failure: Error | undefined;
  const zip = new Zip((err, chunk) => (err ? (failure = err) : pending.push(chunk)));
  const flush = async () => {
    if (failure) throw failure;
    while (pending.length > 0) {
      if (!out.write(pending.shift()!)) await new Promise<void>((resolve) => out.once('drain', () => resolve()));
    }
  };
  let seed = 7;
  const next = () => ((seed = (Math.imul(seed, 1103515245) + 12345) >>> 0) / 2 ** 32);
  const int = (n: number) => Math.floor(next() * n);
  // The number of days whose pages make `mb` MB (a page row is about 60 bytes).
  const days = Math.max(2, Math.round((mb * 1e6) / (PAGES_A_DAY * 60)));
  const start = Date.UTC(2000, 0, 1);
  const dayOf = (d: number) => new Date(start + d * DAY_MS).toISOString().slice(0, 10);
  const suffix = `_${dayOf(0).replace(/-/g, '')}_${dayOf(days - 1).replace(/-/g, '')}.csv`;
  const made: Made = { rows: 0, csvBytes: 0, pageviews: 0, firstDay: dayOf(0), lastDay: dayOf(days - 1) };

  /** One table: its header, then `rowsOf(day)` for every day, pushed a MB at a time. */
  const table = async (name: string, header: string, rowsOf: (day: string) => string[]) => {
    const entry = new ZipDeflate(`imported_${name}${suffix}`, { level: 1 });
    zip.add(entry);
    let text = `${header}\n`;
    for (let d = 0; d < days; d++) {
      for (const row of rowsOf(dayOf(d))) {
        text += `${row}\n`;
        made.rows++;
      }
      if (text.length >= CHUNK) {
        made.csvBytes += Buffer.byteLength(text);
        entry.push(Buffer.from(text));
        text = '';
        await flush();
      }
    }
    made.csvBytes += Buffer.byteLength(text);
    entry.push(Buffer.from(text), true);
    await flush();
  };
  const sessions = () => {
    const visits = 1 + int(500);
    return { visitors: Math.max(1, visits - int(20)), visits, pageviews: visits + int(1000), bounces: int(visits), duration: int(300 * visits) };
  };
  const counts = (c: ReturnType<typeof sessions>) => `${c.visitors},${c.visits},${c.duration},${c.bounces},${c.pageviews}`;
  await table('visitors', 'date,visitors,pageviews,bounces,visits,visit_duration', (day) => {
    const c = sessions();
    made.pageviews += c.pageviews;
    return [`${day},${c.visitors},${c.pageviews},${c.bounces},${c.visits},${c.duration}`];
  });
  await table('pages', 'date,hostname,page,visits,visitors,pageviews,total_scroll_depth,total_scroll_depth_visits,total_time_on_page,total_time_on_page_visits', (day) => {
    const rows: string[] = [];
    for (let p = 0; p < PAGES_A_DAY; p++) {
      const views = 1 + int(40);
      rows.push(`${day},bench.example,/blog/post-${p},${views},${views},${views},0,0,${int(9000)},${views}`);
    }
    return rows;
  });
  await table('sources', 'date,source,referrer,utm_source,utm_medium,utm_campaign,utm_content,utm_term,pageviews,visitors,visits,visit_duration,bounces', (day) =>
    ['Google', 'Direct / None', 'Newsletter', 'DuckDuckGo', 'Hacker News'].map((s, i) => {
      const c = sessions();
      return `${day},${s},,${i === 2 ? 'mail' : ''},${i === 2 ? 'email' : ''},${i === 2 ? 'spring' : ''},,,${c.pageviews},${c.visitors},${c.visits},${c.duration},${c.bounces}`;
    }),
  );
  const simple = (name: string, header: string, values: string[]) =>
    table(name, `date,${header},visitors,visits,visit_duration,bounces,pageviews`, (day) => values.map((v) => `${day},${v},${counts(sessions())}`));
  await table('browsers', 'date,browser,browser_version,visitors,visits,visit_duration,bounces,pageviews', (day) =>
    ['Chrome', 'Firefox', 'Safari', 'Edge'].map((b) => `${day},${b},1${int(30)},${counts(sessions())}`),
  );
  await table('operating_systems', 'date,operating_system,operating_system_version,visitors,visits,visit_duration,bounces,pageviews', (day) =>
    ['Mac', 'GNU/Linux', 'Windows', 'Android', 'iOS'].map((o) => `${day},${o},,${counts(sessions())}`),
  );
  await simple('devices', 'device', ['Desktop', 'Laptop', 'Mobile', 'Tablet']);
  await table('locations', 'date,country,region,city,visitors,visits,visit_duration,bounces,pageviews', (day) =>
    ['US', 'DE', 'FR', 'GB', 'IN', 'BR', 'JP', 'CA'].map((c) => `${day},${c},,0,${counts(sessions())}`),
  );
  await table('entry_pages', 'date,entry_page,visitors,entrances,visit_duration,bounces,pageviews', (day) =>
    Array.from({ length: 20 }, (_, p) => `${day},/blog/post-${p},${counts(sessions())}`),
  );
  await table('exit_pages', 'date,exit_page,visitors,exits,visit_duration,bounces,pageviews', (day) =>
    Array.from({ length: 20 }, (_, p) => `${day},/blog/post-${p},${counts(sessions())}`),
  );
  await table('custom_events', 'date,name,link_url,path,visitors,events', (day) =>
    ['Signup', 'Download'].map((e) => `${day},${e},,,${1 + int(9)},${10 + int(90)}`),
  );
  zip.end();
  await flush();
  await new Promise<void>((resolve) => out.end(resolve));
  return made;
}

interface Run {
  csvMb: number;
  zipMb: number;
  rows: number;
  seconds: number;
  serverPeak: number;
  cliPeak: number;
  serverCpu: number;
  cliCpu: number;
  slowest: number;
  imported: number;
  rejected: number;
  pageviews: number;
  stored: number;
}

async function once(mb: number, dir: string): Promise<Run> {
  const file = join(dir, `plausible-${mb}.zip`);
  const made = await writeExport(file, mb);
  const server = await startServer({
    PLUMB_DATA_DIR: join(dir, `data-${mb}`),
    PLUMB_ADMIN_TOKEN: ADMIN,
    PLUMB_BOOTSTRAP_TOKEN: OWNER,
    PLUMB_RATE_LIMITS: 'off',
    PLUMB_LOG_LEVEL: 'warn',
  });
  try {
    const client = new AdminClient(server.url, ADMIN);
    const site = (await client.api<{ id: string }>('POST', '/v1/sites', OWNER, { name: 'Plausible bench', timezone: 'UTC' })).id;
    const watch = watchServer(server.child.pid!, { everyMs: 100, healthz: server.url });
    const cpuBefore = cpuSeconds(server.child.pid!);
    const started = performance.now();
    let cliPeak = 0;
    let cliCpu = 0;
    const { code, out } = await runCli(['import', 'plausible', file, '--site', site, '--json'], { PLUMB_URL: server.url, PLUMB_ADMIN_TOKEN: ADMIN }, (pid) => {
      const sampler = setInterval(() => {
        cliPeak = Math.max(cliPeak, rss(pid));
        cliCpu = Math.max(cliCpu, cpuSeconds(pid));
      }, 100);
      return () => clearInterval(sampler);
    });
    const seconds = (performance.now() - started) / 1000;
    const serverCpu = cpuSeconds(server.child.pid!) - cpuBefore;
    const { peak, slowestHealthz } = await watch.stop();
    if (code !== 0) throw new Error(`plumb import plausible failed (exit ${code}):\n${out.slice(0, 2000)}`);
    const result = JSON.parse(out) as { imported: number; rejected: number };
    const report = await client.api<{ pageviews: string }[]>(
      'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=${made.firstDay}&date_to=${made.lastDay}`, OWNER,
    );
    return {
      csvMb: made.csvBytes / 1e6, zipMb: statSync(file).size / 1e6, rows: made.rows, seconds, serverPeak: peak, cliPeak, serverCpu, cliCpu,
      slowest: slowestHealthz, imported: result.imported, rejected: result.rejected, pageviews: made.pageviews, stored: Number(report[0]?.pageviews ?? 0),
    };
  } finally {
    await server.stop();
    rmSync(file, { force: true });
    rmSync(join(dir, `data-${mb}`), { recursive: true, force: true });
  }
}

export async function benchPlausibleImport(mb = 1000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-bench-plausible-'));
  try {
    const load = loadavg().map((l) => l.toFixed(1)).join(' ');
    const runs = [await once(Math.round(mb / 10), dir), await once(mb, dir)];
    console.log(`\nPlausible import benchmark: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; load average before: ${load}, after: ${loadavg().map((l) => l.toFixed(1)).join(' ')}\n`);
    console.log('| CSV MB | zip MB | rows | wall s | rows/s | server CPU s | server CPU µs/row | CLI CPU s | server peak RSS MiB | CLI peak RSS MiB | slowest /healthz ms |');
    console.log('|---|---|---|---|---|---|---|---|---|---|---|');
    for (const r of runs) {
      console.log(
        `| ${r.csvMb.toFixed(0)} | ${r.zipMb.toFixed(0)} | ${r.rows.toLocaleString('en')} | ${r.seconds.toFixed(1)} | ${Math.round(r.rows / r.seconds).toLocaleString('en')} | ` +
          `${r.serverCpu.toFixed(1)} | ${((r.serverCpu / r.rows) * 1e6).toFixed(1)} | ${r.cliCpu.toFixed(1)} | ${(r.serverPeak / 2 ** 20).toFixed(0)} | ` +
          `${(r.cliPeak / 2 ** 20).toFixed(0)} | ${r.slowest.toFixed(0)} |`,
      );
      if (r.imported !== r.rows || r.rejected !== 0 || r.stored !== r.pageviews) {
        console.log(`ROWS LOST: ${r.rows} rows, ${r.imported} imported, ${r.rejected} rejected; ${r.pageviews} page views, ${r.stored} reported`);
        process.exitCode = 1;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
