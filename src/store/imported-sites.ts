// Whether a site has any imported days, remembered for a few seconds: most sites never import, and their reports
// should not pay a database round trip each to learn it again. Imports written or deleted through this process
// are seen at once; through another process (scale-out) within the TTL, as DESIGN.md section 2 allows.

const MAX_ENTRIES = 10_000;

export class ImportedSites {
  private readonly known = new Map<string, { has: boolean; at: number }>();

  constructor(private readonly ttlMs = 3000) {}

  /** True when the site has imported days; `lookup` asks the database when nothing fresh is remembered. */
  async has(siteId: string, lookup: () => Promise<boolean>): Promise<boolean> {
    const now = Date.now();
    const hit = this.known.get(siteId);
    if (hit && now - hit.at < this.ttlMs) return hit.has;
    const has = await lookup();
    if (this.known.size >= MAX_ENTRIES) this.known.clear();
    this.known.set(siteId, { has, at: now });
    return has;
  }

  forget(siteId: string): void {
    this.known.delete(siteId);
  }
}
