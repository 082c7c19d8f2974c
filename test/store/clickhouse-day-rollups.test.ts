// Day rollups on ClickHouse: closed UTC days built from their hits answer pageviews, visitors, visits, uniques,
// bounce rate and duration exactly as the hits do (visits crossing a midnight included), for any zone, range, field,
// date grouping, sort and limit; a day whose hits change afterwards (a late hit, a deletion, a hit joining one of
// its visits from past its midnight, counts that do not tell the hits) is read from its hits until it is built again. Generated traffic over
// six days in two zones goes through the real import pipeline into DuckDB and is copied into a fresh ClickHouse
// database; one engine reads the rollups, the other only the hits.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StoredHit, VisitRecord } from '../../src/domain/hits.js';
import { demoTraffic } from '../../src/cli/demo-traffic.js';
import { ClickHouseDialect } from '../../src/report/clickhouse-dialect.js';
import { ReportCompiler } from '../../src/report/compiler.js';
import { DayRollupBuilder } from '../../src/report/day-rollups/builder.js';
import { ROLLUP_FIELDS } from '../../src/report/day-rollups/recorded-rows.js';
import { ReportEngine, runCompiled } from '../../src/report/engine.js';
import { parseReportRequest } from '../../src/report/parse.js';
import { QueryGate } from '../../src/report/query-gate.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import type { DayRollupStore, Site } from '../../src/store/types.js';
import { pipelineStores, type PipelineStores } from '../helpers/pipeline-stores.js';
import { storedHit } from '../helpers/stored-hits.js';

const NOW = new Date('2026-03-10T12:00:00.250Z');
const DAYS = ['2026-03-04', '2026-03-05', '2026-03-06', '2026-03-07', '2026-03-08', '2026-03-09'];

type Params = Record<string, string>;

/** A visit's stored record: from its first to its last hit, with that many pageviews. */
function visitRecord(siteId: string, visitId: bigint, hits: readonly StoredHit[]): VisitRecord {
  const pageviews = hits.filter((h) => h.type === 'pageview');
  const times = hits.map((h) => h.timestamp.getTime());
  return {
    siteId, visitId, visitorId: hits[0]!.visitorId, startedAt: new Date(Math.min(...times)), lastSeenAt: new Date(Math.max(...times)),
    entryPage: pageviews[0]?.pathname ?? '', exitPage: pageviews.at(-1)?.pathname ?? '', exitHostname: 'https://example.com',
    pageviews: pageviews.length, events: hits.length - pageviews.length, pathsExact: true, journeyLength: 0, journeyPages: [],
    referrerHostname: '', referrerPathname: '', referrerSource: '', utmCampaign: '', utmContent: '', utmMedium: '', utmSource: '', utmTerm: '', ref: '', keyword: '',
  };
}

/**
 * Visits crossing UTC midnights, written as the ingest would store them: one over each midnight of the week, one
 * whose only hit after midnight is an event, and one going on for more than a whole day (hits every 25 minutes).
 */
async function writeCrossingVisits(ch: ClickHouseEventStore, siteId: string): Promise<void> {
  let id = 7_000_000n;
  const visit = async (times: string[], types?: ('pageview' | 'event')[]) => {
    const visitId = id++;
    // Pages repeat: only the first view of each is flagged, as the ingest flags them.
    const hits = times.map((t, i) => storedHit(siteId, t, {
      visitId, visitorId: visitId, pathname: ['/', '/pricing', '/night'][i % 3]!, referrerSource: 'Night', firstView: i < 3,
      ...(types?.[i] === 'event' ? { type: 'event' as const, eventName: 'Signup' } : {}),
    }));
    await ch.write(hits, [visitRecord(siteId, visitId, hits)]);
  };
  for (const day of DAYS.slice(1)) {
    const before = new Date(Date.parse(`${day}T00:00:00Z`) - 20 * 60_000).toISOString();
    await visit([before, `${day}T00:05:00Z`, `${day}T00:25:00Z`]);
  }
  await visit(['2026-03-05T23:45:00Z', '2026-03-06T00:10:00Z'], ['pageview', 'event']);
  const long: string[] = [];
  for (let t = Date.parse('2026-03-06T23:50:00Z'); t <= Date.parse('2026-03-08T00:20:00Z'); t += 25 * 60_000) long.push(new Date(t).toISOString());
  await visit(long);
}

