// Hits and visits as CSV files, for stores that load rows in bulk (the set-based NDJSON import): the columns in
// file order with their SQL types, and one row as a CSV line. Times are epoch milliseconds, ids decimal, and every
// text value that could break a line is quoted.

import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ATTRIBUTION_FIELDS, type Attribution, type HitAttributes, type HitType, type StoredHit, type VisitRecord } from '../domain/hits.js';
import { propColumns, type PropList } from '../domain/props.js';
import { HIT_TEXT_COLUMNS, JOURNEY_PAGE_COLUMNS, journeyPageTexts, snake, VISIT_ATTRIBUTION_COLUMNS } from './event-rows.js';

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
  { name: 'journey_length', type: 'INTEGER' },
  ...JOURNEY_PAGE_COLUMNS.map((name): CsvColumn => ({ name, type: 'VARCHAR' })),
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

const NO_PROPS = `${csvText('[]')},${csvText('[]')}`;

/** Custom properties as two JSON arrays, keys and values (the parallel lists the stores keep): two CSV fields. */
export function propsCsv(props: PropList | undefined): string {
  if (!props || props.length === 0) return NO_PROPS;
  const [keys, values] = propColumns(props);
  return `${csvText(JSON.stringify(keys))},${csvText(JSON.stringify(values))}`;
}

/** Text values as consecutive CSV fields: a part of a line that repeats from row to row, worked out once. */
export function csvFields(values: readonly string[]): string {
  return values.map(csvText).join(',');
}

/** A row's attribution (ATTRIBUTION_FIELDS, the same in hits and visits) as CSV fields. */
export const attributionCsv = (a: Attribution): string => csvFields(ATTRIBUTION_FIELDS.map((f) => a[f]));

/** A hit's page as CSV fields: hostname, pathname. */
export const pageCsv = (hostname: string, pathname: string): string => csvFields([hostname, pathname]);

/** A user agent's fields as CSV fields: browser, operatingSystem, deviceType. */
export const agentCsv = (a: Pick<HitAttributes, 'browser' | 'operatingSystem' | 'deviceType'>): string =>
  csvFields([a.browser, a.operatingSystem, a.deviceType]);

/** A place as CSV fields: countryCode, region, state, city. */
export const placeCsv = (p: Pick<HitAttributes, 'countryCode' | 'region' | 'state' | 'city'>): string =>
  csvFields([p.countryCode, p.region, p.state, p.city]);

/**
 * The parts of a hit's CSV line that repeat from hit to hit, each already CSV fields (csvFields): a caller that
 * knows where they come from (the set-based import: a page, a visit, a user agent, an address) makes each once.
 */
export interface HitCsvParts {
  site: string;
  /** pageCsv */
  page: string;
  /** ATTRIBUTION_FIELDS (a hit carries its visit's) */
  attribution: string;
  /** agentCsv */
  agent: string;
  /** placeCsv */
  place: string;
}

/** One hit as a line of a file with HIT_CSV_COLUMNS (without the line break), from its parts and its own values. */
export function hitCsvLineOf(
  parts: HitCsvParts,
  type: HitType,
  timestamp: number,
  visitorId: bigint,
  visitId: bigint,
  eventName: string,
  value: number,
  firstView: boolean,
  props: string,
): string {
  // Joined from an array: one long template literal took several times longer (V8 builds it a piece at a time).
  return [
    parts.site, type, timestamp, visitorId, visitId, parts.page, parts.attribution, parts.agent, parts.place,
    csvText(eventName), value, firstView, props,
  ].join(',');
}

/** One hit as a line of a file with HIT_CSV_COLUMNS (without the line break). */
export function hitCsvLine(h: StoredHit): string {
  const parts: HitCsvParts = {
    site: csvText(h.siteId),
    page: pageCsv(h.hostname, h.pathname),
    attribution: attributionCsv(h),
    agent: agentCsv(h),
    place: placeCsv(h),
  };
  return hitCsvLineOf(parts, h.type, h.timestamp.getTime(), h.visitorId, h.visitId, h.eventName, h.value, h.firstView, propsCsv(h.props));
}

/**
 * One visit as a line of a file with VISIT_CSV_COLUMNS (without the line break); `attribution` is attributionCsv(v),
 * for a caller that made it already (a visit's attribution never changes after its first hit).
 */
export function visitCsvLine(v: VisitRecord, attribution = attributionCsv(v)): string {
  return [
    v.visitId, csvText(v.siteId), v.visitorId, v.startedAt.getTime(), v.lastSeenAt.getTime(), csvText(v.entryPage),
    csvText(v.exitPage), csvText(v.exitHostname), v.pageviews, v.events, v.pathsExact, attribution, v.journeyLength,
    ...journeyPageTexts(v).map(csvText),
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
  await writeFile(rows.visitsFile, visits.map((v) => visitCsvLine(v)).join('\n'));
  await writeFile(rows.newVisitsFile, newVisits.map((v) => visitCsvLine(v)).join('\n'));
  return rows;
}
