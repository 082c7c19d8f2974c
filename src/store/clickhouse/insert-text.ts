// The text of the ClickHouse event store's batch inserts (VALUES rows built by the one literal function), apart
// from the store so that the ingest thread can build a batch's statements itself and only text crosses threads.
// The store's own write() builds the same statements from the same functions.

import { visitVersion, type StoredHit, type VisitRecord } from '../../domain/hits.js';
import { propColumns } from '../../domain/props.js';
import { HIT_TEXT_COLUMNS, JOURNEY_PAGE_COLUMNS, journeyPageTexts, snake, VISIT_ATTRIBUTION_COLUMNS } from '../event-rows.js';
import type { InsertStatements, QueryParam } from '../types.js';
import { sqlLiteral, stringLiteral } from './literal.js';

/** Visit rows per INSERT: a batch is one or two requests, never one per row. */
const ROWS_PER_INSERT = 20_000;

// log_node and log_seq last: a hit's row is built before its batch's sequence number is known, and the two are
// appended to every row when the batch is cut.
const HIT_COLUMNS = [
  'site_id', 'type', 'ts', 'visitor_id', 'visit_id', ...HIT_TEXT_COLUMNS.map(snake), 'event_name', 'value', 'first_view',
  'prop_keys', 'prop_values', 'scroll_depth', 'engaged_ms', 'log_node', 'log_seq',
];
const VISIT_COLUMNS = [
  'visit_id', 'site_id', 'visitor_id', 'started_at', 'last_seen_at', 'entry_page', 'exit_page', 'exit_hostname',
  'pageviews', 'events', 'paths_exact', 'version', ...VISIT_ATTRIBUTION_COLUMNS.map(snake), 'journey_length', ...JOURNEY_PAGE_COLUMNS,
];

const tuple = (values: QueryParam[]) => `(${values.map(sqlLiteral).join(',')})`;

const stringArray = (values: readonly string[]) => `[${values.map(stringLiteral).join(',')}]`;

/** A hit's VALUES row (scroll depth and engaged time 0 but for engagement hits) without its closing `,log_node,log_seq)` (see hitsInsert). */
export function hitRowStart(h: StoredHit): string {
  const values = [
    h.siteId, h.type, h.timestamp, h.visitorId, h.visitId, ...HIT_TEXT_COLUMNS.map((c) => h[c]), h.eventName, h.value, h.firstView,
  ].map(sqlLiteral);
  const [keys, propValues] = propColumns(h.props);
  return `(${values.join(',')},${stringArray(keys)},${stringArray(propValues)},${sqlLiteral(h.scrollDepth ?? 0)},${sqlLiteral(h.engagedMs ?? 0)}`;
}

/** One INSERT of hits whose rows (hitRowStart) all belong to the batch `seq` of `node` (0: not logged). */
export function hitsInsert(rowStarts: readonly string[], node: string, seq: number): string {
  const end = `,${sqlLiteral(node)},${sqlLiteral(seq)})`;
  return `INSERT INTO hits (${HIT_COLUMNS.join(', ')}) VALUES ${rowStarts.join(`${end},`)}${end}`;
}

function visitRow(v: VisitRecord): string {
  return tuple([
    v.visitId, v.siteId, v.visitorId, v.startedAt, v.lastSeenAt, v.entryPage, v.exitPage, v.exitHostname, v.pageviews,
    v.events, v.pathsExact, visitVersion(v), ...VISIT_ATTRIBUTION_COLUMNS.map((c) => v[c]), v.journeyLength,
    ...journeyPageTexts(v),
  ]);
}

/** INSERTs of visit states, ROWS_PER_INSERT rows each. */
export function visitsInserts(visits: readonly VisitRecord[]): string[] {
  const out: string[] = [];
  for (let i = 0; i < visits.length; i += ROWS_PER_INSERT) {
    out.push(`INSERT INTO visits (${VISIT_COLUMNS.join(', ')}) VALUES ${visits.slice(i, i + ROWS_PER_INSERT).map(visitRow).join(',')}`);
  }
  return out;
}

/** A batch's statements: its visits' newest states, then its hits (none: no hits statement). */
export function batchInserts(hits: readonly StoredHit[], visits: readonly VisitRecord[], node: string, seq: number): InsertStatements {
  return { visits: visitsInserts(visits), hits: hits.length > 0 ? hitsInsert(hits.map(hitRowStart), node, seq) : undefined };
}
