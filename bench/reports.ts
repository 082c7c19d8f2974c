// Report speed: 10 million generated pageviews in the embedded store, a fixed set of typical reports timed
// through the API (app.inject: auth, validation, compilation, the query gate, shaping) and the same compiled
// SQL run directly on DuckDB in the same run; then the same rows copied into ClickHouse (the scale-out
// configuration: PostgreSQL + ClickHouse + Redis), once on the ClickHouse server (18.16 here, HTTP) and once on
// ClickHouse 26 in process (chdb, behind the same transport seam), and the same reports timed the same way. API
// median / direct median and absolute times; the run fails unless every answer equals DuckDB's. On ClickHouse the
// closed days' rollups are built first, as the server's rounds would (src/report/day-rollups/), so the API reads
// them where they answer, while "direct SQL" is the hits alone.
// BENCH_STORES picks among embedded,clickhouse,chdb; BENCH_KEEP_CLICKHOUSE=1 keeps the server's loaded tables (in
// database plumb_bench_reports) to try SQL on by hand.

import { createReadStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { assemble } from '../src/assemble.js';
import { bootstrap } from '../src/bootstrap.js';
import { VISIT_ID_DAY_BITS } from '../src/ingest/visits.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../test/helpers/app.js';
import { chdbTransport } from '../test/helpers/chdb.js';
import { CLICKHOUSE_URL, freshScaleOut } from '../test/helpers/scale-out.js';
import { ClickHouseConnection, parseClickHouseUrl } from '../src/store/clickhouse/client.js';
import type { ClickHouseEventStore } from '../src/store/clickhouse/event-store.js';
import { sqlLiteral, stringLiteral } from '../src/store/clickhouse/literal.js';
import type { OpenTransport } from '../src/store/clickhouse/transport.js';
import type { CompiledQuery } from '../src/report/dialect.js';
import { runCompiled } from '../src/report/engine.js';
import { parseReportRequest } from '../src/report/parse.js';
import { VISITORS_OVER_BOUND } from '../src/report/plans/top-visitors.js';
import type { DuckDatabase } from '../src/store/duckdb/database.js';
import { JOURNEY_ID_COLUMNS, numberNewPages, withJourneyIds } from '../src/store/duckdb/journey-pages.js';
import { median } from './median.js';

export const DAY = 86_400_000;
/** Visit ids as randomVisitId makes them: the UTC day modulo VISIT_ID_DAYS above VISIT_ID_RANDOM_BITS random bits. */
const VISIT_ID_RANDOM_BITS = 64n - VISIT_ID_DAY_BITS;
const VISIT_ID_DAYS = 1n << VISIT_ID_DAY_BITS;
const VISIT_ID_RANDOM_MASK = (1n << VISIT_ID_RANDOM_BITS) - 1n;

/**
 * Fills hits and visits with SQL (a pipeline import of 10 M hits would take minutes): visits spread over 30 days
 * with 1-4 pageviews a minute apart, the last up to a minute later (about 45% bounces; a visit's record ends at its
 * last pageview, as the pipeline records it from its hits), Zipf-like pages, a handful of sources and countries, and each visit's first view of a page flagged
 * as the pipeline flags it. Visit ids are made as the pipeline makes them (randomVisitId, src/ingest/visits.ts): the
 * start's UTC day number modulo 4,096 in the top 12 bits, 52 random bits (a hash of the row number) below. About a million
 * people come back over the month; each hit carries the person's id for its UTC day (the person's number xor a hash
 * of the day: a visitor-day, as the pipeline's daily salt makes them, so a visit across midnight has two), which
 * reports may rely on (plans/visitor-days.ts); the visit carries the id of the day it started.
 */
/**
 * A generated pageview's time: a minute apart within its visit, the last at the visit's end, which the visit's
 * record gives as its last hit's time (as the pipeline records a visit from its hits).
 */
const HIT_TS = 'CASE WHEN k = v.pageviews - 1 THEN v.last_seen_at ELSE v.started_at + to_milliseconds(CAST(k * 60000 AS BIGINT)) END';

export async function load(db: DuckDatabase, siteId: string, pageviews: number, end: Date): Promise<{ visits: number }> {
  const visits = Math.round(pageviews / 2.1); // 45% bounce, the rest 2-4 pageviews: 2.1 on average
  const start = end.getTime() - 30 * DAY;
  await db.transaction(async (q) => {
    await q.exec('SELECT setseed(0.42)');
    await q.exec(
      `INSERT INTO visits
       SELECT ((CAST(epoch_ms(ts) // ${DAY} AS UBIGINT) % ${VISIT_ID_DAYS}) << ${VISIT_ID_RANDOM_BITS}) | (hash(i) & ${VISIT_ID_RANDOM_MASK}), ?, xor((i * 7919) % 1000003, hash(CAST(ts AS DATE))), ts, ts + to_milliseconds(CAST(dur AS BIGINT)),
              '/page-' || CAST(floor(pow(r1, 3) * 400) AS INTEGER), '/page-' || CAST(floor(pow(r2, 3) * 400) AS INTEGER),
              'https://bench.example', pv, 0, '', '', true, '', '', '', '', '', '', '', '', 0, '', '', '', '', 0, 0, 0, 0, 0
       FROM (SELECT i, to_timestamp(CAST(? AS DOUBLE) / 1000 + i * (30 * 86400.0 / ?)) :: TIMESTAMP AS ts, random() AS r1, random() AS r2,
                    pv, CASE WHEN pv = 1 THEN 0 ELSE (pv - 1) * 60000 + floor(random() * 60000) END AS dur
             FROM (SELECT i, CASE WHEN random() < 0.45 THEN 1 ELSE 2 + CAST(floor(random() * 3) AS INTEGER) END AS pv FROM range(?) t(i)))`,
      [siteId, start, visits, visits],
    );
    await q.exec(
      `INSERT INTO hits
       SELECT * EXCLUDE (k), row_number() OVER (PARTITION BY visit_id, pathname ORDER BY ts, k) = 1 AS first_view,
              NULL AS prop_keys, NULL AS prop_values, 0 AS scroll_depth, 0 AS engaged_ms FROM (
       SELECT v.site_id, 'pageview' AS type, ${HIT_TS} AS ts,
              -- The person's id for the hit's own day: the visit's xor its day's hash xor the hit's day's.
              xor(v.visitor_id, xor(hash(CAST(v.started_at AS DATE)), hash(CAST(${HIT_TS} AS DATE)))) AS visitor_id,
              v.visit_id AS visit_id,
              v.exit_hostname,
              CASE WHEN k = 0 THEN v.entry_page WHEN k = v.pageviews - 1 THEN v.exit_page
                   ELSE '/blog/post-' || CAST(floor(pow(random(), 3) * 200) AS INTEGER) END AS pathname,
              -- Attribution belongs to the visit: every hit of it carries the same source.
              ['', 'https://www.google.com', 'https://t.co', 'https://news.ycombinator.com', 'https://www.reddit.com'][1 + CAST(v.visit_id % 5 AS INTEGER)],
              '',
              ['', 'Google', 'Twitter', 'Hacker News', 'Reddit'][1 + CAST(v.visit_id % 5 AS INTEGER)],
              '', '', '', '', '', '', '',
              ['Chrome', 'Safari', 'Firefox', 'Edge'][1 + CAST(floor(random() * 4) AS INTEGER)],
              ['Windows', 'macOS', 'iOS', 'Android', 'Linux'][1 + CAST(floor(random() * 5) AS INTEGER)],
              ['Desktop', 'Mobile', 'Tablet'][1 + CAST(floor(random() * 3) AS INTEGER)],
              ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'CA'][1 + CAST(floor(random() * 8) AS INTEGER)],
              '', '', '', '', 0, k
       FROM visits v, range(v.pageviews) r(k)
       WHERE v.site_id = ?)
       ORDER BY ts -- stored in time order, as live hits arrive`,
      [siteId],
    );
    // Each visit's journey as the pipeline records it (pages a minute apart: never two at one instant).
    await q.exec(
      `UPDATE visits SET journey_length = least(len(j.pages), 6), ${[2, 3, 4, 5].map((i) => `journey_${i} = coalesce(j.pages[${i}], '')`).join(', ')}
       FROM (SELECT visit_id, list_filter(ps, (x, i) -> i = 1 OR x <> ps[i - 1]) AS pages
             FROM (SELECT visit_id, list(pathname ORDER BY ts) AS ps FROM hits WHERE site_id = ? AND type = 'pageview' GROUP BY visit_id)) AS j
       WHERE visits.visit_id = j.visit_id`,
      [siteId],
    );
    // Their pages' numbers, as the writer's connection gives them out (src/store/duckdb/journey-pages.ts).
    await q.exec(numberNewPages('visits'));
    const numbered = withJourneyIds({ table: 'visits' }, (ids) => ['u.visit_id AS visit_id', ...ids.map((id, i) => `${id} AS ${JOURNEY_ID_COLUMNS[i]}`)].join(', '));
    await q.exec(
      `UPDATE visits SET ${JOURNEY_ID_COLUMNS.map((c) => `${c} = n.${c}`).join(', ')} FROM (${numbered}) AS n WHERE visits.visit_id = n.visit_id`,
    );
  });
  return { visits };
}

/**
 * The same traffic as load() generated by SQL inside ClickHouse (for sizes DuckDB would take long to generate and
 * copy): the same visit and page distributions, with visit ids made as the pipeline makes them (load()). Not the
 * same rows (another random generator), so its answers are not compared with DuckDB's.
 */
async function generateInClickHouse(conn: ClickHouseConnection, siteId: string, pageviews: number, end: Date): Promise<{ visits: number }> {
  const visits = Math.round(pageviews / 2.1);
  const start = end.getTime() - 30 * DAY;
  const site = stringLiteral(siteId);
  const uniform = (seed: number) => `(rand(${seed}) / 4294967296)`;
  await conn.insert(
    `INSERT INTO visits (visit_id, site_id, visitor_id, started_at, last_seen_at, entry_page, exit_page, exit_hostname, pageviews, events, paths_exact, version)
     SELECT bitOr(bitShiftLeft(toUInt64(intDiv(st, ${DAY}) % ${VISIT_ID_DAYS}), ${VISIT_ID_RANDOM_BITS}), bitAnd(sipHash64(number, ${sqlLiteral(start)}), ${VISIT_ID_RANDOM_MASK})), ${site}, bitXor((number * 7919) % 1000003, sipHash64(toDate(st, 'UTC'))), ${sqlLiteral(start)} + toInt64(number * ${sqlLiteral((30 * DAY) / visits)}) AS st,
            st + if(pv = 1, 0, (pv - 1) * 60000 + toInt64(floor(${uniform(3)} * 60000))),
            concat('/page-', toString(toUInt32(floor(pow(${uniform(4)}, 3) * 400)))), concat('/page-', toString(toUInt32(floor(pow(${uniform(5)}, 3) * 400)))),
            'https://bench.example', if(${uniform(1)} < 0.45, 1, 2 + toUInt32(floor(${uniform(2)} * 3))) AS pv, 0, 1, pv
     FROM numbers(${sqlLiteral(visits)})`,
  );
  // Each visit's pages as an array: the first view of a page is its first index in it (as the pipeline flags it).
  await conn.insert(
    `INSERT INTO hits (site_id, type, ts, visitor_id, visit_id, hostname, pathname, referrer_hostname, referrer_source, browser, operating_system, device_type, country_code, first_view)
     SELECT site_id, 'pageview', if(k = pageviews - 1, last_seen_at, started_at + k * 60000) AS hit_ts, bitXor(visitor_id, bitXor(sipHash64(toDate(started_at, 'UTC')), sipHash64(toDate(hit_ts, 'UTC')))),
            visit_id, exit_hostname, paths[k + 1] AS p,
            ['', 'https://www.google.com', 'https://t.co', 'https://news.ycombinator.com', 'https://www.reddit.com'][1 + visit_id % 5],
            ['', 'Google', 'Twitter', 'Hacker News', 'Reddit'][1 + visit_id % 5],
            ['Chrome', 'Safari', 'Firefox', 'Edge'][1 + rand(6) % 4], ['Windows', 'macOS', 'iOS', 'Android', 'Linux'][1 + rand(7) % 5],
            ['Desktop', 'Mobile', 'Tablet'][1 + rand(8) % 3], ['US', 'GB', 'DE', 'FR', 'IN', 'BR', 'JP', 'CA'][1 + rand(9) % 8],
            indexOf(paths, p) = k + 1
     FROM (SELECT *, arrayMap(j -> if(j = 0, entry_page, if(j = pageviews - 1, exit_page,
                     concat('/blog/post-', toString(toUInt32(floor(pow(rand(10 + j) / 4294967296, 3) * 200)))))), range(pageviews)) AS paths
           FROM visits WHERE site_id = ${site})
     ARRAY JOIN range(pageviews) AS k`,
  );
  return { visits };
}

export interface Case {
  name: string;
  query: string;
}

export const local = (d: Date) => d.toISOString().slice(0, 19).replace('T', ' ');

interface Result {
  name: string;
  api: number;
  direct: number;
  rows: number;
}

/** The report set, for one site over the 30 days before `end`. */
export function reportCases(site: string, end: Date): Case[] {
  const from = local(new Date(end.getTime() - 30 * DAY));
  const to = local(new Date(end.getTime() - 1000));
  const week = local(new Date(end.getTime() - 7 * DAY));
  const range = `date_from=${encodeURIComponent(from)}&date_to=${encodeURIComponent(to)}`;
  const base = `entity=pageview&entity_id=${site}`;
  const f = (filters: unknown) => `filters=${encodeURIComponent(JSON.stringify(filters))}`;
  return [
    { name: 'totals', query: `${base}&aggregates=visits,pageviews,avg_duration,bounce_rate&${range}` },
    { name: 'totals with uniques', query: `${base}&aggregates=visits,uniques,pageviews,avg_duration,bounce_rate&${range}` },
    { name: 'totals with visitors', query: `${base}&aggregates=visitors,visits,pageviews,bounce_rate&${range}` },
    { name: 'pageviews by day', query: `${base}&aggregates=pageviews&date_grouping=day&${range}` },
    { name: 'by day', query: `${base}&aggregates=visits,pageviews&date_grouping=day&${range}` },
    { name: 'top pages', query: `${base}&aggregates=visits,pageviews&field_grouping=pathname&limit=10&${range}` },
    { name: 'top referrers, country filter', query: `${base}&aggregates=visits&field_grouping=referrer_source&${f([{ property: 'country_code', operator: 'is', value: 'US' }])}&${range}` },
    { name: 'regex filter', query: `${base}&aggregates=pageviews,visits&${f([{ property: 'pathname', operator: 'matching', value: '^/blog/post-1[0-9]$' }])}&${range}` },
    { name: 'top pages with visitors', query: `${base}&aggregates=visitors,pageviews&field_grouping=pathname&limit=10&${range}` },
    { name: 'top browsers with visitors', query: `${base}&aggregates=visitors,pageviews&field_grouping=browser&limit=10&${range}` },
    { name: 'entry pages', query: `${base}&aggregates=visits,bounce_rate&field_grouping=entry_page&limit=10&${range}` },
    { name: 'hourly over 7 days', query: `${base}&aggregates=visits,pageviews&date_grouping=hour&date_from=${encodeURIComponent(week)}&date_to=${encodeURIComponent(to)}` },
  ];
}

/**
 * The statement the engine ends up running for `compiled`: itself, or its fallback where it fails over its bound (a
 * report sorted by visitors whose top groups hold too many pageviews; the engine then goes there directly).
 */
export async function directStatement(t: TestApp, compiled: CompiledQuery): Promise<CompiledQuery> {
  if (!compiled.fallback) return compiled;
  try {
    await runDirect(t, compiled);
    return compiled;
  } catch (err) {
    if (err instanceof Error && err.message.includes(VISITORS_OVER_BOUND)) return compiled.fallback;
    throw err;
  }
}

/** `compiled` straight on the store, after its prelude as the engine runs it (CompiledQuery.prelude). */
export function runDirect(t: TestApp, compiled: CompiledQuery): Promise<Record<string, unknown>[]> {
  return runCompiled(t.events, compiled);
}

/** Each report `rounds` times through the API and, alternating with it, its compiled SQL straight on the store. */
async function timeReports(t: TestApp, site: string, cases: Case[], rounds: number): Promise<{ results: Result[]; answers: unknown[] }> {
  const results: Result[] = [];
  const answers: unknown[] = [];
  for (const c of cases) {
    // The same SQL the API runs: compiled from the same request by the same engine steps.
    const { compiled } = await t.reports.compile(
      parseReportRequest(Object.fromEntries(new URLSearchParams(c.query))),
      (await t.meta.getSite(site))!,
    );
    const sql = await directStatement(t, compiled);
    const api: number[] = [];
    const direct: number[] = [];
    let rows = 0;
    const first = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${c.query}`); // first run: caches warm for both
    answers.push(first.body);
    for (let i = 0; i < rounds; i++) {
      let started = performance.now();
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${c.query}`);
      api.push(performance.now() - started);
      if (res.status !== 200) throw new Error(`${c.name}: HTTP ${res.status} ${JSON.stringify(res.body)}`);
      rows = res.body.length;
      started = performance.now();
      await runDirect(t, sql);
      direct.push(performance.now() - started);
    }
    results.push({ name: c.name, api: median(api), direct: median(direct), rows });
  }
  return { results, answers };
}

