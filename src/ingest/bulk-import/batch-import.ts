// The set-based NDJSON import: a chunk of lines in, stored rows out, with the live pipeline's rules and functions
// (src/ingest/pipeline.ts) applied once per distinct value instead of once per hit. Page URLs, referrers, user
// agents, addresses and visitor hashes repeat across hits, so each is worked out once and remembered; the
// order-dependent parts (a multi-domain site's hosts, goals made on first use, salts, visits) follow the hits in
// time order exactly as the pipeline would. A test imports the same file both ways and compares every row.

import { attributionOf, type IncomingHit } from '../../domain/hits.js';
import { boundProps } from '../../domain/props.js';
import type { DropReason } from '../../metrics.js';
import { agentCsv, attributionCsv, csvText, hitCsvLineOf, pageCsv, propsCsv, type HitCsvParts } from '../../store/event-csv.js';
import type { Site } from '../../store/types.js';
import { campaignFields, type CampaignFields } from '../enrich/campaign.js';
import { columnsOf, hitAt, placeAt, placer, siteIdAt, timeOrder, type ChunkColumns } from './chunk-columns.js';
import type { GeoLookup } from '../enrich/geo.js';
import { parseReferrer, type ReferrerFields } from '../enrich/referrer.js';
import { normalizePage } from '../enrich/url.js';
import { isBotUserAgent, parseUserAgent } from '../enrich/user-agent.js';
import { DROP_MESSAGES, MAX_REPORTED_ERRORS, type ImportResult } from '../line-import.js';
import { bareHost, excludedHostTest, InvalidHit, MAX_EVENT_NAME, MAX_SITE_HOSTS } from '../pipeline.js';
import { CACHE_ENTRIES, remembered } from './remembered.js';
import { utcDay } from '../../domain/time.js';
import type { DaySalts, EphemeralSalts } from '../salts.js';
import { newCounterDeltas, type CounterDeltas } from '../pipeline.js';
import { visitorHash } from '../visitor.js';
import { VisitTracker, type LiveVisit, type VisitHit } from '../visits.js';
import { EncodedLines } from './encoded-lines.js';

/** Sites and goals, asked for once per chunk (the ingest side answers from its cached directory). */
export interface ImportLookups {
  /** The sites with these ids (undefined: no such site). */
  sites(ids: readonly string[]): Promise<Map<string, Site | undefined>>;
  /**
   * The goal name for each (site, event name), created on first use as the pipeline does, asked in the order the
   * hits first use them; undefined where the site has the maximum number of goals.
   */
  goals(names: readonly [siteId: string, name: string][]): Promise<(string | undefined)[]>;
}

export interface BatchImportDeps {
  geo: GeoLookup;
  /** The import's own salts (never stored), shared by its chunks. */
  salts: EphemeralSalts;
  excludedHosts?: readonly string[];
}

export interface BatchResult {
  result: ImportResult;
  /** The chunk's hits received, recorded and dropped, for the process's metrics. */
  counts: CounterDeltas;
}

/**
 * Takes a slice of a chunk's rows: its hits in time order, each a CSV line (HIT_CSV_COLUMNS, src/store/event-csv.ts)
 * encoded in `hits` (which the import clears and reuses once the sink is done with it), and every visit they
 * touched, each as the import's one object for it, which later hits change (a sink that writes a visit writes its
 * state at that time). A chunk's slices come in order; a later slice may hold the same visits.
 */
export type RowsSink = (hits: EncodedLines, visits: LiveVisit[]) => Promise<void> | void;

/**
 * Stored hits per slice: the rows of one slice are written while the next is worked out. Large, because DuckDB
 * stores one large insert for a fraction of the cost of many small ones (docs/benchmarks.md, "Import").
 */
export const SLICE_HITS = 100_000;

interface Page {
  hostname: string;
  pathname: string;
  campaign: CampaignFields;
  /** hostname and pathname as CSV fields (pageCsv) */
  csv: string;
  /** Whether the host is one of the excluded ones, once asked (the same for every hit on the page). */
  excluded?: boolean;
}

/**
 * A visitor's hash under the salt of the day being imported and, once a hit needed it, under the day before's (the
 * cache of them starts afresh with each day, so every entry is the day's).
 */
