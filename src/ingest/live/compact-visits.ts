// Visits in progress as columns of a table (typed arrays and arrays of shared strings) found through an
// open-addressed index, for the live ingest thread: about 135 bytes of memory a visit where an object with shared
// texts took 355 (measured by test/ingest/live/compact-visits.test.ts). The visit rules are visits.ts's own, applied
// through a cursor.

import { ATTRIBUTION_FIELDS, attributionOf, NO_ATTRIBUTION, type Attribution, type LiveVisit, type VisitRecord } from '../../domain/hits.js';
import { SharedTexts } from '../shared-texts.js';
import {
  applyHit, continues, NO_JOURNEY_PAGES, randomVisitId, resume, snapshotOf, VISIT_TIMEOUT_MS,
  type RecordedVisit, type VisitFields, type VisitHit, type VisitState,
} from '../visits.js';

/** Visits the table has room for at first; it doubles when full. */
const FIRST_CAPACITY = 1024;

/** Attributions held for sharing at most; the table starts again empty once full (visits keep theirs). */
const MAX_SHARED_ATTRIBUTIONS = 20_000;

/** The index's slot states besides a key's site number (1 and up). */
const EMPTY = 0;
const REMOVED = -1;

const LOW_32 = 0xffff_ffffn;

/** The visits' fields by row; a row is free while no key of the index names it (keys 0). */
class VisitColumns {
  readonly startedMs: Float64Array;
  readonly lastSeenMs: Float64Array;
  readonly firstPageviewAt: Float64Array;
  readonly lastPageviewAt: Float64Array;
  readonly visitorId: BigUint64Array;
  readonly visitId: BigUint64Array;
  readonly pageviews: Uint32Array;
  readonly events: Uint32Array;
  readonly pathsExact: Uint8Array;
  readonly journeyLength: Uint8Array;
  /** Index keys naming the row: 1, or 2 for a visit that crossed midnight (reachable under both days' hashes). */
  readonly keys: Uint8Array;
  readonly siteId: string[];
  readonly entryPage: string[];
  readonly exitPage: string[];
  readonly exitHostname: string[];
  readonly attribution: Readonly<Attribution>[];
  /** VisitFields.journeyPages: NO_JOURNEY_PAGES (shared) for visits of one page. */
  readonly journeyPages: (readonly string[])[];

  constructor(readonly capacity: number, from?: VisitColumns) {
    this.startedMs = grown(new Float64Array(capacity), from?.startedMs);
    this.lastSeenMs = grown(new Float64Array(capacity), from?.lastSeenMs);
    this.firstPageviewAt = grown(new Float64Array(capacity), from?.firstPageviewAt);
    this.lastPageviewAt = grown(new Float64Array(capacity), from?.lastPageviewAt);
    this.visitorId = grown(new BigUint64Array(capacity), from?.visitorId);
    this.visitId = grown(new BigUint64Array(capacity), from?.visitId);
    this.pageviews = grown(new Uint32Array(capacity), from?.pageviews);
    this.events = grown(new Uint32Array(capacity), from?.events);
    this.pathsExact = grown(new Uint8Array(capacity), from?.pathsExact);
    this.journeyLength = grown(new Uint8Array(capacity), from?.journeyLength);
    this.keys = grown(new Uint8Array(capacity), from?.keys);
    this.siteId = texts(capacity, from?.siteId);
    this.entryPage = texts(capacity, from?.entryPage);
    this.exitPage = texts(capacity, from?.exitPage);
    this.exitHostname = texts(capacity, from?.exitHostname);
    this.attribution = Array.from({ length: capacity }, (_, i) => from?.attribution[i] ?? NO_ATTRIBUTION);
    this.journeyPages = Array.from({ length: capacity }, (_, i) => from?.journeyPages[i] ?? NO_JOURNEY_PAGES);
  }