function printTable(title: string, results: Result[]): void {
  console.log(`\n${title}\n`);
  console.log('| report | rows | API ms | direct SQL ms | API / direct |');
  console.log('|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.name} | ${r.rows} | ${r.api.toFixed(1)} | ${r.direct.toFixed(1)} | ${(r.api / r.direct).toFixed(2)} |`);
  }
}

/** Runs one statement on ClickHouse with `body` (a file) as its data, over plain HTTP. */
async function clickhouseInsert(database: string, sql: string, file: string): Promise<void> {
  const url = new URL(CLICKHOUSE_URL);
  url.searchParams.set('database', database);
  url.searchParams.set('query', sql);
  const res = await fetch(url, { method: 'POST', body: Readable.toWeb(createReadStream(file)) as ReadableStream, duplex: 'half' } as RequestInit);
  if (!res.ok) throw new Error(`ClickHouse: ${await res.text()}`);
}

async function clickhouseRows(database: string, sql: string): Promise<string> {
  const url = new URL(CLICKHOUSE_URL);
  url.searchParams.set('database', database);
  const res = await fetch(url, { method: 'POST', body: sql });
  if (!res.ok) throw new Error(`ClickHouse: ${await res.text()}`);
  return res.text();
}

const TEXT_COLUMNS = ['hostname', 'pathname', 'referrer_hostname', 'referrer_pathname', 'referrer_source', 'utm_campaign', 'utm_content', 'utm_medium', 'utm_source', 'utm_term', 'ref', 'keyword', 'browser', 'operating_system', 'device_type', 'country_code', 'region', 'state', 'city'];
const HIT_COLUMNS = ['site_id', 'type', 'ts', 'visitor_id', 'visit_id', ...TEXT_COLUMNS, 'event_name', 'value', 'first_view', 'log_node', 'log_seq'];
const JOURNEY_COLUMNS = ['journey_length', 'journey_2', 'journey_3', 'journey_4', 'journey_5'];
const VISIT_COLUMNS = ['visit_id', 'site_id', 'visitor_id', 'started_at', 'last_seen_at', 'entry_page', 'exit_page', 'exit_hostname', 'pageviews', 'events', 'referrer_hostname', 'referrer_pathname', 'paths_exact', 'version', ...JOURNEY_COLUMNS];

