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
}

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
  record(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit): VisitRecord {
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
          referrerHostname: '',
          referrerPathname: '',
        },
        keys: [],
        firstPageviewAt: Infinity,
        lastPageviewAt: -Infinity,
      };
    }
    if (!visit.keys.includes(key)) {
      visit.keys.push(key);
    }
    this.byKey.set(key, visit);
    apply(visit, hit, at);
    return { ...visit.record };
  }

  /** Resumes visits from storage after a restart (keyed by the visitor id they started with). */
  seed(visits: readonly VisitRecord[]): void {
    for (const record of visits) {
      const key = visitorKey(record.siteId, record.visitorId);
      const known = this.byKey.get(key);
      if (known && known.record.lastSeenAt >= record.lastSeenAt) continue;
      this.byKey.set(key, {
        record: { ...record },
        keys: [key],
        // Pageview times are not stored; the visit's bounds are the best stand-ins.
        firstPageviewAt: record.pageviews > 0 ? record.startedAt.getTime() : Infinity,
        lastPageviewAt: record.pageviews > 0 ? record.lastSeenAt.getTime() : -Infinity,
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

function apply(visit: ActiveVisit, hit: VisitHit, at: number): void {
  const r = visit.record;
  if (at < r.startedAt.getTime()) r.startedAt = hit.timestamp;
  if (at > r.lastSeenAt.getTime()) r.lastSeenAt = hit.timestamp;
  if (!r.referrerHostname && hit.referrerHostname) {
    r.referrerHostname = hit.referrerHostname;
    r.referrerPathname = hit.referrerPathname;
  }
  if (hit.type === 'event') {
    r.events++;
    return;
  }
  r.pageviews++;
  if (at < visit.firstPageviewAt) {
    visit.firstPageviewAt = at;
    r.entryPage = hit.pathname;
  }
  if (at >= visit.lastPageviewAt) {
    visit.lastPageviewAt = at;
    r.exitPage = hit.pathname;
    r.exitHostname = hit.hostname;
  }
}
