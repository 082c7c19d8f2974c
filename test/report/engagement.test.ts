// The engagement aggregates of GET /v1/aggregations, scroll_depth and time_on_page, against the oracle
// (test/report/oracle.ts, docs/reports.md "Engagement"): generated traffic, then engagement hits for most of its
// pageviews (one to three each, some after midnight or past the range's end, none for one country's), written to the
// event store as the pipeline stores them; every grouping, filter and order compared as a whole answer.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demoTraffic } from '../../src/cli/demo-traffic.js';
import type { StoredHit } from '../../src/domain/hits.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { compare, createSite, f, forSite, importLines, type Case, type Target } from './fixtures.js';
import { prepare, type OracleHit, type Prepared } from './oracle.js';

const ZONE = 'Europe/Berlin';
const RANGE = { from: '2026-05-01 00:00:00', to: '2026-05-03 23:59:59' };

/** A small deterministic generator (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('GET /v1/aggregations: scroll_depth and time_on_page match the oracle', () => {
  let t: TestApp;
  let site = '';
  let data: Prepared;
  let quiet = '';
  const target: Target = { t: () => t, siteId: () => site, data: () => data, zone: ZONE, defaults: RANGE };

  before(async () => {
    t = await startTestApp();
    site = await createSite(t, { name: 'Engaged', timezone: ZONE });
    const lines = forSite([...demoTraffic({ siteId: 'X', start: new Date('2026-04-30T22:00:00Z'), days: 3, visitsPerDay: 150, seed: 11 })], site);
    await importLines(t, lines);
    data = await prepare(lines, { id: site, timezone: ZONE });

    // The oracle's pageviews by what identifies one (its time and every attribute: two visitors may view a page
    // in the same millisecond), to give each engagement hit its oracle twin.
    const sig = (at: number, attributes: object) => `${at} ${JSON.stringify(Object.entries(attributes).sort())}`;
    const twins = new Map<string, OracleHit[]>();
    for (const h of data.hits) {
      if (h.type !== 'pageview') continue;
      const key = sig(h.at, h.attributes);
      twins.set(key, [...(twins.get(key) ?? []), h]);
    }
    const pageviews = (await t.events.listHits(site)).filter((h) => h.type === 'pageview');
    // One country's pages never report engagement: its groups must answer null.
    quiet = [...new Set(pageviews.map((h) => h.countryCode))].sort()[0]!;
    const next = random(47);
    const stored: StoredHit[] = [];
    for (const pv of pageviews) {
      const { siteId: _s, type: _t, timestamp, visitorId: _v, visitId: _i, eventName: _e, value: _x, firstView: _f, props: _p, scrollDepth: _d, engagedMs: _m, ...attributes } = pv;
      const twin = twins.get(sig(timestamp.getTime(), attributes))?.shift();
      assert.ok(twin, 'every stored pageview has its oracle twin');
      if (pv.countryCode === quiet || next() < 0.2) continue;
      let at = pv.timestamp.getTime();
      let deepest = 0;
      for (let k = 1 + Math.floor(next() * 3); k > 0; k--) {
        // Up to 20 minutes later: some cross midnight in the site's zone, some the range's end.
        at += 1000 + Math.floor(next() * 1_200_000);
        deepest = Math.min(100, deepest + Math.floor(next() * 60));
        const engagedMs = Math.floor(next() * 180_000);
        const { props: _props, ...rest } = pv;
        stored.push({ ...rest, type: 'engagement', timestamp: new Date(at), firstView: false, eventName: '', value: 0, scrollDepth: deepest, engagedMs });
        const { props: _p, ...twinRest } = twin;
        data.hits.push({ ...twinRest, type: 'engagement', at, eventName: '', value: 0, scrollDepth: deepest, engagedMs });
      }
    }
    await t.events.write(stored, []);
  });
  after(() => t.close());

  const cases: Case[] = [
    { name: 'totals', query: { aggregates: ['pageviews', 'scroll_depth', 'time_on_page'] } },
    { name: 'beside visitors and the visit facts', query: { aggregates: ['visits', 'visitors', 'bounce_rate', 'avg_duration', 'scroll_depth', 'time_on_page'] } },
    { name: 'engagement alone', query: { aggregates: ['time_on_page', 'scroll_depth'] } },
    { name: 'by page, deepest first', query: { aggregates: ['pageviews', 'scroll_depth', 'time_on_page'], fieldGrouping: ['pathname'], sort: { field: 'scroll_depth', dir: 'desc' }, limit: 20 } },
    { name: 'by page, least time first', query: { aggregates: ['time_on_page', 'uniques'], fieldGrouping: ['pathname'], sort: { field: 'time_on_page', dir: 'asc' } } },
    { name: 'by country: one without engagement is null, last either way', query: { aggregates: ['scroll_depth', 'visits'], fieldGrouping: ['country_code'], sort: { field: 'scroll_depth', dir: 'asc' } } },
    { name: 'by country, descending', query: { aggregates: ['scroll_depth'], fieldGrouping: ['country_code'], sort: { field: 'scroll_depth', dir: 'desc' } } },
    { name: 'by day in the site zone', query: { aggregates: ['pageviews', 'scroll_depth', 'time_on_page'], dateGrouping: 'day' } },
    { name: 'by hour', query: { aggregates: ['time_on_page'], dateGrouping: 'hour', from: '2026-05-01 20:00:00', to: '2026-05-02 03:59:59' } },
    { name: 'by month with a field', query: { aggregates: ['scroll_depth', 'pageviews'], dateGrouping: 'month', fieldGrouping: ['device_type'] } },
    { name: 'by entry page (the visit)', query: { aggregates: ['visits', 'scroll_depth', 'time_on_page'], fieldGrouping: ['entry_page'] } },
    { name: 'exit page filter', query: { aggregates: ['scroll_depth', 'time_on_page'], filters: [f('exit_page', 'is not', '/')] } },
    { name: 'hit filters: device and browser', query: { aggregates: ['pageviews', 'scroll_depth'], fieldGrouping: ['browser'], filters: [f('device_type', 'is', 'Desktop')] } },
    { name: 'pathname matching', query: { aggregates: ['time_on_page', 'scroll_depth'], fieldGrouping: ['pathname'], filters: [f('pathname', 'matching', '^/(pricing|blog)')] } },
    { name: 'part of a day: engagement after the end is out', query: { aggregates: ['scroll_depth', 'time_on_page'], from: '2026-05-02 08:00:00', to: '2026-05-02 12:29:59' } },
    { name: 'by referrer source and UTM', query: { aggregates: ['scroll_depth'], fieldGrouping: ['referrer_source', 'utm_source'] } },
    // Ordered by something else, with a limit: engagement is computed for the listed rows only (compiler.ts).
    {
      name: 'the Pages card: most visitors first, top 10',
      query: { aggregates: ['visitors', 'pageviews', 'scroll_depth', 'time_on_page'], fieldGrouping: ['pathname'], sort: { field: 'visitors', dir: 'desc' }, limit: 10 },
    },
    { name: 'by browser, most pageviews first, top 2', query: { aggregates: ['pageviews', 'time_on_page'], fieldGrouping: ['browser'], sort: { field: 'pageviews', dir: 'desc' }, limit: 2 } },
    { name: 'by entry page, by name, first 3', query: { aggregates: ['scroll_depth', 'visits'], fieldGrouping: ['entry_page'], sort: { field: 'entry_page', dir: 'asc' }, limit: 3 } },
    { name: 'by country, top 1, the quiet one possibly listed', query: { aggregates: ['visits', 'scroll_depth'], fieldGrouping: ['country_code'], sort: { field: 'visits', dir: 'asc' }, limit: 1 } },
  ];
  for (const c of cases) it(c.name, () => compare(target, c));

  it('answers null for a group without engagement, a string for the others', async () => {
    const url = `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=scroll_depth,pageviews&field_grouping=country_code&date_from=2026-05-01&date_to=2026-05-03`;
    const res = await t.call(OWNER_TOKEN, 'GET', url);
    assert.equal(res.status, 200);
    const rows = res.body as Record<string, string | null>[];
    assert.equal(rows.find((r) => r.country_code === quiet)?.scroll_depth, null);
    assert.ok(rows.some((r) => typeof r.scroll_depth === 'string' && Number(r.scroll_depth) > 0));
  });

  it('leaves pageviews, visits and the visit facts as they were', async () => {
    const ask = (aggregates: string) =>
      t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=${aggregates}&date_from=2026-05-01&date_to=2026-05-03`);
    const plain = (await ask('pageviews,visits,uniques,bounce_rate,avg_duration,visitors')).body[0];
    const withEngagement = (await ask('pageviews,visits,uniques,bounce_rate,avg_duration,visitors,scroll_depth')).body[0];
    const { scroll_depth: _s, ...rest } = withEngagement;
    assert.deepEqual(rest, plain);
    assert.equal(plain.pageviews, String(data.hits.filter((h) => h.type === 'pageview' && h.at >= Date.parse('2026-04-30T22:00:00Z') && h.at < Date.parse('2026-05-03T22:00:00Z')).length));
  });

  it('refuses engagement aggregates for events', async () => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=event&site_id=${site}&entity_name=Signup&aggregates=scroll_depth`);
    assert.equal(res.status, 400);
    assert.match(JSON.stringify(res.body), /scroll_depth/);
  });
});