interface KnownVisitor {
  userAgent: string;
  current: bigint;
  /** Whether `previous` was worked out (it stays undefined where the day before has no salt). */
  previousMade: boolean;
  previous: bigint | undefined;
}

/**
 * A site's visitors by address: the one visitor seen at an address, or (once a second user agent came from it) the
 * address's visitors by user agent. Most addresses have one visitor, and a Map for each was most of what a visitor
 * kept in memory, which every young-generation collection copied.
 */
type ByAddress = Map<string, KnownVisitor | Map<string, KnownVisitor>>;

/** The visitor of `userAgent` at `ip`, if known. */
function knownAt(byAddress: ByAddress, ip: string, userAgent: string): KnownVisitor | undefined {
  const found = byAddress.get(ip);
  if (found === undefined || found instanceof Map) return found?.get(userAgent);
  return found.userAgent === userAgent ? found : undefined;
}

/** Remembers `known` as the visitor of its user agent at `ip`. */
function rememberAt(byAddress: ByAddress, ip: string, known: KnownVisitor): void {
  const found = byAddress.get(ip);
  if (found instanceof Map) found.set(known.userAgent, known);
  else if (found === undefined || found.userAgent === known.userAgent) byAddress.set(ip, known);
  else byAddress.set(ip, new Map([[found.userAgent, found], [known.userAgent, known]]));
}

/** The value under `key` in `map`, made empty on first use. */
function inner<K, V>(map: Map<K, Map<string, V>>, key: K): Map<string, V> {
  let found = map.get(key);
  if (!found) map.set(key, (found = new Map()));
  return found;
}

/**
 * What the checks that need no goal found out about the hits that passed them, for pass 3, one array each: an
 * object a hit lived until its chunk was done, and every young-generation collection meanwhile copied it.
 */
interface Checked {
  sites: Site[];
  pages: Page[];
  referrers: ReferrerFields[];
}

/** A page URL's parts (null: not an absolute http(s) URL). */
function pageOf(url: string): Page | null {
  const normalized = normalizePage(url);
  if (!normalized) return null;
  const { hostname, pathname } = normalized;
  return { hostname, pathname, campaign: campaignFields(normalized.query), csv: pageCsv(hostname, pathname) };
}

/** A user agent's fields as a hit's CSV fields. */
const agentFields = (userAgent: string) => agentCsv(parseUserAgent(userAgent));

/** Counts a dropped hit; the message its line gets. */
function dropped(counts: CounterDeltas, reason: DropReason): string {
  counts.dropped[reason] = (counts.dropped[reason] ?? 0) + 1;
  return DROP_MESSAGES[reason] ?? reason;
}

const DAY_MS = 86_400_000;


/** One import's chunks, in the order they arrive: its visits continue from chunk to chunk. */
export class BatchImport {
  private readonly visits = new VisitTracker();
  /** Hosts each multi-domain site has had pageviews on, as HitPipeline keeps them. */
  private readonly siteHosts = new Map<string, Set<string>>();
  private readonly excluded: (host: string) => boolean;
  private readonly pages = new Map<string, Page | null>();
  /** Referrers read against a page host, by host and then referrer (no key text made a hit). */
  private readonly referrers = new Map<string, Map<string, ReferrerFields>>();
  /** Each address's place and each user agent's fields, as the CSV fields of a hit's line. */
  private readonly places = new Map<string, string>();
  private readonly agents = new Map<string, string>();
  /** Whether each user agent is a bot: isBotUserAgent's own cache moves its entry to the end at every hit. */
  private readonly bots = new Map<string, boolean>();
  /**
   * Each visitor's hashes (and their VisitTracker keys) under the salts of the day it was last seen, by site (and
   * domain, where the site counts domains apart), address and user agent: nested, so that no key text is made per
   * hit (a key of all four was most of a user agent long, made and dropped for every hit).
   */
  private readonly visitors = new Map<string, ByAddress>();
  private visitorEntries = 0;
  private day = NaN;
  private salts: DaySalts | undefined;

