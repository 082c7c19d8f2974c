// `plumb demo`: a demo site with goals and a milestone through /v1, then a generated month of its traffic
// through the import, and a summary that tells the bots left out (on purpose) from real problems. Run again, it
// replaces the demo site it made before (a fresh site, then the old one deleted), so there is one demo at a time.

import { DEFAULT_DEMO_EVENTS, demoTraffic, emptyTotals } from './demo-traffic.js';
import { withV1, type V1Call } from './acting.js';
import type { AdminClient } from './admin-client.js';
import { importNdjson, progressBar, type ImportSummary } from './import.js';
import { listSites, reportUrl, shareUrl, type SiteJson } from './sites.js';

export interface DemoOptions {
  accountId: number;
  days: number;
  visitsPerDay: number;
  share: boolean;
  progress: NodeJS.WriteStream;
}

export interface DemoResult extends ImportSummary {
  site: SiteJson;
  /** The ids of the demo sites made before, deleted with their traffic once this one was imported. */
  replaced: string[];
  /** Hits the import left out because their user agent is a bot: the generated traffic has crawlers on purpose. */
  bots: number;
  report_url: string;
  share_url: string | null;
}

/** The import's message for a bot's hit (src/ingest/line-import.ts). */
const BOT_MESSAGE = 'user_agent is a bot';

export const DEMO_SITE_NAME = 'Demo site';
/**
 * The demo's mark on its site: the name alone could be a user's own site, so a site is the demo's only with this
 * milestone too (every version of `plumb demo` wrote it). A milestone and not a domain: domains are unique across
 * the installation, and each account may have its demo.
 */
export const DEMO_MILESTONE = 'Launched v2';

interface MilestoneList {
  data: { id: string; name: string }[];
  has_more: boolean;
}

/** The account's demo sites: named "Demo site" and carrying the demo's milestone. */
export async function findDemoSites(call: V1Call): Promise<SiteJson[]> {
  const found: SiteJson[] = [];
  for (const site of await listSites(call)) {
    if (site.name !== DEMO_SITE_NAME) continue;
    for (let after: string | undefined; ; ) {
      const page = await call<MilestoneList>(
        'GET',
        `/v1/sites/${site.id}/milestones?limit=100${after ? `&starting_after=${encodeURIComponent(after)}` : ''}`,
      );
      if (page.data.some((m) => m.name === DEMO_MILESTONE)) {
        found.push(site);
        break;
      }
      if (!page.has_more || page.data.length === 0) break;
      after = page.data[page.data.length - 1]!.id;
    }
  }
  return found;
}

/**
 * Makes a fresh demo site, imports its traffic, then deletes the demo sites made before. Refreshing the old site
 * in place is not possible: no route deletes a site's hits and keeps the site (`DELETE /v1/sites/{id}/data` is
 * retired, and `/admin/imports` deletes only the peers' imports). The old demo is deleted only once the new one
 * is complete, and the new one is deleted if its import fails, so a failed run leaves the demo as it was.
 */
export async function demo(client: AdminClient, url: string, o: DemoOptions): Promise<DemoResult> {
  const { site, old } = await withV1(client, undefined, o.accountId, 'plumb demo', async (call) => {
    const old = await findDemoSites(call);
    const created = await call<SiteJson>('POST', '/v1/sites', { name: DEMO_SITE_NAME, timezone: 'UTC', ...(o.share ? { sharing: 'public' } : {}) });
    try {
      for (const e of DEFAULT_DEMO_EVENTS) {
        await call('POST', `/v1/sites/${created.id}/events`, { name: e.name, currency: e.value[1] > 0 ? 'dollar' : 'none' });
      }
      const launch = new Date(Date.now() - Math.floor(o.days / 2) * 86_400_000).toISOString().slice(0, 10);
      await call('POST', `/v1/sites/${created.id}/milestones`, { name: DEMO_MILESTONE, milestone_date: launch });
    } catch (e) {
      await call('DELETE', `/v1/sites/${created.id}`).catch(() => {});
      throw e;
    }
    return { site: created, old };
  });
  let summary: ImportSummary;
  try {
    summary = await importTraffic(client, site, o);
  } catch (e) {
    // A separate token: the first one may have expired during a long import.
    await withV1(client, undefined, o.accountId, 'plumb demo', (call) => call('DELETE', `/v1/sites/${site.id}`)).catch(() => {});
    throw e;
  }
  if (old.length > 0) {
    await withV1(client, undefined, o.accountId, 'plumb demo', async (call) => {
      for (const s of old) await call('DELETE', `/v1/sites/${s.id}`);
    });
  }
  const bots = summary.errors.filter((e) => e.message === BOT_MESSAGE).length;
  return {
    site,
    replaced: old.map((s) => s.id),
    ...summary,
    errors: summary.errors.filter((e) => e.message !== BOT_MESSAGE),
    bots,
    report_url: reportUrl(url, site.id),
    share_url: o.share ? shareUrl(url, site.id) : null,
  };
}

async function importTraffic(client: AdminClient, site: SiteJson, o: DemoOptions): Promise<ImportSummary> {
  const start = new Date(Date.now() - (o.days - 1) * 86_400_000);
  const lines: string[] = [];
  for (const hit of demoTraffic({ siteId: site.id, start, days: o.days, visitsPerDay: o.visitsPerDay }, emptyTotals())) {
    // Nothing from the future: today's traffic stops now.
    if (Date.parse(`${hit.timestamp.replace(' ', 'T')}Z`) <= Date.now()) lines.push(JSON.stringify(hit));
  }
  const bar = progressBar(o.progress, 'importing');
  try {
    return await importNdjson(client, lines.join('\n'), (done, total) => bar.update(done, total));
  } finally {
    bar.done();
  }
}

const count = (n: number) => n.toLocaleString('en');

export function describeDemo(r: DemoResult, accountId: number, days: number): string {
  const lines = [
    ...r.replaced.map((id) => `Deleted the earlier demo site ${id} with its traffic: the fresh one below replaces it (a new id and address).`),
    `Created the demo site "${r.site.name}" (${r.site.id}) in account ${accountId}, with ${DEFAULT_DEMO_EVENTS.length} goals and a milestone.`,
    `Imported ${count(r.imported)} hits: ${days} days of generated traffic.`,
  ];
  if (r.bots > 0) {
    lines.push(`Left out ${count(r.bots)} hits from bots, as Plumb always does: the generated traffic includes crawlers on purpose.`);
  }
  if (r.errors.length > 0) {
    lines.push(`${count(r.errors.length)} hits could not be imported:`);
    for (const e of r.errors.slice(0, 20)) lines.push(`  line ${e.line}: ${e.message}`);
    if (r.errors.length > 20) lines.push(`  ... and ${count(r.errors.length - 20)} more`);
  }
  lines.push('');
  if (r.share_url) {
    lines.push(`Report: ${r.share_url}  (shared publicly, read-only)`);
    lines.push(`In your dashboard: ${r.report_url}`);
  } else {
    lines.push(`Report: ${r.report_url}  (log in as the account's owner)`);
  }
  return lines.join('\n');
}
