// `npm run loadtest`: the collector and the reporting API under load together, on loopback, bounded in time.
// Starts a real server on a fresh data directory, imports a month of history, then for LOADTEST_SECONDS
// (default 20) drives pageviews and a rotating set of reports at once; prints throughput, errors, latency and the
// server's peak resident memory, and checks after SIGTERM that every acknowledged hit was stored.
// LOADTEST_PAGEVIEWS=10000000 replaces the imported month by that many pageviews generated with SQL into the
// database file before the server starts (the report benchmark's traffic), to see the server's memory at size;
// with LOADTEST_CACHE_DIR, the generated file is kept there and later runs of the same size start from a copy.
// LOADTEST_HIT_RATE=10000 paces the collector's traffic at that many hits a second (autocannon's overallRate)
// instead of as fast as its connections go, and LOADTEST_REPORT_RATE the reports': on two cores, reports asked
// as fast as four clients can take the CPU the collector would need for a given rate.

import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { demoTraffic } from '../src/cli/demo-traffic.js';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { DuckEventStore } from '../src/store/duckdb/event-store.js';
import { startServer } from '../test/helpers/process.js';
import { migrate } from '../src/store/duckdb/migrations.js';
import { load } from './reports.js';
import { watchServer } from './server-watch.js';

const SECONDS = Number(process.env.LOADTEST_SECONDS ?? 20);
const PAGEVIEWS = Number(process.env.LOADTEST_PAGEVIEWS ?? 0);
const HIT_RATE = rate('LOADTEST_HIT_RATE');
const REPORT_RATE = rate('LOADTEST_REPORT_RATE');
const CACHE_DIR = process.env.LOADTEST_CACHE_DIR;
const HIT_CONNECTIONS = 48;
const REPORT_CONNECTIONS = 4;
const TOKEN = 'loadtest-bootstrap-token-0123456789';
const ADMIN = 'loadtest-admin-token-0123456789abcdef';
const AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

