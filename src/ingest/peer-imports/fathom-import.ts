// Fathom's CSV export (a zip, or a folder the CLI zips on the way, of Site.csv, Pages.csv, Referrers.csv,
// Browsers.csv, Countries.csv, DeviceTypes.csv and Events.csv, each row one hour in UTC; or the newer export of one
// file per dimension, pageviews-site-totals-....csv, pageviews-browser-....csv, ...) stored as imported daily
// aggregates of a site: each hour is added to the site's local day it starts in, a daily row to its day. Fathom
// documents neither format; docs/collection.md says which file names and headers are read. Entries and rows are streamed; sums are kept for a
// bounded number of (day, value) pairs at a time and written in batches, so memory does not grow with the export.

import { pipeline } from 'node:stream';
import { parse } from 'csv-parse';
import { zoneOffsetMs } from '../../domain/zoned-time.js';
import { IMPORTED_LACKS, type ImportedDay, type ImportedDimension } from '../../store/types.js';
import type { PlausibleImportResult } from './plausible-import.js';
import { boundedRecords } from './csv-records.js';
import { parseExportDay, parseExportTime } from './export-time.js';
import { zipEntries } from './zip-entries.js';

export type FathomImportResult = PlausibleImportResult;

/** Thrown when the file is no Fathom export: not a zip, or without a readable Site.csv. */
export class FathomFormatError extends Error {}

const MAX_ERRORS = 1000;
/** (day, value) sums kept before they are written: bounds memory whatever the export's order. */
const MAX_PENDING = 20_000;
const MAX_EVENT_NAME = 255;
const ALL_BUT_PAGEVIEWS = IMPORTED_LACKS.visitors | IMPORTED_LACKS.visits | IMPORTED_LACKS.bounces | IMPORTED_LACKS.duration;

/** A header as compared: lower case, letters and digits only (`Bounce Rate`, `bounce_rate` → `bouncerate`). */
const normalize = (header: string) => header.toLowerCase().replace(/[^a-z0-9]/g, '');

type Role = 'timestamp' | 'count' | 'value' | 'visits' | 'bounceRate' | 'avgDuration';

interface FathomTable {
  dimension: ImportedDimension;
  /** Accepted headers (normalized) per column role; `required` roles must be present. */
  columns: Partial<Record<Role, string[]>>;
  required: Role[];
  /** Headers known and deliberately not read (hourly visitors cannot be summed into days). */
  ignored: string[];
  /** The stored value of a row's `value` column, or what is wrong with it. */
  value?(raw: string): { value: string } | { error: string };
}

const TIMESTAMP = ['timestamp', 'date', 'hour', 'datetime'];
const VIEWS = ['pageviews', 'views', 'pageview'];
const UNIQUES = ['visitors', 'uniques', 'uniquevisitors', 'sitevisitors', 'pagevisitors'];

const regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
/** English country names (as Intl writes them) to ISO codes, for exports that name countries. */
const COUNTRY_CODES = (() => {
  const map = new Map<string, string>();
  for (let a = 65; a <= 90; a++) {
    for (let b = 65; b <= 90; b++) {
      const code = String.fromCharCode(a, b);
      const name = regionNames.of(code);
      if (name && name !== code) map.set(name.toLowerCase(), code);
    }
  }
  return map;
})();
const DEVICES = new Map([['desktop', 'Desktop'], ['laptop', 'Desktop'], ['phone', 'Mobile'], ['mobile', 'Mobile'], ['tablet', 'Tablet']]);

const text = (max: number, unknown: string) => (raw: string) => ({ value: raw === '' ? unknown : raw.slice(0, max) });

