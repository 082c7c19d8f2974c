// The ids of each site's finished (done) imports, whose imported days alone reports count (docs/reports.md,
// "Imported data"), remembered for a few seconds: a site with imports should not pay a meta-store round trip per
// report. Remembering is safe for that rule: an id is listed only once its import is done, and a done import stays
// done until it is deleted (its rows with it). An import finished or deleted through this process is seen at once;
// through another process (scale-out) within the TTL, as DESIGN.md section 2 allows.

import type { MetaStore } from '../store/types.js';

const MAX_ENTRIES = 10_000;

export class DoneImports {
  private readonly known = new Map<string, { ids: readonly string[]; at: number }>();

  constructor(
    private readonly meta: MetaStore,
    private readonly ttlMs = 3000,
  ) {}

  async of(siteId: string): Promise<readonly string[]> {
    const now = Date.now();
    const hit = this.known.get(siteId);
    if (hit && now - hit.at < this.ttlMs) return hit.ids;
    const ids = (await this.meta.listImports(siteId)).filter((i) => i.status === 'done').map((i) => i.id);
    if (this.known.size >= MAX_ENTRIES) this.known.clear();
    this.known.set(siteId, { ids, at: now });
    return ids;
  }

  /** The site's imports changed through this process (one finished, was replaced or deleted). */
  forget(siteId: string): void {
    this.known.delete(siteId);
  }
}