/** The embedded store's rows as CSV files for ClickHouse (times as epoch milliseconds, under site id `to`). */
async function exportForClickHouse(db: DuckDatabase, from: string, to: string, dir: string): Promise<{ hits: string; visits: string }> {
  if (!/^[A-Za-z0-9]+$/.test(to)) throw new Error(`unexpected site id ${to}`);
  const hits = join(dir, 'hits.csv');
  const visits = join(dir, 'visits.csv');
  await db.serial(async (q) => {
    await q.exec(
      `COPY (SELECT '${to}', type, epoch_ms(ts), visitor_id, visit_id, ${TEXT_COLUMNS.join(', ')}, event_name, value, CAST(first_view AS INTEGER), '', 0
             FROM hits WHERE site_id = '${from}' ORDER BY ts) TO '${hits}' (FORMAT CSV, HEADER false)`,
    );
    await q.exec(
      `COPY (SELECT visit_id, '${to}', visitor_id, epoch_ms(started_at), epoch_ms(last_seen_at), entry_page, exit_page, exit_hostname,
                    pageviews, events, referrer_hostname, referrer_pathname, CAST(paths_exact AS INTEGER), pageviews + events,
                    ${JOURNEY_COLUMNS.join(', ')}
             FROM visits WHERE site_id = '${from}' ORDER BY started_at) TO '${visits}' (FORMAT CSV, HEADER false)`,
    );
  });
  return { hits, visits };
}

