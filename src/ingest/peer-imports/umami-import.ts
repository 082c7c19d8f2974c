// Umami's raw events (website_event joined with session, as `psql \copy ... WITH (FORMAT csv, HEADER)` writes them
// with the query in docs/collection.md, or as Umami Cloud's data export writes them) imported as Plumb hits of one
// site. Umami already parsed the browser, OS,
// device and country and grouped events into sessions and visits: those are kept (no user agent or address is in
// the export to derive them from). The file is read as a stream: memory holds only the visits of the last half
// hour of event time, whatever the file's size.

import { createHash, randomBytes } from 'node:crypto';
import type { Readable } from 'node:stream';
import { parse } from 'csv-parse';
import { attributionOf, type HitType, type StoredHit, type VisitRecord } from '../../domain/hits.js';
import { readProps, UMAMI_REVENUE_KEYS } from '../../domain/props.js';
import { campaignFields, type CampaignFields } from '../enrich/campaign.js';
import { parseReferrer } from '../enrich/referrer.js';
import { normalizePage } from '../enrich/url.js';
import { VISIT_TIMEOUT_MS, VisitTracker } from '../visits.js';
import { boundedRecords } from './csv-records.js';
import { parseExportTime } from './export-time.js';

/** Columns the export must have; the others of the documented query are read when present. */
export const UMAMI_REQUIRED_COLUMNS = ['created_at', 'session_id', 'event_type', 'url_path'] as const;

export interface UmamiImportError {
  line: number;
  message: string;
}

export interface UmamiImportResult {
  imported: number;
  rejected: number;
  /** The first 1,000 errors, by line. */
  errors: UmamiImportError[];
  firstHitAt: Date | null;
  lastHitAt: Date | null;
  /** SHA-256 of the bytes read. */
  digest: string;
}

export interface UmamiImportOptions {
  siteId: string;
  /** Used when a row has no hostname (older Umami versions keep it on the session only). */
  defaultHostname: string | undefined;
  /** Visit ids are `visitIdBase + n`, n < 2^32: the import's range, by which it is deleted. */
  visitIdBase: bigint;
  /**
   * The name the site's event (goal) of this name has, created on first use as for live events; undefined when the
   * site has the most events it may have.
   */
  goalName: (name: string) => Promise<string | undefined>;
  /** Receives each hit with its visit's state; may wait (back-pressure). */
  sink: (hit: StoredHit, visit: VisitRecord) => void | Promise<void>;
  /** Called with the bytes read so far, now and then. */
  onProgress?: (bytes: number) => void;
}

/** Thrown before any row is imported when the file is not an Umami export (a missing column). */
export class UmamiFormatError extends Error {}

const MAX_ERRORS = 1000;
const ROWS_PER_TURN = 128;

// Umami's names (from its browser detection) as Plumb's user-agent parsing names them, so imported and live
// hits group together.
const BROWSERS = new Map([
  ['chrome', 'Chrome'], ['crios', 'Chrome'], ['chromium-webview', 'Chrome'], ['firefox', 'Firefox'], ['fxios', 'Firefox'],
  ['safari', 'Safari'], ['ios', 'Safari'], ['ios-webview', 'Safari'], ['edge', 'Edge'], ['edge-chromium', 'Edge'],
  ['edge-ios', 'Edge'], ['opera', 'Opera'], ['opera-mini', 'Opera Mini'], ['samsung', 'Samsung Internet'],
  ['yandexbrowser', 'Yandex'], ['android', 'Android Browser'], ['ie', 'IE'], ['facebook', 'Facebook'],
  ['instagram', 'Instagram'], ['silk', 'Silk'], ['miui', 'MIUI Browser'], ['kakaotalk', 'KakaoTalk'],
]);
const OPERATING_SYSTEMS = new Map([
  ['mac os', 'macOS'], ['android os', 'Android'], ['ios', 'iOS'], ['linux', 'Linux'], ['chrome os', 'Chrome OS'],
]);
const DEVICES = new Map([['desktop', 'Desktop'], ['laptop', 'Desktop'], ['mobile', 'Mobile'], ['tablet', 'Tablet']]);

const browserOf = (v: string) => (v === '' ? 'Unknown' : (BROWSERS.get(v.toLowerCase()) ?? v));
function osOf(v: string): string {
  if (v === '') return 'Unknown';
  if (/^windows\b/i.test(v)) return 'Windows';
  return OPERATING_SYSTEMS.get(v.toLowerCase()) ?? v;
}
const deviceOf = (v: string) => DEVICES.get(v.toLowerCase()) ?? 'Desktop';