/** The files Plumb reads, by normalized name without `.csv`. */
const TABLES = new Map<string, FathomTable>([
  ['site', {
    dimension: '',
    columns: { timestamp: TIMESTAMP, count: VIEWS, visits: ['visits', 'sessions', 'entries'], bounceRate: ['bouncerate', 'bounce'], avgDuration: ['avgduration', 'averageduration', 'avgtimeonsite', 'avgsessionduration', 'duration'] },
    required: ['timestamp', 'count'],
    ignored: UNIQUES,
  }],
  ['pages', {
    dimension: 'pathname',
    columns: { timestamp: TIMESTAMP, count: VIEWS, value: ['pathname', 'page', 'path'] },
    required: ['timestamp', 'count', 'value'],
    ignored: [...UNIQUES, 'hostname', 'entries', 'exits', 'avgtimeonpage', 'bouncerate'],
    value: (raw) => {
      let path = raw;
      if (!path.startsWith('/')) {
        try {
          path = new URL(raw).pathname;
        } catch {
          return { error: 'Pathname must be a path starting with / (or a URL)' };
        }
      }
      return path.length <= 2000 ? { value: path } : { error: 'Pathname is longer than 2,000 characters' };
    },
  }],
  ['referrers', {
    dimension: 'referrer_hostname',
    columns: { timestamp: TIMESTAMP, count: VIEWS, value: ['referrerhostname', 'referrer', 'hostname'] },
    required: ['timestamp', 'count', 'value'],
    ignored: [...UNIQUES, 'referrerpathname', 'pathname'],
    // Plumb writes a referrer's hostname with its scheme; one given without is taken as https.
    value: (raw) => ({ value: (raw === '' || /^https?:\/\//i.test(raw) ? raw.toLowerCase() : `https://${raw.toLowerCase()}`).slice(0, 255) }),
  }],
  ['browsers', { dimension: 'browser', columns: { timestamp: TIMESTAMP, count: VIEWS, value: ['browser'] }, required: ['timestamp', 'count', 'value'], ignored: UNIQUES, value: text(255, 'Unknown') }],
  ['countries', {
    dimension: 'country_code',
    columns: { timestamp: TIMESTAMP, count: VIEWS, value: ['country', 'countrycode'] },
    required: ['timestamp', 'count', 'value'],
    ignored: UNIQUES,
    value: (raw) => {
      if (raw === '') return { value: '' };
      const code = /^[A-Za-z]{2}$/.test(raw) ? raw.toUpperCase() : COUNTRY_CODES.get(raw.toLowerCase());
      return code ? { value: code } : { error: `Country ${raw.slice(0, 60)} is neither an ISO code nor a country name` };
    },
  }],
  ['devicetypes', {
    dimension: 'device_type',
    columns: { timestamp: TIMESTAMP, count: VIEWS, value: ['devicetype', 'device'] },
    required: ['timestamp', 'count', 'value'],
    ignored: UNIQUES,
    value: (raw) => ({ value: DEVICES.get(raw.toLowerCase()) ?? (raw === '' ? 'Desktop' : raw.slice(0, 255)) }),
  }],
  ['events', {
    dimension: 'event_name',
    columns: { timestamp: TIMESTAMP, count: ['completions', 'conversions', 'count', 'total'], value: ['event', 'eventname', 'name'] },
    required: ['timestamp', 'count', 'value'],
    ignored: ['uniquecompletions', 'uniqueconversions', 'value', 'currency', ...UNIQUES],
    value: (raw) => (raw !== '' && raw.length <= MAX_EVENT_NAME ? { value: raw } : { error: `the event name must be 1 to ${MAX_EVENT_NAME} characters` }),
  }],
]);
TABLES.set('devices', TABLES.get('devicetypes')!);

/** The newer export's `pageviews-<dimension>-...csv` files: the dimension as named (normalized) to its table. */
const PER_DIMENSION = new Map([
  ['sitetotals', 'site'], ['pathname', 'pages'], ['page', 'pages'], ['pages', 'pages'], ['referrer', 'referrers'],
  ['referrerhostname', 'referrers'], ['referrers', 'referrers'], ['browser', 'browsers'], ['browsers', 'browsers'],
  ['country', 'countries'], ['countrycode', 'countries'], ['countries', 'countries'], ['devicetype', 'devicetypes'],
  ['device', 'devicetypes'], ['devicetypes', 'devicetypes'],
]);

/**
 * The table an entry is, or undefined: `example.com/Pages.csv` → pages; `pageviews-device-type-2024-01-01.csv` →
 * devicetypes (the longest run of words after `pageviews-` that names a dimension; whatever follows is the export's
 * own suffix).
 */
function tableOf(name: string): string | undefined {
  const m = /(?:^|\/)([^/]+)\.csv$/i.exec(name);
  if (!m) return undefined;
  const words = m[1]!.toLowerCase().split(/[-_ ]+/);
  if (words[0] === 'pageviews' && words.length > 1) {
    for (let n = Math.min(3, words.length - 1); n >= 1; n--) {
      const table = PER_DIMENSION.get(words.slice(1, 1 + n).join(''));
      if (table !== undefined) return table;
    }
  }
  return normalize(m[1]!);
}

/**
 * An hour's start in UTC (`2024-05-01 13:00:00`; a `T`, `Z`, `UTC` or a zero offset allowed), in ms: the shared
 * rule of export-time.ts, so an hour of a day the calendar lacks is refused as it is from Plausible and Umami.
 */
function hourOf(raw: string): number | undefined {
  const time = parseExportTime(raw);
  return time && time.offsetMinutes === 0 ? time.ms : undefined;
}

/**
 * A row's day of the site: an hour (hourOf) is added to the local day it starts in; a day alone (the newer
 * export's daily rows, `2024-05-01`) is taken as that day of the site.
 */
function rowDay(raw: string, dayOf: (hour: number) => string): string | undefined {
  const day = parseExportDay(raw.trim());
  if (day !== undefined) return day;
  const hour = hourOf(raw);
  return hour === undefined ? undefined : dayOf(hour);
}

const count = (v: string | undefined) => (v !== undefined && /^\d{1,15}$/.test(v.trim()) ? Number(v.trim()) : undefined);
/** A non-negative decimal (`0.42`, `42%` → 0.42, `1:05` → 65 for durations), or undefined. */
function decimal(v: string | undefined, kind: 'rate' | 'seconds'): number | undefined {
  const t = (v ?? '').trim();
  if (kind === 'rate' && /^\d{1,3}(\.\d{1,12})?%$/.test(t)) return Number(t.slice(0, -1)) / 100;
  if (kind === 'seconds' && /^\d{1,6}:\d\d(:\d\d)?$/.test(t)) return t.split(':').reduce((a, p) => a * 60 + Number(p), 0);
  return /^\d{1,12}(\.\d{1,12})?$/.test(t) ? Number(t) : undefined;
}
/** `x` when it is within rounding of a whole number (the export's ratio times its visits), else undefined. */
const whole = (x: number) => (Math.abs(x - Math.round(x)) <= 0.05 ? Math.round(x) : undefined);

interface Sums {
  day: string;
  dimension: ImportedDimension;
  value: string;
  lacks: number;
  pageviews: number;
  visits: number;
  bounces: number;
  duration: number;
}

/**
 * Reads the export zip at `path` into imported days of `siteId` in the site's `timezone`, handing them to `write`
 * in batches. Rows that cannot be read are reported by file and line and skipped.
 */
export async function importFathomZip(
  path: string,
  o: {
    siteId: string;
    importId: string;
    timezone: string;
    write: (rows: ImportedDay[]) => Promise<void>;
    /** Whether the site has (or now has) the event of this name, as the collector finds or creates it. */
    eventGoal?: (name: string) => Promise<boolean>;
  },
): Promise<FathomImportResult> {
  const zip = await zipEntries(path, (message) => new FathomFormatError(message));
  const result: FathomImportResult = { imported: 0, rejected: 0, errors: [], firstDay: null, lastDay: null, read: [], skipped: [], digest: zip.digest };
  const reject = (file: string, line: number, message: string) => {
    result.rejected++;
    if (result.errors.length < MAX_ERRORS) result.errors.push({ file, line, message });
  };
  // Site totals are what every imported report rests on: without them this is no Fathom export.
  const entries = zip.entries.filter((e) => !e.fileName.endsWith('/'));
  if (!entries.some((e) => tableOf(e.fileName) === 'site')) {
    zip.close();
    throw new FathomFormatError('not a Fathom export: it has no Site.csv (or pageviews-site-totals-....csv)');
  }
  // One file per table: a second (a copy, or another export's) would add its hours again. Two spellings of one
  // table (Devices.csv, DeviceTypes.csv) are the same table.
  const tables = new Map<FathomTable, string>();
  for (const entry of entries) {
    const table = tableOf(entry.fileName);
    const spec = table === undefined ? undefined : TABLES.get(table);
    if (spec === undefined) continue;
    const first = tables.get(spec);
    if (first !== undefined) {
      zip.close();
      throw new FathomFormatError(`${first} and ${entry.fileName} are the same table: an export has one file per table; nothing was imported, import each export on its own`);
    }
    tables.set(spec, entry.fileName);
  }
  // Site.csv first, so a damaged one refuses the export before anything else is written.
  entries.sort((a, b) => Number(tableOf(b.fileName) === 'site') - Number(tableOf(a.fileName) === 'site'));

  const pending = new Map<string, Sums>();
  const flush = async () => {
    if (pending.size === 0) return;
    const rows = [...pending.values()].map((s): ImportedDay => ({
      importId: o.importId, siteId: o.siteId, day: s.day, dimension: s.dimension, value: s.value,
      pageviews: s.pageviews, visits: s.visits, visitors: 0, bounces: s.bounces, visitDuration: s.duration, lacks: s.lacks,
    }));
    pending.clear();
    for (let i = 0; i < rows.length; i += 5000) await o.write(rows.slice(i, i + 5000));
  };
  const dayOf = (hour: number) => new Date(hour + zoneOffsetMs(o.timezone, hour)).toISOString().slice(0, 10);

  try {
    for (const entry of entries) {
      const table = tableOf(entry.fileName);
      const spec = table === undefined ? undefined : TABLES.get(table);
      if (!spec) {
        result.skipped.push(`${entry.fileName} (not used)`);
        continue;
      }
      const stream = await zip.open(entry);
      let missing: string[] = [];
      let unknown: string[] = [];
      const roles = new Map<Role, string>();
      const parser = parse({
        columns: (header: string[]) => {
          const names = header.map(normalize);
          for (const [role, accepted] of Object.entries(spec.columns) as [Role, string[]][]) {
            const at = names.findIndex((n) => accepted.includes(n));
            if (at >= 0) roles.set(role, header[at]!);
          }
          missing = spec.required.filter((r) => !roles.has(r)).map((r) => spec.columns[r]![0]!);
          const used = new Set(roles.values());
          unknown = header.filter((h, i) => !used.has(h) && !spec.ignored.includes(names[i]!));
          return header;
        },
        bom: true,
        skip_empty_lines: true,
        skip_records_with_error: true,
        relax_column_count: true,
        info: true,
        ...boundedRecords(entry.fileName, (message) => new FathomFormatError(message), (err) =>
          reject(entry.fileName, typeof err.lines === 'number' ? err.lines : 0, `not a CSV record: ${err.message}`)),
      });
      // A damaged entry fails the parser, and so the loop below; a loop that stops early lets go of the entry.
      pipeline(stream, parser, () => undefined);
      const cell = (r: Record<string, string>, role: Role) => {
        const column = roles.get(role);
        return column !== undefined && Object.hasOwn(r, column) ? (r[column] ?? '').trim() : undefined;
      };
      for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
        if (missing.length > 0) break;
        const day = rowDay(cell(record, 'timestamp') ?? '', dayOf);
        if (day === undefined) {
          reject(entry.fileName, info.lines, `${roles.get('timestamp')} must be an hour in UTC (YYYY-MM-DD HH:00:00) or a day (YYYY-MM-DD)`);
          continue;
        }
        const views = count(cell(record, 'count'));
        if (views === undefined) {
          reject(entry.fileName, info.lines, `${roles.get('count')} must be a whole number`);
          continue;
        }
        let value = '';
        if (spec.value) {
          const v = spec.value(cell(record, 'value') ?? '');
          if ('error' in v) {
            reject(entry.fileName, info.lines, v.error);
            continue;
          }
          value = v.value;
        }
        if (spec.dimension === 'event_name' && o.eventGoal && !(await o.eventGoal(value))) {
          reject(entry.fileName, info.lines, `the site has the most events new names create (${value.slice(0, 100)} is not one of them)`);
          continue;
        }
        // What the row carries beyond views: only the site's totals have visits, and from them bounces and
        // durations (rate and mean times visits, kept only when that is a whole number: a rate rounded too far
        // for the hour's visits is no count). No hourly visitor count adds up to a day's.
        let lacks = ALL_BUT_PAGEVIEWS;
        let visits = 0;
        let bounces = 0;
        let duration = 0;
        if (spec.dimension === '') {
          const rawVisits = cell(record, 'visits');
          const v = rawVisits === undefined ? undefined : count(rawVisits);
          if (rawVisits !== undefined && v === undefined) {
            reject(entry.fileName, info.lines, `${roles.get('visits')} must be a whole number`);
            continue;
          }
          if (v !== undefined) {
            lacks = IMPORTED_LACKS.visitors;
            visits = v;
            const rate = decimal(cell(record, 'bounceRate'), 'rate');
            const b = rate === undefined || rate > 1 ? undefined : whole(rate * v);
            if (b === undefined) lacks |= IMPORTED_LACKS.bounces;
            else bounces = b;
            const mean = decimal(cell(record, 'avgDuration'), 'seconds');
            const d = mean === undefined ? undefined : whole(mean * v);
            if (d === undefined) lacks |= IMPORTED_LACKS.duration;
            else duration = d;
          }
        }
        const key = `${spec.dimension}\0${day}\0${value}\0${lacks}`;
        let sums = pending.get(key);
        if (!sums) {
          if (pending.size >= MAX_PENDING) await flush();
          sums = { day, dimension: spec.dimension, value, lacks, pageviews: 0, visits: 0, bounces: 0, duration: 0 };
          pending.set(key, sums);
        }
        sums.pageviews += views;
        sums.visits += visits;
        sums.bounces += bounces;
        sums.duration += duration;
        result.imported++;
        if (result.firstDay === null || day < result.firstDay) result.firstDay = day;
        if (result.lastDay === null || day > result.lastDay) result.lastDay = day;
      }
      if (missing.length > 0) {
        // Without a time column the rows are totals over the export's whole range: they cannot be put on days.
        const undated = missing.includes(TIMESTAMP[0]!) ? '; rows need an hour or a day: export with a date grouping' : '';
        const message = `${entry.fileName} lacks the columns ${missing.join(', ')} (headers are matched ignoring case, spaces and punctuation${undated})`;
        if (spec.dimension === '') throw new FathomFormatError(message);
        result.skipped.push(`${entry.fileName} (lacks ${missing.join(', ')})`);
        continue;
      }
      result.read.push(entry.fileName);
      if (unknown.length > 0) result.skipped.push(`${entry.fileName}: columns not read: ${unknown.slice(0, 20).join(', ')}`);
      await flush();
    }
  } finally {
    zip.close();
  }
  result.errors.sort((a, b) => (a.file === b.file ? a.line - b.line : a.file < b.file ? -1 : 1));
  return result;
}
