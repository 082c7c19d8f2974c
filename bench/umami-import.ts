// Umami import: `plumb import umami` (the CLI in a process of its own, streaming the file) into a real server
// process, at two file sizes, with the peak resident memory of the server and of the CLI during each: the import
// streams, so the peaks should not grow with the file. Rows per second, CPU time of each process per row, the
// slowest /healthz meanwhile, and a check that every row was stored. BENCH_UMAMI_ROWS sets the larger size
// (default 4,100,000 rows, about 1 GB of CSV); the smaller is a tenth of it.

import { createWriteStream } from 'node:fs';
import { benchPeerImport, count, exportMbColumn, measuredColumns, rowsColumn, type Made, type PeerBench } from './peer-import-harness.js';

const HEADER = 'event_id,website_id,session_id,visit_id,created_at,hostname,url_path,url_query,referrer_domain,referrer_path,referrer_query,page_title,event_type,event_name,browser,os,device,screen,language,country,region,city';

/** Writes `rows` rows of an Umami export, oldest first: visits of 1-6 pageviews spread over 30 days. */
async function writeExport(file: string, rows: number): Promise<Made> {
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
  // Every row is a page view (event_type 1).
  return { rows, pageviews: rows, firstDay: new Date(start).toISOString().slice(0, 10) };
}

const umami: PeerBench<Made> = {
  kind: 'umami',
  site: { domain: 'bench.example' },
  ending: '.csv',
  write: writeExport,
  columns: [
    rowsColumn('rows'),
    exportMbColumn('CSV MB'),
    ...measuredColumns({ cpuPerRow: true }),
    { head: 'stored pageviews', cell: (r) => count(r.stored) },
  ],
};

export function benchUmamiImport(rows = 4_100_000): Promise<void> {
  return benchPeerImport(umami, rows);
}