/** A ClickHouse engine of the benchmark: the server over HTTP, or chdb in process (`transport`). */
interface Engine {
  name: string;
  transport?: OpenTransport;
}

const STRUCTURE_TYPES: Record<string, string> = {
  ts: 'Int64', started_at: 'Int64', last_seen_at: 'Int64', value: 'Int64', visitor_id: 'UInt64', visit_id: 'UInt64', version: 'UInt64',
  log_seq: 'UInt64', pageviews: 'UInt32', events: 'UInt32', first_view: 'UInt8', paths_exact: 'UInt8', journey_length: 'UInt8',
};

/**
 * Copies the embedded store's rows into a scale-out app's ClickHouse: exported by DuckDB as CSV, read by the
 * server over HTTP or by chdb from the file itself (file()). Then waits for background merges to settle, as a
 * long-running server's tables would be.
 */
async function copyToClickHouse(engine: Engine, db: DuckDatabase, from: string, to: string, database: string): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-bench-'));
  const conn = engine.transport ? ClickHouseConnection.open(parseClickHouseUrl(CLICKHOUSE_URL, database), { transport: engine.transport }) : undefined;
  try {
    const files = await exportForClickHouse(db, from, to, dir);
    const load = async (table: string, columns: string[], file: string) => {
      if (!conn) return clickhouseInsert(database, `INSERT INTO ${table} (${columns.join(', ')}) FORMAT CSV`, file);
      const structure = columns.map((c) => `${c} ${STRUCTURE_TYPES[c] ?? 'String'}`).join(', ');
      return conn.insert(`INSERT INTO ${table} (${columns.join(', ')}) SELECT * FROM file(${stringLiteral(file)}, 'CSV', ${stringLiteral(structure)})`);
    };
    await load('visits', VISIT_COLUMNS, files.visits);
    await load('hits', HIT_COLUMNS, files.hits);
    for (let i = 0; i < 600; i++) {
      const sql = `SELECT count() AS n FROM system.merges WHERE database = ${stringLiteral(database)}`;
      const merging = conn ? Number((await conn.rows(sql))[0]?.n ?? 0) : Number((await clickhouseRows(database, sql.replace(' AS n', ''))).trim());
      if (merging === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  } finally {
    await conn?.close();
    await rm(dir, { recursive: true, force: true });
  }
}

/** The database BENCH_KEEP_CLICKHOUSE=1 moves the loaded tables to (replacing the previous run's). */
const KEPT_DATABASE = 'plumb_bench_reports';

/**
 * Moves the loaded hits and visits out of the run's database (which is dropped with the rest of the fixture)
 * into KEPT_DATABASE, to try report SQL on by hand without loading again.
 */
async function keepClickHouseTables(database: string, site: string, end: Date): Promise<void> {
  await clickhouseRows('default', `DROP DATABASE IF EXISTS ${KEPT_DATABASE}`);
  await clickhouseRows('default', `CREATE DATABASE ${KEPT_DATABASE}`);
  for (const table of ['hits', 'visits']) await clickhouseRows('default', `RENAME TABLE ${database}.${table} TO ${KEPT_DATABASE}.${table}`);
  console.log(`ClickHouse tables kept in ${KEPT_DATABASE} (site ${site}, range end ${end.toISOString()}); DROP DATABASE ${KEPT_DATABASE} when done`);
}

/** A scale-out app (PostgreSQL + ClickHouse + Redis, fresh namespaces) on `engine`, with the bench's tokens. */
async function startScaleOutApp(engine: Engine): Promise<{ t: TestApp; database: string; version: string; drop: () => Promise<void> }> {
  const fixture = await freshScaleOut();
  const plumb = await assemble({
    dbPath: ':memory:',
    scaleOut: { ...fixture.options, ...(engine.transport ? { clickhouseTransport: engine.transport } : {}) },
    redisPrefix: fixture.redisPrefix,
    adminToken: ADMIN_TOKEN,
    rateLimits: false,
    excludedHosts: [],
    authCacheMs: 0,
    gate: { maxConcurrent: 2 },
    dayRollupTimer: false,
  });
  await bootstrap(plumb.meta, OWNER_TOKEN);
  await plumb.app.ready();
  const t = {
    ...plumb,
    async call(token: string | undefined, method: 'GET' | 'POST', url: string, body?: unknown) {
      const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {};
      const res = await plumb.app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
      return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers };
    },
  } as unknown as TestApp;
  const events = plumb.events as ClickHouseEventStore;
  const drop = async () => {
    // In process, the fixture's clean-up (on the server) cannot reach chdb's copy: dropped here first.
    if (engine.transport && process.env.BENCH_KEEP_CLICKHOUSE !== '1') await events.dropDatabase();
    await plumb.close();
    await fixture.drop();
  };
  return { t, database: fixture.options.clickhouseDatabase!, version: events.features.version, drop };
}

