// Analysis reports' speed (issue 47): funnels, journeys and engagement aggregates over 30 days of 10 million
// generated pageviews in the embedded store (reports.ts's load(), plus engagement rows for a share of the
// pageviews), each timed through the API (app.inject, owner token) and as its compiled SQL run directly on DuckDB,
// alternating, medians; the baseline of the same run is the "top pages" /v1 report timed the same way.

import { cpus, loadavg } from 'node:os';
import { OWNER_TOKEN, type TestApp } from '../test/helpers/app.js';
import { SqlDialect, type CompiledQuery } from '../src/report/dialect.js';
import { funnelQuery } from '../src/report/funnels.js';
import { journeysQuery, type JourneyOptions } from '../src/report/journeys.js';
import { parseReportRequest } from '../src/report/parse.js';
import type { FunnelStep } from '../src/store/types.js';
import type { DuckDatabase } from '../src/store/duckdb/database.js';
import { median } from './median.js';
import { DAY, directStatement, load, local, runDirect, startFileApp } from './reports.js';

/** Share of pageviews followed by an engagement hit (the tag's option is off on many sites; one beacon a pageview). */
const ENGAGEMENT_PERCENT = 40;

/**
 * Engagement hits for about ENGAGEMENT_PERCENT% of the site's pageviews, by SQL: a copy of the pageview (its visit,
 * page, enrichment and attribution; its visitor's id for its own UTC day) 1-59 s later, of type 'engagement', not a
 * first view, with a scroll depth of 0-100 and 0-120 s engaged. The choice and the values are hashes of the row, so
 * every run has the same rows. Appended after the pageviews (live hits arrive in time order; the range covers the
 * whole table, so the order changes what the reports read by nothing).
 */
async function addEngagement(db: DuckDatabase, siteId: string): Promise<void> {
  await db.transaction(async (q) => {
    await q.exec(
      `INSERT INTO hits
       SELECT * REPLACE ('engagement' AS type, ts + to_milliseconds(CAST(1000 + hash(visit_id, ts, 1) % 58000 AS BIGINT)) AS ts, false AS first_view,
                         xor(visitor_id, xor(hash(CAST(ts AS DATE)), hash(CAST(ts + to_milliseconds(CAST(1000 + hash(visit_id, ts, 1) % 58000 AS BIGINT)) AS DATE)))) AS visitor_id,
                         CAST(hash(visit_id, ts, 2) % 101 AS UTINYINT) AS scroll_depth, CAST(hash(visit_id, ts, 3) % 120001 AS UINTEGER) AS engaged_ms)
       FROM hits WHERE site_id = ? AND type = 'pageview' AND hash(visit_id, ts) % 100 < ${ENGAGEMENT_PERCENT}`,
      [siteId],
    );
  });
}

interface Timed {
  name: string;
  api: number;
  direct: number;
  /** What the answer holds: rows, steps or paths. */
  size: string;
}

/**
 * `rounds` timed GETs of `url` through the API and, alternating, `sql` directly on the store (one untimed run of
 * each first: caches warm for both). The API's answer must be a 200.
 */
