// The SQL that stores a file of hit records (src/ingest/live/hit-record.ts) in DuckDB: DuckDB's own JSON reader parses
// it on its threads, which costs the event loop nothing, where appending row by row took ~35 µs of it per hit.

import { ATTRIBUTION_FIELDS } from '../../domain/hits.js';
import { RECORD_FIELDS, RECORD_JOURNEY_PAGE_FIELDS } from '../../ingest/live/hit-record.js';
import { HIT_CSV_COLUMNS, VISIT_CSV_COLUMNS } from '../event-csv.js';
import { HIT_TEXT_COLUMNS, JOURNEY_PAGE_COLUMNS, snake } from '../event-rows.js';

/** A record's value (a RECORD_FIELDS name) in SQL: the line's values are read as the text list `r`. */
function value(field: string): string {
  const at = RECORD_FIELDS.indexOf(field);
  if (at < 0) throw new Error(`no record field ${field}`);
  return `r[${at + 1}]`;
}
const ms = (field: string) => `make_timestamp(CAST(${value(field)} AS BIGINT) * 1000)`;
const toId = (sql: string) => `CAST(${sql} AS UBIGINT)`;
const id = (field: string) => toId(value(field));
/** A visit field that the record leaves null where the hit has the same value (encodeRecord). */
const shared = (field: string, cast = (sql: string) => sql) => `coalesce(${cast(value(`visit.${field}`))}, ${cast(value(`hit.${field}`))})`;

/** The hits and visits tables' columns (the import's CSV loads name the same), as `record_batch` holds them. */
const HIT_COLUMNS = HIT_CSV_COLUMNS.map((c) => c.name);
const VISIT_COLUMNS = VISIT_CSV_COLUMNS.map((c) => c.name);

/**
 * Reads the file (the one parameter) into the temp table `record_batch`, typed: the hits table's columns, then the
 * visit's as `visit_*`. Its rowid is each line's place in the file (DuckDB keeps a file's order when it inserts
 * what it reads); numbering the lines with row_number() cost a window over the whole batch. Each line is read as a
 * list of texts (numbers and booleans as their JSON text, the custom properties as a JSON array) and cast here.
 */
export const STAGE_RECORDS = `CREATE OR REPLACE TEMP TABLE record_batch AS SELECT
  ${value('hit.siteId')} AS site_id, ${value('hit.type')} AS type, ${ms('hit.timestamp')} AS ts,
  ${id('hit.visitorId')} AS visitor_id, ${id('hit.visitId')} AS visit_id,
  ${HIT_TEXT_COLUMNS.map((c) => `${value(`hit.${c}`)} AS ${snake(c)}`).join(', ')},
  ${value('hit.eventName')} AS event_name, CAST(${value('hit.value')} AS BIGINT) AS value,
  CAST(${value('hit.firstView')} AS BOOLEAN) AS first_view,
  coalesce(CAST(${value('hit.scrollDepth')} AS UTINYINT), 0) AS scroll_depth, coalesce(CAST(${value('hit.engagedMs')} AS UINTEGER), 0) AS engaged_ms,
  list_transform(props, p -> p[1]) AS prop_keys, list_transform(props, p -> p[2]) AS prop_values,
  ${shared('siteId')} AS visit_site_id, ${shared('visitId', toId)} AS visit_visit_id,
  ${shared('visitorId', toId)} AS visit_visitor_id, ${ms('visit.startedAt')} AS visit_started_at,
  ${ms('visit.lastSeenAt')} AS visit_last_seen_at, ${value('visit.entryPage')} AS visit_entry_page,
  ${value('visit.exitPage')} AS visit_exit_page, ${value('visit.exitHostname')} AS visit_exit_hostname,
  CAST(${value('visit.pageviews')} AS INTEGER) AS visit_pageviews, CAST(${value('visit.events')} AS INTEGER) AS visit_events,
  CAST(${value('visit.pathsExact')} AS BOOLEAN) AS visit_paths_exact,
  coalesce(CAST(${value('visit.journeyLength')} AS UTINYINT), 0) AS visit_journey_length,
  ${JOURNEY_PAGE_COLUMNS.map((c, i) => `coalesce(${value(`visit.${RECORD_JOURNEY_PAGE_FIELDS[i]}`)}, '') AS visit_${c}`).join(', ')},
  ${ATTRIBUTION_FIELDS.map((c) => `${shared(c)} AS visit_${snake(c)}`).join(', ')}
  FROM (
    -- Most hits have no custom properties: NULL (as write() stores them) without parsing JSON.
    SELECT r, CASE WHEN ${value('hit.props')} = '[]' THEN NULL ELSE from_json(${value('hit.props')}, '[["VARCHAR"]]') END AS props
    FROM read_json(?, format = 'newline_delimited', records = 'false', columns = {r: 'VARCHAR[]'})
  )`;

/** The hits' columns that the import's CSV files leave to their defaults (engagement hits are live only). */
const LIVE_HIT_COLUMNS = ['scroll_depth', 'engaged_ms'];

export const INSERT_HITS = `INSERT INTO hits BY NAME SELECT ${[...HIT_COLUMNS, ...LIVE_HIT_COLUMNS].join(', ')} FROM record_batch ORDER BY rowid`;

/**
 * Each visit's newest state in the batch into `visit_updates` (as the write buffer's keepNewest picks it: the
 * highest version, the later line on a tie).
 */
export const STAGE_VISITS = `INSERT INTO visit_updates BY NAME SELECT ${VISIT_COLUMNS.map((c) => `visit_${c} AS ${c}`).join(', ')}
  FROM record_batch
  QUALIFY row_number() OVER (PARTITION BY visit_visit_id ORDER BY visit_pageviews + visit_events DESC, rowid DESC) = 1`;
