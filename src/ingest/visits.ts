// Visits (sessions) of DESIGN.md section 6: a visitor's hits with no gap over 30 minutes, with entry and exit
// pages, duration and pageview count kept up to date as hits arrive. The rules are written once (applyHit, over
// VisitFields) and applied to state in this process's memory (VisitTracker, an object a visit, for imports, and
// CompactVisitTracker in compact-visits.ts, a table, for the live ingest thread) or in a shared store
// (SharedVisitTracker, scale-out mode).

import { attributionOf, JOURNEY_PAGES, visitVersion, type Attribution, type HitType, type VisitRecord } from '../domain/hits.js';
import type { VisitStateStore } from '../store/types.js';
import type { SharedTexts } from './shared-texts.js';

export const VISIT_TIMEOUT_MS = 30 * 60 * 1000;

/** What the visit logic needs to know about a hit: when, which page, and where it says it came from. */
export interface VisitHit extends Attribution {
  type: HitType;
  timestamp: Date;
  hostname: string;
  pathname: string;
}

/**
 * What the visit rules read and change: a visit object's own fields (ActiveVisit) or a row of a table of visits
 * (CompactVisitTracker). Times are numbers (ms); attribution is set once, at the visit's first hit.
 */
export interface VisitFields
  extends Readonly<Pick<VisitRecord, 'siteId' | 'visitorId' | 'visitId'>>,
    Pick<VisitRecord, 'entryPage' | 'exitPage' | 'exitHostname' | 'pageviews' | 'events' | 'pathsExact' | 'journeyLength' | 'journeyPages'> {
  startedMs: number;
  lastSeenMs: number;
  /** First and last pageview times (Infinity and -Infinity before the first). */
  firstPageviewAt: number;
  lastPageviewAt: number;
  /**
   * Pathnames viewed so far, with their first view's time, from the visit's second pageview on (before it, the only
   * page is the entry page, viewed at firstPageviewAt: most visits have one pageview, and a Map for each of them
   * was a quarter of a visit's memory). Undefined also once the flags cannot be trusted (pathsExact false).
   */
  paths: Map<string, number> | undefined;
  readonly attribution: Readonly<Attribution>;
  /** Gives the visit the attribution of `from` ('' where missing). */
  attribute(from: Partial<Attribution>): void;
}

/**
 * A visit in progress: its record and what the rules need besides. One object, times as numbers: a visit is held
 * for 30 minutes after its last hit, so its size is the ingest thread's memory (100,000 visits in progress at
 * 5,000 new visitors a second). A record, a wrapper and the hits' Dates took 670 bytes a visit, this about 340;
 * the record's times are Dates made when asked for (snapshot(), or the getters for a caller that reads the live
 * object).
 */
class ActiveVisit implements LiveVisit, VisitFields {
  startedMs: number;
  lastSeenMs: number;
  entryPage = '';
  exitPage = '';
  exitHostname = '';
  pageviews = 0;
  events = 0;
  pathsExact = true;
  journeyLength = 0;
  journeyPages: readonly string[] = NO_JOURNEY_PAGES;
  referrerHostname = '';
  referrerPathname = '';
  referrerSource = '';
  utmCampaign = '';
  utmContent = '';
  utmMedium = '';
  utmSource = '';
  utmTerm = '';
  ref = '';
  keyword = '';
  firstPageviewAt = Infinity;
  lastPageviewAt = -Infinity;
  paths: Map<string, number> | undefined = undefined;
  memo: string | undefined = undefined;

  constructor(
    readonly siteId: string,
    /** The visitor hash the visit started under: the key VisitTracker finds it by. */
    readonly visitorId: bigint,
    startedMs: number,
    readonly visitId = randomVisitId(startedMs),
  ) {
    this.startedMs = startedMs;
    this.lastSeenMs = startedMs;
  }

  get startedAt(): Date {
    return new Date(this.startedMs);
  }

  get lastSeenAt(): Date {
    return new Date(this.lastSeenMs);
  }

  get attribution(): Attribution {
    return this;
  }

  attribute(from: Partial<Attribution>): void {
    Object.assign(this, attributionOf(from));
  }

  snapshot(firstView: boolean): RecordedVisit {
    return snapshotOf(this, firstView);
  }
}

