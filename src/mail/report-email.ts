// An email report of one site for one period: its numbers asked of the same report engine, with the same
// request parsing, as /v1/aggregations (so they equal what the API answers), then written as plain text and HTML.

import type { ReportPeriod } from '../domain/report-periods.js';
import type { ReportEngine, ReportRow } from '../report/engine.js';
import { parseReportRequest } from '../report/parse.js';
import type { MetaStore, Site } from '../store/types.js';
import type { Mail } from './mailer.js';
import { escapeHtml } from './messages.js';

export const TOTALS = ['visitors', 'visits', 'pageviews', 'bounce_rate', 'avg_duration'] as const;
type Total = (typeof TOTALS)[number];
export const TOP_ROWS = 5;

export interface SiteReport {
  site: Site;
  period: ReportPeriod;
  current: Record<Total, string>;
  previous: Record<Total, string>;
  pages: { pathname: string; pageviews: string }[];
  sources: { source: string; visits: string }[];
  goals: { name: string; conversions: string; uniqueConversions: string }[];
}

const range = (from: string, to: string) => ({ date_from: `${from} 00:00:00`, date_to: `${to} 23:59:59` });

/** Every number of the report, each from one /v1-equivalent aggregation in the site's time zone. */
export async function gatherReport(engine: ReportEngine, meta: MetaStore, site: Site, period: ReportPeriod): Promise<SiteReport> {
  const run = (params: Record<string, string>): Promise<ReportRow[]> => engine.aggregate(parseReportRequest(params), site);
  const totals = async (from: string, to: string) => {
    const [row] = await run({ entity: 'pageview', entity_id: site.id, aggregates: TOTALS.join(','), ...range(from, to) });
    return Object.fromEntries(TOTALS.map((t) => [t, row?.[t] ?? '0'])) as Record<Total, string>;
  };
  const now = range(period.from, period.to);
  const [current, previous, pages, sources, goalPage] = await Promise.all([
    totals(period.from, period.to),
    totals(period.previousFrom, period.previousTo),
    run({ entity: 'pageview', entity_id: site.id, aggregates: 'pageviews', field_grouping: 'pathname', sort_by: 'pageviews:desc', limit: String(TOP_ROWS), ...now }),
    run({ entity: 'pageview', entity_id: site.id, aggregates: 'visits', field_grouping: 'referrer_source', sort_by: 'visits:desc', limit: String(TOP_ROWS), ...now }),
    meta.listGoals(site.id, { limit: 100 }),
  ]);
  const goals = await Promise.all(
    goalPage.items.map(async (g) => {
      const [row] = await run({ entity: 'event', site_id: site.id, entity_name: g.name, aggregates: 'conversions,unique_conversions', ...now });
      return { name: g.name, conversions: row?.conversions ?? '0', uniqueConversions: row?.unique_conversions ?? '0' };
    }),
  );
  return {
    site,
    period,
    current,
    previous,
    pages: pages.map((r) => ({ pathname: r.pathname ?? '', pageviews: r.pageviews ?? '0' })),
    sources: sources.map((r) => ({ source: r.referrer_source || 'Direct / none', visits: r.visits ?? '0' })),
    goals: goals.sort((a, b) => Number(b.conversions) - Number(a.conversions) || a.name.localeCompare(b.name)),
  };
}

const LABELS: Record<Total, string> = {
  visitors: 'Visitors',
  visits: 'Visits',
  pageviews: 'Pageviews',
  bounce_rate: 'Bounce rate',
  avg_duration: 'Visit duration',
};

export function formatValue(total: Total, value: string): string {
  const n = Number(value);
  if (total === 'bounce_rate') return `${(n * 100).toFixed(1).replace(/\.0$/, '')}%`;
  if (total === 'avg_duration') {
    const s = Math.round(n);
    return s >= 60 ? `${Math.floor(s / 60)}m ${String(s % 60).padStart(2, '0')}s` : `${s}s`;
  }
  return n.toLocaleString('en-US');
}

/** Against the previous period: relative for counts and durations, in points for the bounce rate. */
export function formatChange(total: Total, current: string, previous: string): string {
  const c = Number(current);
  const p = Number(previous);
  if (total === 'bounce_rate') {
    const points = Math.round((c - p) * 1000) / 10;
    return points === 0 ? '±0 pts' : `${points > 0 ? '+' : '−'}${Math.abs(points)} pts`;
  }
  if (p === 0) return c === 0 ? '±0%' : 'new';
  const pct = Math.round(((c - p) / p) * 100);
  return pct === 0 ? '±0%' : `${pct > 0 ? '+' : '−'}${Math.abs(pct)}%`;
}

const periodName = (p: ReportPeriod) => (p.frequency === 'weekly' ? `week of ${p.from} to ${p.to}` : `month of ${p.from.slice(0, 7)}`);

