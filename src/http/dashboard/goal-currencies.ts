// Each goal's currency, written into a site's pages for the page script: SPEC.md's goal lists return `currency`
// as null, and the report formats conversion values in each goal's own currency.

import type { MetaStore } from '../../store/types.js';

/** A site has at most a few hundred goals (the collector creates at most 500); the loop is bounded by that. */
const MAX_PAGES = 20;

/** `{"<goal id>": "<currency>", ...}` as JSON, for a data-goal-currencies attribute. */
export async function goalCurrencies(meta: MetaStore, siteId: string): Promise<string> {
  const out: Record<string, string> = {};
  let after: string | undefined;
  for (let i = 0; i < MAX_PAGES; i++) {
    const page = await meta.listGoals(siteId, { limit: 100, startingAfter: after });
    for (const goal of page.items) out[goal.id] = goal.currency;
    if (!page.hasMore || page.items.length === 0) break;
    after = page.items[page.items.length - 1]!.id;
  }
  return JSON.stringify(out);
}
