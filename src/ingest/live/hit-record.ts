// One stored hit with its visit's state, as one line of JSON: the hit log's record, and the line DuckDB loads
// (src/store/duckdb/record-load.ts), so a live hit is encoded once. A record is an array of values in a fixed order
// (RECORD_FIELDS). Times are epoch milliseconds, 64-bit ids decimal strings (JSON numbers lose precision past 2^53).

import { ATTRIBUTION_FIELDS, attributionOf, JOURNEY_PAGES, type Attribution, type StoredHit, type VisitRecord } from '../../domain/hits.js';
import type { PropList } from '../../domain/props.js';
import { HIT_TEXT_COLUMNS, journeyPageTexts } from '../../store/event-rows.js';

export interface LogRecord {
  /** Hit-log sequence number; 0 for rows that were not logged (imports). */
  seq: number;
  hit: StoredHit;
  visit: VisitRecord;
}

/** The hit's fields, in record order after the sequence number; `props` is [] when the hit has none. */
export const RECORD_HIT_FIELDS = [
  'siteId', 'type', 'timestamp', 'visitorId', 'visitId', ...HIT_TEXT_COLUMNS, 'eventName', 'value', 'firstView', 'props',
] as const;

/** The visit's own fields, after the hit's. */
export const RECORD_VISIT_FIELDS = [
  'startedAt', 'lastSeenAt', 'entryPage', 'exitPage', 'exitHostname', 'pageviews', 'events', 'pathsExact',
] as const;

/**
 * The visit's fields that the hit has too, last: `null` where the visit's value is the hit's. The live pipeline
 * gives every hit its visit's site, id and attribution (storedHitOf), so these are almost always null.
 */
export const RECORD_SHARED_FIELDS = ['siteId', 'visitId', 'visitorId', ...ATTRIBUTION_FIELDS] as const;

/**
 * The hit's fields added after records became arrays, last so that records written before them (without these
 * values) are still read on replay: an engagement hit's scroll depth and engaged time (0 for every other hit).
 */
export const RECORD_LATER_HIT_FIELDS = ['scrollDepth', 'engagedMs'] as const;

/**
 * The visit's fields added later still: its journey's length and its pages 2 to JOURNEY_PAGES, each its own value
 * (null past the journey's end) so that the store reads them without parsing JSON. Absent in records written
 * before them: the journey is not known (length 0).
 */
export const RECORD_JOURNEY_PAGE_FIELDS = Array.from({ length: JOURNEY_PAGES - 1 }, (_, i) => `journeyPage${i + 2}`);
export const RECORD_JOURNEY_FIELDS = ['journeyLength', ...RECORD_JOURNEY_PAGE_FIELDS];

/** Every position of a record: the sequence number, then the five lists above. */
export const RECORD_FIELDS: readonly string[] = [
  'seq',
  ...RECORD_HIT_FIELDS.map((f) => `hit.${f}`),
  ...RECORD_VISIT_FIELDS.map((f) => `visit.${f}`),
  ...RECORD_SHARED_FIELDS.map((f) => `visit.${f}`),
  ...RECORD_LATER_HIT_FIELDS.map((f) => `hit.${f}`),
  ...RECORD_JOURNEY_FIELDS.map((f) => `visit.${f}`),
];

/** How many values records of the versions before RECORD_LATER_HIT_FIELDS and before RECORD_JOURNEY_FIELDS have. */
const EARLIER_RECORD_LENGTHS = [
  RECORD_FIELDS.length - RECORD_JOURNEY_FIELDS.length - RECORD_LATER_HIT_FIELDS.length,
  RECORD_FIELDS.length - RECORD_JOURNEY_FIELDS.length,
];

const NO_PROPS: PropList = [];

const shared = <T>(visit: T, hit: T) => (visit === hit ? null : visit);
const sharedId = (visit: bigint, hit: bigint) => (visit === hit ? null : String(visit));

/**
 * A record as a line. Written out value by value in RECORD_FIELDS order: an array without keys took half the time
 * of the objects with named fields that records used to be, and half the bytes (docs/benchmarks.md, "Collector:
 * measurements behind the code").
 */
