// `plumb demo`: a demo site with goals and a milestone through /v1, then a generated month of its traffic
// through the import, and a summary that tells the bots left out (on purpose) from real problems.

import { DEFAULT_DEMO_EVENTS, demoTraffic, emptyTotals } from './demo-traffic.js';
import { withV1 } from './acting.js';
import type { AdminClient } from './admin-client.js';
import { importNdjson, progressBar, type ImportSummary } from './import.js';
import { reportUrl, shareUrl, type SiteJson } from './sites.js';

export interface DemoOptions {
  accountId: number;
  days: number;
  visitsPerDay: number;
  share: boolean;
  progress: NodeJS.WriteStream;
}

export interface DemoResult extends ImportSummary {
  site: SiteJson;
  /** Hits the import left out because their user agent is a bot: the generated traffic has crawlers on purpose. */
  bots: number;
  report_url: string;
  share_url: string | null;
}

/** The import's message for a bot's hit (src/ingest/line-import.ts). */
const BOT_MESSAGE = 'user_agent is a bot';

export async function demo(client: AdminClient, url: string, o: DemoOptions): Promise<DemoResult> {
  const site = await withV1(client, undefined, o.accountId, 'plumb demo', async (call) => {
    const created = await call<SiteJson>('POST', '/v1/sites', { name: 'Demo site', timezone: 'UTC', ...(o.share ? { sharing: 'public' } : {}) });
    for (const e of DEFAULT_DEMO_EVENTS) {
      await call('POST', `/v1/sites/${created.id}/events`, { name: e.name, currency: e.value[1] > 0 ? 'dollar' : 'none' });
    }
    const launch = new Date(Date.now() - Math.floor(o.days / 2) * 86_400_000).toISOString().slice(0, 10);
    await call('POST', `/v1/sites/${created.id}/milestones`, { name: 'Launched v2', milestone_date: launch });
    return created;
  });
  const start = new Date(Date.now() - (o.days - 1) * 86_400_000);
  const lines: string[] = [];
  for (const hit of demoTraffic({ siteId: site.id, start, days: o.days, visitsPerDay: o.visitsPerDay }, emptyTotals())) {
    // Nothing from the future: today's traffic stops now.
    if (Date.parse(`${hit.timestamp.replace(' ', 'T')}Z`) <= Date.now()) lines.push(JSON.stringify(hit));
  }
  const bar = progressBar(o.progress, 'importing');
  const summary = await importNdjson(client, lines.join('\n'), (done, total) => bar.update(done, total));
  bar.done();
  const bots = summary.errors.filter((e) => e.message === BOT_MESSAGE).length;
  return {
    site,
    ...summary,
    errors: summary.errors.filter((e) => e.message !== BOT_MESSAGE),
    bots,
    report_url: reportUrl(url, site.id),
    share_url: o.share ? shareUrl(url, site.id) : null,
  };
}

const count = (n: number) => n.toLocaleString('en');

export function describeDemo(r: DemoResult, accountId: number, days: number): string {
  const lines = [
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
