// Fathom import: `plumb import fathom FOLDER` (the CLI in a process of its own: it zips the folder into a
// temporary file, then streams it) into a real server process, at two export sizes, with the peak resident memory
// of the server and of the CLI during each: both stream, so the peaks should not grow with the export. Wall time,
// hourly rows per second, CPU seconds of each process, and a check that every page view reached the reports.
// BENCH_FATHOM_MB sets the larger export's CSV size (default 950: a 1 GB export stays under the upload cap of
// 1 GiB); the smaller is a tenth of it.

import { createWriteStream, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { benchPeerImport, exportMbColumn, measuredColumns, rowsColumn, type Made, type PeerBench } from './peer-import-harness.js';

const HOUR = 3_600_000;

/** Writes a Fathom export folder of about `mb` MB: hourly site totals and, per hour, page views of up to 400 pages. */
async function writeExport(dir: string, mb: number): Promise<Made> {
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

const fathom: PeerBench<Made> = {
  kind: 'fathom',
  site: { timezone: 'UTC' },
  ending: '',
  write: writeExport,
  columns: [exportMbColumn('CSV MB'), rowsColumn('hourly rows'), ...measuredColumns({ cpuPerRow: false })],
};

export function benchFathomImport(mb = 950): Promise<void> {
  return benchPeerImport(fathom, mb);
}
