// Hits and visits as table rows, for every EventStore: the column names, and rows read back into StoredHit and
// VisitRecord (each database returns times and 64-bit ids its own way, so the caller says how to read a time).

import { ATTRIBUTION_FIELDS, JOURNEY_PAGES, type Attribution, type StoredHit, type VisitRecord } from '../domain/hits.js';
import { propsFromColumns } from '../domain/props.js';

type Row = Record<string, unknown>;

/** Text columns of the hits table, in table order, by their StoredHit names. */
export const HIT_TEXT_COLUMNS = [
  'hostname', 'pathname', 'referrerHostname', 'referrerPathname', 'referrerSource', 'utmCampaign', 'utmContent',
  'utmMedium', 'utmSource', 'utmTerm', 'ref', 'keyword', 'browser', 'operatingSystem', 'deviceType', 'countryCode',
  'region', 'state', 'city',
] as const;

/**
 * Attribution columns of the visits table, in table order, by their VisitRecord names: the referrer pair first
 * (the visits table's first version had them), then the rest.
 */
export const VISIT_ATTRIBUTION_COLUMNS = ATTRIBUTION_FIELDS;

/** The visits table's columns of a journey's pages after the entry page (VisitRecord.journeyPages): journey_2 and on. */
export const JOURNEY_PAGE_COLUMNS: readonly string[] = Array.from({ length: JOURNEY_PAGES - 1 }, (_, i) => `journey_${i + 2}`);

/**
 * A visit's journey pages as its row's JOURNEY_PAGE_COLUMNS hold them: '' past the journey's end (a hit record
 * writes null there instead: `past`).
 */
export function journeyPageTexts<P extends string | null = string>(v: Pick<VisitRecord, 'journeyPages'>, past: P = '' as P): (string | P)[] {
  return JOURNEY_PAGE_COLUMNS.map((_, i) => v.journeyPages[i] ?? past);
}

/** A visit row's journey pages, as many as its length says (up to JOURNEY_PAGES - 1). */
function journeyPagesOf(r: Row): string[] {
  const pages = Math.min(Number(r.journey_length) - 1, JOURNEY_PAGE_COLUMNS.length);
  return JOURNEY_PAGE_COLUMNS.slice(0, Math.max(0, pages)).map((c) => String(r[c] ?? ''));
}

/** A StoredHit field's column name. */
export const snake = (name: string) => name.replace(/[A-Z]/g, (c) => `_${c.toLowerCase()}`);

export function hitFromRow(r: Row, time: (value: unknown) => Date): StoredHit {
  const hit = {
    siteId: r.site_id as string,
    type: r.type as StoredHit['type'],
    timestamp: time(r.ts),
    visitorId: BigInt(r.visitor_id as bigint),
    visitId: BigInt(r.visit_id as bigint),
    eventName: r.event_name as string,
    value: Number(r.value),
    firstView: Boolean(r.first_view),
  } as StoredHit;
  for (const column of HIT_TEXT_COLUMNS) hit[column] = r[snake(column)] as string;
  const props = propsFromColumns(r.prop_keys, r.prop_values);
  if (props.length > 0) hit.props = props;
  // Absent means 0 (StoredHit): only engagement hits carry them, and rows from before the columns have none.
  const scrollDepth = Number(r.scroll_depth ?? 0);
  const engagedMs = Number(r.engaged_ms ?? 0);
  if (scrollDepth !== 0) hit.scrollDepth = scrollDepth;
  if (engagedMs !== 0) hit.engagedMs = engagedMs;
  return hit;
}

export function visitFromRow(r: Row, time: (value: unknown) => Date): VisitRecord {
  const journeyLength = Number(r.journey_length ?? 0);
  const visit = {
    siteId: r.site_id as string,
    visitId: BigInt(r.visit_id as bigint),
    visitorId: BigInt(r.visitor_id as bigint),
    startedAt: time(r.started_at),
    lastSeenAt: time(r.last_seen_at),
    entryPage: r.entry_page as string,
    exitPage: r.exit_page as string,
    exitHostname: r.exit_hostname as string,
    pageviews: Number(r.pageviews),
    events: Number(r.events),
    pathsExact: Boolean(r.paths_exact),
    // Rows written before journeys were recorded have none: not known.
    journeyLength,
    journeyPages: journeyLength === 0 ? [] : journeyPagesOf(r),
  } as Omit<VisitRecord, keyof Attribution> as VisitRecord;
  for (const column of VISIT_ATTRIBUTION_COLUMNS) visit[column] = r[snake(column)] as string;
  return visit;
}