  /** Copies row `from` of `source` into this table's row `to` (a table made smaller keeps its visits). */
  copyRow(source: VisitColumns, from: number, to: number): void {
    this.startedMs[to] = source.startedMs[from]!;
    this.lastSeenMs[to] = source.lastSeenMs[from]!;
    this.firstPageviewAt[to] = source.firstPageviewAt[from]!;
    this.lastPageviewAt[to] = source.lastPageviewAt[from]!;
    this.visitorId[to] = source.visitorId[from]!;
    this.visitId[to] = source.visitId[from]!;
    this.pageviews[to] = source.pageviews[from]!;
    this.events[to] = source.events[from]!;
    this.pathsExact[to] = source.pathsExact[from]!;
    this.journeyLength[to] = source.journeyLength[from]!;
    this.journeyPages[to] = source.journeyPages[from]!;
    this.keys[to] = source.keys[from]!;
    this.siteId[to] = source.siteId[from]!;
    this.entryPage[to] = source.entryPage[from]!;
    this.exitPage[to] = source.exitPage[from]!;
    this.exitHostname[to] = source.exitHostname[from]!;
    this.attribution[to] = source.attribution[from]!;
  }
}

function grown<T extends Float64Array | BigUint64Array | Uint32Array | Uint8Array>(to: T, from: T | undefined): T {
  if (from) to.set(from as never);
  return to;
}

const texts = (capacity: number, from: string[] | undefined): string[] => Array.from({ length: capacity }, (_, i) => from?.[i] ?? '');

/** One row of the table as the visit rules see it (VisitFields): the tracker points it at a row, then applies a hit. */
class VisitRow implements VisitFields {
  row = 0;
  constructor(private readonly table: CompactVisitTracker) {}

  private get c(): VisitColumns {
    return this.table.columns;
  }

  get siteId(): string {
    return this.c.siteId[this.row]!;
  }
  get visitorId(): bigint {
    return this.c.visitorId[this.row]!;
  }
  get visitId(): bigint {
    return this.c.visitId[this.row]!;
  }
  get startedMs(): number {
    return this.c.startedMs[this.row]!;
  }
  set startedMs(v: number) {
    this.c.startedMs[this.row] = v;
  }
  get lastSeenMs(): number {
    return this.c.lastSeenMs[this.row]!;
  }
  set lastSeenMs(v: number) {
    this.c.lastSeenMs[this.row] = v;
  }
  get entryPage(): string {
    return this.c.entryPage[this.row]!;
  }
  set entryPage(v: string) {
    this.c.entryPage[this.row] = v;
  }
  get exitPage(): string {
    return this.c.exitPage[this.row]!;
  }
  set exitPage(v: string) {
    this.c.exitPage[this.row] = v;
  }
  get exitHostname(): string {
    return this.c.exitHostname[this.row]!;
  }
  set exitHostname(v: string) {
    this.c.exitHostname[this.row] = v;
  }
  get pageviews(): number {
    return this.c.pageviews[this.row]!;
  }
  set pageviews(v: number) {
    this.c.pageviews[this.row] = v;
  }
  get events(): number {
    return this.c.events[this.row]!;
  }
  set events(v: number) {
    this.c.events[this.row] = v;
  }
  get pathsExact(): boolean {
    return this.c.pathsExact[this.row] === 1;
  }
  set pathsExact(v: boolean) {
    this.c.pathsExact[this.row] = v ? 1 : 0;
  }
  get journeyLength(): number {
    return this.c.journeyLength[this.row]!;
  }
  set journeyLength(v: number) {
    this.c.journeyLength[this.row] = v;
  }
  get journeyPages(): readonly string[] {
    return this.c.journeyPages[this.row]!;
  }
  set journeyPages(v: readonly string[]) {
    this.c.journeyPages[this.row] = v;
  }
  get firstPageviewAt(): number {
    return this.c.firstPageviewAt[this.row]!;
  }
  set firstPageviewAt(v: number) {
    this.c.firstPageviewAt[this.row] = v;
  }
  get lastPageviewAt(): number {
    return this.c.lastPageviewAt[this.row]!;
  }
  set lastPageviewAt(v: number) {
    this.c.lastPageviewAt[this.row] = v;
  }
  get paths(): Map<string, number> | undefined {
    return this.table.paths.get(this.row);
  }
  set paths(v: Map<string, number> | undefined) {
    if (v) this.table.paths.set(this.row, v);
    else this.table.paths.delete(this.row);
  }
  get attribution(): Readonly<Attribution> {
    return this.c.attribution[this.row]!;
  }
  attribute(from: Partial<Attribution>): void {
    this.c.attribution[this.row] = this.table.sharedAttribution(from);
  }
}

