// Reports sorted by visitors, most first, with a limit count the visitors of the groups that can be listed only
// (src/report/plans/top-visitors.ts), on a store large enough to count visitors in slices. Every answer equals the oracle with the bound on a pass's pageviews generous
// (the plan answers), tiny (the statement fails before counting and the engine answers in slices) and between (the
// first groups fit, the others with enough pageviews do not); and the plan's statement answers as its fallback does.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demoTraffic } from '../../src/cli/demo-traffic.js';
import { parseReportRequest } from '../../src/report/parse.js';
import { VISITORS_OVER_BOUND } from '../../src/report/plans/top-visitors.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/scale-out.js';
import { createSite, f, forSite, fullQuery, importLines, line, requestUrl, type Case, type Target } from './fixtures.js';
import { aggregationsOf, prepare, type Prepared } from './oracle.js';

const ZONE = 'Europe/Berlin';
const RANGE = { from: '2026-06-01 00:00:00', to: '2026-06-03 23:59:59' };
const S = 'https://top.example';

/** Skew and ties the generated traffic may lack: a page one visitor reloads, two pages with the same visitors. */
function handWritten(site: string) {
  const reloads = Array.from({ length: 12 }, (_, i) => line(site, `2026-06-02T10:00:${String(i * 4).padStart(2, '0')}Z`, `${S}/reload`, { ip: '81.2.69.60' }));
  const ties = [61, 62, 63].flatMap((n) => [
    line(site, `2026-06-02T11:0${n - 60}:00Z`, `${S}/tie-b`, { ip: `81.2.69.${n}` }),
    line(site, `2026-06-02T11:0${n - 60}:30Z`, `${S}/tie-a`, { ip: `81.2.69.${n}` }),
  ]);
  return [...reloads, ...ties];
}

const fields = ['pathname', 'referrer_hostname', 'browser', 'country_code', 'entry_page', 'exit_page', 'utm_source', 'device_type'];
const cases: Case[] = [
  ...fields.flatMap((field) =>
    [1, 2, 3, 7].map((limit) => ({
      name: `by ${field}, top ${limit}`,
      query: { aggregates: ['visitors', 'pageviews'], fieldGrouping: [field], sort: { field: 'visitors', dir: 'desc' as const }, limit },
    })),
  ),
  { name: 'visitors alone (the default order)', query: { aggregates: ['visitors'], fieldGrouping: ['pathname'], limit: 4 } },
  { name: 'beside visit facts', query: { aggregates: ['visitors', 'visits', 'bounce_rate', 'avg_duration'], fieldGrouping: ['pathname'], limit: 5 } },
  { name: 'a hit filter', query: { aggregates: ['visitors', 'pageviews'], fieldGrouping: ['pathname'], filters: [f('pathname', 'not matching', '^/blog')], limit: 3 } },
  { name: 'a visit filter', query: { aggregates: ['visitors', 'uniques'], fieldGrouping: ['browser'], filters: [f('entry_page', 'is', '/')], limit: 2 } },
  { name: 'two fields', query: { aggregates: ['visitors', 'pageviews'], fieldGrouping: ['pathname', 'browser'], limit: 5 } },
  { name: 'by day and page', query: { aggregates: ['visitors', 'pageviews'], dateGrouping: 'day', fieldGrouping: ['pathname'], sort: { field: 'visitors', dir: 'desc' }, limit: 4 } },
  { name: 'by hour alone', query: { aggregates: ['visitors'], dateGrouping: 'hour', sort: { field: 'visitors', dir: 'desc' }, limit: 3, from: '2026-06-02 00:00:00', to: '2026-06-02 23:59:59' } },
  { name: 'more rows asked than there are groups', query: { aggregates: ['visitors', 'pageviews'], fieldGrouping: ['device_type'], limit: 50 } },
  { name: 'a filter nothing passes', query: { aggregates: ['visitors'], fieldGrouping: ['pathname'], filters: [f('pathname', 'is', '/nowhere')], limit: 3 } },
];

