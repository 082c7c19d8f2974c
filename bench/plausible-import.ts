// Plausible import: `plumb import plausible FILE.zip` (the CLI in a process of its own, streaming the file) into a
// real server process, at two export sizes, with the peak resident memory of the server and of the CLI during each:
// both stream (the server spools the upload to a temporary file and reads one zip entry and CSV row at a time), so
// the peaks should not grow with the export. Wall time, rows per second, CPU time of each process per row, and a
// check that every row was imported and every page view reached the reports. BENCH_PLAUSIBLE_MB sets the larger
// export's CSV size (default 1000); the smaller is a tenth of it. The zip is deflated, as Plausible CE writes it.

import { createWriteStream } from 'node:fs';
import { Zip, ZipDeflate } from 'fflate';
import { benchPeerImport, exportMbColumn, measuredColumns, megabytes, rowsColumn, type Made, type PeerBench } from './peer-import-harness.js';

const DAY_MS = 86_400_000;
/** Pages a day in imported_pages (almost all of the export's bytes). */
const PAGES_A_DAY = 2000;
const CHUNK = 1 << 20;

interface Written extends Made {
  /** The CSV before deflating: the size the export is asked for in. */
  csvBytes: number;
}

/**
 * Writes a Plausible CE export zip of about `mb` MB of CSV to `file`, a table at a time, each a chunk at a time
 * through a streaming zip (never built in memory): daily totals, 2,000 pages a day, and a day's sources, browsers,
 * systems, devices, countries, entry and exit pages and custom events.
 */
async function writeExport(file: string, mb: number): Promise<Written> {
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
  const made: Written = { rows: 0, csvBytes: 0, pageviews: 0, firstDay: dayOf(0), lastDay: dayOf(days - 1) };

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

const plausible: PeerBench<Written> = {
  kind: 'plausible',
  site: { timezone: 'UTC' },
  ending: '.zip',
  write: writeExport,
  columns: [
    { head: 'CSV MB', cell: (r) => megabytes(r.made.csvBytes) },
    exportMbColumn('zip MB'),
    rowsColumn('rows'),
    ...measuredColumns({ cpuPerRow: true }),
  ],
};

export function benchPlausibleImport(mb = 1000): Promise<void> {
  return benchPeerImport(plausible, mb);
}
