// Plausible CE's CSV export (a zip of imported_*.csv tables) stored as imported daily aggregates of a site: the
// site's daily totals and, per day, each page's, entry and exit page's, source's and campaign's, browser's,
// system's, device's and country's numbers (with bounces and durations where the table counts whole visits), and
// each custom event's completions, and pages' engagement (summed into the day's totals too), which reports can add
// to recorded hits (docs/reports.md, "Imported data"). Entries are read one at a time, each as a stream (yauzl, csv-parse),
// and rows written in batches: memory does not grow with the export (beyond one engagement sum per day).

import { pipeline } from 'node:stream';
import { parse } from 'csv-parse';
import { IMPORTED_LACKS, type ImportedDay, type ImportedDimension } from '../../store/types.js';
import { boundedRecords } from './csv-records.js';
import { parseExportDay } from './export-time.js';
import { zipEntries } from './zip-entries.js';

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
  /** The export's content (zip-entries.ts): the same export zipped anew has the same digest. */
  digest: string;
}

/** Thrown when the file is no Plausible export: not a zip, or without imported_visitors. */
export class PlausibleFormatError extends Error {}

const MAX_ERRORS = 1000;
const BATCH = 5000;

type Pair = [ImportedDimension, string];

interface TableSpec {
  /** The columns it must have to be read, besides `date` and the counts'. */
  columns: string[];
  /** The columns of the numbers stored (ImportedDay); a table without visits or visit facts stores 0. */
  counts: { pageviews: string; visitors: string; visits?: string; bounces?: string; duration?: string };
  /** The site totals: without them the export is refused. */
  totals?: boolean;
  /** The numbers its rows do not carry (IMPORTED_LACKS bits). */
  lacks?: number;
  /** Whether it may carry engagement (ENGAGEMENT's columns, read when the header has them). */
  engagement?: boolean;
  /** The field values a row counts for, or what is wrong with it. */
  values(record: Record<string, string>): Pair[] | string;
}

const text = (r: Record<string, string>, c: string) => (Object.hasOwn(r, c) ? (r[c] ?? '').trim() : '');
const NOT_SET = new Set(['', '(not set)']);
const path = (dimension: ImportedDimension, column: string) => (r: Record<string, string>): Pair[] | string => {
  const v = text(r, column);
  return v.startsWith('/') && v.length <= 2000 ? [[dimension, v]] : `${column} must be a path starting with / (at most 2,000 characters)`;
};
const named = (dimension: ImportedDimension, column: string, names: ReadonlyMap<string, string>, unknown: string) =>
  (r: Record<string, string>): Pair[] => {
    const v = text(r, column);
    return [[dimension, NOT_SET.has(v) ? unknown : (names.get(v) ?? v).slice(0, 255)]];
  };

// Plausible's names as Plumb's own parsing gives them, so imported and recorded numbers group together.
const OS_NAMES = new Map([['Mac', 'macOS'], ['GNU/Linux', 'Linux']]);
const DEVICE_NAMES = new Map([['Laptop', 'Desktop']]);
const NO_NAMES = new Map<string, string>();
const UTM = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'] as const;
/** As the collector: longer event names are refused. */
const MAX_EVENT_NAME = 255;

/** Tables of whole visits (sessions): each carries visitors, pageviews, visits (under `visits`), bounces and durations. */
const sessions = (visits = 'visits') => ({ pageviews: 'pageviews', visitors: 'visitors', visits, bounces: 'bounces', duration: 'visit_duration' });

/** The export's tables Plumb reads, and which report field each value is. */
const TABLES = new Map<string, TableSpec>([
  ['imported_visitors', { columns: [], counts: sessions(), totals: true, values: () => [['', '']] }],
  // Pages count views and the visits and visitors that had one, not whole visits: no bounces or durations.
  ['imported_pages', {
    columns: ['page'], counts: { pageviews: 'pageviews', visitors: 'visitors', visits: 'visits' }, lacks: IMPORTED_LACKS.bounces | IMPORTED_LACKS.duration,
    engagement: true, values: path('pathname', 'page'),
  }],
  ['imported_entry_pages', { columns: ['entry_page'], counts: sessions('entrances'), values: path('entry_page', 'entry_page') }],
  ['imported_exit_pages', { columns: ['exit_page'], counts: sessions('exits'), values: path('exit_page', 'exit_page') }],
  ['imported_sources', {
    columns: ['source', ...UTM],
    counts: sessions(),
    // One row is one combination of source and campaign: it counts for each of them.
    values: (r) => [['referrer_source', text(r, 'source') === 'Direct / None' ? '' : text(r, 'source').slice(0, 255)], ...UTM.map((u): Pair => [u, text(r, u).slice(0, 255)])],
  }],
  ['imported_browsers', { columns: ['browser'], counts: sessions(), values: named('browser', 'browser', NO_NAMES, 'Unknown') }],
  ['imported_operating_systems', { columns: ['operating_system'], counts: sessions(), values: named('operating_system', 'operating_system', OS_NAMES, 'Unknown') }],
  ['imported_devices', { columns: ['device'], counts: sessions(), values: named('device_type', 'device', DEVICE_NAMES, 'Desktop') }],
  ['imported_locations', {
    // Its region (an ISO 3166-2 code) and city (a GeoNames id) are not Plumb's state, region and city (names
    // from DB-IP): the rows count for their country only.
    columns: ['country'],
    counts: sessions(),
    values: (r) => {
      const c = text(r, 'country').toUpperCase();
      return [['country_code', /^[A-Z]{2}$/.test(c) && c !== 'ZZ' ? c : '']];
    },
  }],
  ['imported_custom_events', {
    // Completions of each event per day (its link_url and path, set for Plausible's own goals, are summed).
    columns: ['name'],
    counts: { pageviews: 'events', visitors: 'visitors' },
    lacks: IMPORTED_LACKS.visits | IMPORTED_LACKS.bounces | IMPORTED_LACKS.duration,
    values: (r) => {
      const name = text(r, 'name');
      return name !== '' && name.length <= MAX_EVENT_NAME ? [['event_name', name]] : `name must be 1 to ${MAX_EVENT_NAME} characters`;
    },
  }],
]);

