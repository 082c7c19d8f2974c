// Enrichment: turns an incoming hit into the attributes Plumb stores (page, referrer, campaign, device, place).
// Pure apart from the geo databases loaded once at creation; bot filtering is the collector's job.

import type { HitAttributes, IncomingHit } from '../../domain/hits.js';
import { campaignFields } from './campaign.js';
import { GeoLookup } from './geo.js';
import { parseReferrer } from './referrer.js';
import { normalizePage } from './url.js';
import { parseUserAgent } from './user-agent.js';

export { isBotUserAgent } from './user-agent.js';
export { GeoLookup } from './geo.js';

export interface EnrichOptions {
  /** Other hosts of the same site whose referrals are internal navigation (e.g. a multi-domain site). */
  sameSiteHosts?: string[];
}

export class Enricher {
  private constructor(private readonly geo: GeoLookup) {}

  static async create(): Promise<Enricher> {
    return new Enricher(await GeoLookup.open());
  }

  /** The stored attributes of a hit; undefined when its page URL is not an absolute http(s) URL. */
  enrich(hit: IncomingHit, options: EnrichOptions = {}): HitAttributes | undefined {
    const page = normalizePage(hit.url);
    if (!page) return undefined;
    return {
      hostname: page.hostname,
      pathname: page.pathname,
      ...parseReferrer(hit.referrer, page.hostname, options.sameSiteHosts),
      ...campaignFields(page.query),
      ...parseUserAgent(hit.userAgent),
      ...this.geo.lookup(hit.ip),
    };
  }
}