/** recordLive's visit: the tracker's own record, which later hits change, with a slot for its caller. */
export interface LiveVisit extends VisitRecord {
  /**
   * The caller's text about the visit, kept and forgotten with it (the set-based import keeps the visit's
   * attribution as CSV fields here). A WeakMap keyed by the visits did that job for about a tenth of the import
   * thread's CPU: V8's collections treat a WeakMap's entries apart (one lives only while its key does), the young
   * generation's too (docs/benchmarks.md, "Import: measurements behind the code").
   */
  memo: string | undefined;
}

/** A visit's record as a plain object of its own (a spread would miss an ActiveVisit's times, which are getters). */
export function snapshotOf(v: VisitFields, firstView: boolean): RecordedVisit {
  const a = v.attribution;
  return {
    siteId: v.siteId,
    visitId: v.visitId,
    visitorId: v.visitorId,
    startedAt: new Date(v.startedMs),
    lastSeenAt: new Date(v.lastSeenMs),
    entryPage: v.entryPage,
    exitPage: v.exitPage,
    exitHostname: v.exitHostname,
    pageviews: v.pageviews,
    events: v.events,
    pathsExact: v.pathsExact,
    journeyLength: v.journeyLength,
    journeyPages: v.journeyPages,
    referrerHostname: a.referrerHostname,
    referrerPathname: a.referrerPathname,
    referrerSource: a.referrerSource,
    utmCampaign: a.utmCampaign,
    utmContent: a.utmContent,
    utmMedium: a.utmMedium,
    utmSource: a.utmSource,
    utmTerm: a.utmTerm,
    ref: a.ref,
    keyword: a.keyword,
    firstView,
  };
}

/** A visit's state after a hit, and whether that hit was the visit's first view of its page. */
export interface RecordedVisit extends VisitRecord {
  firstView: boolean;
}

/** A journey's pages after the entry page before its second: shared, never changed (a page added makes a new list). */
export const NO_JOURNEY_PAGES: readonly string[] = Object.freeze([]);

/** Distinct pages remembered per visit; a visit with more gives up exact first-view flags. */
const MAX_PATHS_PER_VISIT = 1000;

/** Identifies a visitor within a site for a day: the site id and the visitor hash under that day's salt. */
export const visitorKey = (siteId: string, visitorId: bigint) => `${siteId}:${visitorId.toString(36)}`;

// Visit ids come from a pool of random bytes refilled 1,024 ids at a time: one system call per id was a
// measurable share of the collector's time.
const idPool = new BigUint64Array(1024);
let idsLeft = 0;

/** Bits of a visit id that number its start's UTC day (modulo 2^12, a cycle of about 11 years); the rest are random. */
export const VISIT_ID_DAY_BITS = 12n;
const RANDOM_BITS = 64n - VISIT_ID_DAY_BITS;
const RANDOM_MASK = (1n << RANDOM_BITS) - 1n;
const DAY_MS = 86_400_000;

/**
 * A new visit's id: its start's UTC day number (modulo 2^12) in the top 12 bits, 52 random bits below. ClickHouse
 * keeps visits sorted by (site_id, visit_id) and replaces a visit's versions with FINAL, which merges only the key
 * ranges where parts intersect: with the day first, a site's older visits sit in ranges no new version touches and
 * are read as they are (a 30-day total over 4.76 M visits 63-101 ms against 281-346 with random ids, ClickHouse 26.7;
 * docs/benchmarks.md, "Reports on ClickHouse"). The day wraps, so ids use the whole 64-bit space over the cycle and
 * two visits share an id as rarely as with 64 random bits. An id never changes, even when a late hit moves the
 * visit's start to another day.
 */
export const randomVisitId = (startedMs: number): bigint => {
  if (idsLeft === 0) {
    crypto.getRandomValues(idPool);
    idsLeft = idPool.length;
  }
  return (visitIdDay(startedMs) << RANDOM_BITS) | (idPool[--idsLeft]! & RANDOM_MASK);
};

/** The day number a visit started at `startedMs` carries in its id's top bits (randomVisitId). */
export const visitIdDay = (startedMs: number): bigint => BigInt(Math.floor(startedMs / DAY_MS)) & ((1n << VISIT_ID_DAY_BITS) - 1n);

/** Where a hit finds the visit it belongs to. */
export interface VisitState {
  record(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit): RecordedVisit | Promise<RecordedVisit>;
  /**
   * The visit a hit at `at` would continue (under the visitor's hash of the hit's day, then yesterday's), as it
   * is, or undefined when there is none: for engagement hits, which belong to a visit in progress and never start
   * or change one (docs/collection.md, "Engagement").
   */
  inProgress(siteId: string, currentId: bigint, previousId: bigint | undefined, at: Date): RecordedVisit | undefined | Promise<RecordedVisit | undefined>;
}