/** The table an entry holds (`imported_pages_20240101_20241231.csv` → imported_pages), or undefined. */
function tableOf(name: string): string | undefined {
  const m = /(?:^|\/)(imported_[a-z_]+?)(?:_\d{8}_\d{8})?\.csv$/.exec(name);
  return m?.[1];
}

const count = (v: string | undefined) => (v !== undefined && /^\d{1,15}$/.test(v.trim()) ? Number(v.trim()) : undefined);

/**
 * The pages table's engagement columns (Plausible CE's export, lib/plausible/exports.ex): per page and day, the sum
 * over visits of each visit's deepest scroll there (percent, at most 100) and those visits; the engaged time in
 * whole seconds summed over visits, and those visits. Exports made before Plausible had engagement lack them (0),
 * and one without new time on page lacks the two time columns.
 */
const ENGAGEMENT = {
  scrollSum: 'total_scroll_depth', scrollPairs: 'total_scroll_depth_visits', engagedSeconds: 'total_time_on_page', engagedPairs: 'total_time_on_page_visits',
} as const;
type Engagement = Record<'scrollSum' | 'scrollPairs' | 'engagedMsSum' | 'engagedPairs', number>;

/** A row's engagement (absent columns and empty cells, which Plausible writes for a page without any, are 0), or what is wrong with it. */
function engagementOf(record: Record<string, string>, header: ReadonlySet<string>): Engagement | string {
  const cell = (column: string) => {
    const v = header.has(column) ? text(record, column) : '';
    return v === '' || v === '\\N' ? 0 : count(v);
  };
  const [scrollSum, scrollPairs, seconds, engagedPairs] = Object.values(ENGAGEMENT).map(cell);
  if ([scrollSum, scrollPairs, seconds, engagedPairs].some((n) => n === undefined)) return `${Object.values(ENGAGEMENT).join(', ')} must be whole numbers or empty`;
  // Each visit's deepest scroll is at most 100 percent, and a sum needs visits it is over.
  if (scrollSum! > 100 * scrollPairs!) return 'total_scroll_depth must be at most 100 times total_scroll_depth_visits';
  if (seconds! > 0 && engagedPairs === 0) return 'total_time_on_page needs total_time_on_page_visits';
  // Stored in ms: exact only up to 2^53.
  if (seconds! * 1000 > Number.MAX_SAFE_INTEGER) return 'total_time_on_page is more seconds than any export holds';
  return { scrollSum: scrollSum!, scrollPairs: scrollPairs!, engagedMsSum: seconds! * 1000, engagedPairs: engagedPairs! };
}
/**
 * Reads the export at `path` (a file: a zip's directory is at its end) into imported days of `siteId`, handing
 * them to `write` in batches. Rows that cannot be read are reported by entry and line and skipped.
 */
