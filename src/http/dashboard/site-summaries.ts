// The sites page's numbers: each listed site's visitors of the last 24 hours and its visitors hour by hour, in one
// bounded request. Each number is /v1/aggregations' answer to the query sent with it (the same parser, the same
// engine), so the page shows nothing /v1 would not.

import type { FastifyInstance } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import { ValidationError } from '../../domain/errors.js';
import type { ReportEngine } from '../../report/engine.js';
import { parseReportRequest } from '../../report/parse.js';
import type { MetaStore, Site } from '../../store/types.js';
import { memberForApi } from './guard.js';

export interface SiteSummaryDeps {
  meta: MetaStore;
  sessions: SessionManager;
  reports?: ReportEngine;
}

/** Sites per request: a page of the sites list asks in chunks of this many. */
export const MAX_SUMMARY_SITES = 100;
/** Sites summed at once, so one page of many sites cannot fill the report engine's queue by itself. */
const CONCURRENT_SITES = 4;
const HOUR = 3_600_000;
const HOURS = 24;
const SITE_ID_RE = /^[A-Za-z0-9_-]{1,64}$/;

/** `YYYY-MM-DD HH:00:00` of the hour containing `at` in `zone`: the label /v1 gives that hour's row. */
function localHour(zone: string, at: number): string {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23' })
      .formatToParts(at)
      .map((p) => [p.type, p.value]),
  );
  return `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:00:00`;
}

/** Minutes past the local hour at `at` in `zone` (not the UTC one: some zones are offset by 30 or 45 minutes). */
function localMinutes(zone: string, at: number): number {
  return Number(new Intl.DateTimeFormat('en-US', { timeZone: zone, minute: 'numeric' }).format(at));
}

const instant = (ms: number) => `${new Date(ms).toISOString().slice(0, 19)}Z`;

/**
 * The last 24 hours of a site: from the start of the local hour 23 hours before the current one to now, so the
 * hourly rows are 24 whole local hours (the last one still running). Both ends as instants, as /v1 takes them.
 */
export function lastDayRange(zone: string, now: number): { date_from: string; date_to: string; hours: number[] } {
  const second = Math.floor(now / 1000) * 1000;
  const hourStart = second - localMinutes(zone, second) * 60_000 - (new Date(second).getUTCSeconds() * 1000);
  const from = hourStart - (HOURS - 1) * HOUR;
  return { date_from: instant(from), date_to: instant(second), hours: Array.from({ length: HOURS }, (_, i) => from + i * HOUR) };
}

/** The `site_ids` parameter: up to MAX_SUMMARY_SITES site ids, comma-separated. */
function parseSiteIds(value: unknown): string[] {
  if (typeof value !== 'string' || value === '') throw ValidationError.of('site_ids', 'is required: site ids, comma-separated');
  const ids = [...new Set(value.split(','))];
  if (ids.length > MAX_SUMMARY_SITES) throw ValidationError.of('site_ids', `takes at most ${MAX_SUMMARY_SITES} sites`);
  if (!ids.every((id) => SITE_ID_RE.test(id))) throw ValidationError.of('site_ids', 'must be site ids, comma-separated');
  return ids;
}

/** Runs `work` over `items`, at most `width` at a time, keeping their order. */
async function inBatches<T, R>(items: T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let i = 0; i < items.length; i += width) results.push(...(await Promise.all(items.slice(i, i + width).map(work))));
  return results;
}

export function siteSummaryRoutes(app: FastifyInstance, { meta, sessions, reports }: SiteSummaryDeps): void {
  app.get<{ Querystring: { site_ids?: unknown } }>('/dashboard/api/site-summaries', async (request) => {
    // Any member may read: a viewer of chosen sites gets only those (others are skipped, as /v1 would 404 them).
    const { account, membership } = await memberForApi(request, sessions);
    const ids = parseSiteIds(request.query.site_ids);
    if (!reports) throw new Error('site summaries need the report engine');
    const readable = (site: Site | undefined): site is Site =>
      site !== undefined && site.accountId === account.id && (membership.siteIds === null || membership.siteIds.includes(site.id));
    const sites = (await Promise.all(ids.map(async (id) => (await meta.getSite(id)) ?? undefined))).filter(readable);
    const now = Date.now();
    const data = await inBatches(sites, CONCURRENT_SITES, async (site) => {
      const range = lastDayRange(site.timezone, now);
      const query = { entity: 'pageview', entity_id: site.id, aggregates: 'visitors', date_from: range.date_from, date_to: range.date_to };
      const [total, hourly] = await Promise.all([
        reports.aggregate(parseReportRequest(query), site),
        reports.aggregate(parseReportRequest({ ...query, date_grouping: 'hour' }), site),
      ]);
      const byHour = new Map(hourly.map((row) => [row.timestamp, Number(row.visitors ?? 0)]));
      return {
        site_id: site.id,
        date_from: range.date_from,
        date_to: range.date_to,
        visitors: Number(total[0]?.visitors ?? 0),
        // Every hour of the range, those without a row as 0: /v1 leaves them out.
        hours: range.hours.map((at) => {
          const date = localHour(site.timezone, at);
          return { timestamp: date, visitors: byHour.get(date) ?? 0 };
        }),
      };
    });
    return { object: 'list', data };
  });
}
