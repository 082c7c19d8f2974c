// The SQL that stores a file of hit records (src/ingest/hit-record.ts) in DuckDB: DuckDB's own JSON reader parses
// it on its threads, which costs the event loop nothing, where appending row by row took ~35 µs of it per hit.

import { ATTRIBUTION_FIELDS } from '../../domain/hits.js';
import { HIT_TEXT_COLUMNS, snake } from '../event-rows.js';

const HIT_STRUCT = [
  'siteId VARCHAR', 'type VARCHAR', 'timestamp BIGINT', 'visitorId VARCHAR', 'visitId VARCHAR',
  ...HIT_TEXT_COLUMNS.map((c) => `${c} VARCHAR`),
  'eventName VARCHAR', 'value BIGINT', 'firstView BOOLEAN', 'props VARCHAR[][]',
];
const VISIT_STRUCT = [
  'siteId VARCHAR', 'visitId VARCHAR', 'visitorId VARCHAR', 'startedAt BIGINT', 'lastSeenAt BIGINT', 'entryPage VARCHAR',
  'exitPage VARCHAR', 'exitHostname VARCHAR', 'pageviews INTEGER', 'events INTEGER', 'pathsExact BOOLEAN',
  ...ATTRIBUTION_FIELDS.map((c) => `${c} VARCHAR`),
];
const struct = (fields: string[]) => `STRUCT(${fields.join(', ')})`;

/**
 * Reads the file (the one parameter) into the temp table `record_batch`, whose rowid is then each line's place in
 * the file (DuckDB keeps a file's order when it inserts what it reads). Numbering the lines with row_number() cost
 * a window over the whole batch.
 */
export const STAGE_RECORDS = `CREATE OR REPLACE TEMP TABLE record_batch AS
  SELECT s, h, v FROM read_json(?, format = 'newline_delimited',
    columns = {s: 'BIGINT', h: '${struct(HIT_STRUCT)}', v: '${struct(VISIT_STRUCT)}'})`;

const ms = (field: string) => `make_timestamp(${field} * 1000)`;

export const INSERT_HITS = `INSERT INTO hits BY NAME SELECT
  h.siteId AS site_id, h.type AS type, ${ms('h.timestamp')} AS ts, CAST(h.visitorId AS UBIGINT) AS visitor_id,
  CAST(h.visitId AS UBIGINT) AS visit_id, ${HIT_TEXT_COLUMNS.map((c) => `h.${c} AS ${snake(c)}`).join(', ')},
  h.eventName AS event_name, h.value AS value, h.firstView AS first_view,
  list_transform(h.props, p -> p[1]) AS prop_keys, list_transform(h.props, p -> p[2]) AS prop_values
  FROM record_batch ORDER BY rowid`;

/**
 * Each visit's newest state in the batch into `visit_updates` (as the write buffer's keepNewest picks it: the
 * highest version, the later line on a tie).
 */
export const STAGE_VISITS = `INSERT INTO visit_updates BY NAME SELECT
  CAST(v.visitId AS UBIGINT) AS visit_id, v.siteId AS site_id, CAST(v.visitorId AS UBIGINT) AS visitor_id,
  ${ms('v.startedAt')} AS started_at, ${ms('v.lastSeenAt')} AS last_seen_at, v.entryPage AS entry_page,
  v.exitPage AS exit_page, v.exitHostname AS exit_hostname, v.pageviews AS pageviews, v.events AS events,
  v.pathsExact AS paths_exact, ${ATTRIBUTION_FIELDS.map((c) => `v.${c} AS ${snake(c)}`).join(', ')}
  FROM record_batch QUALIFY row_number() OVER (PARTITION BY v.visitId ORDER BY v.pageviews + v.events DESC, rowid DESC) = 1`;

