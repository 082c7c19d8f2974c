// One hit from arrival to the write buffer: checks, enrichment, the anonymous visitor, its visit.
// Live collection and imports run the same pipeline, with their own salts and visit state.

import { MAX_ENGAGED_MS, type HitAttributes, type HitType, type IncomingHit, type StoredHit, type VisitRecord } from '../domain/hits.js';
import { boundProps } from '../domain/props.js';
import type { DropReason, Metrics } from '../metrics.js';
import type { Enricher } from './enrich/index.js';
import { isBotUserAgent } from './enrich/index.js';
import type { SaltSource } from './salts.js';
import type { SiteDirectory } from './site-directory.js';
import { visitorHash } from './visitor.js';
import type { VisitState } from './visits.js';

/** A hit that cannot be understood: the collector answers 400 and stores nothing. */
export class InvalidHit extends Error {}

/** Why a hit was not recorded (src/metrics.ts; engagement never starts a visit): counted in plumb_hits_dropped_total. */
export type PipelineDrop = DropReason;

export type Outcome = { recorded: true } | { recorded: false; reason: PipelineDrop };

/** Where processed hits go: the write buffer, or (live) the hit log first, then the buffer. */
export interface HitSink {
  add(hit: StoredHit, visit: VisitRecord): void | Promise<void>;
}

/** What the pipeline counts: the process's Metrics, or (on the ingest thread) deltas sent to them. */
export interface HitCounters {
  received(type: HitType): void;
  recorded(type: HitType): void;
  dropped(reason: PipelineDrop): void;
}

/** Counts to add to the process's metrics, from a thread that keeps its own (the ingest and import threads). */
export interface CounterDeltas {
  received: Record<HitType, number>;
  recorded: Record<HitType, number>;
  dropped: Partial<Record<PipelineDrop, number>>;
}

export const newCounterDeltas = (): CounterDeltas => ({
  received: { pageview: 0, event: 0, engagement: 0 },
  recorded: { pageview: 0, event: 0, engagement: 0 },
  dropped: {},
});

/** HitCounters straight into the process's Metrics. */
export const metricsCounters = (metrics: Metrics): HitCounters => ({
  received: (type) => metrics.hitsReceived.inc({ type }),
  recorded: (type) => metrics.hitsRecorded.inc({ type }),
  dropped: (reason) => metrics.hitsDropped.inc({ reason }),
});

/** Whether `n` is a whole number from 0 to `max`. */
const wholeUpTo = (n: number | undefined, max: number) => n === undefined || (Number.isSafeInteger(n) && n >= 0 && n <= max);

export interface PipelineDeps {
  enricher: Enricher;
  sites: SiteDirectory;
  salts: SaltSource;
  visits: VisitState;
  sink: HitSink;
  counters: HitCounters;
  /** Page hostnames (without scheme) never recorded; `*.example.com` matches subdomains. */
  excludedHosts?: readonly string[];
}

export const MAX_EVENT_NAME = 255;

/** At most this many hosts remembered per multi-domain site. */
export const MAX_SITE_HOSTS = 100;

/** A test of page hosts (without scheme or port) against `excludedHosts` patterns; `*.example.com` matches subdomains. */
export function excludedHostTest(patterns: readonly string[] = []): (host: string) => boolean {
  const tests = patterns.map((pattern) => {
    const p = pattern.toLowerCase();
    return p.startsWith('*.') ? (host: string) => host.endsWith(p.slice(1)) || host === p.slice(2) : (host: string) => host === p;
  });
  return (host) => tests.some((matches) => matches(host));
}

