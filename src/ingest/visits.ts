// Visits (sessions) of DESIGN.md section 6: a visitor's hits with no gap over 30 minutes, with entry and exit
// pages, duration and pageview count kept up to date as hits arrive.

import type { HitType, VisitRecord } from '../domain/hits.js';

export const VISIT_TIMEOUT_MS = 30 * 60 * 1000;

/** What the visit logic needs to know about a hit. */
export interface VisitHit {
  type: HitType;
  timestamp: Date;
  hostname: string;
  pathname: string;
  referrerHostname: string;
  referrerPathname: string;
}

interface ActiveVisit {
  record: VisitRecord;
  /** Visitor keys this visit is reachable under (a second one after midnight, with the new day's salt). */
  keys: string[];
  firstPageviewAt: number;
  lastPageviewAt: number;
  /** Pathnames viewed so far, with their first view's time; undefined once the flags cannot be trusted. */
  paths: Map<string, number> | undefined;
}

/** A visit's state after a hit, and whether that hit was the visit's first view of its page. */
export interface RecordedVisit extends VisitRecord {
  firstView: boolean;
}

/** Distinct pages remembered per visit; a visit with more gives up exact first-view flags. */
const MAX_PATHS_PER_VISIT = 1000;

/** Identifies a visitor within a site for a day: the site id and the visitor hash under that day's salt. */
export const visitorKey = (siteId: string, visitorId: bigint) => `${siteId}:${visitorId.toString(36)}`;

// Visit ids come from a pool of random bytes refilled 1,024 ids at a time: one system call per id was a
// measurable share of the collector's time.
const idPool = new BigUint64Array(1024);
let idsLeft = 0;
const randomVisitId = (): bigint => {
  if (idsLeft === 0) {
    crypto.getRandomValues(idPool);
    idsLeft = idPool.length;
  }
  return idPool[--idsLeft]!;
};

export class VisitTracker {
  private readonly byKey = new Map<string, ActiveVisit>();

  constructor(private readonly timeoutMs = VISIT_TIMEOUT_MS) {}

  get activeVisits(): number {
    return new Set(this.byKey.values()).size;
  }

  /**
   * Adds a hit to the visit it continues, looked up under the visitor's key for the hit's day and then, to carry
   * visits across midnight, under yesterday's key; or starts a new visit. Returns the visit's new state.
   */
  record(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit): RecordedVisit {
    const key = visitorKey(siteId, currentId);
    const at = hit.timestamp.getTime();
    let visit = this.continuing(key, at);
    if (!visit && previousId !== undefined) visit = this.continuing(visitorKey(siteId, previousId), at);
    if (!visit) {
      visit = {
        record: {
          siteId,
          visitId: randomVisitId(),
          visitorId: currentId,
          startedAt: hit.timestamp,
          lastSeenAt: hit.timestamp,
          entryPage: '',
          exitPage: '',
          exitHostname: '',
          pageviews: 0,
          events: 0,
          pathsExact: true,
          referrerHostname: '',
          referrerPathname: '',
        },
        keys: [],
        firstPageviewAt: Infinity,
        lastPageviewAt: -Infinity,
        paths: new Map(),
      };
    }
    if (!visit.keys.includes(key)) {
      visit.keys.push(key);
    }
    this.byKey.set(key, visit);
    const firstView = apply(visit, hit, at);
    return { ...visit.record, firstView };
  }

  /** Resumes visits from storage after a restart (keyed by the visitor id they started with). */
  seed(visits: readonly VisitRecord[]): void {
    for (const record of visits) {
      const key = visitorKey(record.siteId, record.visitorId);
      const known = this.byKey.get(key);
      if (known && known.record.lastSeenAt >= record.lastSeenAt) continue;
      this.byKey.set(key, {
        // The pages a resumed visit had viewed are not stored, so its later first-view flags cannot be trusted.
        record: { ...record, pathsExact: false },
        keys: [key],
        // Pageview times are not stored; the visit's bounds are the best stand-ins.
        firstPageviewAt: record.pageviews > 0 ? record.startedAt.getTime() : Infinity,
        lastPageviewAt: record.pageviews > 0 ? record.lastSeenAt.getTime() : -Infinity,
        paths: undefined,
      });
    }
  }

  /** Forgets visits idle for longer than the timeout at `now`; returns how many visits (not keys) went. */
  sweep(now: Date): number {
    const removed = new Set<ActiveVisit>();
    for (const [key, visit] of this.byKey) {
      if (now.getTime() - visit.record.lastSeenAt.getTime() > this.timeoutMs) {
        this.byKey.delete(key);
        removed.add(visit);
      }
    }
    return removed.size;
  }

  /** The visit under `key` if a hit at `at` belongs to it (no gap over the timeout on either side). */
  private continuing(key: string, at: number): ActiveVisit | undefined {
    const visit = this.byKey.get(key);
    if (!visit) return undefined;
    const { startedAt, lastSeenAt } = visit.record;
    if (at - lastSeenAt.getTime() > this.timeoutMs) return undefined;
    if (startedAt.getTime() - at > this.timeoutMs) return undefined;
    return visit;
  }
}

/** Adds the hit to the visit; returns whether it is the visit's first view of its pathname. */
function apply(visit: ActiveVisit, hit: VisitHit, at: number): boolean {
  const r = visit.record;
  if (at < r.startedAt.getTime()) r.startedAt = hit.timestamp;
  if (at > r.lastSeenAt.getTime()) r.lastSeenAt = hit.timestamp;
  if (!r.referrerHostname && hit.referrerHostname) {
    r.referrerHostname = hit.referrerHostname;
    r.referrerPathname = hit.referrerPathname;
  }
  if (hit.type === 'event') {
    r.events++;
    return false;
  }
  r.pageviews++;
  const firstView = firstViewOf(visit, hit.pathname, at);
  if (at < visit.firstPageviewAt) {
    visit.firstPageviewAt = at;
    r.entryPage = hit.pathname;
  }
  if (at >= visit.lastPageviewAt) {
    visit.lastPageviewAt = at;
    r.exitPage = hit.pathname;
    r.exitHostname = hit.hostname;
  }
  return firstView;
}

/**
 * Whether a pageview is its visit's first view of `pathname`. A view earlier than one already flagged (hits out
 * of order) or a visit with too many pages makes the flags untrustworthy: the visit is marked so reports count
 * its pages from the hits instead.
 */
function firstViewOf(visit: ActiveVisit, pathname: string, at: number): boolean {
  const paths = visit.paths;
  if (!paths) return false;
  const seen = paths.get(pathname);
  if (seen === undefined) {
    if (paths.size >= MAX_PATHS_PER_VISIT) {
      visit.paths = undefined;
      visit.record.pathsExact = false;
      return false;
    }
    paths.set(pathname, at);
    return true;
  }
  if (at < seen) {
    visit.paths = undefined;
    visit.record.pathsExact = false;
  }
  return false;
}