describe('visitors of the top groups', () => {
  /** Bounds on a pass's pageviews: the default and a tiny one, on stores taken as large (visitors in slices). */
  const apps: { name: string; t?: TestApp; site: string; bound?: number }[] = [{ name: 'default bound', site: '' }, { name: 'bound 5', site: '', bound: 5 }];
  let data: Prepared;

  before(async () => {
    for (const app of apps) {
      app.t = await startTestApp(app.bound === undefined ? { visitorSlices: 2 } : { topGroupRows: app.bound, visitorSlices: 3 });
      app.site = await createSite(app.t, { name: 'Top', timezone: ZONE });
      const lines = [...forSite([...demoTraffic({ siteId: 'X', start: new Date('2026-06-01T00:00:00Z'), days: 3, visitsPerDay: 120, seed: 23 })], app.site), ...handWritten(app.site)];
      await importLines(app.t, lines);
      // Every app's lines differ by their site id only: one oracle answers for all.
      if (app === apps[0]) data = await prepare(lines, { id: app.site, timezone: ZONE });
    }
  });
  after(async () => {
    for (const app of apps) await app.t?.close();
  });

  /** The compiled statement of `c` on `app`, and its fallback. */
  async function compiled(app: (typeof apps)[number], c: Case) {
    const target: Target = { t: () => app.t!, siteId: () => app.site, data: () => data, zone: ZONE, defaults: RANGE };
    const url = requestUrl(app.site, ZONE, fullQuery(target, c.query));
    const request = parseReportRequest(Object.fromEntries(new URLSearchParams(url.split('?')[1])));
    return { url, ...(await app.t!.reports.compile(request, (await app.t!.meta.getSite(app.site))!)).compiled };
  }

  for (const c of cases) {
    it(c.name, async () => {
      const expected = aggregationsOf(data, fullQuery({ t: () => apps[0]!.t!, siteId: () => apps[0]!.site, data: () => data, zone: ZONE, defaults: RANGE }, c.query));
      if (c.name !== 'a filter nothing passes') assert.ok(expected.length > 0, 'the oracle finds groups');
      for (const app of apps) {
        const { url, sql, params, fallback } = await compiled(app, c);
        const res = await app.t!.call(OWNER_TOKEN, 'GET', url);
        assert.equal(res.status, 200, JSON.stringify(res.body));
        // The oracle's answer is written for the first app's site; the rows do not name the site.
        assert.deepEqual(res.body, expected, `${app.name}: ${url}`);
        if (TEST_STORE !== 'embedded') {
          assert.equal(fallback, undefined, 'ClickHouse inlines subqueries: every group counted');
          continue;
        }
        assert.ok(fallback && sql.includes('vt_first'), `${app.name}: the top groups' plan`);
        const full = await app.t!.events.query(fallback.sql, fallback.params);
        if (app.bound === undefined) assert.deepEqual(await app.t!.events.query(sql, params), full, 'the plan answers as the fallback');
      }
    });
  }

  it('a group with as many pageviews as the bound T, each a visitor, ties the first groups and is listed by its name', async () => {
    // /m: four pageviews, three visitors, the most pageviews (T = 3); /c: three pageviews, three visitors: a tie at
    // three visitors that /c wins by its name. A plan that asked for more pageviews than T would list /m.
    const t = apps[0]!.t!;
    const site = await createSite(t, { name: 'Tie', timezone: 'UTC' });
    const lines = [
      ...[80, 80, 81, 82].map((n, i) => line(site, `2026-06-02T09:0${i}:00Z`, `${S}/m`, { ip: `81.2.69.${n}` })),
      ...[83, 84, 85].map((n, i) => line(site, `2026-06-02T10:0${i}:00Z`, `${S}/c`, { ip: `81.2.69.${n}` })),
    ];
    await importLines(t, lines);
    const query = { entity: 'pageview' as const, aggregates: ['visitors', 'pageviews'], fieldGrouping: ['pathname'], filters: [], timezone: 'UTC', from: '2026-06-02 00:00:00', to: '2026-06-02 23:59:59', limit: 1 };
    const res = await t.call(OWNER_TOKEN, 'GET', requestUrl(site, 'UTC', query));
    assert.deepEqual(res.body, aggregationsOf(await prepare(lines, { id: site, timezone: 'UTC' }), query));
    assert.deepEqual(res.body, [{ pathname: '/c', visitors: '3', pageviews: '3' }]);
  });

  it('a small store counts every group in one pass', async () => {
    const t = await startTestApp();
    try {
      const site = await createSite(t, { name: 'Small', timezone: 'UTC' });
      const request = parseReportRequest({ entity: 'pageview', entity_id: site, aggregates: 'visitors,pageviews', field_grouping: 'pathname', limit: '10' });
      const { sql, fallback } = (await t.reports.compile(request, (await t.meta.getSite(site))!)).compiled;
      assert.equal(fallback, undefined);
      assert.ok(!sql.includes('vt_first'));
    } finally {
      await t.close();
    }
  });

  it('a tiny bound fails the statement before counting, and the engine answers from its fallback', { skip: TEST_STORE !== 'embedded' }, async () => {
    const tiny = apps[1]!;
    let failed = 0;
    for (const c of cases.filter((x) => x.name !== 'a filter nothing passes')) {
      const { sql, params } = await compiled(tiny, c);
      try {
        await tiny.t!.events.query(sql, params);
      } catch (err) {
        assert.match((err as Error).message, new RegExp(VISITORS_OVER_BOUND));
        failed++;
      }
    }
    // A limit of one on a field whose top group has five pageviews or fewer would fit; nearly every case fails.
    assert.ok(failed >= cases.length - 6, `${failed} of ${cases.length} statements failed over the bound`);
  });

  it('the groups after the first over the bound, the first within it: the fallback answers, and is remembered', { skip: TEST_STORE !== 'embedded' }, async () => {
    // One visitor reloads /a ten times; ten pages of two visitors each. Top 1 by pageviews is /a (10 within 12), its
    // single visitor makes every other page a candidate: 20 pageviews, over 12.
    let clock = Date.parse('2026-06-03T00:00:00Z');
    const t = await startTestApp({ topGroupRows: 12, visitorSlices: 2, now: () => new Date(clock) });
    // Statements that try the top groups' plan, counted as the store receives them.
    let attempts = 0;
    const query = t.events.query.bind(t.events);
    t.events.query = (sql, params) => {
      if (sql.includes('vt_first')) attempts++;
      return query(sql, params);
    };
    try {
      const site = await createSite(t, { name: 'Between', timezone: 'UTC' });
      const lines = [
        ...Array.from({ length: 10 }, (_, i) => line(site, `2026-06-02T09:00:0${i}Z`, `${S}/a`, { ip: '81.2.69.70' })),
        ...'bcdefghijk'.split('').flatMap((p, i) => [71, 72].map((n) => line(site, `2026-06-02T10:${String(i).padStart(2, '0')}:${n - 70}0Z`, `${S}/${p}`, { ip: `81.2.69.${n + i * 2}` }))),
      ];
      await importLines(t, lines);
      const local = await prepare(lines, { id: site, timezone: 'UTC' });
      const asked = { entity: 'pageview' as const, aggregates: ['visitors', 'pageviews'], fieldGrouping: ['pathname'], filters: [], timezone: 'UTC', from: '2026-06-02 00:00:00', to: '2026-06-02 23:59:59', limit: 1 };
      const url = requestUrl(site, 'UTC', asked);
      const { compiled: c } = await t.reports.compile(parseReportRequest(Object.fromEntries(new URLSearchParams(url.split('?')[1]))), (await t.meta.getSite(site))!);
      await assert.rejects(t.events.query(c.sql, c.params), new RegExp(VISITORS_OVER_BOUND));
      attempts = 0;
      const res = await t.call(OWNER_TOKEN, 'GET', url);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, aggregationsOf(local, asked));
      assert.deepEqual(res.body, [{ pathname: '/b', visitors: '2', pageviews: '2' }]);
      assert.equal(attempts, 1);
      // The same site and grouping now skip the attempt for an hour, whatever the filters; then try it again.
      const again = await t.call(OWNER_TOKEN, 'GET', `${url}&filters=${encodeURIComponent(JSON.stringify([f('pathname', 'is not', '/z')]))}`);
      assert.deepEqual(again.body, res.body);
      assert.equal(attempts, 1, 'straight to the fallback');
      clock += 61 * 60 * 1000;
      assert.deepEqual((await t.call(OWNER_TOKEN, 'GET', url)).body, res.body);
      assert.equal(attempts, 2, 'an hour later, tried again');
    } finally {
      await t.close();
    }
  });
});