  /** Objects written over for every row (chunk() and stored()): see there. */
  private readonly scratchHit: IncomingHit = { type: 'pageview', siteId: '', timestamp: new Date(0), url: '', referrer: '', userAgent: '', ip: '' };
  private readonly scratchVisitHit: VisitHit = { type: 'pageview', timestamp: new Date(0), hostname: '', pathname: '', ...attributionOf({}) };
  private readonly scratchParts: HitCsvParts = { site: '', page: '', attribution: '', agent: '', place: '' };
  /** The last hit's site id and its CSV field (an import's hits are mostly one site's). */
  private siteCsv = { id: '', csv: '' };
  /** Each slice's hit lines, encoded as they are made. */
  private readonly lines = new EncodedLines();
  /** The visit of the last hit stored(). */
  private storedVisit: LiveVisit | undefined;

  /** An address's place as a hit's CSV fields. */
  private readonly place: (ip: string) => string;

  constructor(private readonly deps: BatchImportDeps) {
    this.excluded = excludedHostTest(deps.excludedHosts);
    this.place = placer(deps.geo);
  }

  /** Visits the import still holds (those that a later hit may continue). */
  get activeVisits(): number {
    return this.visits.activeVisits;
  }

  /**
   * Imports `lines` (the first has number `firstLine`), or the same lines as the reader thread parsed them
   * (columns), handing the rows to `sink` a slice at a time; invalid lines and dropped hits are reported by line.
   * `sliceHits` is a slice's size, or asked before each slice (so that a sink can end its slices where its loads end).
   */
  async chunk(lines: readonly string[] | ChunkColumns, firstLine: number, lookups: ImportLookups, sink: RowsSink, sliceHits: number | (() => number) = SLICE_HITS): Promise<BatchResult> {
    const nextSlice = typeof sliceHits === 'number' ? () => sliceHits : sliceHits;
    const counts: CounterDeltas = newCounterDeltas();
    const columns = 'texts' in lines ? lines : columnsOf(lines, firstLine);
    const errors = columns.errors;
    // Oldest first; equal timestamps in file order (as importLines does). The chunk's hits stay in its columns, each
    // made as an object when a pass needs it: kept as objects, they outlived young-generation collections, each of
    // which copied them.
    const order = timeOrder(columns);
    // Chunks come oldest first (the CLI sorts the whole file): no hit of this chunk or a later one can continue a
    // visit idle for longer than the timeout before this chunk's first hit. Forgetting those keeps the import's
    // memory to the visits of about half an hour instead of every visit it made (about 1 GB for a million hits).
    if (order.length > 0) this.visits.sweep(new Date(columns.times[order[0]!]!));

    const siteIds = new Set<string>();
    for (let k = 0; k < order.length; k++) siteIds.add(siteIdAt(columns, order[k]!));
    const sites = await lookups.sites([...siteIds]);
    // The rows that passed the checks, in time order, and what the checks found for each.
    const passed = new Uint32Array(order.length);
    const checked: Checked = { sites: [], pages: [], referrers: [] };
    let passes = 0;
    // The (site, event name) pairs of the chunk's events in the order of their first use, and each pair's place in
    // that list, by site and name.
    const goalsAsked: [string, string][] = [];
    const goalIndex = new Map<string, Map<string, number>>();
    // One hit object (and Date) written over for every row, in both passes: nothing keeps a row's hit beyond its
    // turn, and two a row were 6% of the bytes the thread allocated.
    const hit = this.scratchHit;
    // Indexed loops: iterating the typed array or entries() made an object a step.
    for (let k = 0; k < order.length; k++) {
      const i = order[k]!;
      hitAt(columns, i, hit);
      try {
        counts.received[hit.type]++;
        const drop = this.check(hit, sites.get(hit.siteId), checked);
        if (drop !== undefined) {
          errors.push({ line: columns.lines[i]!, message: dropped(counts, drop) });
          continue;
        }
        passed[passes++] = i;
        if (hit.type === 'event') {
          const bySite = inner(goalIndex, hit.siteId);
          if (!bySite.has(hit.eventName!)) bySite.set(hit.eventName!, goalsAsked.push([hit.siteId, hit.eventName!]) - 1);
        }
      } catch (err) {
        if (!(err instanceof InvalidHit)) throw err;
        errors.push({ line: columns.lines[i]!, message: err.message });
      }
    }

    const goalNames = goalsAsked.length > 0 ? await lookups.goals(goalsAsked) : [];

    let imported = 0;
    let slice = nextSlice();
    const hits = this.lines;
    hits.clear();
    // The visits the slice's hits touched: each is the tracker's one object for the visit, which its later hits
    // change (VisitTracker.recordLive), so the object is its newest state.
    let visits = new Set<LiveVisit>();
    for (let k = 0; k < passes; k++) {
      const i = passed[k]!;
      hitAt(columns, i, hit);
      let eventName = '';
      if (hit.type === 'event') {
        const goal = goalNames[goalIndex.get(hit.siteId)!.get(hit.eventName!)!];
        if (goal === undefined) {
          errors.push({ line: columns.lines[i]!, message: dropped(counts, 'goal-limit') });
          continue;
        }
        eventName = goal;
      }
      hits.push(this.stored(hit, checked.sites[k]!, checked.pages[k]!, checked.referrers[k]!, placeAt(columns, i), eventName));
      visits.add(this.storedVisit!);
      counts.recorded[hit.type]++;
      imported++;
      if (hits.length >= slice) {
        await sink(hits, [...visits]);
        hits.clear();
        visits = new Set();
        slice = nextSlice();
      }
    }
    if (hits.length > 0) await sink(hits, [...visits]);
    errors.sort((a, b) => a.line - b.line);
    return { result: { imported, rejected: errors.length, errors: errors.slice(0, MAX_REPORTED_ERRORS) }, counts };
  }