/**
 * VisitTracker's visits (same rules, same answers: the tests run both on the same hits) held as a table. A visit
 * is found by site and visitor hash in an open-addressed index (linear probing, removed keys marked until the next
 * rebuild) whose keys are the hash's two 32-bit halves and a site number. Texts are shared (SharedTexts): hits
 * reach the ingest thread as copies of their own.
 */
export class CompactVisitTracker implements VisitState {
  columns = new VisitColumns(FIRST_CAPACITY);
  /** Pathnames of visits with two pageviews or more, by row (VisitFields.paths). */
  readonly paths = new Map<number, Map<string, number>>();
  /** Rows made free by forgotten visits, to be used first; rows from `nextRow` on were never used. */
  private freeRows: number[] = [];
  private nextRow = 0;
  private visits = 0;

  // The index: per slot, the key's site number (or EMPTY, REMOVED), its hash's halves, and the row it names.
  private keySite = new Int32Array(2 * FIRST_CAPACITY);
  private keyHigh = new Uint32Array(2 * FIRST_CAPACITY);
  private keyLow = new Uint32Array(2 * FIRST_CAPACITY);
  private keyRow = new Int32Array(2 * FIRST_CAPACITY);
  /** Slots holding a key, and holding a removed key's mark. */
  private keys = 0;
  private removed = 0;
  /** Site numbers (from 1) by site id: the sites the ingest thread has seen visits of, a handful of entries. */
  private readonly siteNumbers = new Map<string, number>();

  private readonly texts = new SharedTexts();
  private attributions = new Map<string, Readonly<Attribution>>();
  private readonly cursor = new VisitRow(this);

  constructor(readonly timeoutMs = VISIT_TIMEOUT_MS) {}

  get activeVisits(): number {
    return this.visits;
  }

  /** VisitTracker.record: the visit the hit continues (under today's hash, then yesterday's) or a new one. */
  record(siteId: string, currentId: bigint, previousId: bigint | undefined, hit: VisitHit): RecordedVisit {
    const at = hit.timestamp.getTime();
    const site = this.siteNumber(siteId);
    const high = Number(currentId >> 32n);
    const low = Number(currentId & LOW_32);
    const slot = this.find(site, high, low);
    let row = slot >= 0 ? this.continuing(this.keyRow[slot]!, at) : -1;
    if (row < 0 && previousId !== undefined) {
      const previous = this.find(site, Number(previousId >> 32n), Number(previousId & LOW_32));
      if (previous >= 0) row = this.continuing(this.keyRow[previous]!, at);
    }
    if (row < 0) row = this.newRow(this.texts.of(siteId), currentId, at, randomVisitId(at));
    this.point(slot, site, high, low, row);
    const visit = this.cursor;
    visit.row = row;
    return snapshotOf(visit, applyHit(visit, hit, at, this.texts));
  }

  /** VisitTracker.inProgress: the visit a hit at `at` would continue, unchanged, or undefined. */
  inProgress(siteId: string, currentId: bigint, previousId: bigint | undefined, at: Date): RecordedVisit | undefined {
    const site = this.siteNumbers.get(siteId);
    if (site === undefined) return undefined;
    const t = at.getTime();
    for (const id of previousId === undefined ? [currentId] : [currentId, previousId]) {
      const slot = this.find(site, Number(id >> 32n), Number(id & LOW_32));
      // continuing() leaves the cursor on the row.
      if (slot >= 0 && this.continuing(this.keyRow[slot]!, t) >= 0) return snapshotOf(this.cursor, false);
    }
    return undefined;
  }

  /** VisitTracker.seed: resumes visits from storage after a restart (found by the visitor hash they started with). */
  seed(visits: readonly VisitRecord[]): void {
    for (const record of visits) {
      const site = this.siteNumber(record.siteId);
      const high = Number(record.visitorId >> 32n);
      const low = Number(record.visitorId & LOW_32);
      const slot = this.find(site, high, low);
      if (slot >= 0 && this.columns.lastSeenMs[this.keyRow[slot]!]! >= record.lastSeenAt.getTime()) continue;
      const row = this.newRow(this.texts.of(record.siteId), record.visitorId, record.startedAt.getTime(), record.visitId);
      this.cursor.row = row;
      resume(this.cursor, record, this.texts);
      this.point(slot, site, high, low, row);
    }
  }