export async function importPlausibleZip(
  path: string,
  o: {
    siteId: string;
    importId: string;
    write: (rows: ImportedDay[]) => Promise<void>;
    /** Whether the site has (or now has) the event of this name, as the collector finds or creates it. */
    eventGoal?: (name: string) => Promise<boolean>;
  },
): Promise<PlausibleImportResult> {
  const zip = await zipEntries(path, (message) => new PlausibleFormatError(message));
  const entries = zip.entries;
  const result: PlausibleImportResult = { imported: 0, rejected: 0, errors: [], firstDay: null, lastDay: null, read: [], skipped: [], digest: zip.digest };
  const reject = (file: string, line: number, message: string) => {
    result.rejected++;
    if (result.errors.length < MAX_ERRORS) result.errors.push({ file, line, message });
  };

  // The daily totals are what every imported report rests on: without them this is no Plausible export.
  if (!entries.some((e) => tableOf(e.fileName) === 'imported_visitors')) {
    zip.close();
    throw new PlausibleFormatError('not a Plausible export: it has no imported_visitors CSV');
  }

  try {
    // An export has one file per table: a second would add its days again (a zip of copies multiplies every number).
    const tables = new Map<string, string>();
    for (const entry of entries) {
      const table = tableOf(entry.fileName);
      if (table === undefined || !TABLES.has(table)) continue;
      const first = tables.get(table);
      if (first !== undefined) {
        throw new PlausibleFormatError(`${first} and ${entry.fileName} are both the ${table} table: an export has one file per table; nothing was imported, import each export on its own`);
      }
      tables.set(table, entry.fileName);
    }
    for (const entry of entries) {
      const table = tableOf(entry.fileName);
      const spec = table === undefined ? undefined : TABLES.get(table);
      if (!spec) {
        if (!entry.fileName.endsWith('/')) result.skipped.push(`${entry.fileName} (not used)`);
        continue;
      }
      result.read.push(entry.fileName);
      const stream = await zip.open(entry);
      const counts = spec.counts;
      const required = ['date', ...spec.columns, ...Object.values(counts)];
      // Checked on the header itself, so a table with no rows is judged too.
      let missing: string[] = [];
      let header: ReadonlySet<string> = new Set();
      const parser = parse({
        columns: (names: string[]) => {
          missing = required.filter((c) => !names.includes(c));
          header = new Set(names);
          return names;
        },
        bom: true,
        skip_empty_lines: true,
        skip_records_with_error: true,
        info: true,
        ...boundedRecords(entry.fileName, (message) => new PlausibleFormatError(message), (err) =>
          reject(entry.fileName, typeof err.lines === 'number' ? err.lines : 0, `not a CSV record: ${err.message}`)),
      });
      // A damaged entry fails the parser, and so the loop below; a loop that stops early lets go of the entry.
      pipeline(stream, parser, () => undefined);
      let batch: ImportedDay[] = [];
      // The pages' engagement summed per day: the totals' share (totals rows carry it, docs/reports.md "Engagement").
      const engagedDays = new Map<string, Engagement>();
      for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
        if (missing.length > 0) break;
        const day = record.date;
        const number = (column: string | undefined) => (column === undefined ? 0 : count(record[column]));
        const pageviews = number(counts.pageviews);
        const visits = number(counts.visits);
        const visitors = number(counts.visitors);
        const bounces = number(counts.bounces);
        const duration = number(counts.duration);
        // A day of the calendar, by the rule all three importers share (2021-02-29 is refused, not 1 March).
        if (day === undefined || parseExportDay(day) === undefined) {
          reject(entry.fileName, info.lines, 'date must be YYYY-MM-DD');
          continue;
        }
        if ([pageviews, visits, visitors, bounces, duration].some((n) => n === undefined)) {
          reject(entry.fileName, info.lines, `${Object.values(counts).join(', ')} must be whole numbers`);
          continue;
        }
        const values = spec.values(record);
        if (typeof values === 'string') {
          reject(entry.fileName, info.lines, values);
          continue;
        }
        const engaged = spec.engagement ? engagementOf(record, header) : undefined;
        if (typeof engaged === 'string') {
          reject(entry.fileName, info.lines, engaged);
          continue;
        }
        const event = values[0]?.[0] === 'event_name' ? values[0][1] : undefined;
        if (event !== undefined && !(await (o.eventGoal?.(event) ?? Promise.resolve(true)))) {
          reject(entry.fileName, info.lines, `the site has the most events new names create (${event.slice(0, 100)} is not one of them)`);
          continue;
        }
        for (const [dimension, value] of values) {
          batch.push({
            importId: o.importId, siteId: o.siteId, day: day!, dimension, value,
            pageviews: pageviews!, visits: visits!, visitors: visitors!, bounces: bounces!, visitDuration: duration!, lacks: spec.lacks ?? 0,
            ...engaged,
          });
        }
        if (engaged && (engaged.scrollPairs > 0 || engaged.engagedPairs > 0)) {
          const sum = engagedDays.get(day!) ?? { scrollSum: 0, scrollPairs: 0, engagedMsSum: 0, engagedPairs: 0 };
          for (const k of ['scrollSum', 'scrollPairs', 'engagedMsSum', 'engagedPairs'] as const) sum[k] += engaged[k];
          engagedDays.set(day!, sum);
        }
        result.imported++;
        if (result.firstDay === null || day! < result.firstDay) result.firstDay = day!;
        if (result.lastDay === null || day! > result.lastDay) result.lastDay = day!;
        if (batch.length >= BATCH) {
          await o.write(batch);
          batch = [];
        }
      }
      if (missing.length > 0) {
        // The totals are required; another table an older export writes without a column is left out.
        if (spec.totals) throw new PlausibleFormatError(`${entry.fileName} lacks the columns ${missing.join(', ')}`);
        result.read.pop();
        result.skipped.push(`${entry.fileName} (lacks ${missing.join(', ')})`);
        continue;
      }
      // One more totals row per engaged day, with only engagement (its other numbers 0 add nothing to the day's).
      for (const [day, sums] of engagedDays) {
        batch.push({ importId: o.importId, siteId: o.siteId, day, dimension: '', value: '', pageviews: 0, visits: 0, visitors: 0, bounces: 0, visitDuration: 0, lacks: 0, ...sums });
      }
      if (batch.length > 0) await o.write(batch);
    }
  } finally {
    zip.close();
  }
  result.errors.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  return result;
}