describe('day rollups on ClickHouse', () => {
  let stores: PipelineStores;
  let ch: ClickHouseEventStore;
  let fromHits: ReportEngine;
  let withRollups: ReportEngine;
  let builder: DayRollupBuilder;
  let compiler: ReportCompiler;
  /** How many reports read some build (the engine reading rollups goes through this). */
  let sumsRead = 0;
  const sites: Record<'ny' | 'kolkata' | 'utc', Site> = {} as never;
  let nyHits: StoredHit[] = [];

  before(async () => {
    stores = await pipelineStores();
    sites.ny = await stores.newSite('America/New_York');
    sites.kolkata = await stores.newSite('Asia/Kolkata');
    sites.utc = await stores.newSite('UTC');
    for (const site of Object.values(sites)) {
      const lines = [...demoTraffic({ siteId: site.id, start: new Date(`${DAYS[0]}T00:00:00Z`), days: DAYS.length + 1, visitsPerDay: 60, seed: site.timezone.length })];
      const result = await stores.importLines(lines.filter((l) => Date.parse(`${l.timestamp.replace(' ', 'T')}Z`) < NOW.getTime()));
      assert.ok(result.imported > 500, JSON.stringify(result.errors));
    }
    ch = await stores.copyToClickHouse(Object.values(sites));
    for (const site of Object.values(sites)) await writeCrossingVisits(ch, site.id);
    nyHits = await ch.listHits(sites.ny.id);

    compiler = new ReportCompiler(new ClickHouseDialect(ch.features));
    fromHits = new ReportEngine(ch, compiler, new QueryGate(), () => NOW);
    fromHits.readDayRollups(false);
    // The same store, its rollups counted as they are read.
    const counted: DayRollupStore = Object.create(ch.dayRollups);
    counted.sums = async (...a) => {
      const sums = await ch.dayRollups.sums(...a);
      if (sums) sumsRead += 1;
      return sums;
    };
    withRollups = new ReportEngine(Object.assign(Object.create(ch), { dayRollups: counted }), compiler, new QueryGate(), () => NOW);
    builder = new DayRollupBuilder({ rollups: ch.dayRollups, compiler, run: (c) => runCompiled(ch, c), now: () => NOW, log: (err) => assert.fail(String(err)) });
  });
  after(() => stores?.close());

  async function answer(engine: ReportEngine, site: Site, params: Params): Promise<unknown> {
    try {
      return await engine.aggregate(parseReportRequest({ entity: 'pageview', entity_id: site.id, ...params }), site);
    } catch (err) {
      return { error: (err as Error).constructor.name, message: (err as Error).message };
    }
  }

  /** Both engines' answers are equal, and not empty; returns whether the rollups were read for it. */
  async function same(site: Site, params: Params): Promise<boolean> {
    const expected = await answer(fromHits, site, params);
    const before = sumsRead;
    const actual = await answer(withRollups, site, params);
    assert.deepEqual(actual, expected, `${site.timezone} ${JSON.stringify(params)}`);
    assert.ok(Array.isArray(expected) && expected.length > 0, `nothing for ${JSON.stringify(params)}: the case tests too little`);
    return sumsRead > before;
  }

  /** The hours of a report by hour (both engines' answers equal), and whether the rollups were read for it. */
  async function hourRows(site: Site, params: Params): Promise<{ read: boolean; hours: string[] }> {
    const read = await same(site, params);
    const rows = (await answer(withRollups, site, params)) as Record<string, string>[];
    return { read, hours: rows.map((r) => r.timestamp!) };
  }

  const WEEK = { date_from: '2026-03-04 00:00:00', date_to: '2026-03-10 23:59:59' };
  /** Every aggregate builds hold, alone and together (bounce rate and duration come with visits, in parts). */
  const AGGREGATE_SETS = ['pageviews', 'visitors,pageviews', 'visits,uniques,avg_duration,bounce_rate', 'pageviews,visitors,bounce_rate,uniques'];

  /** The UTC days whose counts take in some of the site's hits: each hit's own, and the one across a midnight within 30 minutes. */
  const countedDays = (hits: readonly StoredHit[]) =>
    [...new Set(hits.flatMap((h) => [-30 * 60_000, 0, 30 * 60_000].map((d) => new Date(h.timestamp.getTime() + d).toISOString().slice(0, 10))))].sort();

  it('builds every closed day of every site once, and no day still open', async () => {
    const first = await builder.runOnce();
    // Every day's hits were counted by the views as they were written: nothing to mend.
    assert.equal(first.healed, 0);
    const closed = (hits: readonly StoredHit[]) => countedDays(hits).filter((d) => d < '2026-03-10');
    let expected = 0;
    for (const site of Object.values(sites)) expected += closed(await ch.listHits(site.id)).length;
    assert.equal(first.built, expected);
    const built = (await ch.dayRollups.validBuilds(sites.ny.id, '2026-03-01', '2026-03-11')).map((b) => b.day);
    assert.deepEqual(built, closed(nyHits));
    assert.ok(DAYS.every((d) => built.includes(d)));
    assert.deepEqual(await builder.runOnce(), { healed: 0, built: 0 });
    // The traffic has visits crossing UTC midnights, which each build lists (and reports read from their hits).
    const crossed = (await ch.dayRollups.validBuilds(sites.ny.id, DAYS[1]!, DAYS[5]!)).filter((b) => b.headUntil > Date.parse(`${b.day}T00:00:00Z`));
    assert.ok(crossed.length >= 2, 'visits cross midnight');
  });

  it('answers totals, every hit field and every date grouping as the hits do, in three zones', async () => {
    let read = 0;
    for (const site of Object.values(sites)) {
      for (const aggregates of AGGREGATE_SETS) {
        if (await same(site, { aggregates, ...WEEK })) read++;
        for (const field of ROLLUP_FIELDS) if (await same(site, { aggregates, field_grouping: field, ...WEEK })) read++;
        for (const date_grouping of ['day', 'month', 'year']) {
          if (await same(site, { aggregates, date_grouping, ...WEEK })) read++;
          if (await same(site, { aggregates, date_grouping, field_grouping: 'pathname', ...WEEK })) read++;
        }
      }
    }
    // Every case had whole UTC days in range (by day, only UTC's days fall in one local day each).
    assert.equal(read, 3 * AGGREGATE_SETS.length * (1 + ROLLUP_FIELDS.length + 3 * 2) - 2 * AGGREGATE_SETS.length * 2);
  });

  it('sorts, limits and cuts ranges as the hits do', async () => {
    const cases: Params[] = [
      { aggregates: 'visitors,pageviews', field_grouping: 'pathname', limit: '5', ...WEEK },
      { aggregates: 'visitors,pageviews', field_grouping: 'pathname', sort_by: 'pathname:asc', limit: '7', ...WEEK },
      { aggregates: 'pageviews,visitors', field_grouping: 'browser', sort_by: 'visitors:asc', ...WEEK },
      { aggregates: 'pageviews', field_grouping: 'country_code', sort_by: 'pageviews:asc', limit: '3', ...WEEK },
      { aggregates: 'visitors', date_from: '2026-03-05 13:30:00', date_to: '2026-03-08 06:15:00' },
      { aggregates: 'visitors', field_grouping: 'referrer_source', date_from: '2026-03-05 00:00:00', date_to: '2026-03-09 23:59:59', timezone: 'UTC' },
      { aggregates: 'visitors,pageviews', field_grouping: 'pathname' },
      { aggregates: 'pageviews', date_grouping: 'month', timezone: 'Pacific/Chatham', ...WEEK },
      { aggregates: 'visits,bounce_rate', field_grouping: 'pathname', sort_by: 'bounce_rate:desc', limit: '5', ...WEEK },
      { aggregates: 'avg_duration,pageviews', field_grouping: 'referrer_source', sort_by: 'avg_duration:asc', ...WEEK },
      { aggregates: 'visits,uniques,visitors', date_from: '2026-03-05 13:30:00', date_to: '2026-03-08 06:15:00' },
      { aggregates: 'visits,avg_duration', date_grouping: 'day', date_from: '2026-03-05 13:30:00', date_to: '2026-03-09 06:15:00', timezone: 'UTC' },
      { aggregates: 'visits,uniques', field_grouping: 'browser', date_grouping: 'month' },
    ];
    for (const site of Object.values(sites)) for (const params of cases) assert.ok(await same(site, params), JSON.stringify(params));
    // By day in a zone whose midnight is not UTC's, every UTC day is cut in two: all from the hits.
    const byDay = { aggregates: 'pageviews', date_grouping: 'day', sort_by: 'timestamp:desc', ...WEEK };
    assert.equal(await same(sites.utc, byDay), true);
    assert.equal(await same(sites.ny, byDay), false);
    // A range inside one UTC day has no day to read from rollups.
    assert.equal(await same(sites.utc, { aggregates: 'pageviews', date_from: '2026-03-06 01:00:00', date_to: '2026-03-06 20:00:00' }), false);
    // Visit-level filters and groups and other aggregates are read from the hits.
    assert.equal(await same(sites.ny, { aggregates: 'visits', field_grouping: 'entry_page', ...WEEK }), false);
    assert.equal(await same(sites.ny, { aggregates: 'visits,scroll_depth', ...WEEK }), false);
    assert.equal(await same(sites.ny, { aggregates: 'pageviews', filters: JSON.stringify([{ property: 'exit_page', operator: 'is not', value: '/' }]), ...WEEK }), false);
  });

  it('answers by hour as the hits do: days of whole-hour zones from the builds, days the clocks change and half-hour zones from the hits', async () => {
    const days = { date_from: '2026-03-05 00:00:00', date_to: '2026-03-09 23:59:59' };
    for (const site of Object.values(sites)) {
      for (const aggregates of AGGREGATE_SETS) {
        assert.equal(await same(site, { aggregates, date_grouping: 'hour', ...days }), site !== sites.kolkata, `${site.timezone} ${aggregates}`);
      }
    }
    // New York's clocks change on 2026-03-08 (07:00 UTC): that day from the hits, a day before and after from builds.
    const dst = await hourRows(sites.ny, { aggregates: 'pageviews', date_grouping: 'hour', date_from: '2026-03-07 19:00:00', date_to: '2026-03-09 19:59:59' });
    assert.equal(dst.read, true);
    assert.ok(!dst.hours.includes('2026-03-08 02:00:00'), 'no hour that the clocks skip');
    // Another zone than the site's: whole hours from builds; Kathmandu's quarter hours from the hits only.
    assert.ok(await same(sites.utc, { aggregates: 'visits,pageviews,visitors', date_grouping: 'hour', timezone: 'Europe/Berlin', ...days }));
    assert.equal(await same(sites.utc, { aggregates: 'visits,pageviews', date_grouping: 'hour', timezone: 'Asia/Kathmandu', ...days }), false);
    // By hour with a field or a filter: from the hits.
    assert.equal(await same(sites.utc, { aggregates: 'pageviews', date_grouping: 'hour', field_grouping: 'pathname', ...days }), false);
    const filters = JSON.stringify([{ property: 'pathname', operator: 'is', value: '/' }]);
    assert.equal(await same(sites.utc, { aggregates: 'pageviews', date_grouping: 'hour', filters, ...days }), false);
  });

  it('answers filters on the field it groups by, and pageviews (or one value\'s visitors) filtered on one hit field', async () => {
    const filters = (...f: [string, string, string][]) => JSON.stringify(f.map(([property, operator, value]) => ({ property, operator, value })));
    const read: Params[] = [
      { aggregates: 'visitors,pageviews', field_grouping: 'pathname', filters: filters(['pathname', 'is not', '/']) },
      { aggregates: 'pageviews,visitors', field_grouping: 'pathname', filters: filters(['pathname', 'is', '/']), date_grouping: 'month' },
      { aggregates: 'pageviews,visitors', field_grouping: 'pathname', filters: filters(['pathname', 'matching', '^/(pricing|signup|blog)']) },
      { aggregates: 'visitors', field_grouping: 'pathname', filters: filters(['pathname', 'is like', '/PRI*'], ['pathname', 'is', '/']) },
      { aggregates: 'pageviews,visitors', field_grouping: 'browser', filters: filters(['browser', 'is not', 'Chrome']) },
      { aggregates: 'pageviews', filters: filters(['pathname', 'not matching', '^/$']) },
      { aggregates: 'pageviews', filters: filters(['referrer_source', 'is not', '']), date_grouping: 'month' },
      { aggregates: 'visitors', filters: filters(['pathname', 'is', '/']) },
      { aggregates: 'visitors,pageviews', filters: filters(['country_code', 'is', 'US'], ['country_code', 'is', 'US']), date_grouping: 'year' },
      { aggregates: 'visits,uniques,bounce_rate', field_grouping: 'pathname', filters: filters(['pathname', 'is not', '/']) },
      { aggregates: 'visits,avg_duration', filters: filters(['pathname', 'is', '/']), date_grouping: 'month' },
      { aggregates: 'visits,bounce_rate,pageviews', filters: filters(['referrer_source', 'is', 'Google']) },
    ];
    for (const site of [sites.utc, sites.kolkata]) for (const params of read) assert.ok(await same(site, { ...params, ...WEEK }), JSON.stringify(params));
    // Visitors over several values, or filters on another field than the grouped one: from the hits.
    const fromHitsOnly: Params[] = [
      { aggregates: 'visitors', filters: filters(['pathname', 'is not', '/']) },
      { aggregates: 'visits', filters: filters(['pathname', 'matching', '^/(pricing|signup)']) },
      { aggregates: 'pageviews', field_grouping: 'browser', filters: filters(['pathname', 'is', '/']) },
      { aggregates: 'pageviews', filters: filters(['pathname', 'is', '/'], ['browser', 'is', 'Chrome']) },
      { aggregates: 'pageviews', filters: filters(['entry_page', 'is', '/']) },
    ];
    for (const params of fromHitsOnly) assert.equal(await same(sites.utc, { ...params, ...WEEK }), false, JSON.stringify(params));
    // Hostile values match nothing, on either side.
    for (const value of ["'; DROP TABLE day_rollups; --", '\\', '%', "' OR '1'='1"]) {
      for (const operator of ['is', 'is like', 'matching']) {
        const params = { aggregates: 'pageviews,visitors', field_grouping: 'pathname', filters: filters(['pathname', operator, value]), ...WEEK };
        assert.deepEqual(await answer(withRollups, sites.utc, params), await answer(fromHits, sites.utc, params), JSON.stringify(params));
      }
    }
  });

  it('builds the same sums when a day has too many crossing visits to name them in its statements', async () => {
    const site = sites.ny;
    const [kept] = await ch.dayRollups.validBuilds(site.id, '2026-03-07', '2026-03-08');
    assert.ok(kept && kept.headUntil > Date.parse('2026-03-07T00:00:00Z'), 'the day has crossing visits');
    const finding = new DayRollupBuilder({ rollups: ch.dayRollups, compiler, run: (c) => runCompiled(ch, c), inlineCrossings: 0, log: (err) => assert.fail(String(err)) });
    assert.equal(await finding.buildDay(site.id, '2026-03-07', NOW.getTime() + 1), true);
    const [rebuilt] = await ch.dayRollups.validBuilds(site.id, '2026-03-07', '2026-03-08');
    assert.equal(rebuilt!.builtAt, NOW.getTime() + 1);
    for (const field of ['', 'pathname', 'browser']) {
      assert.deepEqual(await ch.dayRollups.sums(site.id, field, [rebuilt!]), await ch.dayRollups.sums(site.id, field, [kept!]), field);
    }
  });

  it('builds a day of events alone, which adds no group to reports of pageviews', async () => {
    const site = sites.utc;
    await ch.write([storedHit(site.id, '2026-03-02T10:00:00Z', { type: 'event', eventName: 'Signup' })], []);
    assert.equal((await builder.runOnce()).built, 1);
    const range = { date_from: '2026-03-01 00:00:00', date_to: '2026-03-10 23:59:59' };
    for (const params of [{ aggregates: 'pageviews,visitors', date_grouping: 'day', ...range }, { aggregates: 'visitors', ...range }]) {
      assert.ok(await same(site, params));
    }
  });

  it('adds imported days to rollups and hits as to hits alone', async () => {
    const site = sites.kolkata;
    const days = ['2026-03-01', '2026-03-02', '2026-03-05'];
    await ch.writeImportedDays(days.flatMap((day, i) => [
      { importId: 'imp', siteId: site.id, day, dimension: '' as const, value: '', pageviews: 40 + i, visits: 20, visitors: 15 + i, bounces: 5, visitDuration: 600 },
      { importId: 'imp', siteId: site.id, day, dimension: 'pathname' as const, value: '/', pageviews: 30 + i, visits: 20, visitors: 12, bounces: 0, visitDuration: 0 },
      { importId: 'imp', siteId: site.id, day, dimension: 'pathname' as const, value: '/imported-only', pageviews: 10, visits: 5, visitors: 3, bounces: 0, visitDuration: 0 },
    ]));
    const range = { date_from: '2026-03-01 00:00:00', date_to: '2026-03-10 23:59:59' };
    assert.ok(await same(site, { aggregates: 'visitors,pageviews', ...range }));
    assert.ok(await same(site, { aggregates: 'pageviews,visitors', field_grouping: 'pathname', limit: '1000', ...range }));
    assert.ok(await same(site, { aggregates: 'pageviews', date_grouping: 'month', ...range }));
    const rows = (await answer(withRollups, site, { aggregates: 'pageviews', field_grouping: 'pathname', limit: '1000', ...range })) as Record<string, string>[];
    assert.deepEqual(rows.find((r) => r.pathname === '/imported-only'), { pathname: '/imported-only', pageviews: '30' });
  });

  it('reads the hits when a statement does not find a build it was told of, as on a replica that has not received it yet', async () => {
    const site = sites.ny;
    // The builds named to the report (validBuilds) are not where its statement of visits reads the crossing ids:
    // here their keys are not the stored ones, while sums() reads the stored builds.
    const stored = ch.dayRollups;
    const behind: DayRollupStore = Object.create(stored);
    let summed = 0;
    behind.validBuilds = async (...a) => (await stored.validBuilds(...a)).map((b) => ({ ...b, builtAt: b.builtAt + 1 }));
    behind.sums = async (siteId, field, builds, ...rest) => {
      summed += builds.length;
      return stored.sums(siteId, field, builds.map((b) => ({ ...b, builtAt: b.builtAt - 1 })), ...rest);
    };
    const engine = new ReportEngine(Object.assign(Object.create(ch), { dayRollups: behind }), compiler, new QueryGate(), () => NOW);
    for (const params of [{ aggregates: 'visits,pageviews', ...WEEK }, { aggregates: 'visits,bounce_rate', field_grouping: 'pathname', limit: '1000', ...WEEK }]) {
      assert.deepEqual(await answer(engine, site, params), await answer(fromHits, site, params));
    }
    assert.ok(summed > 0, 'the builds were read');
  });

  it('reads a day from its hits once they change, until it is built again: a late hit', async () => {
    const site = sites.ny;
    const late = { ...nyHits.find((h) => h.type === 'pageview')!, timestamp: new Date('2026-03-07T10:00:00Z'), pathname: '/arrived-late' };
    await ch.write([late], []);
    assert.ok(!(await ch.dayRollups.validBuilds(site.id, '2026-03-07', '2026-03-08')).length, 'the day is no longer valid');
    assert.ok(await same(site, { aggregates: 'visitors,pageviews', field_grouping: 'pathname', limit: '100', ...WEEK }));
    const shown = (await answer(withRollups, site, { aggregates: 'pageviews', field_grouping: 'pathname', limit: '1000', ...WEEK })) as Record<string, string>[];
    assert.deepEqual(shown.find((r) => r.pathname === '/arrived-late'), { pathname: '/arrived-late', pageviews: '1' });
    assert.equal((await builder.runOnce()).built, 1);
    assert.equal((await ch.dayRollups.validBuilds(site.id, '2026-03-07', '2026-03-08')).length, 1);
    assert.ok(await same(site, { aggregates: 'pageviews', field_grouping: 'pathname', limit: '1000', ...WEEK }));
  });

  it('reads a day from its hits once a hit past its midnight joins one of its visits, until it is built again', async () => {
    const site = sites.utc;
    const visitId = 987_654_321n;
    const at = (t: string) => new Date(`2026-03-07T${t}Z`);
    // One page viewed again and again: its first view alone is flagged.
    const hit = (timestamp: Date, firstView = false) => storedHit(site.id, timestamp.toISOString(), { visitId, visitorId: 42n, pathname: '/late-night', firstView });
    // A visit wholly inside 7 March: its day is built again, and the visit is one of the day's own.
    const first = [hit(at('23:40:00'), true), hit(at('23:50:00'))];
    await ch.write(first, [visitRecord(site.id, visitId, first)]);
    assert.ok((await builder.runOnce()).built >= 1);
    const cases: Params[] = [
      { aggregates: 'visits,pageviews,avg_duration,bounce_rate,uniques', ...WEEK },
      { aggregates: 'visits,avg_duration', field_grouping: 'pathname', limit: '1000', ...WEEK },
      { aggregates: 'visits,pageviews', date_grouping: 'day', ...WEEK },
    ];
    for (const params of cases) assert.ok(await same(site, params));
    // A hit 20 minutes past midnight continues it (the ingest's 30-minute rule): 7 March's build no longer tells
    // which of its visits lie inside it, though none of its own hits changed.
    const joined = new Date('2026-03-08T00:10:00Z');
    await ch.write([hit(joined)], [visitRecord(site.id, visitId, [...first, hit(joined)])]);
    assert.deepEqual((await ch.dayRollups.validBuilds(site.id, '2026-03-07', '2026-03-09')).map((b) => b.day), []);
    for (const params of cases) assert.ok(await same(site, params));
    const shown = (await answer(withRollups, site, { aggregates: 'visits,avg_duration', field_grouping: 'pathname', limit: '1000', ...WEEK })) as Record<string, string>[];
    assert.deepEqual(shown.find((r) => r.pathname === '/late-night'), { pathname: '/late-night', visits: '1', avg_duration: '1800' });
    // Built again, both days list the visit as crossing their midnight, and it is still counted once.
    assert.equal((await builder.runOnce()).built, 2);
    const [day7, day8] = await ch.dayRollups.validBuilds(site.id, '2026-03-07', '2026-03-09');
    assert.ok(day7!.tailFrom <= at('23:40:00').getTime() && day8!.headUntil > joined.getTime());
    for (const params of cases) assert.ok(await same(site, params));
  });

  it('reads a day from its hits once they change, until it is built again: a deletion', async () => {
    const site = sites.kolkata;
    const visitIds = [...new Set((await ch.listHits(site.id)).filter((h) => h.timestamp.toISOString().startsWith('2026-03-06')).map((h) => h.visitId))].sort((a, b) => (a < b ? -1 : 1));
    // The day's last ten visit ids (ids begin with their visit's day: the other days keep theirs).
    await ch.deleteVisitRange(site.id, visitIds.at(-10)!, visitIds.at(-1)!);
    assert.ok(!(await ch.dayRollups.validBuilds(site.id, '2026-03-06', '2026-03-07')).length, 'the day is no longer valid');
    for (const params of [{ aggregates: 'visitors,pageviews', ...WEEK }, { aggregates: 'pageviews', field_grouping: 'browser', ...WEEK }]) assert.ok(await same(site, params));
    assert.ok((await builder.runOnce()).built >= 1);
    assert.ok(await same(site, { aggregates: 'visitors', field_grouping: 'city', ...WEEK }));
  });

  it('mends counts that do not tell the hits before building again', async () => {
    const site = sites.utc;
    // As if the count of an insert were lost, or the hits were stored before the counts existed.
    await ch.dayRollups.addChanges(site.id, '2026-03-08', { inserted: 3n, deleted: 0n });
    assert.equal((await ch.dayRollups.validBuilds(site.id, '2026-03-08', '2026-03-09')).length, 0);
    assert.equal((await builder.runOnce()).built, 0, 'the day is mended first');
    const changes = await ch.dayRollups.changes(site.id, '2026-03-08');
    assert.equal(changes.inserted - changes.deleted, changes.hits);
    assert.equal((await builder.runOnce()).built, 1);
    assert.ok(await same(site, { aggregates: 'visitors,pageviews', date_grouping: 'day', ...WEEK }));
    // heal() finds days without any count (stored before them) and counts them.
    await ch.dayRollups.addChanges(site.id, '2026-03-09', { inserted: 0n, deleted: 5n });
    assert.equal(await ch.dayRollups.heal(), 1);
    const mended = await ch.dayRollups.changes(site.id, '2026-03-09');
    assert.equal(mended.inserted - mended.deleted, mended.hits);
  });

  it('forgets a deleted site\'s rollups and counts', async () => {
    await ch.deleteSite(sites.utc.id);
    assert.deepEqual(await ch.dayRollups.validBuilds(sites.utc.id, '2026-03-01', '2026-03-11'), []);
    assert.deepEqual((await ch.dayRollups.daysToBuild('2026-03-11', 100)).filter((d) => d.siteId === sites.utc.id), []);
  });
});