  /**
   * The site's visits with a hit at `sinceMs` or later, as their rows will be stored: one pass over the table's
   * rows (visits of the last 30 minutes), for current visitors before the store has the newest hits.
   */
  liveVisits(siteId: string, sinceMs: number): LiveVisit[] {
    const c = this.columns;
    const out: LiveVisit[] = [];
    for (let row = 0; row < this.nextRow; row++) {
      if (c.keys[row] === 0 || c.lastSeenMs[row]! < sinceMs || c.siteId[row] !== siteId) continue;
      const a = c.attribution[row]!;
      out.push({
        visitId: c.visitId[row]!.toString(), lastSeenMs: c.lastSeenMs[row]!, pageviews: c.pageviews[row]!,
        exitHostname: c.exitHostname[row]!, exitPage: c.exitPage[row]!, referrerHostname: a.referrerHostname, referrerPathname: a.referrerPathname,
      });
    }
    return out;
  }

  /** VisitTracker.sweep: forgets visits idle for longer than the timeout at `now`; returns how many went. */
  sweep(now: Date): number {
    const before = this.visits;
    const c = this.columns;
    const idleSince = now.getTime() - this.timeoutMs;
    for (let slot = 0; slot < this.keySite.length; slot++) {
      if (this.keySite[slot]! <= EMPTY) continue;
      const row = this.keyRow[slot]!;
      if (c.lastSeenMs[row]! < idleSince) {
        this.keySite[slot] = REMOVED;
        this.keys--;
        this.removed++;
        this.release(row);
      }
    }
    if (this.columns.capacity > FIRST_CAPACITY && this.visits < this.columns.capacity / 4) this.shrink();
    else if (this.removed > this.keySite.length / 4) this.rebuild(this.keySite.length);
    return before - this.visits;
  }

  /**
   * Moves the visits into a table of half the rows (or less) once three quarters are free, so that a burst of
   * traffic does not hold its memory for good; the index is made again for the rows' new places.
   */
  private shrink(): void {
    let capacity = this.columns.capacity;
    while (capacity > FIRST_CAPACITY && this.visits < capacity / 4) capacity /= 2;
    const from = this.columns;
    const to = new VisitColumns(capacity);
    const moved = new Int32Array(this.nextRow).fill(-1);
    let next = 0;
    for (let row = 0; row < this.nextRow; row++) {
      if (from.keys[row] === 0) continue;
      moved[row] = next;
      to.copyRow(from, row, next);
      next++;
    }
    const paths = [...this.paths];
    this.paths.clear();
    for (const [row, pages] of paths) this.paths.set(moved[row]!, pages);
    for (let slot = 0; slot < this.keyRow.length; slot++) if (this.keySite[slot]! > EMPTY) this.keyRow[slot] = moved[this.keyRow[slot]!]!;
    this.columns = to;
    this.nextRow = next;
    this.freeRows = [];
    let size = 2 * FIRST_CAPACITY;
    while (2 * this.keys > size / 2) size *= 2;
    this.rebuild(size);
  }

  /** One attribution object for equal attributions, its texts shared. */
  sharedAttribution(from: Partial<Attribution>): Readonly<Attribution> {
    const a = attributionOf(from);
    let key = '';
    for (const f of ATTRIBUTION_FIELDS) {
      const text = a[f];
      // Each text with its length before it: no two attributions make one key.
      if (text !== '') key += `${f}${text.length}:${text}`;
    }
    if (key === '') return NO_ATTRIBUTION;
    const held = this.attributions.get(key);
    if (held !== undefined) return held;
    if (this.attributions.size >= MAX_SHARED_ATTRIBUTIONS) this.attributions = new Map();
    for (const f of ATTRIBUTION_FIELDS) a[f] = this.texts.of(a[f]);
    const shared = Object.freeze(a);
    this.attributions.set(key, shared);
    return shared;
  }

  /** The row if a hit at `at` continues its visit, else -1. */
  private continuing(row: number, at: number): number {
    this.cursor.row = row;
    return continues(this.cursor, at, this.timeoutMs) ? row : -1;
  }

  private siteNumber(siteId: string): number {
    let n = this.siteNumbers.get(siteId);
    if (n === undefined) this.siteNumbers.set(siteId, (n = this.siteNumbers.size + 1));
    return n;
  }

