// Report API overhead: what /v1/aggregations costs beyond its SQL. A small site (BENCH_OVERHEAD_PAGEVIEWS, 20,000
// pageviews by default, so the SQL is quick and the fixed cost shows), the report set of the report benchmark
// called over real HTTP (keep-alive, one at a time) with the server's default lookup caching, the same compiled
// SQL run directly on the store, and a bare Fastify route answering a small JSON over the same HTTP in the same
// run (the floor any HTTP answer costs). Overhead = API - direct SQL; beyond HTTP = API - direct SQL - bare route.
// BENCH_OVERHEAD_IMPORTED=1: the site also has a done import of 30 days of totals, so the reports imported days can
// answer take that path (its queries count in "API" only).

import Fastify from 'fastify';
import { cpus } from 'node:os';
import { parseReportRequest } from '../src/report/parse.js';
import type { DuckDatabase } from '../src/store/duckdb/database.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../test/helpers/app.js';
import { directStatement, load, reportCases, runDirect } from './reports.js';
import { median } from './median.js';

const DAY = 86_400_000;

/** A done import of the 30 days before `end`: the site's daily totals, as a Plausible import stores them. */
async function importDays(t: TestApp, siteId: string, end: Date): Promise<void> {
  const record = await t.meta.createImport({ siteId, kind: 'plausible', fileName: 'bench.zip', visitIdBase: 0n, owner: 'bench' });
  const days = Array.from({ length: 30 }, (_, i) => new Date(end.getTime() - (i + 1) * DAY).toISOString().slice(0, 10));
  await t.events.writeImportedDays(days.map((day) => ({
    importId: record.id, siteId, day, dimension: '', value: '', pageviews: 500, visits: 200, visitors: 150, bounces: 80, visitDuration: 9000, lacks: 0,
  })));
  await t.meta.finishImport(record.id, 'bench', { status: 'done', digest: 'bench', imported: 30, rejected: 0, firstHitAt: null, lastHitAt: null, failure: null });
}

async function timeGet(url: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  const res = await fetch(url, { headers });
  await res.arrayBuffer();
  if (res.status !== 200) throw new Error(`${url}: HTTP ${res.status}`);
  return performance.now() - started;
}

export async function benchOverhead(pageviews = 20_000, rounds = 200): Promise<void> {
  // The server's own default: token and site lookups trusted for 3 s.
  const t = await startTestApp({ cacheMs: 3000 });
  const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Bench', timezone: 'UTC' })).body.id as string;
  const end = new Date(Math.floor(Date.now() / DAY) * DAY);
  await load((t.meta as unknown as { db: DuckDatabase }).db, site, pageviews, end);
  if (process.env.BENCH_OVERHEAD_IMPORTED === '1') await importDays(t, site, end);
  const api = await t.app.listen({ port: 0, host: '127.0.0.1' });

  const bare = Fastify();
  bare.get('/bare', async () => [{ visits: '1', pageviews: '2' }]);
  const bareUrl = `${await bare.listen({ port: 0, host: '127.0.0.1' })}/bare`;
  const auth = { authorization: `Bearer ${OWNER_TOKEN}` };

  const rows: { name: string; api: number; direct: number; bare: number }[] = [];
  for (const c of reportCases(site, end)) {
    const { compiled: asked } = await t.reports.compile(parseReportRequest(Object.fromEntries(new URLSearchParams(c.query))), (await t.meta.getSite(site))!);
    const compiled = await directStatement(t, asked);
    const url = `${api}/v1/aggregations?${c.query}`;
    const a: number[] = [];
    const d: number[] = [];
    const b: number[] = [];
    for (let i = 0; i < 5; i++) await timeGet(url, auth); // warm: caches, JIT, kept statements
    for (let i = 0; i < rounds; i++) {
      a.push(await timeGet(url, auth));
      const started = performance.now();
      await runDirect(t, compiled);
      d.push(performance.now() - started);
      b.push(await timeGet(bareUrl, {}));
    }
    rows.push({ name: c.name, api: median(a), direct: median(d), bare: median(b) });
  }
  await bare.close();
  await t.close();

  console.log(`\nReport API overhead: ${pageviews.toLocaleString('en')} pageviews, HTTP keep-alive, one request at a time, median of ${rounds} (${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'})\n`);
  console.log('| report | API ms | direct SQL ms | bare Fastify route ms | overhead ms (API - SQL) | beyond HTTP ms (- bare) |');
  console.log('|---|---|---|---|---|---|');
  for (const r of rows) {
    console.log(`| ${r.name} | ${r.api.toFixed(2)} | ${r.direct.toFixed(2)} | ${r.bare.toFixed(2)} | ${(r.api - r.direct).toFixed(2)} | ${(r.api - r.direct - r.bare).toFixed(2)} |`);
  }
  const overall = median(rows.map((r) => r.api - r.direct));
  console.log(`\nmedian overhead over the report set: ${overall.toFixed(2)} ms (goal: under 2 ms)`);
}