/** Keeps `visit` in `latest` (by visit id) unless a newer state is there: states may arrive out of order. */
export function keepNewest(latest: Map<bigint, VisitRecord>, visit: VisitRecord): void {
  const known = latest.get(visit.visitId);
  if (!known || visitVersion(visit) >= visitVersion(known)) latest.set(visit.visitId, visit);
}

/** The fields of a stored visit state that restored() takes as they are. */
type RestoredFields = Pick<VisitRecord, 'siteId' | 'entryPage' | 'exitPage' | 'exitHostname' | 'pageviews' | 'events'> & Partial<Attribution>;

/**
 * Gives `visit` (made at its start time) the fields of a state stored elsewhere (seeded from the store after a
 * restart, or read from Redis); attribution missing from states written by older versions is ''. The caller sets
 * what the stored state says about pages and pageview times. `texts`: where the pages and host are shared.
 */
function restore(visit: VisitFields, r: RestoredFields, lastSeenMs: number, texts?: SharedTexts): void {
  visit.attribute(r);
  visit.lastSeenMs = lastSeenMs;
  visit.entryPage = texts?.of(r.entryPage) ?? r.entryPage;
  visit.exitPage = texts?.of(r.exitPage) ?? r.exitPage;
  visit.exitHostname = texts?.of(r.exitHostname) ?? r.exitHostname;
  visit.pageviews = r.pageviews;
  visit.events = r.events;
}

/** A visit in progress again, as an object, from a stored state (restore()). */
function restored(r: RestoredFields, visitorId: bigint, visitId: bigint, startedMs: number, lastSeenMs: number): ActiveVisit {
  const visit = new ActiveVisit(r.siteId, visitorId, startedMs, visitId);
  restore(visit, r, lastSeenMs);
  return visit;
}

/**
 * Gives `visit` (made at the record's start time, under its visit and visitor ids) the state of a visit seeded
 * from the store after a restart.
 */
export function resume(visit: VisitFields, record: VisitRecord, texts?: SharedTexts): void {
  restore(visit, record, record.lastSeenAt.getTime(), texts);
  // The pages a resumed visit had viewed are not stored, so its later first-view flags cannot be trusted, nor its
  // journey (the record's is the one the visit had; later pages would be added to it without their order known).
  visit.pathsExact = false;
  visit.journeyLength = 0;
  visit.journeyPages = NO_JOURNEY_PAGES;
  // Pageview times are not stored; the visit's bounds are the best stand-ins.
  if (record.pageviews > 0) {
    visit.firstPageviewAt = visit.startedMs;
    visit.lastPageviewAt = visit.lastSeenMs;
  }
}

/** Whether a hit at `at` belongs to the visit: no gap over the timeout on either side. */
export function continues(visit: VisitFields, at: number, timeoutMs: number): boolean {
  return at - visit.lastSeenMs <= timeoutMs && visit.startedMs - at <= timeoutMs;
}

/**
 * Visit state in this process's memory: the embedded mode, where one process sees every hit. Visits are found by
 * site and then visitor id (bigints the visits hold anyway, where a string key per visitor was 100 bytes more a
 * visit).
 */
export class VisitTracker implements VisitState {
  private readonly bySite = new Map<string, Map<bigint, ActiveVisit>>();
  constructor(readonly timeoutMs = VISIT_TIMEOUT_MS) {}

  get activeVisits(): number {
    const visits = new Set<ActiveVisit>();
    for (const byVisitor of this.bySite.values()) for (const visit of byVisitor.values()) visits.add(visit);
    return visits.size;
  }

  /**
   * Adds a hit to the visit it continues, looked up under the visitor's id for the hit's day and then, to carry
   * visits across midnight, under yesterday's; or starts a new visit. Returns the visit's new state.
   */
  record(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit): RecordedVisit {
    return this.recordVisit(siteId, currentId, previousId, hit).snapshot(this.lastFirstView);
  }

  /**
   * record() for a caller that uses the visit's state before its next hit (the set-based import): the visit's own
   * record, which later hits change, not a copy; whether the hit was the visit's first view of its page is
   * `lastFirstView` until the next hit.
   */
  recordLive(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit): LiveVisit {
    return this.recordVisit(siteId, currentId, previousId, hit);
  }

