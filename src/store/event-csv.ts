// Hits and visits as CSV files, for stores that load rows in bulk (the set-based NDJSON import): the columns in
// file order with their SQL types, and one row as a CSV line. Times are epoch milliseconds, ids decimal, and every
// text value that could break a line is quoted.

import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredHit, VisitRecord } from '../domain/hits.js';
import { propColumns, type PropList } from '../domain/props.js';
import { HIT_TEXT_COLUMNS, snake, VISIT_ATTRIBUTION_COLUMNS } from './event-rows.js';

/** `EPOCH_MS`: a time as epoch milliseconds; `TEXT_LIST`: a list of texts as a JSON array. */
export type CsvType = 'VARCHAR' | 'EPOCH_MS' | 'UBIGINT' | 'BIGINT' | 'INTEGER' | 'BOOLEAN' | 'TEXT_LIST';

/** A column of a CSV file: its table column name and how its text reads. */
export interface CsvColumn {
  name: string;
  type: CsvType;
}

const text = (names: readonly string[]): CsvColumn[] => names.map((n) => ({ name: snake(n), type: 'VARCHAR' }));

export const HIT_CSV_COLUMNS: readonly CsvColumn[] = [
  { name: 'site_id', type: 'VARCHAR' },
  { name: 'type', type: 'VARCHAR' },
  { name: 'ts', type: 'EPOCH_MS' },
  { name: 'visitor_id', type: 'UBIGINT' },
  { name: 'visit_id', type: 'UBIGINT' },
  ...text(HIT_TEXT_COLUMNS),
  { name: 'event_name', type: 'VARCHAR' },
  { name: 'value', type: 'BIGINT' },
  { name: 'first_view', type: 'BOOLEAN' },
  { name: 'prop_keys', type: 'TEXT_LIST' },
  { name: 'prop_values', type: 'TEXT_LIST' },
];

export const VISIT_CSV_COLUMNS: readonly CsvColumn[] = [
  { name: 'visit_id', type: 'UBIGINT' },
  { name: 'site_id', type: 'VARCHAR' },
  { name: 'visitor_id', type: 'UBIGINT' },
  { name: 'started_at', type: 'EPOCH_MS' },
  { name: 'last_seen_at', type: 'EPOCH_MS' },
  { name: 'entry_page', type: 'VARCHAR' },
  { name: 'exit_page', type: 'VARCHAR' },
  { name: 'exit_hostname', type: 'VARCHAR' },
  { name: 'pageviews', type: 'INTEGER' },
  { name: 'events', type: 'INTEGER' },
  { name: 'paths_exact', type: 'BOOLEAN' },
  ...text(VISIT_ATTRIBUTION_COLUMNS),
];

const NEEDS_QUOTES = /[",\r\n]/;

/** Text values repeat from row to row (hosts, pages, browsers, places): each is encoded once. */
const encoded = new Map<string, string>();
const ENCODED_ENTRIES = 100_000;

/**
 * A text value as a CSV field: quoted (inner quotes doubled) when it holds a quote, comma or line break, and
 * always when empty, so that an empty value is never read as a missing one.
 */
export function csvText(value: string): string {
  let field = encoded.get(value);
  if (field === undefined) {
    field = value === '' || NEEDS_QUOTES.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
    if (encoded.size >= ENCODED_ENTRIES) encoded.clear();
    encoded.set(value, field);
  }
  return field;
}

const NO_PROPS = [csvText('[]'), csvText('[]')];

/** Custom properties as two JSON arrays, keys and values (the parallel lists the stores keep). */
function propFields(props: PropList | undefined): string[] {
  if (!props || props.length === 0) return NO_PROPS;
  const [keys, values] = propColumns(props);
  return [csvText(JSON.stringify(keys)), csvText(JSON.stringify(values))];
}

/** One hit as a line of a file with HIT_CSV_COLUMNS (without the line break). */
export function hitCsvLine(h: StoredHit): string {
  // Field by field, joined once: looking fields up by names held in a variable, or building the line with one
  // long template, each took several times longer.
  return [
    csvText(h.siteId), h.type, h.timestamp.getTime(), h.visitorId, h.visitId, csvText(h.hostname), csvText(h.pathname),
    csvText(h.referrerHostname), csvText(h.referrerPathname), csvText(h.referrerSource), csvText(h.utmCampaign),
    csvText(h.utmContent), csvText(h.utmMedium), csvText(h.utmSource), csvText(h.utmTerm), csvText(h.ref), csvText(h.keyword),
    csvText(h.browser), csvText(h.operatingSystem), csvText(h.deviceType), csvText(h.countryCode), csvText(h.region),
    csvText(h.state), csvText(h.city), csvText(h.eventName), h.value, h.firstView, ...propFields(h.props),
  ].join(',');
}

/** One visit as a line of a file with VISIT_CSV_COLUMNS (without the line break). */
export function visitCsvLine(v: VisitRecord): string {
  return [
    v.visitId, csvText(v.siteId), v.visitorId, v.startedAt.getTime(), v.lastSeenAt.getTime(), csvText(v.entryPage),
    csvText(v.exitPage), csvText(v.exitHostname), v.pageviews, v.events, v.pathsExact, csvText(v.referrerHostname),
    csvText(v.referrerPathname), csvText(v.referrerSource), csvText(v.utmCampaign), csvText(v.utmContent),
    csvText(v.utmMedium), csvText(v.utmSource), csvText(v.utmTerm), csvText(v.ref), csvText(v.keyword),
  ].join(',');
}

/**
 * Rows of one import chunk, written to CSV files (HIT_CSV_COLUMNS and VISIT_CSV_COLUMNS) for a bulk load: the
 * hits, the states of visits that may already have a row (replaced), and visits no earlier load stored (appended).
 */
export interface CsvRows {
  hitsFile: string;
  visitsFile: string;
  newVisitsFile: string;
  hits: number;
  visits: number;
  newVisits: number;
}

/** Deletes a load's files, those of them that were written. */
export async function removeCsvFiles(rows: CsvRows): Promise<void> {
  await Promise.all([rows.hitsFile, rows.visitsFile, rows.newVisitsFile].map((file) => rm(file, { force: true })));
}

/** The files of a load named `name` in `dir`, with no rows counted yet. */
export function csvFiles(dir: string, name: string): CsvRows {
  const file = (part: string) => join(dir, `${name}-${part}.csv`);
  return { hitsFile: file('hits'), visitsFile: file('visits'), newVisitsFile: file('new-visits'), hits: 0, visits: 0, newVisits: 0 };
}

/**
 * Writes rows as CSV files in `dir`: `visits` may already be stored (their rows are replaced), `newVisits` must
 * not be (they are appended).
 */
export async function writeCsvRows(
  dir: string,
  name: string,
  hits: readonly StoredHit[],
  visits: readonly VisitRecord[],
  newVisits: readonly VisitRecord[] = [],
): Promise<CsvRows> {
  const rows: CsvRows = { ...csvFiles(dir, name), hits: hits.length, visits: visits.length, newVisits: newVisits.length };
  await writeFile(rows.hitsFile, hits.map(hitCsvLine).join('\n'));
  await writeFile(rows.visitsFile, visits.map(visitCsvLine).join('\n'));
  await writeFile(rows.newVisitsFile, newVisits.map(visitCsvLine).join('\n'));
  return rows;
}