  /** The index slot holding the key, or -1. */
  private find(site: number, high: number, low: number): number {
    const mask = this.keySite.length - 1;
    for (let slot = slotOf(site, low, mask); ; slot = (slot + 1) & mask) {
      const s = this.keySite[slot]!;
      if (s === EMPTY) return -1;
      if (s === site && this.keyLow[slot] === low && this.keyHigh[slot] === high) return slot;
    }
  }

  /** Makes the key name `row`: at `slot` where find() found it (its old row losing a key), else as a new key. */
  private point(slot: number, site: number, high: number, low: number, row: number): void {
    if (slot >= 0) {
      const old = this.keyRow[slot]!;
      if (old === row) return;
      this.keyRow[slot] = row;
      this.columns.keys[row]!++;
      this.release(old);
      return;
    }
    // At most half the slots hold keys or marks, so a probe ends soon at an empty slot.
    if (2 * (this.keys + this.removed + 1) > this.keySite.length) {
      this.rebuild(2 * (this.keys + 1) > this.keySite.length / 2 ? 2 * this.keySite.length : this.keySite.length);
    }
    const mask = this.keySite.length - 1;
    let at = slotOf(site, low, mask);
    while (this.keySite[at]! > EMPTY) at = (at + 1) & mask;
    if (this.keySite[at] === REMOVED) this.removed--;
    this.keySite[at] = site;
    this.keyHigh[at] = high;
    this.keyLow[at] = low;
    this.keyRow[at] = row;
    this.keys++;
    this.columns.keys[row]!++;
  }

  /** Takes a key from `row`; the row's visit is forgotten when no key names it. */
  private release(row: number): void {
    const c = this.columns;
    if (--c.keys[row]! > 0) return;
    c.siteId[row] = '';
    c.entryPage[row] = '';
    c.exitPage[row] = '';
    c.exitHostname[row] = '';
    c.attribution[row] = NO_ATTRIBUTION;
    c.journeyPages[row] = NO_JOURNEY_PAGES;
    this.paths.delete(row);
    this.freeRows.push(row);
    this.visits--;
  }

  /** The index again with `size` slots, without removed keys' marks. */
  private rebuild(size: number): void {
    const [sites, highs, lows, rows] = [this.keySite, this.keyHigh, this.keyLow, this.keyRow];
    this.keySite = new Int32Array(size);
    this.keyHigh = new Uint32Array(size);
    this.keyLow = new Uint32Array(size);
    this.keyRow = new Int32Array(size);
    this.removed = 0;
    const mask = size - 1;
    for (let i = 0; i < sites.length; i++) {
      if (sites[i]! <= EMPTY) continue;
      let at = slotOf(sites[i]!, lows[i]!, mask);
      while (this.keySite[at] !== EMPTY) at = (at + 1) & mask;
      this.keySite[at] = sites[i]!;
      this.keyHigh[at] = highs[i]!;
      this.keyLow[at] = lows[i]!;
      this.keyRow[at] = rows[i]!;
    }
  }

  /** A row for a new visit (no key names it yet), its fields as a visit's before its first hit. */
  private newRow(siteId: string, visitorId: bigint, startedMs: number, visitId: bigint): number {
    let row = this.freeRows.pop();
    if (row === undefined) {
      if (this.nextRow === this.columns.capacity) this.columns = new VisitColumns(2 * this.columns.capacity, this.columns);
      row = this.nextRow++;
    }
    const c = this.columns;
    c.siteId[row] = siteId;
    c.visitorId[row] = visitorId;
    c.visitId[row] = visitId;
    c.startedMs[row] = startedMs;
    c.lastSeenMs[row] = startedMs;
    c.firstPageviewAt[row] = Infinity;
    c.lastPageviewAt[row] = -Infinity;
    c.pageviews[row] = 0;
    c.events[row] = 0;
    c.pathsExact[row] = 1;
    c.journeyLength[row] = 0;
    c.journeyPages[row] = NO_JOURNEY_PAGES;
    c.keys[row] = 0;
    this.visits++;
    return row;
  }
}

/** Where a key's probe starts: the hash's low half is already uniform (it is part of a SHA-256). */
const slotOf = (site: number, low: number, mask: number) => (low ^ Math.imul(site, 0x9e3779b1)) & mask;