  /**
   * HitPipeline.process up to the goal: the checks and drops in its order; a drop reason, or undefined once what they
   * found is added to `checked`.
   */
  private check(hit: IncomingHit, site: Site | undefined, checked: Checked): DropReason | undefined {
    if (hit.type === 'event' && (!hit.eventName || hit.eventName.length > MAX_EVENT_NAME)) {
      throw new InvalidHit(`event name must be 1 to ${MAX_EVENT_NAME} characters`);
    }
    if (hit.value !== undefined && (!Number.isSafeInteger(hit.value) || hit.value < 0)) {
      throw new InvalidHit('value must be a whole, non-negative number of cents');
    }
    const page = this.page(hit.url);
    if (!page) throw new InvalidHit('the page URL must be an absolute http(s) URL');
    if (remembered(this.bots, hit.userAgent, isBotUserAgent)) return 'bot';
    const hosts = site?.multiDomain ? this.hostsOf(site.id) : undefined;
    // A multi-domain site's hosts grow as its pageviews arrive: its referrers are read against them as they are.
    const referrer = hosts
      ? parseReferrer(hit.referrer, page.hostname, [...hosts])
      : this.referrer(hit.referrer, page.hostname);
    if (!site) return 'unknown-site';
    if (hosts && hit.type === 'pageview' && hosts.size < MAX_SITE_HOSTS) hosts.add(page.hostname);
    if ((page.excluded ??= this.excluded(bareHost(page.hostname)))) return 'excluded-host';
    checked.sites.push(site);
    checked.pages.push(page);
    checked.referrers.push(referrer);
    return undefined;
  }