  /** recordLive's last hit: whether it was its visit's first view of its page. */
  lastFirstView = false;

  inProgress(siteId: string, currentId: bigint, previousId: bigint | undefined, at: Date): RecordedVisit | undefined {
    const t = at.getTime();
    const byVisitor = this.bySite.get(siteId);
    const visit = this.continuing(byVisitor?.get(currentId), t) ?? (previousId === undefined ? undefined : this.continuing(byVisitor?.get(previousId), t));
    return visit?.snapshot(false);
  }

  /** Resumes visits from storage after a restart (found by the visitor id they started with). */
  seed(visits: readonly VisitRecord[]): void {
    for (const record of visits) {
      const byVisitor = this.visitorsOf(record.siteId);
      const known = byVisitor.get(record.visitorId);
      if (known && known.lastSeenMs >= record.lastSeenAt.getTime()) continue;
      const visit = new ActiveVisit(record.siteId, record.visitorId, record.startedAt.getTime(), record.visitId);
      resume(visit, record);
      byVisitor.set(record.visitorId, visit);
    }
  }

  /** Forgets visits idle for longer than the timeout at `now`; returns how many visits (not keys) went. */
  sweep(now: Date): number {
    const removed = new Set<ActiveVisit>();
    for (const [siteId, byVisitor] of this.bySite) {
      for (const [visitorId, visit] of byVisitor) {
        if (now.getTime() - visit.lastSeenMs > this.timeoutMs) {
          byVisitor.delete(visitorId);
          removed.add(visit);
        }
      }
      if (byVisitor.size === 0) this.bySite.delete(siteId);
    }
    return removed.size;
  }

  private recordVisit(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit): ActiveVisit {
    const at = hit.timestamp.getTime();
    const byVisitor = this.visitorsOf(siteId);
    let visit = this.continuing(byVisitor.get(currentId), at);
    if (!visit && previousId !== undefined) visit = this.continuing(byVisitor.get(previousId), at);
    visit ??= new ActiveVisit(siteId, currentId, at);
    byVisitor.set(currentId, visit);
    this.lastFirstView = applyHit(visit, hit, at);
    return visit;
  }

  private visitorsOf(siteId: string): Map<bigint, ActiveVisit> {
    let byVisitor = this.bySite.get(siteId);
    if (!byVisitor) this.bySite.set(siteId, (byVisitor = new Map()));
    return byVisitor;
  }

  /** `visit` if a hit at `at` belongs to it. */
  private continuing(visit: ActiveVisit | undefined, at: number): ActiveVisit | undefined {
    return visit && continues(visit, at, this.timeoutMs) ? visit : undefined;
  }
}

/** Rounds of read, apply and compare-and-set before a hit gives up (only a storm of hits of one visit needs more than 2). */
const MAX_ATTEMPTS = 20;

/** Hits per round at most: one round is one Lua script each way, and Redis runs nothing else meanwhile. */
const MAX_ROUND = 1000;

/** A hit waiting for its visit in SharedVisitTracker. */
interface Queued {
  siteId: string;
  currentId: bigint;
  /** The visitor key of the hit's day, then yesterday's (to carry a visit across midnight). */
  keys: string[];
  hit: VisitHit;
  at: number;
  /** An engagement's look-up (inProgress): the visit is read, never changed nor started. */
  peek: boolean;
  /** undefined only for a look-up that found no visit in progress. */
  resolve: (visit: RecordedVisit | undefined) => void;
  reject: (err: Error) => void;
}

/** A visit one round of SharedVisitTracker changes: as read (or new), then with the round's hits applied. */
interface Touched {
  visit: ActiveVisit;
  /** Visitor keys the visit is reachable under (a second one after midnight, with the new day's salt). */
  keys: string[];
  /** Its version when read (0: new). */
  expectedVersion: number;
  /** Visitor keys to point at it, each with the value it held just before (what Redis must still hold). */
  pointers: Map<string, string | null>;
  /** The round's hits applied to it, with the state each produced. */
  applied: { queued: Queued; result: RecordedVisit }[];
}

