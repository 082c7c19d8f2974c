// Reports on ClickHouse answer exactly what they answer on DuckDB: the same hits (generated traffic, hand-written
// millisecond edges and hostile text, pushed through the real import pipeline into DuckDB, then copied into a
// fresh ClickHouse database), one ReportEngine per store, and a broad matrix of requests compared as whole answers,
// errors included. DuckDB's answers are themselves checked against the oracle by aggregations.test.ts.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { after, before, describe, it } from 'node:test';
import type { StoredHit, VisitRecord } from '../../src/domain/hits.js';
import { DEFAULT_DEMO_EVENTS, demoTraffic, type DemoHit } from '../../src/cli/demo-traffic.js';
import { importLines } from '../../src/ingest/line-import.js';
import { Ingest } from '../../src/ingest/ingest.js';
import { Metrics } from '../../src/metrics.js';
import { ClickHouseDialect } from '../../src/report/clickhouse-dialect.js';
import { ReportCompiler } from '../../src/report/compiler.js';
import { SqlDialect } from '../../src/report/dialect.js';
import { ReportEngine } from '../../src/report/engine.js';
import { parseReportRequest } from '../../src/report/parse.js';
import { QueryGate } from '../../src/report/query-gate.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import type { ImportedDay, ImportedDimension, Site } from '../../src/store/types.js';
import { testConnection, testEngine } from '../helpers/clickhouse.js';

const NOW = new Date('2026-03-10T12:00:00.250Z');
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';

const HOSTILE = [
  "'; DROP TABLE hits; --", "' OR '1'='1", '\\', "\\'", 'a\u0000b', '$1', '?', '%', '_', '*', 'ünïcödé ✓ 😀', 'ÜNÏCÖDÉ',
  ') UNION SELECT * FROM visits --', '.*', '[', '(a|b', '\\d+', '^/it\'s$', '\n',
];

/** Hand-written hits: millisecond edges (durations that round at .005), hostile paths, a visit across midnight. */
function edgeLines(site: string): DemoHit[] {
  let ip = 10;
  const line = (at: string, path: string, o: Partial<DemoHit> = {}): DemoHit => ({
    type: 'pageview', site_id: site, timestamp: at, url: `https://edge.example${path}`, referrer: '', user_agent: UA, ip: `81.2.69.${ip}`, ...o,
  });
  const visit = (hits: [string, string][], o: Partial<DemoHit> = {}) => (ip++, hits.map(([at, p]) => line(at, p, o)));
  return [
    ...visit([['2026-03-07T12:00:00.000Z', '/ms/a'], ['2026-03-07T12:00:01.005Z', '/ms/b']]),
    ...visit([['2026-03-07T12:10:00.001Z', '/ms/a'], ['2026-03-07T12:10:00.999Z', '/ms/a'], ['2026-03-07T12:10:02.000Z', '/ms/c']]),
    ...visit([['2026-03-08T04:59:59.999Z', '/edge/before-midnight'], ['2026-03-08T05:00:00.000Z', '/edge/midnight']]),
    ...visit([['2026-03-08T06:59:59.500Z', '/edge/gap'], ['2026-03-08T07:00:00.500Z', '/edge/gap-after']], { referrer: 'https://t.co/x' }),
    ...visit([['2026-03-08T10:00:00Z', `/${encodeURIComponent("it's")}`], ['2026-03-08T10:00:01Z', '/50%25off'], ['2026-03-08T10:00:02Z', '/a_b']]),
    ...visit([['2026-03-08T11:00:00Z', '/back%5Cslash'], ['2026-03-08T11:00:01Z', '/%C3%BCn%C3%AFc%C3%B6d%C3%A9'], ['2026-03-08T11:00:02Z', '/%C3%9CN%C3%8FC%C3%96D%C3%89']]),
    ...visit([['2026-03-08T12:00:00Z', '/re.*+(x)[y]{1}|^$'], ['2026-03-08T12:00:01Z', '/nul%00byte'], ['2026-03-08T12:00:02Z', '/q%27%5C%27']]),
    ...visit([['2026-03-09T23:59:59.999Z', '/late']], { referrer: 'https://news.ycombinator.com/item?id=1' }),
    // Current visitors: within 5 minutes of NOW.
    ...visit([['2026-03-10T11:56:00Z', '/now/a'], ['2026-03-10T11:58:00Z', '/now/b']], { referrer: 'https://www.google.com/' }),
    ...visit([['2026-03-10T11:55:00.250Z', '/now/a']]),
    ...visit([['2026-03-10T11:55:00.249Z', '/now/too-old']]),
  ];
}