const UTM_COLUMNS = ['utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term'];
const UTM_FIELDS = ['utmSource', 'utmMedium', 'utmCampaign', 'utmContent', 'utmTerm'] as const;

/**
 * A row's campaign: from its url_query as a live hit's; a parameter the query lacks is taken from the row's own
 * `utm_*` column (cleaned by the same rule), which Umami Cloud's export has beside the query.
 */
function campaignOf(query: URLSearchParams, col: (name: string) => string): CampaignFields {
  const fields = campaignFields(query);
  const columns = campaignFields(new URLSearchParams(UTM_COLUMNS.map((c): [string, string] => [c, col(c)])));
  for (const field of UTM_FIELDS) if (fields[field] === '') fields[field] = columns[field];
  return fields;
}

/** A 64-bit hash of the given parts (visitor-days and visit keys; the salt keeps them from meaning anything else). */
function hash64(salt: Buffer, ...parts: string[]): bigint {
  const h = createHash('sha256').update(salt);
  for (const p of parts) h.update('\0').update(p);
  return h.digest().readBigUInt64BE(0);
}

/** Spreads a counter over 32 bits (an odd multiplier is a bijection modulo 2^32), so ids are not sequential. */
const scramble = (n: number): bigint => BigInt(Math.imul(n, 0x9e3779b1) >>> 0);

interface VisitIdentity {
  id: bigint;
  visitorId: bigint;
  lastSeen: number;
}