/**
 * Visit state in a store every process shares (scale-out): read the visitor's visit, apply the hit with the same
 * rules as VisitTracker, write it back only if nobody changed it meanwhile, else read again. Two processes taking
 * the first hits of one visitor at once therefore still make one visit. Hits are handled in rounds, not one by
 * one: the hits that arrive in one turn of the event loop are read with one lookup and written with one
 * compare-and-set of all their visits (two Redis round trips per batch instead of two per hit); a visit that
 * changed under its round is read and applied again, with its hits alone.
 */
export class SharedVisitTracker implements VisitState {
  private queue: Queued[] = [];
  private scheduled = false;
  /** Visitor keys of the rounds under way: later hits of these keys wait for them, so only processes race. */
  private readonly busy = new Set<string>();

  constructor(
    private readonly store: VisitStateStore,
    private readonly timeoutMs = VISIT_TIMEOUT_MS,
  ) {}

  record(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit): Promise<RecordedVisit> {
    return this.enqueue(siteId, currentId, previousId, hit, false) as Promise<RecordedVisit>;
  }

  /**
   * Looked up in the rounds with the hits that change visits, in arrival order: an engagement sent right after its
   * pageview waits for the round that records the pageview, and costs no Redis round trip of its own.
   */
  inProgress(siteId: string, currentId: bigint, previousId: bigint | undefined, at: Date): Promise<RecordedVisit | undefined> {
    return this.enqueue(siteId, currentId, previousId, { type: 'engagement', timestamp: at, hostname: '', pathname: '', ...attributionOf({}) }, true);
  }

  private enqueue(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit, peek: boolean): Promise<RecordedVisit | undefined> {
    const key = visitorKey(siteId, currentId);
    const keys = previousId === undefined ? [key] : [key, visitorKey(siteId, previousId)];
    return new Promise((resolve, reject) => {
      this.queue.push({ siteId, currentId, keys, hit, at: hit.timestamp.getTime(), peek, resolve, reject });
      this.schedule();
    });
  }

