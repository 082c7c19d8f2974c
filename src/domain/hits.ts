// The shapes a hit takes on its way in: as received, as enriched, as stored with its visit.

import type { PropList } from './props.js';

/**
 * `engagement`: how long a pageview's page was engaged with and how far it was scrolled, sent by the tracker when
 * the page is hidden or left. It belongs to the visit in progress and changes neither the visit nor any count.
 */
export type HitType = 'pageview' | 'event' | 'engagement';

/** The most engaged time one engagement hit may carry (30 minutes, a visit's timeout), in ms. */
export const MAX_ENGAGED_MS = 1_800_000;

/**
 * Characters an NDJSON import line may have. A hit's fields are a few KB at most (url and referrer 8,192 characters,
 * 30 properties of 2,300): a longer line is refused without being parsed, whatever it holds, by the server and,
 * before sending it, by the CLI (src/cli/ndjson-file.ts).
 */
export const MAX_IMPORT_LINE_CHARS = 1024 * 1024;

/** Why a line over MAX_IMPORT_LINE_CHARS is refused. */
export const TOO_LONG_LINE = `the line is longer than ${MAX_IMPORT_LINE_CHARS.toLocaleString('en')} characters, more than any hit's`;

/**
 * A hit as it arrives, from the collector's query string or an import line. `ip` and `userAgent` are used for
 * the visitor hash and enrichment only and are never stored.
 */
export interface IncomingHit {
  type: HitType;
  siteId: string;
  timestamp: Date;
  /** The page's full URL: scheme, host, path and query (the fragment is ignored unless it is a hash route). */
  url: string;
  /** The full referrer URL, '' when there is none. */
  referrer: string;
  userAgent: string;
  ip: string;
  /** Events only: the conversion goal's name. */
  eventName?: string;
  /** Events only: the value in cents (0 when none). */
  value?: number;
  /** Custom properties (src/domain/props.ts); the pipeline bounds them again whatever the sender did. */
  props?: PropList;
  /** Engagement only: the deepest scroll reached so far, percent of the page (0-100). */
  scrollDepth?: number;
  /** Engagement only: ms engaged since the pageview's previous engagement hit (0 to MAX_ENGAGED_MS). */
  engagedMs?: number;
}

/**
 * What Plumb stores about a hit besides its identity: the aggregation fields of SPEC.md. Absent values are ''
 * (never null), so `is not` filters need no three-valued logic.
 */
export interface HitAttributes {
  /** With scheme: `https://example.com` (a non-default port is kept). */
  hostname: string;
  pathname: string;
  referrerHostname: string;
  referrerPathname: string;
  referrerSource: string;
  utmCampaign: string;
  utmContent: string;
  utmMedium: string;
  utmSource: string;
  utmTerm: string;
  ref: string;
  keyword: string;
  browser: string;
  operatingSystem: string;
  /** `Desktop`, `Mobile` or `Tablet` */
  deviceType: string;
  /** ISO 3166-1 alpha-2, upper case */
  countryCode: string;
  region: string;
  state: string;
  city: string;
}

/**
 * The attribution fields: where a visit came from. They belong to the visit, taken from its first hit and carried
 * by every pageview and event of it (docs/reports.md, "Attribution").
 */
export const ATTRIBUTION_FIELDS = [
  'referrerHostname', 'referrerPathname', 'referrerSource', 'utmCampaign', 'utmContent', 'utmMedium', 'utmSource',
  'utmTerm', 'ref', 'keyword',
] as const satisfies readonly (keyof HitAttributes)[];

export type Attribution = Pick<HitAttributes, (typeof ATTRIBUTION_FIELDS)[number]>;

export const NO_ATTRIBUTION: Readonly<Attribution> = Object.freeze(
  Object.fromEntries(ATTRIBUTION_FIELDS.map((f) => [f, ''])) as unknown as Attribution,
);

/** The attribution fields of `from` (a hit's attributes or a visit), '' where missing (records of older versions). */
export function attributionOf(from: Partial<Attribution>): Attribution {
  const out = {} as Attribution;
  for (const f of ATTRIBUTION_FIELDS) out[f] = from[f] ?? '';
  return out;
}

/** A stored hit: attributes plus when, what, and which visitor and visit it belongs to. */
export interface StoredHit extends HitAttributes {
  siteId: string;
  type: HitType;
  timestamp: Date;
  /**
   * 64-bit hash of (the hit's UTC day's salt, site, ip, user agent[, hostname]): one visitor-day, Fathom's
   * "visitor". A visit crossing midnight has hits under two. Meaningless after the salt is deleted.
   */
  visitorId: bigint;
  /** Random 64-bit id of the visit the hit belongs to. */
  visitId: bigint;
  /** Events only ('' for pageviews). */
  eventName: string;
  /** Events only, cents (0 for pageviews). */
  value: number;
  /**
   * Pageviews only: the visit's first view of this pathname (by time). Reports count distinct (visit, page)
   * pairs from it for visits whose `pathsExact` holds.
   */
  firstView: boolean;
  /** Custom properties, present only when the hit has some (stored as prop_keys and prop_values). */
  props?: PropList;
  /** Engagement hits only: the deepest scroll so far, percent of the page (0-100); absent means 0. */
  scrollDepth?: number;
  /** Engagement hits only: ms engaged since the pageview's previous engagement hit; absent means 0. */
  engagedMs?: number;
}

/**
 * The visit-level facts of DESIGN.md section 6, as known after the visit's latest hit, with the visit's
 * attribution (its first hit's).
 */
export interface VisitRecord extends Attribution {
  siteId: string;
  visitId: bigint;
  /** The visitor hash the visit started under (the day of its first hit). */
  visitorId: bigint;
  startedAt: Date;
  lastSeenAt: Date;
  /** Pathname of the first pageview ('' while the visit has only events). */
  entryPage: string;
  /** Pathname of the latest pageview. */
  exitPage: string;
  /** Hostname (with scheme) of the latest pageview. */
  exitHostname: string;
  pageviews: number;
  events: number;
  /** True while every pageview's `firstView` flag is known to be right (see VisitTracker). */
  pathsExact: boolean;
  /**
   * The visit's journey (docs/reports.md, "Journeys"): its pages in time order, a page repeated right after itself
   * counted once. How many, capped at JOURNEY_PAGES + 1 (enough to tell whether a journey of JOURNEY_PAGES steps
   * ended at each of them); 0 while not known: no pageview yet, or a pageview that arrived out of time order (or at
   * the same millisecond as another page), after which reports read the visit's pages from its hits.
   */
  journeyLength: number;
  /** The journey's pages after the entry page (its 2nd to JOURNEY_PAGES-th), as many as it has; [] when not known. */
  journeyPages: readonly string[];
}

/** Pages of a visit's journey its record holds (the deepest journey reports list: src/report/journeys.ts). */
export const JOURNEY_PAGES = 5;

/**
 * A visit as current visitors count it (docs/reports.md, "Current visitors"): what its stored row will say, read
 * from the visit state in memory before the row is written. `visitId` in decimal, as the stores give it.
 */
export interface LiveVisit {
  visitId: string;
  lastSeenMs: number;
  pageviews: number;
  exitHostname: string;
  exitPage: string;
  referrerHostname: string;
  referrerPathname: string;
}

/**
 * A visit state's version: one more with every hit of the visit, whichever process recorded it, so the newest
 * state of a visit is the one with the highest version (shared visit state, ClickHouse's ReplacingMergeTree).
 */
export const visitVersion = (v: Pick<VisitRecord, 'pageviews' | 'events'>) => v.pageviews + v.events;