/** Imports an Umami export; refusals are reported by line (the header is line 1) and never stop the rest. */
export async function importUmamiCsv(source: Readable, o: UmamiImportOptions): Promise<UmamiImportResult> {
  const digest = createHash('sha256');
  let bytes = 0;
  source.on('data', (chunk: Buffer) => {
    digest.update(chunk);
    bytes += chunk.length;
  });
  const errors: UmamiImportError[] = [];
  let rejected = 0;
  const reject = (line: number, message: string) => {
    rejected++;
    if (errors.length < MAX_ERRORS) errors.push({ line, message });
  };
  const parser = parse({
    columns: true, bom: true, skip_empty_lines: true, skip_records_with_error: true, info: true, relax_quotes: false,
    ...boundedRecords('the file', (message) => new UmamiFormatError(message), (err) =>
      reject(typeof err.lines === 'number' ? err.lines : 0, `not a CSV record: ${err.message}`)),
  });
  // pipe() does not pass errors on: a source that fails (a broken gzip upload, a dropped connection) ends the import.
  source.once('error', (err) => parser.destroy(err));
  source.pipe(parser);

  const salt = randomBytes(32);
  const tracker = new VisitTracker();
  // Plumb's visit of each visit the tracker keeps: an id in the import's range and the visitor of its first hit.
  const identities = new Map<bigint, VisitIdentity>();
  let visitsSeen = 0;
  let imported = 0;
  let firstHitAt: Date | null = null;
  let lastHitAt: Date | null = null;
  let checkedHeader = false;
  let rows = 0;
  let latest = 0;

  for await (const { record, info } of parser as AsyncIterable<{ record: Record<string, string>; info: { lines: number } }>) {
    if (!checkedHeader) {
      checkedHeader = true;
      const missing = UMAMI_REQUIRED_COLUMNS.filter((c) => !Object.hasOwn(record, c));
      if (missing.length > 0) {
        source.unpipe(parser);
        source.resume();
        throw new UmamiFormatError(`not an Umami export: the header lacks ${missing.join(', ')} (see the query in docs/collection.md)`);
      }
    }
    const line = info.lines;
    const col = (name: string) => (Object.hasOwn(record, name) ? (record[name] ?? '').trim() : '');
    // A turn of the event loop now and then: parsed rows arrive by the hundred without one otherwise.
    if (++rows % ROWS_PER_TURN === 0) await new Promise<void>((resolve) => setImmediate(resolve));
    if (rows % 5000 === 0) {
      o.onProgress?.(bytes);
      // Visits idle for longer than the timeout at the newest time read are over: forget them.
      const now = new Date(latest);
      tracker.sweep(now);
      for (const [key, v] of identities) if (latest - v.lastSeen > VISIT_TIMEOUT_MS) identities.delete(key);
    }

    // psql's `2024-03-01 12:34:56.789+00`, Umami Cloud's `2024-03-01 12:34:56` (UTC), ISO 8601: export-time.ts.
    const time = parseExportTime(col('created_at'));
    if (!time) {
      reject(line, 'created_at must be a time of the calendar such as 2024-03-01 12:34:56.789+00');
      continue;
    }
    const at = new Date(time.ms);
    const sessionId = col('session_id');
    if (sessionId === '') {
      reject(line, 'session_id is required');
      continue;
    }
    const eventType = col('event_type');
    let type: HitType;
    let eventName = '';
    if (eventType === '1') type = 'pageview';
    else if (eventType === '2') {
      type = 'event';
      const name = col('event_name');
      if (name === '' || name.length > 255) {
        reject(line, 'event_name must be 1 to 255 characters for a custom event (event_type 2)');
        continue;
      }
      const goal = await o.goalName(name);
      if (goal === undefined) {
        reject(line, 'the site has the maximum number of events');
        continue;
      }
      eventName = goal;
    } else {
      reject(line, `event_type ${eventType || '(empty)'} is not imported (1: pageview, 2: custom event)`);
      continue;
    }
    const hostname = col('hostname') || o.defaultHostname || '';
    if (hostname === '') {
      reject(line, 'hostname is required (the row has none and the site has no domain)');
      continue;
    }
    const query = col('url_query');
    const page = normalizePage(`https://${hostname}${col('url_path') || '/'}${query ? `?${query}` : ''}`);
    if (!page) {
      reject(line, 'hostname and url_path do not form a URL');
      continue;
    }
    const referrerDomain = col('referrer_domain');
    const referrerQuery = col('referrer_query');
    const referrer = referrerDomain ? `https://${referrerDomain}${col('referrer_path') || '/'}${referrerQuery ? `?${referrerQuery}` : ''}` : '';
    const attributes = {
      hostname: page.hostname,
      pathname: page.pathname,
      ...parseReferrer(referrer, page.hostname),
      ...campaignOf(page.query, col),
      browser: browserOf(col('browser')),
      operatingSystem: osOf(col('os')),
      deviceType: deviceOf(col('device')),
      countryCode: /^[A-Za-z]{2}$/.test(col('country')) ? col('country').toUpperCase() : '',
      // Umami keeps subdivisions as ISO 3166-2 codes (US-CA), Plumb as names: not carried over.
      region: '',
      state: '',
      city: col('city').slice(0, 255),
    };

    // Umami's visit (its visit_id, from 2.9) or, in older exports, its session: cut by Plumb's 30-minute rule.
    const visitKey = hash64(salt, col('visit_id') || sessionId);
    const recorded = tracker.record(o.siteId, visitKey, undefined, { ...attributes, type, timestamp: at });
    let identity = identities.get(recorded.visitId);
    // The visitor-day, as live hits have it: Umami's session on the hit's UTC day.
    const visitorId = hash64(salt, sessionId, at.toISOString().slice(0, 10));
    if (!identity) {
      if (visitsSeen >= 2 ** 32) throw new Error('an import holds at most 2^32 visits');
      identity = { id: o.visitIdBase + scramble(visitsSeen++), visitorId, lastSeen: at.getTime() };
      identities.set(recorded.visitId, identity);
    }
    identity.lastSeen = Math.max(identity.lastSeen, at.getTime());
    latest = Math.max(latest, at.getTime());
    const { firstView, ...state } = recorded;
    const visit: VisitRecord = { ...state, visitId: identity.id, visitorId: identity.visitorId };
    // The documented query's optional event_data column: a JSON object of the event's data (keys already dotted by
    // Umami), read by the live rule; unreadable data is no properties, the row is still imported.
    const data = col('event_data');
    const props = data === '' ? [] : readProps(data, { skip: UMAMI_REVENUE_KEYS, flatten: true });
    await o.sink(
      {
        ...attributes,
        ...attributionOf(visit),
        siteId: o.siteId,
        type,
        timestamp: at,
        visitorId,
        visitId: identity.id,
        eventName,
        value: 0,
        firstView,
        ...(props.length > 0 ? { props } : {}),
      },
      visit,
    );
    imported++;
    if (!firstHitAt || at < firstHitAt) firstHitAt = at;
    if (!lastHitAt || at > lastHitAt) lastHitAt = at;
  }
  if (!checkedHeader) throw new UmamiFormatError('the file holds no rows (an Umami export starts with its header line)');
  o.onProgress?.(bytes);
  errors.sort((a, b) => a.line - b.line);
  return { imported, rejected, errors, firstHitAt, lastHitAt, digest: digest.digest('hex') };
}