const dir = mkdtempSync(join(tmpdir(), 'plumb-load-'));
const database = join(dir, 'plumb.duckdb');
// A generated database kept from an earlier run (the server has not yet run on it: no hits beyond the history).
const cached = CACHE_DIR && PAGEVIEWS > 0 ? join(CACHE_DIR, `loadtest-${PAGEVIEWS}.duckdb`) : undefined;
const fromCache = cached !== undefined && existsSync(cached);
if (fromCache) copyFileSync(cached, database);
const env = {
  PLUMB_DATA_DIR: dir,
  PLUMB_BOOTSTRAP_TOKEN: TOKEN,
  PLUMB_ADMIN_TOKEN: ADMIN,
  PLUMB_TRUST_PROXY: 'true',
  PLUMB_RATE_LIMITS: 'off',
  PLUMB_LOG_LEVEL: 'warn',
};
// The compiled server, as `npm start` runs it: this test measures the server's memory.
let server = await startServer(env, { compiled: true });
try {
  const site = fromCache
    ? ((await (await fetch(`${server.url}/v1/sites`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()) as { data: { id: string }[] }).data[0]!.id
    : ((await (await fetch(`${server.url}/v1/sites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Load', timezone: 'Europe/Berlin' }),
    })).json()) as { id: string }).id;

  // History for the reports to work on: a generated month, imported through the pipeline, or PAGEVIEWS generated
  // with SQL into the stopped server's database file.
  let history: number;
  if (fromCache) {
    history = PAGEVIEWS;
  } else if (PAGEVIEWS > 0) {
    await server.stop();
    const db = await DuckDatabase.open(database);
    await migrate(db);
    await load(db, site, PAGEVIEWS, new Date());
    await db.close();
    if (cached) {
      mkdirSync(CACHE_DIR!, { recursive: true });
      copyFileSync(database, cached);
    }
    history = PAGEVIEWS;
    server = await startServer(env, { compiled: true });
  } else {
    const start = new Date(Date.now() - 30 * 86_400_000);
    const lines = [...demoTraffic({ siteId: site, start, days: 30, visitsPerDay: 1500 })].map((h) => JSON.stringify(h));
    const imported = await (await fetch(`${server.url}/admin/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN}`, 'content-type': 'application/x-ndjson' },
      body: lines.join('\n'),
    })).json() as { imported: number };
    history = imported.imported;
  }
  const watch = watchServer(server.child.pid!, { everyMs: 200 });

  const base = `/v1/aggregations?entity=pageview&entity_id=${site}`;
  const f = (filters: unknown) => `&filters=${encodeURIComponent(JSON.stringify(filters))}`;
  const reports = [
    `${base}&aggregates=visits,pageviews,avg_duration,bounce_rate`,
    `${base}&aggregates=visits,pageviews&date_grouping=day`,
    `${base}&aggregates=visits,pageviews&field_grouping=pathname&limit=10`,
    `${base}&aggregates=visits&field_grouping=referrer_source${f([{ property: 'country_code', operator: 'is', value: 'US' }])}`,
    `${base}&aggregates=pageviews${f([{ property: 'pathname', operator: 'matching', value: '^/blog/' }])}`,
    `${base}&aggregates=visits,bounce_rate&field_grouping=entry_page&limit=10`,
    // The two heaviest kinds: exact distinct counts over the whole range.
    `${base}&aggregates=visits,uniques,pageviews,avg_duration,bounce_rate`,
    `${base}&aggregates=visitors,pageviews&field_grouping=pathname&limit=10`,
    `/v1/current_visitors?site_id=${site}&detailed=true`,
  ];

  let n = 0;
  let r = 0;
  const [hits, reads] = await Promise.all([
    autocannon({
      url: server.url,
      connections: HIT_CONNECTIONS,
      duration: SECONDS,
      ...paced(HIT_RATE),
      requests: [{
        method: 'GET',
        setupRequest: (req) => {
          n++;
          return {
            ...req,
            path: `/?sid=${site}&h=https%3A%2F%2Fload.example&p=%2Fpage-${n % 300}&r=https%3A%2F%2Fwww.google.com%2F&cid=${n}`,
            headers: { 'user-agent': AGENT, 'x-forwarded-for': `81.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` },
          };
        },
      }],
    }),
    autocannon({
      url: server.url,
      connections: REPORT_CONNECTIONS,
      duration: SECONDS,
      ...paced(REPORT_RATE),
      requests: [{
        method: 'GET',
        setupRequest: (req) => ({ ...req, path: reports[r++ % reports.length]!, headers: { authorization: `Bearer ${TOKEN}` } }),
      }],
    }),
  ]);
  const { peak: peakRss } = await watch.stop();
  await server.stop();

  const db = await DuckDatabase.open(database);
  const events = await DuckEventStore.open(db);
  const [row] = await events.query("SELECT count(*) AS n FROM hits WHERE site_id = ? AND hostname = 'https://load.example'", [site]);
  const stored = Number((row as { n: bigint }).n);
  await events.close();
  await db.close();

  const hitErrors = hits.errors + hits.timeouts + hits.non2xx;
  const readErrors = reads.errors + reads.timeouts + reads.non2xx;
  console.log(`\nLoad test: ${SECONDS} s, ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), ${history.toLocaleString('en')} hits of history\n`);
  console.log('| traffic | connections | requests/s | p50 ms | p99 ms | max ms | errors |');
  console.log('|---|---|---|---|---|---|---|');
  const pace = (rate: number | undefined) => (rate !== undefined ? ` (paced at ${rate.toLocaleString('en')}/s)` : '');
  console.log(`| collector pageviews${pace(HIT_RATE)} | ${HIT_CONNECTIONS} | ${hits.requests.average.toFixed(0)} | ${hits.latency.p50} | ${hits.latency.p99} | ${hits.latency.max} | ${hitErrors} |`);
  console.log(`| reports (9 kinds, rotating)${pace(REPORT_RATE)} | ${REPORT_CONNECTIONS} | ${reads.requests.average.toFixed(1)} | ${reads.latency.p50} | ${reads.latency.p99} | ${reads.latency.max} | ${readErrors} |`);
  const lost = stored < hits['2xx'];
  console.log(`\nserver peak RSS: ${(peakRss / 2 ** 20).toFixed(0)} MiB${process.env.PLUMB_DUCKDB_MEMORY_LIMIT ? ` (PLUMB_DUCKDB_MEMORY_LIMIT=${process.env.PLUMB_DUCKDB_MEMORY_LIMIT})` : ''}`);
  console.log(`\nhits acknowledged: ${hits['2xx']}, stored: ${stored} (${lost ? 'LOST HITS' : 'none lost'})`);
  if (lost || hitErrors > 0 || readErrors > 0) process.exitCode = 1;
} finally {
  if (server.child.exitCode === null) await server.stop();
  rmSync(dir, { recursive: true, force: true });
}

/** A rate in requests a second from the environment variable `name`, if it is set. */
function rate(name: string): number | undefined {
  const text = process.env[name];
  if (text === undefined || text === '') return undefined;
  const value = Number(text);
  if (!(value > 0)) throw new Error(`${name} must be a number of requests a second above 0`);
  return value;
}

/** autocannon's options for traffic paced at `rate` requests a second in all (none: as fast as it goes). */
function paced(rate: number | undefined): { overallRate?: number } {
  return rate !== undefined ? { overallRate: rate } : {};
}
