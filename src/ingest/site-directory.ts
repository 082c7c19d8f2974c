// What the collector needs to know about sites and their conversion goals, cached briefly so that a hit costs
// no database read: a new or changed site is seen within seconds.

import { domainCandidates, normalizeUmamiWebsiteId } from '../domain/site-domains.js';
import type { Goal, MetaStore, Site } from '../store/types.js';

/** The part of the MetaStore the directory reads and writes (the ingest thread reaches it by message). */
export type SiteSource = Pick<MetaStore, 'getSite' | 'listGoals' | 'createGoal'>;

interface Entry<T> {
  value: T;
  at: number;
}

/**
 * The value under `key` while younger than `ttlMs`, else `load()`'s, kept (a failed load is not kept). The promise
 * itself is kept, so lookups of one key arriving together share one load.
 */
function cachedIn<T>(map: Map<string, Entry<Promise<T>>>, key: string, ttlMs: number, load: () => Promise<T>): Promise<T> {
  const now = Date.now();
  const hit = map.get(key);
  if (hit && now - hit.at < ttlMs) return hit.value;
  const value = load();
  value.catch(() => map.delete(key));
  if (map.size > 50_000) map.clear();
  map.set(key, { value, at: now });
  return value;
}

/** The most goals a site gets by tracking new event names; beyond this, unknown names are dropped. */
export const MAX_AUTO_GOALS_PER_SITE = 500;

export class SiteDirectory {
  private readonly sites = new Map<string, Entry<Promise<Site | undefined>>>();
  private readonly goals = new Map<string, Entry<Promise<Goal[]>>>();
  /** Goal creations under way, so two hits with the same new name create it once. */
  private readonly creating = new Map<string, Promise<Goal | undefined>>();

  constructor(
    private readonly meta: SiteSource,
    private readonly ttlMs = 5000,
  ) {}

  site(siteId: string): Promise<Site | undefined> {
    return this.cached(this.sites, siteId, () => this.meta.getSite(siteId));
  }

  /** The goal a legacy `gcode` names (its tracking code), if the site has it. */
  async goalByCode(siteId: string, code: string): Promise<Goal | undefined> {
    return (await this.siteGoals(siteId)).find((g) => g.id === code);
  }

  /**
   * The goal with this name, created on first use like Fathom's events (a site owner need not declare an event
   * before `trackEvent` sends it); undefined when the site already has the maximum number of goals.
   */
  async goalByName(siteId: string, name: string): Promise<Goal | undefined> {
    const known = (await this.siteGoals(siteId)).find((g) => g.name === name);
    if (known) return known;
    const key = `${siteId}\0${name}`;
    let creation = this.creating.get(key);
    if (!creation) {
      creation = this.createGoal(siteId, name).finally(() => this.creating.delete(key));
      this.creating.set(key, creation);
    }
    return creation;
  }

  private async createGoal(siteId: string, name: string): Promise<Goal | undefined> {
    this.goals.delete(siteId);
    const fresh = await this.siteGoals(siteId);
    const again = fresh.find((g) => g.name === name);
    if (again || fresh.length >= MAX_AUTO_GOALS_PER_SITE) return again;
    const created = await this.meta.createGoal({ siteId, name, currency: 'dollar' });
    this.goals.delete(siteId);
    return created;
  }

  forget(siteId: string): void {
    this.sites.delete(siteId);
    this.goals.delete(siteId);
  }

  private siteGoals(siteId: string): Promise<Goal[]> {
    return this.cached(this.goals, siteId, async () => {
      const all: Goal[] = [];
      let after: string | undefined;
      for (;;) {
        const page = await this.meta.listGoals(siteId, { limit: 100, startingAfter: after });
        all.push(...page.items);
        if (!page.hasMore) return all;
        after = page.items.at(-1)!.id;
      }
    });
  }

  private cached<T>(map: Map<string, Entry<Promise<T>>>, key: string, load: () => Promise<T>): Promise<T> {
    return cachedIn(map, key, this.ttlMs, load);
  }
}

/** The part of the MetaStore that finds sites by the names other trackers give them. */
export type SiteKeySource = Pick<MetaStore, 'findSiteByDomain' | 'findSiteByUmamiId' | 'findSiteByPlausibleScriptId'>;

/**
 * Sites by their domains (Plausible's `data-domain` and Events API `domain`) and Umami website ids, cached briefly
 * like the directory above; answers that no site has a name are cached too, so unknown names cost no reads.
 */
export class SiteKeyDirectory {
  private readonly byDomainCache = new Map<string, Entry<Promise<Site | undefined>>>();
  private readonly byUmamiCache = new Map<string, Entry<Promise<Site | undefined>>>();
  private readonly byPlausibleScriptCache = new Map<string, Entry<Promise<Site | undefined>>>();

  constructor(
    private readonly meta: SiteKeySource,
    private readonly ttlMs = 5000,
  ) {}

  /**
   * The site a hit's domain names: a site with exactly that domain, else one with the same name with or without
   * `www.` (src/domain/site-domains.ts). Undefined for a domain no site has, or text that is no hostname.
   */
  siteByDomain(domain: string): Promise<Site | undefined> {
    const candidates = domainCandidates(domain);
    if (candidates.length === 0) return Promise.resolve(undefined);
    return this.cached(this.byDomainCache, candidates[0]!, async () => {
      for (const candidate of candidates) {
        const site = await this.meta.findSiteByDomain(candidate);
        if (site) return site;
      }
      return undefined;
    });
  }

  /** The site given this Umami website id (any case), if any. */
  siteByUmamiId(websiteId: string): Promise<Site | undefined> {
    const id = normalizeUmamiWebsiteId(websiteId);
    if (id === undefined) return Promise.resolve(undefined);
    return this.cached(this.byUmamiCache, id, () => this.meta.findSiteByUmamiId(id));
  }

  /** The site given this Plausible script id (the per-site script's `pa-<id>`), if any. */
  siteByPlausibleScriptId(scriptId: string): Promise<Site | undefined> {
    return this.cached(this.byPlausibleScriptCache, scriptId, () => this.meta.findSiteByPlausibleScriptId(scriptId));
  }

  /** Forgets every cached answer (a site's domains or ids changed, or a site was deleted, in this process). */
  forget(): void {
    this.byDomainCache.clear();
    this.byUmamiCache.clear();
    this.byPlausibleScriptCache.clear();
  }

  private cached(map: Map<string, Entry<Promise<Site | undefined>>>, key: string, load: () => Promise<Site | undefined>) {
    return cachedIn(map, key, this.ttlMs, load);
  }
}