async function time(t: TestApp, name: string, url: string, compiled: CompiledQuery, rounds: number, size: (body: any) => string): Promise<Timed> {
  const first = await t.call(OWNER_TOKEN, 'GET', url);
  if (first.status !== 200) throw new Error(`${name}: HTTP ${first.status} ${JSON.stringify(first.body)}`);
  const sql = await directStatement(t, compiled);
  await runDirect(t, sql);
  const api: number[] = [];
  const direct: number[] = [];
  for (let i = 0; i < rounds; i++) {
    let started = performance.now();
    const res = await t.call(OWNER_TOKEN, 'GET', url);
    api.push(performance.now() - started);
    if (res.status !== 200) throw new Error(`${name}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
    started = performance.now();
    await runDirect(t, sql);
    direct.push(performance.now() - started);
  }
  return { name, api: median(api), direct: median(direct), size: size(first.body) };
}

export async function benchAnalysis(pageviews = 10_000_000, rounds = 7): Promise<void> {
  if (process.env.BENCH_ROUNDS) rounds = Number(process.env.BENCH_ROUNDS);
  const { t, close } = await startFileApp();
  try {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Bench', timezone: 'UTC' })).body.id as string;
    const siteRow = (await t.meta.getSite(site))!;
    const end = new Date(Math.floor(Date.now() / DAY) * DAY);
    const db = (t.meta as unknown as { db: DuckDatabase }).db;
    let started = performance.now();
    const { visits } = await load(db, site, pageviews, end);
    await addEngagement(db, site);
    const loadMs = performance.now() - started;
    const counts = new Map(
      ((await t.events.query('SELECT type, count(*) AS n FROM hits WHERE site_id = ? GROUP BY type', [site])) as { type: string; n: bigint }[]).map((r) => [r.type, Number(r.n)]),
    );

    const range = `date_from=${encodeURIComponent(local(new Date(end.getTime() - 30 * DAY)))}&date_to=${encodeURIComponent(local(new Date(end.getTime() - 1000)))}`;
    const base = `entity=pageview&entity_id=${site}`;
    const dialect = new SqlDialect();
    // The resolved range, zone and filters a funnel or journeys report compiles from (as ReportEngine resolves them).
    const resolved = async () => (await t.reports.compile(parseReportRequest(Object.fromEntries(new URLSearchParams(`${base}&aggregates=visits&${range}`))), siteRow)).query;
    const aggregation = async (name: string, query: string) => {
      const { compiled } = await t.reports.compile(parseReportRequest(Object.fromEntries(new URLSearchParams(`${base}&${query}&${range}`))), siteRow);
      return time(t, name, `/v1/aggregations?${base}&${query}&${range}`, compiled, rounds, (body) => `${body.length} rows`);
    };
    const funnel = async (name: string, steps: FunnelStep[]) => {
      const created = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/funnels`, { name, steps });
      if (created.status !== 200 && created.status !== 201) throw new Error(`funnel: HTTP ${created.status} ${JSON.stringify(created.body)}`);
      const sql = funnelQuery(dialect, await resolved(), steps);
      return time(t, name, `/v1/sites/${site}/funnels/${created.body.id}/report?${range}`, sql, rounds, (body) =>
        `visits by step ${body.steps.map((s: { visits: string }) => s.visits).join(' → ')}`);
    };
    const journeys = async (name: string, o: JourneyOptions) => {
      const sql = journeysQuery(dialect, await resolved(), o);
      const entry = o.entryPage !== undefined ? `&entry_page=${encodeURIComponent(o.entryPage)}` : '';
      return time(t, name, `/v1/sites/${site}/journeys?steps=${o.steps}&limit=${o.limit}${entry}&${range}`, sql, rounds, (body) =>
        `${body.total_visits} journeys, ${body.paths.length} paths`);
    };

    const results: Timed[] = [];
    // The baseline first and last (the machine's speed drifts during a run); its ratio uses the median of both.
    const baseline = () => aggregation('top pages (baseline)', 'aggregates=visits,pageviews&field_grouping=pathname&limit=10');
    const baseFirst = await baseline();
    results.push(baseFirst);
    results.push(await funnel('funnel: /page-0 → /blog/* → /page-1', [
      { type: 'page', value: '/page-0' },
      { type: 'page', value: '/blog/*' },
      { type: 'page', value: '/page-1' },
    ]));
    // Steps a hit can match two of (a repeated step): each step passes over the rows earlier steps took.
    results.push(await funnel('funnel: /blog/* → /blog/* → /page-1', [
      { type: 'page', value: '/blog/*' },
      { type: 'page', value: '/blog/*' },
      { type: 'page', value: '/page-1' },
    ]));
    results.push(await journeys('journeys, steps=3', { steps: 3, limit: 10 }));
    results.push(await journeys('journeys, steps=3, entry_page=/page-0', { steps: 3, limit: 10, entryPage: '/page-0' }));
    results.push(await journeys('journeys, steps=5', { steps: 5, limit: 10 }));
    results.push(await aggregation('pages with scroll_depth, time_on_page', 'aggregates=visits,pageviews,scroll_depth,time_on_page&field_grouping=pathname&limit=10'));
    // The dashboard's Pages card: most visitors first, with engagement.
    results.push(await aggregation('the Pages card', 'aggregates=visitors,pageviews,scroll_depth,time_on_page&field_grouping=pathname&sort_by=visitors:desc&limit=10'));
    results.push(await aggregation('totals with scroll_depth, time_on_page', 'aggregates=visits,pageviews,scroll_depth,time_on_page'));
    const baseLast = await baseline();
    results.push({ ...baseLast, name: 'top pages (baseline, again)' });
    const baseApi = (baseFirst.api + baseLast.api) / 2;
    const baseDirect = (baseFirst.direct + baseLast.direct) / 2;

    const machine = `${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; median of ${rounds} runs each; load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`;
    console.log(
      `\nAnalysis benchmark: ${(counts.get('pageview') ?? 0).toLocaleString('en')} pageviews, ${(counts.get('engagement') ?? 0).toLocaleString('en')} engagement hits, ` +
        `${(counts.get('event') ?? 0).toLocaleString('en')} events, ${visits.toLocaleString('en')} visits over 30 days; load ${(loadMs / 1000).toFixed(1)} s (${machine})`,
    );
    if (!counts.get('event')) console.log('The generated data has no events: a funnel ending in an event is not timed.');
    console.log('\n| report | answer | API ms | direct SQL ms | API / direct | API / baseline API | direct / baseline direct |');
    console.log('|---|---|---|---|---|---|---|');
    for (const r of results) {
      console.log(
        `| ${r.name} | ${r.size} | ${r.api.toFixed(1)} | ${r.direct.toFixed(1)} | ${(r.api / r.direct).toFixed(2)} | ${(r.api / baseApi).toFixed(2)} | ${(r.direct / baseDirect).toFixed(2)} |`,
      );
    }
  } finally {
    await close();
  }
}
