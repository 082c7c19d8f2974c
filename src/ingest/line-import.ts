// Imports NDJSON hits (DESIGN.md section 4) through the live pipeline: lines checked one by one, valid hits
// processed in timestamp order, every refusal reported with its line number.

import { MAX_IMPORT_LINE_CHARS, TOO_LONG_LINE, type IncomingHit } from '../domain/hits.js';
import { readProps } from '../domain/props.js';
import { parseTimestamp } from '../domain/time.js';
import { InvalidHit, type HitPipeline } from './pipeline.js';

/** Where imported hits wait to be written: the write buffer, or its stand-in on the ingest thread. */
export interface ImportRoom {
  /** True while the import should wait for writes to catch up. */
  readonly isFull: boolean;
  flush(): Promise<void>;
}

export interface ImportError {
  line: number;
  message: string;
}

export interface ImportResult {
  imported: number;
  rejected: number;
  /** The first errors, in line order (all are counted in `rejected`). */
  errors: ImportError[];
}

export const MAX_REPORTED_ERRORS = 1000;

/** Lines handled between turns of the event loop: a large import never holds the thread for long. */
const LINES_PER_TURN = 256;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

/** `YYYY-MM-DD HH:MM:SS` (UTC) as DESIGN.md writes it; ISO 8601 with `Z` is accepted too. */
function importTimestamp(text: unknown): Date | undefined {
  if (typeof text !== 'string') return undefined;
  const plain = parseTimestamp(text);
  if (plain) return plain;
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/.test(text)) {
    const d = new Date(text);
    return Number.isNaN(d.getTime()) ? undefined : d;
  }
  return undefined;
}

const optionalText = (v: unknown, field: string, max: number): string => {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') throw new InvalidHit(`${field} must be a string`);
  if (v.length > max) throw new InvalidHit(`${field} is longer than ${max} characters`);
  return v;
};

/** Characters a line may have (a request body is at most 64 MiB: src/ingest/bulk-import/import-body.ts). */
export const MAX_LINE_CHARS = MAX_IMPORT_LINE_CHARS;

/** One NDJSON line as a hit, or an InvalidHit saying what is wrong with it. */
export function parseImportLine(text: string): IncomingHit {
  if (text.length > MAX_LINE_CHARS) throw new InvalidHit(TOO_LONG_LINE);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new InvalidHit('not valid JSON');
  }
  if (!raw || typeof raw !== 'object' || Array.isArray(raw)) throw new InvalidHit('must be a JSON object');
  const o = raw as Record<string, unknown>;
  if (o.type !== 'pageview' && o.type !== 'event') throw new InvalidHit('type must be "pageview" or "event"');
  if (typeof o.site_id !== 'string' || o.site_id === '') throw new InvalidHit('site_id is required');
  const timestamp = importTimestamp(o.timestamp);
  if (!timestamp) throw new InvalidHit('timestamp must be "YYYY-MM-DD HH:MM:SS" (UTC)');
  if (typeof o.url !== 'string' || o.url === '') throw new InvalidHit('url is required');
  const hit: IncomingHit = {
    type: o.type,
    siteId: o.site_id,
    timestamp,
    url: optionalText(o.url, 'url', 8192),
    referrer: optionalText(o.referrer, 'referrer', 8192),
    userAgent: optionalText(o.user_agent, 'user_agent', 2048),
    ip: optionalText(o.ip, 'ip', 64),
  };
  if (o.type === 'event') {
    if (typeof o.name !== 'string') throw new InvalidHit('name is required for events');
    hit.eventName = o.name;
    if (o.value !== undefined && o.value !== null) {
      if (typeof o.value !== 'number') throw new InvalidHit('value must be a number of cents');
      hit.value = o.value;
    }
  }
  // Custom properties, by the one rule of every format (docs/collection.md, "Custom properties").
  if (o.props !== undefined && o.props !== null) {
    const props = readProps(o.props);
    if (props.length > 0) hit.props = props;
  }
  return hit;
}

export const DROP_MESSAGES: Record<string, string> = {
  bot: 'user_agent is a bot',
  'unknown-site': 'site_id names no site',
  'excluded-host': 'the page host is excluded',
  'goal-limit': 'the site has the maximum number of events',
  'unknown-goal': 'no such event',
};

/**
 * Processes `lines` (the first has number `firstLine`). Invalid lines are reported and skipped; valid hits go
 * through the pipeline oldest first (a stable sort keeps equal timestamps in file order). When the write buffer
 * is full, the import waits for it rather than refusing hits.
 */
export async function importLines(
  lines: readonly string[],
  pipeline: HitPipeline,
  room: ImportRoom,
  firstLine = 1,
): Promise<ImportResult> {
  const errors: ImportError[] = [];
  const hits: { line: number; hit: IncomingHit }[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (i % LINES_PER_TURN === LINES_PER_TURN - 1) await nextTurn();
    const text = lines[i]!;
    if (text.trim() === '') continue;
    const line = firstLine + i;
    try {
      hits.push({ line, hit: parseImportLine(text) });
    } catch (err) {
      errors.push({ line, message: (err as Error).message });
    }
  }
  hits.sort((a, b) => a.hit.timestamp.getTime() - b.hit.timestamp.getTime());

  let imported = 0;
  for (let i = 0; i < hits.length; i++) {
    if (i % LINES_PER_TURN === LINES_PER_TURN - 1) await nextTurn();
    const { line, hit } = hits[i]!;
    if (room.isFull) await room.flush();
    try {
      const outcome = await pipeline.process(hit);
      if (outcome.recorded) imported++;
      else errors.push({ line, message: DROP_MESSAGES[outcome.reason] ?? outcome.reason });
    } catch (err) {
      if (!(err instanceof InvalidHit)) throw err;
      errors.push({ line, message: err.message });
    }
  }
  errors.sort((a, b) => a.line - b.line);
  return { imported, rejected: errors.length, errors: errors.slice(0, MAX_REPORTED_ERRORS) };
}