  /** Starts a round once this turn of the event loop is over: every hit of the turn goes in it. */
  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.startRound();
    });
  }

  /**
   * Takes the queued hits (up to MAX_ROUND) none of whose keys is in a round under way, nor in a hit that waits
   * (a hit of a visitor never overtakes an earlier one).
   */
  private startRound(): void {
    const blocked = new Set(this.busy);
    const round: Queued[] = [];
    const waiting: Queued[] = [];
    for (const queued of this.queue) {
      if (round.length >= MAX_ROUND || queued.keys.some((k) => blocked.has(k))) {
        waiting.push(queued);
        for (const k of queued.keys) blocked.add(k);
      } else round.push(queued);
    }
    this.queue = waiting;
    if (round.length === 0) return;
    if (round.length >= MAX_ROUND) this.schedule();
    const keys = new Set(round.flatMap((q) => q.keys));
    for (const k of keys) this.busy.add(k);
    void this.run(round).finally(() => {
      for (const k of keys) this.busy.delete(k);
      if (this.queue.length > 0) this.schedule();
    });
  }

  /** Rounds over `hits` until each is committed (or has failed). */
  private async run(hits: Queued[]): Promise<void> {
    let todo = hits;
    for (let attempt = 0; todo.length > 0; attempt++) {
      if (attempt > 0) {
        // Another process changed a visit: back off a little (with jitter, so two racers do not collide again).
        await new Promise((resolve) => setTimeout(resolve, Math.random() * Math.min(50, 2 ** attempt)));
      }
      if (attempt === MAX_ATTEMPTS) {
        for (const q of todo) q.reject(new Error(`visit state of ${q.keys[0]} kept changing under concurrent hits`));
        return;
      }
      try {
        todo = await this.round(todo);
      } catch (err) {
        for (const q of todo) q.reject(err as Error);
        return;
      }
    }
  }

  /**
   * One read, apply and compare-and-set of `hits` (in order: hits of one key as they arrived). Resolves the hits
   * whose visits were committed; returns those whose visits changed under them, to go again.
   */
  private async round(hits: Queued[]): Promise<Queued[]> {
    const keys = [...new Set(hits.flatMap((q) => q.keys))];
    const found = await this.store.lookup(keys);
    // What each key points at in this round: as read, then as the round's earlier hits left it.
    const read = new Map(keys.map((k, i) => [k, found[i] ?? null]));
    const pointing = new Map<string, Touched | undefined>();
    const byVisit = new Map<string, Touched>();
    const touched: Touched[] = [];
    /** The round's look-ups: the visit each found (as the round's earlier hits left it), or none. */
    const peeked: { queued: Queued; t: Touched | undefined; result: RecordedVisit | undefined }[] = [];
    const visitAt = (key: string): Touched | undefined => {
      if (pointing.has(key)) return pointing.get(key);
      const entry = read.get(key);
      if (!entry?.doc) return undefined;
      let t = byVisit.get(entry.visitId);
      if (!t) {
        const { visit, keys } = decode(entry.doc);
        t = { visit, keys, expectedVersion: visitVersion(visit), pointers: new Map(), applied: [] };
        byVisit.set(entry.visitId, t);
        touched.push(t);
      }
      return t;
    };
    for (const q of hits) {
      const key = q.keys[0]!;
      let t: Touched | undefined;
      for (const k of q.keys) {
        const candidate = visitAt(k);
        if (candidate && continues(candidate.visit, q.at, this.timeoutMs)) {
          t = candidate;
          break;
        }
      }
      if (q.peek) {
        peeked.push({ queued: q, t, result: t?.visit.snapshot(false) });
        continue;
      }
      if (!t) {
        t = { visit: new ActiveVisit(q.siteId, q.currentId, q.at), keys: [], expectedVersion: 0, pointers: new Map(), applied: [] };
        touched.push(t);
      }
      const visit = t.visit;
      if (!t.keys.includes(key)) t.keys.push(key);
      if (!t.pointers.has(key)) {
        const before = pointing.has(key) ? pointing.get(key) : undefined;
        t.pointers.set(key, before ? before.visit.visitId.toString() : (read.get(key)?.visitId ?? null));
      }
      pointing.set(key, t);
      const firstView = applyHit(visit, q.hit, q.at);
      t.applied.push({ queued: q, result: visit.snapshot(firstView) });
    }
    const changed = touched.filter((t) => t.applied.length > 0);
    const committed = await this.store.commitAll(
      changed.map((t) => ({
        visitId: t.visit.visitId.toString(),
        expectedVersion: t.expectedVersion,
        version: visitVersion(t.visit),
        doc: encode(t.visit, t.keys),
        pointers: [...t.pointers].map(([key, expected]) => ({ key, expected })),
        // Twice the timeout: long enough for any hit that could still continue the visit.
        ttlMs: 2 * this.timeoutMs,
      })),
    );
    const again = new Set<Queued>();
    changed.forEach((t, i) => {
      for (const { queued, result } of t.applied) {
        if (committed[i]) queued.resolve(result);
        else again.add(queued);
      }
    });
    // A look-up whose visit this round failed to change saw hits that are not stored yet: it goes again with them.
    for (const { queued, t, result } of peeked) {
      const i = t ? changed.indexOf(t) : -1;
      if (i >= 0 && !committed[i]) again.add(queued);
      else queued.resolve(result);
    }
    return hits.filter((q) => again.has(q));
  }
}

/** A visit as stored in a VisitStateStore: JSON, with bigints and times as strings and numbers. */
interface VisitDoc {
  r: Omit<VisitRecord, 'visitId' | 'visitorId' | 'startedAt' | 'lastSeenAt' | 'journeyLength' | 'journeyPages'> & {
    visitId: string;
    visitorId: string;
    startedAt: number;
    lastSeenAt: number;
    /** Absent in states written before journeys were recorded. */
    journeyLength?: number;
    journeyPages?: readonly string[];
  };
  k: string[];
  /** First and last pageview times (null: none yet). */
  f: number | null;
  l: number | null;
  /** Pathnames with their first view's time; null once first-view flags cannot be trusted. */
  p: [string, number][] | null;
}

function encode(v: ActiveVisit, keys: string[]): string {
  const { startedMs, lastSeenMs, firstPageviewAt, lastPageviewAt, paths, ...fields } = v;
  const doc: VisitDoc = {
    r: { ...fields, visitId: v.visitId.toString(), visitorId: v.visitorId.toString(), startedAt: startedMs, lastSeenAt: lastSeenMs },
    k: keys,
    f: Number.isFinite(firstPageviewAt) ? firstPageviewAt : null,
    l: Number.isFinite(lastPageviewAt) ? lastPageviewAt : null,
    p: paths ? [...paths] : v.pathsExact ? pathsBeforeTheMap(v) : null,
  };
  return JSON.stringify(doc);
}