type Params = Record<string, string>;

describe('reports on ClickHouse answer as on DuckDB', () => {
  let db: DuckDatabase;
  let meta: SqlMetaStore;
  let duck: DuckEventStore;
  let ch: ClickHouseEventStore;
  let ingest: Ingest;
  let duckReports: ReportEngine;
  let chReports: ReportEngine;
  const sites: Record<'ny' | 'kolkata', Site> = {} as never;
  let sample: StoredHit[] = [];

  before(async () => {
    db = await DuckDatabase.open(':memory:');
    await migrate(db);
    meta = new SqlMetaStore(db);
    duck = await DuckEventStore.open(db);
    ingest = await Ingest.start(meta, duck, new Metrics({ processMetrics: false }));
    const account = await meta.createAccount({ name: 'A', email: 'a@a.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const newSite = (timezone: string, multiDomain: boolean) =>
      meta.createSite({ accountId: account.id, name: timezone, sharing: 'none', sharePasswordHash: null, timezone, multiDomain, multiDomainOption: multiDomain ? 'combined' : null });
    sites.ny = await newSite('America/New_York', false);
    sites.kolkata = await newSite('Asia/Kolkata', true);
    for (const site of Object.values(sites)) {
      for (const e of DEFAULT_DEMO_EVENTS) await meta.createGoal({ siteId: site.id, name: e.name, currency: 'dollar' });
      const lines = [...demoTraffic({ siteId: site.id, start: new Date('2026-03-06T00:00:00Z'), days: 4, visitsPerDay: 150, seed: site.timezone.length }), ...edgeLines(site.id)];
      const result = await importLines(lines.map((l) => JSON.stringify(l)), await ingest.importPipeline(), ingest.buffer);
      assert.ok(result.imported > 1000, JSON.stringify(result.errors));
    }
    await ingest.flush();
    const database = `plumb_test_${randomBytes(6).toString('hex')}`;
    ch = await ClickHouseEventStore.open({ ...testEngine(), database, node: 'test' });
    // Visits as a live ClickHouse holds them: several versions of each in separate parts, older ones written
    // before and after the newest (processes race), merges stopped so that only FINAL can pick the right one.
    const conn = testConnection(database);
    await conn.exec('SYSTEM STOP MERGES visits');
    await conn.close();
    const stale = (v: VisitRecord): VisitRecord =>
      v.pageviews > 0 ? { ...v, pageviews: v.pageviews - 1, exitPage: '/stale', lastSeenAt: v.startedAt, pathsExact: !v.pathsExact } : { ...v, events: v.events - 1 };
    for (const site of Object.values(sites)) {
      const visits = await duck.listVisits(site.id);
      await ch.write([], visits.filter((_, i) => i % 2 === 0).map(stale));
      await ch.write(await duck.listHits(site.id), visits);
      await ch.write([], visits.filter((_, i) => i % 2 === 1).map(stale));
    }
    sample = await duck.listHits(sites.ny.id);
    duckReports = new ReportEngine(duck, new ReportCompiler(new SqlDialect()), new QueryGate(), () => NOW);
    chReports = new ReportEngine(ch, new ReportCompiler(new ClickHouseDialect(ch.features)), new QueryGate(), () => NOW);
  });
  after(async () => {
    await ingest?.close();
    await ch?.dropDatabase();
    await ch?.close();
    await duck?.close();
    await meta?.close();
  });

  /** Both engines' answer (rows, or the error's status and body) to one request. */
  async function answers(site: Site, params: Params): Promise<[unknown, unknown]> {
    const run = async (engine: ReportEngine) => {
      try {
        const entity = params.entity === 'event' ? {} : { entity: 'pageview', entity_id: site.id };
        return await engine.aggregate(parseReportRequest({ ...entity, ...params }), site);
      } catch (err) {
        return { error: (err as Error).constructor.name, message: (err as Error).message };
      }
    };
    return [await run(duckReports), await run(chReports)];
  }

  async function same(site: Site, params: Params, nonEmpty = true): Promise<void> {
    const [expected, actual] = await answers(site, params);
    assert.deepEqual(actual, expected, JSON.stringify(params));
    if (nonEmpty) {
      assert.ok(Array.isArray(expected) && expected.length > 0, `DuckDB found nothing for ${JSON.stringify(params)}: the case tests too little`);
      const totals = expected as Record<string, string>[];
      if (totals.length === 1 && !params.date_grouping && !params.field_grouping) assert.ok(Object.values(totals[0]!).some((v) => v !== '0'), 'all zero');
    }
  }

  const RANGE = { date_from: '2026-03-06 00:00:00', date_to: '2026-03-10 23:59:59' };
  const PV = ['pageviews', 'visits', 'uniques', 'avg_duration', 'bounce_rate', 'visitors'];
  const ALL = PV.join(',');
  const FIELDS = [
    'hostname', 'pathname', 'entry_page', 'exit_page', 'referrer_hostname', 'referrer_pathname', 'referrer_source', 'browser',
    'country_code', 'city', 'state', 'region', 'device_type', 'operating_system', 'utm_campaign', 'utm_content', 'utm_medium',
    'utm_source', 'utm_term', 'keyword', 'ref',
  ];
  const filters = (...f: [string, string, string][]) => JSON.stringify(f.map(([property, operator, value]) => ({ property, operator, value })));

  it('copies every hit and visit', async () => {
    for (const site of Object.values(sites)) {
      assert.deepEqual(await ch.listHits(site.id).then((h) => h.length), (await duck.listHits(site.id)).length);
      const key = (v: { visitId: bigint; pageviews: number; startedAt: Date; lastSeenAt: Date }) => `${v.visitId} ${v.pageviews} ${+v.startedAt} ${+v.lastSeenAt}`;
      assert.deepEqual((await ch.listVisits(site.id)).map(key).sort(), (await duck.listVisits(site.id)).map(key).sort());
    }
  });

  it('aggregates alone and together', async () => {
    for (const a of PV) await same(sites.ny, { aggregates: a, ...RANGE });
    await same(sites.ny, { aggregates: ALL, ...RANGE });
    await same(sites.ny, { aggregates: [...PV].reverse().join(','), ...RANGE });
  });

  it('visitors (visitor-days) with every plan beside it: alone, by time, by field, with visit-level filters', async () => {
    for (const others of ['', 'pageviews,', 'visits,avg_duration,', 'uniques,', 'pageviews,uniques,bounce_rate,']) {
      const aggregates = `${others}visitors`;
      await same(sites.ny, { aggregates, ...RANGE });
      await same(sites.ny, { aggregates, date_grouping: 'day', timezone: 'Asia/Kolkata', ...RANGE });
      await same(sites.ny, { aggregates, field_grouping: 'pathname', ...RANGE });
      await same(sites.ny, { aggregates, field_grouping: 'entry_page,referrer_source', ...RANGE });
      await same(sites.ny, { aggregates, filters: filters(['exit_page', 'is not', '/']), date_grouping: 'day', ...RANGE });
      await same(sites.ny, { aggregates, field_grouping: 'utm_source', sort_by: 'visitors:desc', limit: '5', ...RANGE });
    }
  });

  it('date groupings in several zones', async () => {
    for (const zone of ['America/New_York', 'UTC', 'Asia/Kolkata', 'Australia/Lord_Howe', 'Asia/Kathmandu']) {
      for (const g of ['hour', 'day', 'month', 'year']) {
        const range = g === 'hour' ? { date_from: '2026-03-07 00:00:00', date_to: '2026-03-09 23:59:59' } : RANGE;
        await same(sites.ny, { aggregates: ALL, date_grouping: g, timezone: zone, ...range });
        await same(sites.ny, { aggregates: 'visits,pageviews', date_grouping: g, timezone: zone, ...range });
        await same(sites.ny, { aggregates: 'pageviews', date_grouping: g, timezone: zone, ...range });
        await same(sites.ny, { aggregates: 'uniques,pageviews', date_grouping: g, timezone: zone, ...range });
      }
    }
  });

  it('every field grouping, with every plan', async () => {
    for (const field of FIELDS) {
      await same(sites.ny, { aggregates: ALL, field_grouping: field, ...RANGE });
      await same(sites.ny, { aggregates: 'visits,pageviews', field_grouping: field, ...RANGE });
      await same(sites.ny, { aggregates: 'visits,bounce_rate', field_grouping: field, ...RANGE });
    }
    await same(sites.ny, { aggregates: ALL, field_grouping: 'pathname,entry_page', date_grouping: 'day', ...RANGE });
    await same(sites.ny, { aggregates: 'uniques', field_grouping: 'pathname', date_grouping: 'hour', date_from: '2026-03-08 00:00:00', date_to: '2026-03-08 23:59:59' });
    await same(sites.kolkata, { aggregates: ALL, field_grouping: 'hostname,pathname', ...RANGE });
  });

  it('sorts, ties and limits', async () => {
    for (const sort of ['visits:asc', 'visits:desc', 'pathname:asc', 'pathname:desc', 'bounce_rate:desc', 'avg_duration:asc', 'uniques:desc']) {
      await same(sites.ny, { aggregates: ALL, field_grouping: 'pathname', sort_by: sort, ...RANGE });
      await same(sites.ny, { aggregates: ALL, field_grouping: 'pathname', sort_by: sort, limit: '7', ...RANGE });
    }
    await same(sites.ny, { aggregates: ALL, date_grouping: 'day', sort_by: 'timestamp:desc', ...RANGE });
    await same(sites.ny, { aggregates: 'visits', date_grouping: 'hour', field_grouping: 'device_type', sort_by: 'visits:desc', limit: '13', date_from: '2026-03-07 00:00:00', date_to: '2026-03-08 00:00:00' });
  });

  it('ranges that cut through visits, to the millisecond', async () => {
    for (const [from, to] of [
      ['2026-03-07 07:00:00', '2026-03-07 07:00:00'],
      ['2026-03-07 07:00:01', '2026-03-07 07:10:00'],
      ['2026-03-07 13:17:00', '2026-03-08 09:41:59'],
      ['2026-03-07 23:59:59', '2026-03-08 00:00:00'],
      ['2026-03-08 01:59:59', '2026-03-08 03:00:00'],
    ]) {
      for (const extra of [{}, { date_grouping: 'hour' }, { field_grouping: 'pathname' }, { field_grouping: 'entry_page' }] as Params[]) {
        await same(sites.ny, { aggregates: ALL, date_from: from!, date_to: to!, ...extra }, false);
      }
    }
  });

  it('the default range: from the first hit to now', async () => {
    await same(sites.ny, { aggregates: ALL });
    await same(sites.ny, { aggregates: 'visits', date_grouping: 'day' });
    await same(sites.ny, { entity: 'event', site_id: sites.ny.id, entity_name: 'Purchase', aggregates: 'conversions,unique_conversions,value' });
  });

  it('filters on every operator, alone and combined', async () => {
    const common = (pick: (h: StoredHit) => string) => {
      const counts = new Map<string, number>();
      for (const h of sample) if (pick(h)) counts.set(pick(h), (counts.get(pick(h)) ?? 0) + 1);
      return [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    };
    const values: Record<string, string> = {
      pathname: common((h) => h.pathname),
      hostname: common((h) => h.hostname),
      domain: common((h) => h.hostname).replace(/^[a-z]+:\/\//, ''),
      entry_page: '/',
      exit_page: common((h) => h.pathname),
      referrer_hostname: common((h) => h.referrerHostname),
      referrer_pathname: common((h) => h.referrerPathname),
      referrer_source: common((h) => h.referrerSource),
      ref: common((h) => h.ref),
      utm_source: common((h) => h.utmSource),
      utm_campaign: common((h) => h.utmCampaign),
      utm_medium: common((h) => h.utmMedium),
      utm_content: common((h) => h.utmContent),
      country_code: common((h) => h.countryCode),
      browser: common((h) => h.browser),
      device_type: common((h) => h.deviceType),
      operating_system: common((h) => h.operatingSystem),
      city: common((h) => h.city),
    };
    const exactOnly = new Set(['country_code', 'browser', 'device_type', 'operating_system', 'city']);
    for (const [property, value] of Object.entries(values)) {
      const ops: [string, string][] = [['is', value], ['is not', value]];
      if (!exactOnly.has(property)) {
        const part = value.slice(1, 4).toUpperCase();
        ops.push(['is like', part], ['is not like', part], ['is like', `${value.slice(0, 2)}*${value.slice(-1)}`], ['matching', `^${value.slice(0, 3).replace(/[.*+?^$()[\]{}|\\]/g, '\\$&')}`], ['not matching', '[a-e]']);
      }
      for (const [operator, v] of ops) {
        for (const aggregates of [ALL, 'pageviews,visits']) await same(sites.ny, { aggregates, filters: filters([property, operator, v]), ...RANGE }, false);
        await same(sites.ny, { aggregates: 'visits,pageviews', field_grouping: 'pathname', filters: filters([property, operator, v]), ...RANGE }, false);
      }
    }
    await same(sites.ny, { aggregates: ALL, field_grouping: 'referrer_source', filters: filters(['pathname', 'is', '/'], ['pathname', 'is like', 'blog'], ['country_code', 'is not', 'US'], ['entry_page', 'matching', '^/(pricing|blog)']), ...RANGE });
    await same(sites.ny, { aggregates: ALL, date_grouping: 'day', filters: filters(['exit_page', 'is not like', 'docs'], ['domain', 'is like', '*.*']), ...RANGE });
  });

  it('hostile values through every operator, and hostile stored text', async () => {
    for (const value of HOSTILE) {
      for (const operator of ['is', 'is not', 'is like', 'is not like', 'matching', 'not matching']) {
        for (const property of ['pathname', 'domain', 'utm_source', 'entry_page']) {
          await same(sites.ny, { aggregates: 'pageviews,visits', filters: filters([property, operator, value]), ...RANGE }, false);
        }
      }
    }
    // Whatever the pipeline stored for the hand-written paths (quotes, backslashes, %, _, Unicode, metacharacters).
    const stored = [...new Set(sample.filter((h) => h.hostname === 'https://edge.example').map((h) => h.pathname))];
    assert.ok(stored.some((p) => p.includes("'")) && stored.some((p) => p.includes('\\')) && stored.some((p) => p.includes('ü')));
    for (const path of stored) {
      for (const operator of ['is', 'is like', 'is not like']) {
        await same(sites.ny, { aggregates: 'pageviews', field_grouping: 'pathname', filters: filters(['pathname', operator, path]), ...RANGE }, operator !== 'is not like');
      }
    }
    await same(sites.ny, { aggregates: 'pageviews', field_grouping: 'pathname', filters: filters(['pathname', 'matching', '^/re\\.\\*\\+']), ...RANGE });
    await same(sites.ny, { aggregates: 'pageviews', field_grouping: 'pathname', filters: filters(['pathname', 'is like', 'ünï']), ...RANGE });
    // RE2 as DuckDB runs it: \Q...\E quoting, and `.` not matching a newline.
    await same(sites.ny, { aggregates: 'pageviews', field_grouping: 'pathname', filters: filters(['pathname', 'matching', '\\Q/50%25off\\E']), ...RANGE });
    await same(sites.ny, { aggregates: 'pageviews', field_grouping: 'pathname', filters: filters(['pathname', 'matching', '(?i)ÜNÏ|/A_B']), ...RANGE });
  });

  it('event reports', async () => {
    for (const e of DEFAULT_DEMO_EVENTS) {
      const base = { entity: 'event', site_id: sites.ny.id, entity_name: e.name, ...RANGE };
      await same(sites.ny, { ...base, aggregates: 'conversions,unique_conversions,value' });
      await same(sites.ny, { ...base, aggregates: 'conversions,unique_conversions,value', date_grouping: 'day' });
      await same(sites.ny, { ...base, aggregates: 'value,conversions', field_grouping: 'pathname' });
      await same(sites.ny, { ...base, aggregates: 'unique_conversions', field_grouping: 'entry_page,referrer_source' });
      await same(sites.ny, { ...base, aggregates: 'conversions', filters: filters(['exit_page', 'is not', '/']) }, false);
    }
    await same(sites.ny, { entity: 'event', site_id: sites.ny.id, entity_name: "no such'event", aggregates: 'conversions', ...RANGE }, false);
  });

  it('refuses the same requests', async () => {
    for (const params of [
      { aggregates: 'pageviews', filters: filters(['pathname', 'matching', '(unclosed']), ...RANGE },
      { aggregates: 'pageviews', date_grouping: 'hour', date_from: '2026-03-01 00:00:00', date_to: '2026-03-09 00:00:00' },
      { aggregates: 'pageviews', filters: filters(['pathname', 'matching', '\\']), ...RANGE },
      { aggregates: 'pageviews', filters: filters(['pathname', 'matching', '\\q']), ...RANGE },
      { aggregates: 'pageviews', date_from: '2026-03-09 00:00:00', date_to: '2026-03-08 00:00:00' },
    ] as Params[]) {
      const [expected, actual] = await answers(sites.ny, params);
      assert.ok(!Array.isArray(expected), `DuckDB refuses ${JSON.stringify(params)}`);
      assert.deepEqual(actual, expected);
    }
  });

  it('current visitors', async () => {
    for (const site of Object.values(sites)) {
      for (const detailed of [false, true]) {
        const expected = await duckReports.currentVisitors(site.id, detailed);
        assert.ok(expected.total >= 2, JSON.stringify(expected));
        assert.deepEqual(await chReports.currentVisitors(site.id, detailed), expected);
      }
    }
  });

  it('imported days join recorded hits alike, bounce rate and duration from the parts of both', async () => {
    const site = sites.ny;
    const importId = 'imported-days-test';
    const rows: ImportedDay[] = [];
    const days = ['2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09'];
    const add = (dimension: ImportedDimension, value: string, day: string, n: number) =>
      rows.push({ importId, siteId: site.id, day, dimension, value, pageviews: 3 * n, visits: n, visitors: n - 1, bounces: Math.floor(n / 3), visitDuration: 37 * n + 1 });
    days.forEach((day, i) => {
      add('', '', day, 100 + i);
      add('browser', 'Firefox', day, 40 + i);
      add('browser', 'Chrome', day, 60);
      add('pathname', '/ms/a', day, 7 + i);
      add('pathname', '/imported-only', day, 5);
      add('entry_page', '/ms/a', day, 9);
      add('event_name', DEFAULT_DEMO_EVENTS[0]!.name, day, 4 + i);
      // As Fathom's rows by field: pageviews only.
      rows.push({ importId, siteId: site.id, day, dimension: 'referrer_hostname', value: 'https://t.co', pageviews: 11 + i, visits: 0, visitors: 0, bounces: 0, visitDuration: 0, lacks: 15 });
    });
    const range = { date_from: '2026-03-06', date_to: '2026-03-09' };
    try {
      await duck.writeImportedDays(rows);
      await ch.writeImportedDays(rows);
      // The totals worked out from the stored hits and visits, independently of any query: the visits with a
      // pageview in the local days, each with its whole duration and whether it had one pageview.
      const from = Date.parse('2026-03-06T05:00:00Z');
      const until = Date.parse('2026-03-10T04:00:00Z'); // New York is on summer time from March 8
      const inRange = new Set((await duck.listHits(site.id)).filter((h) => h.type === 'pageview' && h.timestamp.getTime() >= from && h.timestamp.getTime() < until).map((h) => h.visitId));
      const visits = (await duck.listVisits(site.id)).filter((v) => inRange.has(v.visitId));
      const imported = rows.filter((r) => r.dimension === '');
      const visitCount = BigInt(visits.length + imported.reduce((a, r) => a + r.visits, 0));
      const bounces = BigInt(visits.filter((v) => v.pageviews === 1).length + imported.reduce((a, r) => a + r.bounces, 0));
      const durationMs = visits.reduce((a, v) => a + BigInt(v.lastSeenAt.getTime() - v.startedAt.getTime()), 0n) + BigInt(imported.reduce((a, r) => a + r.visitDuration, 0)) * 1000n;
      const decimal = (n: bigint, places: number) => {
        const scale = 10n ** BigInt(places);
        const fraction = (n % scale).toString().padStart(places, '0').replace(/0+$/, '');
        return fraction ? `${n / scale}.${fraction}` : `${n / scale}`;
      };
      const [totals] = await answers(site, { aggregates: 'visits,bounce_rate,avg_duration', ...range });
      assert.deepEqual(totals, [{
        visits: String(visitCount),
        bounce_rate: decimal((2n * bounces * 10_000n + visitCount) / (2n * visitCount), 4),
        avg_duration: decimal((2n * durationMs + 10n * visitCount) / (20n * visitCount), 2),
      }]);
      const cases: Params[] = [
        { aggregates: 'pageviews,visits,visitors,bounce_rate,avg_duration', date_grouping: 'day', ...range },
        { aggregates: 'bounce_rate,avg_duration,visits', field_grouping: 'browser', ...range },
        { aggregates: 'avg_duration', field_grouping: 'browser', sort_by: 'avg_duration:asc', ...range },
        { aggregates: 'pageviews,visits,visitors', field_grouping: 'pathname', limit: '5', ...range },
        { aggregates: 'pageviews,visits', filters: JSON.stringify([{ property: 'pathname', operator: 'is', value: '/ms/a' }]), ...range },
        { aggregates: 'pageviews', filters: JSON.stringify([{ property: 'pathname', operator: 'is not', value: '/ms/a' }]), date_grouping: 'month', ...range },
        { aggregates: 'visits,bounce_rate', filters: JSON.stringify([{ property: 'browser', operator: 'is not', value: 'Chrome' }]), ...range },
        { aggregates: 'bounce_rate,avg_duration', field_grouping: 'entry_page', ...range },
        { aggregates: 'pageviews', field_grouping: 'referrer_hostname', ...range },
        { entity: 'event', site_id: site.id, entity_name: DEFAULT_DEMO_EVENTS[0]!.name, aggregates: 'conversions', date_grouping: 'day', ...range },
      ];
      for (const params of cases) await same(site, params);
      // A number the rows lack is recorded hits only (as with no imported rows of that field); the request's other
      // numbers still count the imported days (per aggregate).
      const lacking = { aggregates: 'pageviews,visits', field_grouping: 'referrer_hostname', ...range };
      await same(site, lacking);
      const [answer] = await answers(site, lacking);
      const [pageviewsOnly] = await answers(site, { aggregates: 'pageviews', field_grouping: 'referrer_hostname', ...range });
      const [visitsOnly] = await answers(site, { aggregates: 'visits', field_grouping: 'referrer_hostname', ...range });
      const tco = (rows: unknown, a: string) => (rows as Record<string, string>[]).find((r) => r.referrer_hostname === 'https://t.co')?.[a] ?? '0';
      assert.equal(tco(answer, 'pageviews'), tco(pageviewsOnly, 'pageviews'));
      assert.ok(Number(tco(answer, 'pageviews')) >= rows.filter((r) => r.value === 'https://t.co').reduce((a, r) => a + r.pageviews, 0));
      assert.equal(tco(answer, 'visits'), tco(visitsOnly, 'visits'));
      // Imported rows are in these answers: the same request on the same hits without them differs.
      const [withImports] = await answers(site, cases[0]!);
      await duck.deleteImportedDays(site.id, importId);
      const [without] = await answers(site, cases[0]!);
      assert.notDeepEqual(without, withImports);
    } finally {
      await duck.deleteImportedDays(site.id, importId);
      await ch.deleteImportedDays(site.id, importId);
    }
  });
  it('imported days under is like, matching and their negations: hostile patterns and stored values, alike, exactly the rows kept', async () => {
    const site = sites.ny;
    const importId = 'imported-patterns-test';
    const days = ['2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09'];
    const range = { date_from: days[0]!, date_to: days[3]! };
    const stored = [...new Set(sample.filter((h) => h.hostname === 'https://edge.example').map((h) => h.pathname))];
    const values: Record<'pathname' | 'utm_source', string[]> = { pathname: [...HOSTILE, ...stored, '/ms/a', '/imported/Ünïcödé'], utm_source: [...HOSTILE, 'newsletter', 'NewsLetter'] };
    const rows: ImportedDay[] = [];
    for (const [d, day] of days.entries()) {
      for (const [dimension, list] of Object.entries(values) as ['pathname' | 'utm_source', string[]][]) {
        list.forEach((value, i) => rows.push({ importId, siteId: site.id, day, dimension, value, pageviews: 100 + 7 * i + d, visits: 50 + i, visitors: 40 + i, bounces: i, visitDuration: 9 * i + d }));
      }
    }
    // What each operator keeps, worked out apart from any database: `is like` lowers both sides, `*` any run
    // (newlines too, as SQL's %); the expressions are those meaning the same in JavaScript's RegExp as in RE2.
    const like = (pattern: string) => {
      const re = new RegExp(pattern.toLowerCase().split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*'), 's');
      return (v: string) => re.test(v.toLowerCase());
    };
    const SAME_IN_JS = new Set(['.*', '\\d+', "^/it's$", 'ünïcödé ✓ 😀', 'ÜNÏCÖDÉ', '$1', '%', '_', '\n']);
    const keeps = (operator: string, pattern: string): ((v: string) => boolean) | undefined => {
      switch (operator) {
        case 'is like':
          return like(pattern);
        case 'is not like':
          return (v) => !like(pattern)(v);
        case 'matching':
          return SAME_IN_JS.has(pattern) ? (v) => new RegExp(pattern, 'u').test(v) : undefined;
        case 'not matching':
          return SAME_IN_JS.has(pattern) ? (v) => !new RegExp(pattern, 'u').test(v) : undefined;
        default:
          return undefined;
      }
    };
    const checked: { params: Params; property: 'pathname' | 'utm_source'; keep: (v: string) => boolean; answer: unknown }[] = [];
    try {
      await duck.writeImportedDays(rows);
      await ch.writeImportedDays(rows);
      for (const property of ['pathname', 'utm_source'] as const) {
        for (const value of [...HOSTILE, 'NEWS*LETTER', '/ms/*', '(?i)^/imported/ünï']) {
          for (const operator of ['is like', 'is not like', 'matching', 'not matching']) {
            // Pages' visits and bounces are not parts of the site's (a visit views several): pageviews only.
            const params = { aggregates: property === 'pathname' ? 'pageviews' : 'pageviews,visits,bounce_rate', filters: filters([property, operator, value]), ...range };
            await same(site, params, false);
            await same(site, { aggregates: 'pageviews,visitors', field_grouping: property, filters: filters([property, operator, value]), ...range }, false);
            const keep = keeps(operator, value);
            const [answer] = await answers(site, params);
            if (keep && Array.isArray(answer)) checked.push({ params, property, keep, answer });
          }
        }
        // Several operators at once: positives ORed, negatives ANDed.
        await same(site, {
          aggregates: property === 'pathname' ? 'pageviews' : 'pageviews,visits,avg_duration', filters: filters([property, 'is like', 's'], [property, 'matching', '^/'], [property, 'is not like', 'it'], [property, 'not matching', '\\d']), ...range,
        });
      }
      assert.ok(checked.filter((c) => c.params.filters!.includes('"matching"')).length >= 8, 'too few expressions worked out');
      // Each answer less the same request without the imported rows is exactly the rows the filter keeps.
      await duck.deleteImportedDays(site.id, importId);
      for (const c of checked) {
        const [without] = await answers(site, c.params);
        const kept = rows.filter((r) => r.dimension === c.property && c.keep(r.value));
        const [withRow] = c.answer as Record<string, string>[];
        const [withoutRow] = without as Record<string, string>[];
        assert.equal(Number(withRow!.pageviews) - Number(withoutRow!.pageviews), kept.reduce((a, r) => a + r.pageviews, 0), JSON.stringify(c.params));
        if (c.property !== 'pathname') assert.equal(Number(withRow!.visits) - Number(withoutRow!.visits), kept.reduce((a, r) => a + r.visits, 0), JSON.stringify(c.params));
      }
    } finally {
      await duck.deleteImportedDays(site.id, importId);
      await ch.deleteImportedDays(site.id, importId);
    }
  });
});