/** A page hostname (with scheme, maybe a port) as excludedHosts patterns see it. */
export const bareHost = (hostname: string) => hostname.replace(/^https?:\/\//, '').replace(/:\d+$/, '');

/**
 * The stored row of a hit, shared by the live pipeline and the batch import so both store exactly the same:
 * written out field by field (spreading its parts into one object was a measurable part of a hit's cost).
 * Attribution belongs to the visit: every hit carries its first hit's (docs/reports.md, "Attribution"; visit
 * states written by older versions get their missing fields as '' when they are read, SharedVisitTracker).
 * `firstView`: whether the hit is its visit's first view of its page.
 */
export function storedHitOf(
  hit: IncomingHit,
  siteId: string,
  visitorId: bigint,
  visit: VisitRecord,
  firstView: boolean,
  eventName: string,
  page: Pick<HitAttributes, 'hostname' | 'pathname'>,
  ua: Pick<HitAttributes, 'browser' | 'operatingSystem' | 'deviceType'>,
  place: Pick<HitAttributes, 'countryCode' | 'region' | 'state' | 'city'>,
): StoredHit {
  // The visit's attribution (its first hit's), field by field: a copy of it was a measurable share of an import.
  const stored: StoredHit = {
    siteId,
    type: hit.type,
    timestamp: hit.timestamp,
    // The hit's own day's signature (not the visit's): distinct ones count visitor-days.
    visitorId,
    visitId: visit.visitId,
    hostname: page.hostname,
    pathname: page.pathname,
    referrerHostname: visit.referrerHostname,
    referrerPathname: visit.referrerPathname,
    referrerSource: visit.referrerSource,
    utmCampaign: visit.utmCampaign,
    utmContent: visit.utmContent,
    utmMedium: visit.utmMedium,
    utmSource: visit.utmSource,
    utmTerm: visit.utmTerm,
    ref: visit.ref,
    keyword: visit.keyword,
    browser: ua.browser,
    operatingSystem: ua.operatingSystem,
    deviceType: ua.deviceType,
    countryCode: place.countryCode,
    region: place.region,
    state: place.state,
    city: place.city,
    eventName,
    value: hit.type === 'event' ? (hit.value ?? 0) : 0,
    firstView,
  };
  if (hit.type === 'engagement') {
    // Absent means 0 (StoredHit): only non-zero values are carried, so rows read back compare equal.
    if (hit.scrollDepth) stored.scrollDepth = hit.scrollDepth;
    if (hit.engagedMs) stored.engagedMs = hit.engagedMs;
    return stored;
  }
  const props = hit.props === undefined ? [] : boundProps(hit.props);
  if (props.length > 0) stored.props = props;
  return stored;
}

export class HitPipeline {
  private readonly excluded: (host: string) => boolean;
  /** Hosts each multi-domain site has had pageviews on: moving between them is not a referral. */
  private readonly siteHosts = new Map<string, Set<string>>();

  constructor(private readonly deps: PipelineDeps) {
    this.excluded = excludedHostTest(deps.excludedHosts);
  }

  async process(hit: IncomingHit): Promise<Outcome> {
    const { counters } = this.deps;
    counters.received(hit.type);
    if (hit.type === 'event' && (!hit.eventName || hit.eventName.length > MAX_EVENT_NAME)) {
      throw new InvalidHit(`event name must be 1 to ${MAX_EVENT_NAME} characters`);
    }
    if (hit.value !== undefined && (!Number.isSafeInteger(hit.value) || hit.value < 0)) {
      throw new InvalidHit('value must be a whole, non-negative number of cents');
    }
    if (hit.type === 'engagement') {
      if (!wholeUpTo(hit.scrollDepth, 100)) throw new InvalidHit('scroll depth must be a whole number from 0 to 100');
      if (!wholeUpTo(hit.engagedMs, MAX_ENGAGED_MS)) throw new InvalidHit(`engaged time must be a whole number of ms from 0 to ${MAX_ENGAGED_MS}`);
    }
    if (isBotUserAgent(hit.userAgent)) {
      if (!this.deps.enricher.enrich(hit)) throw new InvalidHit('the page URL must be an absolute http(s) URL');
      return this.drop('bot');
    }
    const site = await this.deps.sites.site(hit.siteId);
    const hosts = site?.multiDomain ? this.hostsOf(site.id) : undefined;
    const attributes = this.deps.enricher.enrich(hit, hosts ? { sameSiteHosts: [...hosts] } : {});
    if (!attributes) throw new InvalidHit('the page URL must be an absolute http(s) URL');
    if (!site) return this.drop('unknown-site');
    if (hosts && hit.type === 'pageview' && hosts.size < MAX_SITE_HOSTS) hosts.add(attributes.hostname);
    if (this.excluded(bareHost(attributes.hostname))) return this.drop('excluded-host');

    let eventName = '';
    if (hit.type === 'event') {
      const goal = await this.deps.sites.goalByName(site.id, hit.eventName!);
      if (!goal) return this.drop('goal-limit');
      eventName = goal.name;
    }

    const salts = await this.deps.salts.saltsFor(hit.timestamp);
    // Multi-domain sites reporting domains separately count each domain's visitors on their own.
    const domain = site.multiDomain && site.multiDomainOption === 'separate' ? attributes.hostname : undefined;
    const current = visitorHash(salts.current, site.id, hit.ip, hit.userAgent, domain);
    const previous = salts.previous === undefined ? undefined : visitorHash(salts.previous, site.id, hit.ip, hit.userAgent, domain);
    if (hit.type === 'engagement') {
      // Stored with the visit's state as it is (the record and the stores want one), which it leaves unchanged.
      const visit = await this.deps.visits.inProgress(site.id, current, previous, hit.timestamp);
      if (!visit) return this.drop('no-visit');
      await this.deps.sink.add(storedHitOf(hit, site.id, current, visit, false, '', attributes, attributes, attributes), visit);
      counters.recorded(hit.type);
      return { recorded: true };
    }
    const visit = await this.deps.visits.record(site.id, current, previous, { ...attributes, type: hit.type, timestamp: hit.timestamp });

    const stored = storedHitOf(hit, site.id, current, visit, visit.firstView, eventName, attributes, attributes, attributes);
    await this.deps.sink.add(stored, visit);
    counters.recorded(hit.type);
    return { recorded: true };
  }

  private hostsOf(siteId: string): Set<string> {
    let hosts = this.siteHosts.get(siteId);
    if (!hosts) this.siteHosts.set(siteId, (hosts = new Set()));
    return hosts;
  }

  private drop(reason: PipelineDrop): Outcome {
    this.deps.counters.dropped(reason);
    return { recorded: false, reason };
  }
}