function decode(text: string): { visit: ActiveVisit; keys: string[] } {
  const doc = JSON.parse(text) as VisitDoc;
  const r = doc.r;
  const visit = restored(r, BigInt(r.visitorId), BigInt(r.visitId), r.startedAt, r.lastSeenAt);
  visit.pathsExact = r.pathsExact;
  // States written before journeys were recorded have none: not known (0), as for a visit resumed after a restart.
  visit.journeyLength = r.journeyLength ?? 0;
  visit.journeyPages = r.journeyPages ?? NO_JOURNEY_PAGES;
  visit.firstPageviewAt = doc.f ?? Infinity;
  visit.lastPageviewAt = doc.l ?? -Infinity;
  // An empty list (written before visits made their Map at the second pageview) is no Map.
  visit.paths = doc.p && doc.p.length > 0 ? new Map(doc.p) : undefined;
  return { visit, keys: doc.k };
}

/**
 * Adds the hit to the visit; returns whether it is the visit's first view of its pathname. The visit's first hit
 * (the first recorded: imports record in time order) gives the visit its attribution for good: a later hit's own
 * external referrer or campaign neither changes it nor starts a new visit (Fathom's first-touch rule).
 */
export function applyHit(visit: VisitFields, hit: VisitHit, at: number, texts?: SharedTexts): boolean {
  if (visitVersion(visit) === 0) visit.attribute(hit);
  if (at < visit.startedMs) visit.startedMs = at;
  if (at > visit.lastSeenMs) visit.lastSeenMs = at;
  if (hit.type === 'event') {
    visit.events++;
    return false;
  }
  const pathname = texts?.of(hit.pathname) ?? hit.pathname;
  followJourney(visit, pathname, at);
  visit.pageviews++;
  const firstView = firstViewOf(visit, pathname, at);
  if (at < visit.firstPageviewAt) {
    visit.firstPageviewAt = at;
    visit.entryPage = pathname;
  }
  if (at >= visit.lastPageviewAt) {
    visit.lastPageviewAt = at;
    visit.exitPage = pathname;
    visit.exitHostname = texts?.of(hit.hostname) ?? hit.hostname;
  }
  return firstView;
}

/**
 * Adds a pageview to the visit's journey (before the visit counts it): its first pageview starts the journey; a
 * later one in time order adds its page unless it is the page viewed last. Reports order a visit's pageviews by
 * time, then by page, so a pageview earlier than the last one, or at the same millisecond with another page, leaves
 * the journey not known (length 0) for good: reports read that visit's pages from its hits.
 */
function followJourney(visit: VisitFields, pathname: string, at: number): void {
  if (visit.pageviews === 0) {
    visit.journeyLength = 1;
    return;
  }
  if (visit.journeyLength === 0) return;
  if (at < visit.lastPageviewAt || (at === visit.lastPageviewAt && pathname !== visit.exitPage)) {
    visit.journeyLength = 0;
    visit.journeyPages = NO_JOURNEY_PAGES;
    return;
  }
  if (pathname === visit.exitPage || visit.journeyLength > JOURNEY_PAGES) return;
  if (visit.journeyLength < JOURNEY_PAGES) visit.journeyPages = [...visit.journeyPages, pathname];
  visit.journeyLength++;
}

/** The pages a visit without its Map has viewed: none, or its entry page, at its first pageview's time. */
function pathsBeforeTheMap(visit: VisitFields): [string, number][] {
  return visit.pageviews > 0 ? [[visit.entryPage, visit.firstPageviewAt]] : [];
}

/**
 * Whether a pageview is its visit's first view of `pathname`. A view earlier than one already flagged (hits out
 * of order) or a visit with too many pages makes the flags untrustworthy: the visit is marked so reports count
 * its pages from the hits instead.
 */
function firstViewOf(visit: VisitFields, pathname: string, at: number): boolean {
  if (!visit.pathsExact) return false;
  // This pageview is already counted: the first has no Map to look in.
  if (visit.pageviews === 1) return true;
  const paths = (visit.paths ??= new Map(pathsBeforeTheMap(visit)));
  const seen = paths.get(pathname);
  if (seen === undefined) {
    if (paths.size >= MAX_PATHS_PER_VISIT) {
      visit.paths = undefined;
      visit.pathsExact = false;
      return false;
    }
    paths.set(pathname, at);
    return true;
  }
  if (at < seen) {
    visit.paths = undefined;
    visit.pathsExact = false;
  }
  return false;
}
