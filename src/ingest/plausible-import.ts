// Plausible CE's CSV export (a zip of imported_*.csv tables) stored as imported daily aggregates of a site: the
// site's daily totals (imported_visitors) and each page's (imported_pages), the tables reports can add to recorded
// hits (docs/reports.md, "Imported data"). Entries are read one at a time, each as a stream (yauzl, csv-parse),
// and rows written in batches: memory does not grow with the export.

import { parse } from 'csv-parse';
import yauzl, { type Entry, type ZipFile } from 'yauzl';
import type { ImportedDay } from '../store/types.js';

export interface PlausibleImportError {
  /** The zip entry and its line (1 = header). */
  file: string;
  line: number;
  message: string;
}

export interface PlausibleImportResult {
  imported: number;
  rejected: number;
  errors: PlausibleImportError[];
  firstDay: string | null;
  lastDay: string | null;
  /** Entries read, and entries of the export Plumb does not use. */
  read: string[];
  skipped: string[];
}

/** Thrown when the file is no Plausible export: not a zip, or without imported_visitors. */
export class PlausibleFormatError extends Error {}

const MAX_ERRORS = 1000;
const BATCH = 5000;

/** Tables read, with the columns they must have. */
const TABLES = new Map<string, { dimension: ImportedDay['dimension']; columns: string[] }>([
  ['imported_visitors', { dimension: '', columns: ['date', 'visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'] }],
  ['imported_pages', { dimension: 'pathname', columns: ['date', 'page', 'visitors', 'pageviews', 'visits'] }],
]);

/** The table an entry holds (`imported_pages_20240101_20241231.csv` → imported_pages), or undefined. */
function tableOf(name: string): string | undefined {
  const m = /(?:^|\/)(imported_[a-z_]+?)(?:_\d{8}_\d{8})?\.csv$/.exec(name);
  return m?.[1];
}

const open = (path: string) =>
  new Promise<ZipFile>((resolve, reject) =>
    yauzl.open(path, { lazyEntries: true, autoClose: false }, (err, zip) => (err || !zip ? reject(new PlausibleFormatError(`not a zip file: ${err?.message ?? 'unreadable'}`)) : resolve(zip))),
  );

const count = (v: string | undefined) => (v !== undefined && /^\d{1,15}$/.test(v.trim()) ? Number(v.trim()) : undefined);
const isDay = (v: string | undefined) => v !== undefined && /^\d{4}-\d\d-\d\d$/.test(v) && !Number.isNaN(Date.parse(`${v}T00:00:00Z`));

/**
 * Reads the export at `path` (a file: a zip's directory is at its end) into imported days of `siteId`, handing
 * them to `write` in batches. Rows that cannot be read are reported by entry and line and skipped.
 */
export async function importPlausibleZip(
  path: string,
  o: { siteId: string; importId: string; write: (rows: ImportedDay[]) => Promise<void> },
): Promise<PlausibleImportResult> {
  const zip = await open(path);
  const result: PlausibleImportResult = { imported: 0, rejected: 0, errors: [], firstDay: null, lastDay: null, read: [], skipped: [] };
  const reject = (file: string, line: number, message: string) => {
    result.rejected++;
    if (result.errors.length < MAX_ERRORS) result.errors.push({ file, line, message });
  };

  const entries: Entry[] = [];
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (entry: Entry) => {
      entries.push(entry);
      zip.readEntry();
    });
    zip.on('end', () => resolve());
    zip.on('error', (err) => reject(new PlausibleFormatError(`the zip is damaged: ${(err as Error).message}`)));
    zip.readEntry();
  });
  // The daily totals are what every imported report rests on: without them this is no Plausible export.
  if (!entries.some((e) => tableOf(e.fileName) === 'imported_visitors')) {
    zip.close();
    throw new PlausibleFormatError('not a Plausible export: it has no imported_visitors CSV');
  }

  try {
    for (const entry of entries) {
      const table = tableOf(entry.fileName);
      const spec = table === undefined ? undefined : TABLES.get(table);
      if (!spec) {
        if (!entry.fileName.endsWith('/')) result.skipped.push(entry.fileName);
        continue;
      }
      result.read.push(entry.fileName);
      const stream = await new Promise<NodeJS.ReadableStream>((resolve, reject) =>
        zip.openReadStream(entry, (err, s) => (err || !s ? reject(new PlausibleFormatError(`cannot read ${entry.fileName}: ${err?.message}`)) : resolve(s))),
      );
      const parser = parse({ columns: true, bom: true, skip_empty_lines: true, skip_records_with_error: true, info: true });
      parser.on('skip', (err: Error & { lines?: number }) => reject(entry.fileName, err.lines ?? 0, `not a CSV record: ${err.message}`));
      stream.pipe(parser);
      let batch: ImportedDay[] = [];
      let checked = false;
      for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
        if (!checked) {
          checked = true;
          const missing = spec.columns.filter((c) => !Object.hasOwn(record, c));
          if (missing.length > 0) throw new PlausibleFormatError(`${entry.fileName} lacks the columns ${missing.join(', ')}`);
        }
        const day = record.date;
        const pageviews = count(record.pageviews);
        const visits = count(record.visits);
        const visitors = count(record.visitors);
        const bounces = spec.dimension === '' ? count(record.bounces) : 0;
        const duration = spec.dimension === '' ? count(record.visit_duration) : 0;
        if (!isDay(day)) {
          reject(entry.fileName, info.lines, 'date must be YYYY-MM-DD');
          continue;
        }
        if ([pageviews, visits, visitors, bounces, duration].some((n) => n === undefined)) {
          reject(entry.fileName, info.lines, 'visitors, pageviews, visits (and for totals bounces, visit_duration) must be whole numbers');
          continue;
        }
        const value = spec.dimension === 'pathname' ? (record.page ?? '') : '';
        if (spec.dimension === 'pathname' && (!value.startsWith('/') || value.length > 2000)) {
          reject(entry.fileName, info.lines, 'page must be a path starting with / (at most 2,000 characters)');
          continue;
        }
        batch.push({
          importId: o.importId, siteId: o.siteId, day: day!, dimension: spec.dimension, value,
          pageviews: pageviews!, visits: visits!, visitors: visitors!, bounces: bounces!, visitDuration: duration!,
        });
        result.imported++;
        if (result.firstDay === null || day! < result.firstDay) result.firstDay = day!;
        if (result.lastDay === null || day! > result.lastDay) result.lastDay = day!;
        if (batch.length >= BATCH) {
          await o.write(batch);
          batch = [];
        }
      }
      if (batch.length > 0) await o.write(batch);
    }
  } finally {
    zip.close();
  }
  result.errors.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  return result;
}