/** The report's mail; without `unsubscribeUrl`, a report sent once on request (report-now.ts), which says so instead. */
export function reportMail(r: SiteReport, o: { to: string; reportUrl: string; unsubscribeUrl?: string }): Mail {
  const title = `${r.site.name}: your ${r.period.frequency} report (${periodName(r.period)})`;
  const totals = TOTALS.map((t) => ({
    label: LABELS[t],
    value: formatValue(t, r.current[t]),
    change: formatChange(t, r.current[t], r.previous[t]),
  }));
  const lines = [
    `${r.site.name}: ${r.period.frequency} report for the ${periodName(r.period)} (${r.site.timezone})`,
    '',
    ...totals.map((t) => `${t.label}: ${t.value} (${t.change} against the previous ${r.period.frequency === 'weekly' ? 'week' : 'month'})`),
    '',
    'Top pages',
    ...(r.pages.length ? r.pages.map((p) => `  ${p.pathname}: ${Number(p.pageviews).toLocaleString('en-US')} pageviews`) : ['  (none)']),
    '',
    'Top sources',
    ...(r.sources.length ? r.sources.map((s) => `  ${s.source}: ${Number(s.visits).toLocaleString('en-US')} visits`) : ['  (none)']),
    '',
    'Goals',
    ...(r.goals.length
      ? r.goals.map((g) => `  ${g.name}: ${Number(g.conversions).toLocaleString('en-US')} conversions (${g.uniqueConversions} unique)`)
      : ['  (no goals)']),
    '',
    `The full report: ${o.reportUrl}`,
    o.unsubscribeUrl ? `Stop these emails: ${o.unsubscribeUrl}` : 'Sent once, because it was asked for in Plumb: no other email follows from it.',
  ];
  const table = (head: [string, string], rows: [string, string][]) =>
    `<table style="border-collapse:collapse;width:100%;margin:8px 0 16px"><thead><tr><th style="text-align:left;border-bottom:1px solid #ccc;padding:4px">${escapeHtml(head[0])}</th><th style="text-align:right;border-bottom:1px solid #ccc;padding:4px">${escapeHtml(head[1])}</th></tr></thead><tbody>${
      rows.length
        ? rows.map(([a, b]) => `<tr><td style="padding:4px">${escapeHtml(a)}</td><td style="padding:4px;text-align:right">${escapeHtml(b)}</td></tr>`).join('')
        : '<tr><td style="padding:4px;color:#777" colspan="2">None</td></tr>'
    }</tbody></table>`;
  const html = `<!doctype html><html><head><meta charset="utf-8"><title>${escapeHtml(title)}</title></head>
<body style="font-family:system-ui,sans-serif;color:#222;max-width:600px;margin:24px auto;padding:0 16px">
<h1 style="font-size:20px">${escapeHtml(r.site.name)}</h1>
<p style="color:#555">${escapeHtml(r.period.frequency === 'weekly' ? 'Weekly' : 'Monthly')} report for the ${escapeHtml(periodName(r.period))} (${escapeHtml(r.site.timezone)})</p>
<table style="border-collapse:collapse;width:100%;margin:8px 0 16px"><tbody>${totals
    .map((t) => `<tr><td style="padding:6px 4px">${escapeHtml(t.label)}</td><td style="padding:6px 4px;text-align:right;font-weight:bold">${escapeHtml(t.value)}</td><td style="padding:6px 4px;text-align:right;color:#555">${escapeHtml(t.change)}</td></tr>`)
    .join('')}</tbody></table>
<h2 style="font-size:16px">Top pages</h2>
${table(['Page', 'Pageviews'], r.pages.map((p) => [p.pathname, Number(p.pageviews).toLocaleString('en-US')]))}
<h2 style="font-size:16px">Top sources</h2>
${table(['Source', 'Visits'], r.sources.map((s) => [s.source, Number(s.visits).toLocaleString('en-US')]))}
<h2 style="font-size:16px">Goals</h2>
${table(['Goal', 'Conversions'], r.goals.map((g) => [g.name, Number(g.conversions).toLocaleString('en-US')]))}
<p><a href="${escapeHtml(o.reportUrl)}">Open the full report</a></p>
<p style="color:#777;font-size:12px">${
    o.unsubscribeUrl
      ? `You receive this because you subscribed in Plumb. <a href="${escapeHtml(o.unsubscribeUrl)}">Unsubscribe</a>`
      : 'Sent once, because it was asked for in Plumb: no other email follows from it.'
  }</p>
</body></html>`;
  return {
    to: o.to,
    subject: title,
    text: `${lines.join('\n')}\n`,
    html,
    // One-click unsubscribe from the mail client (RFC 8058): a POST to the same link, which needs no login.
    ...(o.unsubscribeUrl ? { headers: { 'List-Unsubscribe': `<${o.unsubscribeUrl}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' } } : {}),
  };
}