  /**
   * The rest of HitPipeline.process: the hit's salts, visitor hash and visit, and its stored row as a CSV line; the
   * visit is `storedVisit` until the next hit. The objects are written out field by field: spreading five objects
   * into one took V8 over 20 µs a hit. What the visit tracker and the line are given is written over one object for
   * every hit (neither keeps it).
   */
  private stored(hit: IncomingHit, site: Site, page: Page, r: ReferrerFields, place: string | undefined, eventName: string): string {
    const { campaign: k } = page;
    const agent = remembered(this.agents, hit.userAgent, agentFields);
    place ??= remembered(this.places, hit.ip, this.place);
    const known = this.visitor(hit, site, page);
    const v = this.scratchVisitHit;
    v.type = hit.type;
    v.timestamp = hit.timestamp;
    v.hostname = page.hostname;
    v.pathname = page.pathname;
    v.referrerHostname = r.referrerHostname;
    v.referrerPathname = r.referrerPathname;
    v.referrerSource = r.referrerSource;
    v.utmCampaign = k.utmCampaign;
    v.utmContent = k.utmContent;
    v.utmMedium = k.utmMedium;
    v.utmSource = k.utmSource;
    v.utmTerm = k.utmTerm;
    v.ref = k.ref;
    v.keyword = k.keyword;
    const visit = (this.storedVisit = this.visits.recordLive(site.id, known.current, known.previous, v));
    // The visit's attribution as CSV fields, made at its first hit (it never changes after) and kept with the visit:
    // the ten fields of every hit's line were most of the time its line took.
    const attribution = (visit.memo ??= attributionCsv(visit));
    const parts = this.scratchParts;
    if (site.id !== this.siteCsv.id) this.siteCsv = { id: site.id, csv: csvText(site.id) };
    parts.site = this.siteCsv.csv;
    parts.page = page.csv;
    parts.attribution = attribution;
    parts.agent = agent;
    parts.place = place;
    // The fields storedHitOf (src/ingest/pipeline.ts) gives the live pipeline's row, as hitCsvLine writes them (the
    // equivalence test compares the rows both store).
    return hitCsvLineOf(
      parts,
      hit.type,
      hit.timestamp.getTime(),
      known.current,
      visit.visitId,
      eventName,
      hit.type === 'event' ? (hit.value ?? 0) : 0,
      this.visits.lastFirstView,
      propsCsv(hit.props === undefined ? undefined : boundProps(hit.props)),
    );
  }

  private page(url: string): Page | undefined {
    return remembered(this.pages, url, pageOf) ?? undefined;
  }

  /** A referrer as read against a page host, worked out once per pair (up to CACHE_ENTRIES per host). */
  private referrer(referrer: string, hostname: string): ReferrerFields {
    const known = inner(this.referrers, hostname);
    // Looked up first so that the closure over the host is made only on a miss.
    return known.get(referrer) ?? remembered(known, referrer, (r) => parseReferrer(r, hostname));
  }

  /** The hit's visitor hashes under its day's salt and the day before's, as HitPipeline makes them. */
  private visitor(hit: IncomingHit, site: Site, page: Page): KnownVisitor {
    const day = Math.floor(hit.timestamp.getTime() / DAY_MS);
    // Hits come oldest first: the salts change when the day does (a day's salt appears with its first hit).
    const newDay = day !== this.day;
    if (newDay) {
      this.day = day;
      this.salts = this.deps.salts.saltsForDay(utcDay(hit.timestamp));
    }
    // Hashes under older salts are never used again; the cache starts afresh, too, once it holds CACHE_ENTRIES
    // visitors.
    if (newDay || this.visitorEntries >= CACHE_ENTRIES) {
      this.visitors.clear();
      this.visitorEntries = 0;
    }
    const salts = this.salts!;
    const domain = site.multiDomain && site.multiDomainOption === 'separate' ? page.hostname : undefined;
    const byAddress = inner(this.visitors, domain === undefined ? site.id : `${site.id}\0${domain}`);
    let known = knownAt(byAddress, hit.ip, hit.userAgent);
    if (!known) {
      const current = visitorHash(salts.current, site.id, hit.ip, hit.userAgent, domain);
      known = { userAgent: hit.userAgent, current, previousMade: false, previous: undefined };
      rememberAt(byAddress, hit.ip, known);
      this.visitorEntries++;
    }
    // The hash under yesterday's salt finds a visit begun yesterday, which the hit continues only if that visit's
    // last hit came within the timeout before it. Hits come oldest first, and a visit that a hit of today continued
    // is found under today's hash first; so past the day's first timeout no hit can continue a visit under
    // yesterday's hash, and the hash (half of the import's hashing) is made only for hits before then.
    if (!known.previousMade && hit.timestamp.getTime() - day * DAY_MS <= this.visits.timeoutMs) {
      if (salts.previous !== undefined) known.previous = visitorHash(salts.previous, site.id, hit.ip, hit.userAgent, domain);
      known.previousMade = true;
    }
    return known;
  }

  private hostsOf(siteId: string): Set<string> {
    let hosts = this.siteHosts.get(siteId);
    if (!hosts) this.siteHosts.set(siteId, (hosts = new Set()));
    return hosts;
  }
}
