// Sites as /v1 reads them for access checks, trusted for as long as API tokens are (DESIGN.md section 2 allows a
// few seconds of staleness across processes), so a report costs one database round trip: its own query.

import type { MetaStore, Site } from '../../store/types.js';

export type SiteLookup = Pick<MetaStore, 'getSite'>;

const MAX_ENTRIES = 10_000;

export class SiteCache implements SiteLookup {
  private readonly sites = new Map<string, { site: Site; at: number }>();

  constructor(
    private readonly meta: SiteLookup,
    private readonly ttlMs: number,
  ) {}

  /**
   * Only sites that exist are kept: a site created on another process is found at once, while a change or
   * deletion made elsewhere shows within the TTL (through this process: at once, see forget).
   */
  async getSite(siteId: string): Promise<Site | undefined> {
    const hit = this.sites.get(siteId);
    const now = Date.now();
    if (hit && now - hit.at < this.ttlMs) return hit.site;
    const site = await this.meta.getSite(siteId);
    if (site && this.ttlMs > 0) {
      if (this.sites.size >= MAX_ENTRIES) this.sites.clear();
      this.sites.set(siteId, { site, at: now });
    } else this.sites.delete(siteId);
    return site;
  }

  forget(siteId: string): void {
    this.sites.delete(siteId);
  }
}
