// Enrichment: turns an incoming hit into the attributes Plumb stores (page, referrer, campaign, device, place).
// Pure apart from the geo databases loaded once at creation; bot filtering is the collector's job.

import type { HitAttributes, IncomingHit } from '../../domain/hits.js';
import { BoundedCache } from './cache.js';
import { campaignFields } from './campaign.js';
import { GeoLookup } from './geo.js';
import { parseReferrer, type ReferrerFields } from './referrer.js';
import { normalizePage } from './url.js';
import { parseUserAgent } from './user-agent.js';

export { isBotUserAgent } from './user-agent.js';
export { GeoLookup } from './geo.js';

export interface EnrichOptions {
  /** Other hosts of the same site whose referrals are internal navigation (e.g. a multi-domain site). */
  sameSiteHosts?: string[];
}

/** Referrers longer than this are rare and not worth a cache slot. */
const MAX_CACHED_REFERRER = 1024;

export class Enricher {
  /**
   * Parsed referrers by referrer and page hostname: a site's hits come from a few referrers over and over, and
   * each parse is two URL parses (the referrer's and the page host's), about 2 µs of a hit on the ingest thread.
   */
  private readonly referrers = new BoundedCache<string, ReferrerFields>(2_000);

  private constructor(private readonly geo: GeoLookup) {}

  static async create(): Promise<Enricher> {
    return new Enricher(await GeoLookup.open());
  }

  /** The stored attributes of a hit; undefined when its page URL is not an absolute http(s) URL. */
  enrich(hit: IncomingHit, options: EnrichOptions = {}): HitAttributes | undefined {
    const page = normalizePage(hit.url);
    if (!page) return undefined;
    const referrer = this.referrer(hit.referrer, page.hostname, options.sameSiteHosts);
    const campaign = campaignFields(page.query);
    const ua = parseUserAgent(hit.userAgent);
    const place = this.geo.lookup(hit.ip);
    // Written out rather than spread: spreading four objects into one is a measurable part of a hit's cost.
    return {
      hostname: page.hostname,
      pathname: page.pathname,
      referrerHostname: referrer.referrerHostname,
      referrerPathname: referrer.referrerPathname,
      referrerSource: referrer.referrerSource,
      utmCampaign: campaign.utmCampaign,
      utmContent: campaign.utmContent,
      utmMedium: campaign.utmMedium,
      utmSource: campaign.utmSource,
      utmTerm: campaign.utmTerm,
      ref: campaign.ref,
      keyword: campaign.keyword,
      browser: ua.browser,
      operatingSystem: ua.operatingSystem,
      deviceType: ua.deviceType,
      countryCode: place.countryCode,
      region: place.region,
      state: place.state,
      city: place.city,
    };
  }

  /** parseReferrer, remembered for sites without other same-site hosts (their answer depends on those too). */
  private referrer(referrer: string, pageHostname: string, sameSiteHosts: string[] | undefined): ReferrerFields {
    if (referrer === '' || (sameSiteHosts !== undefined && sameSiteHosts.length > 0) || referrer.length > MAX_CACHED_REFERRER) {
      return parseReferrer(referrer, pageHostname, sameSiteHosts);
    }
    // NUL cannot be in a hostname with scheme, so no two pairs share a key.
    const key = `${pageHostname}\0${referrer}`;
    let fields = this.referrers.get(key);
    if (fields === undefined) this.referrers.set(key, (fields = parseReferrer(referrer, pageHostname)));
    return fields;
  }
}