export const encodeRecord = (seq: number, hit: StoredHit, visit: VisitRecord): string =>
  JSON.stringify([
    seq,
    hit.siteId,
    hit.type,
    hit.timestamp.getTime(),
    String(hit.visitorId),
    String(hit.visitId),
    hit.hostname,
    hit.pathname,
    hit.referrerHostname,
    hit.referrerPathname,
    hit.referrerSource,
    hit.utmCampaign,
    hit.utmContent,
    hit.utmMedium,
    hit.utmSource,
    hit.utmTerm,
    hit.ref,
    hit.keyword,
    hit.browser,
    hit.operatingSystem,
    hit.deviceType,
    hit.countryCode,
    hit.region,
    hit.state,
    hit.city,
    hit.eventName,
    hit.value,
    hit.firstView,
    hit.props ?? NO_PROPS,
    visit.startedAt.getTime(),
    visit.lastSeenAt.getTime(),
    visit.entryPage,
    visit.exitPage,
    visit.exitHostname,
    visit.pageviews,
    visit.events,
    visit.pathsExact,
    shared(visit.siteId, hit.siteId),
    sharedId(visit.visitId, hit.visitId),
    sharedId(visit.visitorId, hit.visitorId),
    shared(visit.referrerHostname, hit.referrerHostname),
    shared(visit.referrerPathname, hit.referrerPathname),
    shared(visit.referrerSource, hit.referrerSource),
    shared(visit.utmCampaign, hit.utmCampaign),
    shared(visit.utmContent, hit.utmContent),
    shared(visit.utmMedium, hit.utmMedium),
    shared(visit.utmSource, hit.utmSource),
    shared(visit.utmTerm, hit.utmTerm),
    shared(visit.ref, hit.ref),
    shared(visit.keyword, hit.keyword),
    hit.scrollDepth ?? 0,
    hit.engagedMs ?? 0,
    visit.journeyLength,
    ...journeyPageTexts(visit, null),
  ]) + '\n';

/** A record line back as the hit and visit it was made of; also reads the object records of earlier versions. */
export function decodeRecord(line: string): LogRecord {
  const parsed = JSON.parse(line) as unknown;
  if (!Array.isArray(parsed)) return decodeObjectRecord(parsed as ObjectRecord);
  if (parsed.length !== RECORD_FIELDS.length && !EARLIER_RECORD_LENGTHS.includes(parsed.length)) {
    throw new Error(`a hit record has ${RECORD_FIELDS.length} values, not ${parsed.length}`);
  }
  const values = parsed as unknown[];
  let at = 1;
  const hit: Record<string, unknown> = {};
  for (const f of RECORD_HIT_FIELDS) hit[f] = values[at++];
  hit.timestamp = new Date(hit.timestamp as number);
  hit.visitorId = BigInt(hit.visitorId as string);
  hit.visitId = BigInt(hit.visitId as string);
  if ((hit.props as PropList).length === 0) delete hit.props;
  const visit: Record<string, unknown> = {};
  for (const f of RECORD_VISIT_FIELDS) visit[f] = values[at++];
  visit.startedAt = new Date(visit.startedAt as number);
  visit.lastSeenAt = new Date(visit.lastSeenAt as number);
  for (const f of RECORD_SHARED_FIELDS) visit[f] = values[at++] ?? hit[f];
  if (typeof visit.visitId === 'string') visit.visitId = BigInt(visit.visitId);
  if (typeof visit.visitorId === 'string') visit.visitorId = BigInt(visit.visitorId);
  // Absent (records before these fields) and 0 alike mean none: the hit gets the field only when it is not 0.
  for (const f of RECORD_LATER_HIT_FIELDS) {
    const n = values[at++];
    if (typeof n === 'number' && n !== 0) hit[f] = n;
  }
  const journeyLength = values[at++];
  visit.journeyLength = typeof journeyLength === 'number' ? journeyLength : 0;
  const pages = values.slice(at, at + JOURNEY_PAGES - 1).filter((p): p is string => typeof p === 'string');
  visit.journeyPages = visit.journeyLength === 0 ? [] : pages;
  return { seq: values[0] as number, hit: hit as unknown as StoredHit, visit: visit as unknown as VisitRecord };
}

/** A record of earlier versions: the hit and the visit as objects with named fields. */
interface ObjectRecord {
  s: number;
  h: Record<string, unknown>;
  v: Record<string, unknown>;
}

function decodeObjectRecord({ s, h, v }: ObjectRecord): LogRecord {
  return {
    seq: s,
    hit: { ...h, timestamp: new Date(h.timestamp as number), visitorId: BigInt(h.visitorId as string), visitId: BigInt(h.visitId as string) } as StoredHit,
    visit: {
      ...v,
      // Records older still carry only the visit's referrer: the attribution fields they lack read as ''.
      ...attributionOf(v as Partial<Attribution>),
      startedAt: new Date(v.startedAt as number),
      lastSeenAt: new Date(v.lastSeenAt as number),
      // Nor journeys: not known.
      journeyLength: 0,
      journeyPages: [],
      visitorId: BigInt(v.visitorId as string),
      visitId: BigInt(v.visitId as string),
    } as unknown as VisitRecord,
  };
}