/**
 * Builds the day rollups of every closed day the app's ClickHouse holds, as its background rounds would (and
 * the reports then read them): rounds until one builds nothing. Returns the days built and the wall time.
 */
async function buildDayRollups(t: TestApp): Promise<{ days: number; ms: number }> {
  const started = performance.now();
  let days = 0;
  for (;;) {
    const { built } = await t.dayRollups!.runOnce();
    if (built === 0) break;
    days += built;
  }
  return { days, ms: performance.now() - started };
}

const rollupNote = (r: { days: number; ms: number }) => `day rollups of ${r.days} days built in ${(r.ms / 1000).toFixed(1)} s`;

const ENGINES: Record<string, Engine> = {
  clickhouse: { name: 'server, HTTP' },
  chdb: { name: 'chdb, in process', transport: chdbTransport },
};

/**
 * BENCH_GENERATE=clickhouse: the traffic generated inside ClickHouse 26 (chdb) at 10 million pageviews (the
 * baseline, in the same run) and at `pageviews`, the same reports timed on each; no DuckDB (its answers are not
 * compared: the rows differ).
 */
async function benchGenerated(pageviews: number, rounds: number): Promise<void> {
  const engine = ENGINES.chdb!;
  const end = new Date(Math.floor(Date.now() / DAY) * DAY);
  const runs: { size: number; visits: number; generateMs: number; rollups: { days: number; ms: number }; results: Result[]; version: string }[] = [];
  for (const size of [...new Set([10_000_000, pageviews])]) {
    const ch = await startScaleOutApp(engine);
    try {
      const site = (await ch.t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Bench', timezone: 'UTC' })).body.id as string;
      const conn = ClickHouseConnection.open(parseClickHouseUrl(CLICKHOUSE_URL, ch.database), { transport: engine.transport! });
      const started = performance.now();
      try {
        const { visits } = await generateInClickHouse(conn, site, size, end);
        const generateMs = performance.now() - started;
        for (let i = 0; i < 3600; i++) {
          const [row] = await conn.rows(`SELECT count() AS n FROM system.merges WHERE database = ${stringLiteral(ch.database)}`);
          if (Number(row?.n ?? 0) === 0) break;
          await new Promise((resolve) => setTimeout(resolve, 1000));
        }
        const rollups = await buildDayRollups(ch.t);
        const timed = await timeReports(ch.t, site, reportCases(site, end), rounds);
        runs.push({ size, visits, generateMs, rollups, results: timed.results, version: ch.version });
      } finally {
        await conn.close();
      }
    } finally {
      await ch.drop();
    }
  }
  const machine = `${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; median of ${rounds} runs each`;
  for (const r of runs) {
    printTable(`ClickHouse ${r.version} (chdb): ${r.size.toLocaleString('en')} pageviews, ${r.visits.toLocaleString('en')} visits generated in ${(r.generateMs / 1000).toFixed(1)} s, ${rollupNote(r.rollups)} (${machine}; direct SQL: the hits alone)`, r.results);
  }
  if (runs.length === 2) {
    console.log(`\n| report | ${runs.map((r) => `${r.size / 1e6} M API ms`).join(' | ')} | ratio |`);
    console.log('|---|---|---|---|');
    runs[0]!.results.forEach((b, i) => console.log(`| ${b.name} | ${b.api.toFixed(1)} | ${runs[1]!.results[i]!.api.toFixed(1)} | ${(runs[1]!.results[i]!.api / b.api).toFixed(2)} |`));
  }
}

/**
 * An embedded app whose store is a database file in a temporary folder, as Plumb keeps its data: in memory DuckDB
 * compresses nothing, and reports took 1.1-3.2 times as long (docs/benchmarks.md, "Reports"). PLUMB_DUCKDB_MEMORY_LIMIT
 * as the server takes it. `close` stops the app and removes the folder.
 */
export async function startFileApp(): Promise<{ t: TestApp; close: () => Promise<void> }> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-bench-'));
  const memoryLimit = process.env.PLUMB_DUCKDB_MEMORY_LIMIT;
  const t = await startTestApp({
    limits: undefined,
    gate: { maxConcurrent: 2 },
    dbPath: join(dir, 'plumb.duckdb'),
    ...(memoryLimit ? { duckdbMemoryLimit: memoryLimit } : {}),
  });
  return {
    t,
    close: async () => {
      await t.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function benchReports(pageviews = 10_000_000, rounds = 7): Promise<void> {
  // BENCH_ROUNDS: fewer timed runs per report (long runs at large sizes); medians of fewer runs vary more.
  if (process.env.BENCH_ROUNDS) rounds = Number(process.env.BENCH_ROUNDS);
  if (process.env.BENCH_GENERATE === 'clickhouse') return benchGenerated(pageviews, rounds);
  const stores = (process.env.BENCH_STORES ?? 'embedded,clickhouse,chdb').split(',');
  const { t, close } = await startFileApp();
  const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Bench', timezone: 'UTC' })).body.id as string;
  const end = new Date(Math.floor(Date.now() / DAY) * DAY);
  const db = (t.meta as unknown as { db: DuckDatabase }).db;
  let started = performance.now();
  const { visits } = await load(db, site, pageviews, end);
  const loadMs = performance.now() - started;
  const [{ n } = { n: 0n }] = await t.events.query("SELECT count(*) AS n FROM hits WHERE type = 'pageview'", []) as { n: bigint }[];
  const embedded = await timeReports(t, site, reportCases(site, end), rounds);

  const scaleOut: { title: string; label: string; results: Result[] }[] = [];
  for (const key of ['clickhouse', 'chdb'].filter((k) => stores.includes(k))) {
    const engine = ENGINES[key]!;
    const ch = await startScaleOutApp(engine);
    let chSite = '';
    try {
      chSite = (await ch.t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Bench', timezone: 'UTC' })).body.id as string;
      started = performance.now();
      await copyToClickHouse(engine, db, site, chSite, ch.database);
      const copyMs = performance.now() - started;
      const rollups = await buildDayRollups(ch.t);
      const timed = await timeReports(ch.t, chSite, reportCases(chSite, end), rounds);
      // Same rows, same reports: the answers must be the embedded store's, or the timing compares nothing.
      if (JSON.stringify(timed.answers) !== JSON.stringify(embedded.answers)) {
        throw new Error(`ClickHouse ${ch.version} (${engine.name}) answered differently from DuckDB`);
      }
      scaleOut.push({
        title: `ClickHouse ${ch.version} (${engine.name}), scale-out (copy ${(copyMs / 1000).toFixed(1)} s, ${rollupNote(rollups)}; direct SQL: the hits alone)`,
        label: `ClickHouse ${ch.version}`,
        results: timed.results,
      });
      console.log(`${scaleOut.at(-1)!.title}: every answer equals DuckDB's`);
    } finally {
      if (!engine.transport && process.env.BENCH_KEEP_CLICKHOUSE === '1' && chSite) await keepClickHouseTables(ch.database, chSite, end);
      await ch.drop();
    }
  }
  await close();

  const machine = `${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; median of ${rounds} runs each`;
  console.log(`\nReport benchmark: ${Number(n).toLocaleString('en')} pageviews, ${visits.toLocaleString('en')} visits over 30 days (${machine})`);
  printTable(`Embedded DuckDB (load ${(loadMs / 1000).toFixed(1)} s)`, embedded.results);
  for (const run of scaleOut) printTable(run.title, run.results);
  if (scaleOut.length > 0) {
    console.log(`\n| report | embedded API ms | ${scaleOut.map((r) => `${r.label} API ms | / embedded`).join(' | ')} |`);
    console.log(`|---|---|${scaleOut.map(() => '---|---|').join('')}`);
    embedded.results.forEach((e, i) =>
      console.log(`| ${e.name} | ${e.api.toFixed(1)} | ${scaleOut.map((r) => `${r.results[i]!.api.toFixed(1)} | ${(r.results[i]!.api / e.api).toFixed(2)}`).join(' | ')} |`),
    );
  }
}
