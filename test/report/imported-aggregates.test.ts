// Imported days answer per aggregate, not per request: over Plausible's and Fathom's imported days, a request mixing
// numbers the export holds with numbers it lacks (an event's value and unique completions, uniques, Fathom's
// visitors and its visits by field) gets the held ones as recorded hits plus imported days and the others as
// recorded hits only, as docs/reports.md ("Imported data") says; never a 0 where the import holds the number.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

const AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
/** Imported days are the 2nd and 4th, recorded hits the 3rd: the range covers all three. */
const RANGE = 'date_from=2026-03-02&date_to=2026-03-04';
const RECORDED_DAY = 'date_from=2026-03-03&date_to=2026-03-03';

/**
 * Recorded on 3 March: visitor A views / then /a 100 s later and buys for 12.99; visitor B views /b (a bounce)
 * and buys for 5.00. So 3 pageviews, 2 visits, 2 visitors, 1 bounce, 100 s of visit time, 2 purchases worth 1799.
 */
function recorded(site: string, domain: string): string {
  const hit = (ip: string, type: string, time: string, path: string, extra: object = {}) =>
    JSON.stringify({ type, site_id: site, timestamp: `2026-03-03 ${time}`, url: `https://${domain}${path}`, user_agent: AGENT, ip, ...extra });
  return [
    hit('203.0.113.1', 'pageview', '10:00:00', '/'),
    hit('203.0.113.1', 'pageview', '10:01:40', '/a'),
    hit('203.0.113.1', 'event', '10:01:40', '/a', { name: 'Purchase', value: 1299 }),
    hit('203.0.113.2', 'pageview', '11:00:00', '/b'),
    hit('203.0.113.2', 'event', '11:00:00', '/b', { name: 'Purchase', value: 500 }),
  ].join('\n');
}

const csv = (rows: (string | number)[][]) => `${rows.map((r) => r.join(',')).join('\n')}\n`;

/** Plausible CE's export: two days of totals, pages and a custom event, every number in it. */
const PLAUSIBLE = zipSync({
  'imported_visitors_20260302_20260304.csv': strToU8(csv([
    ['date', 'visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'],
    ['2026-03-02', 10, 30, 4, 12, 600],
    ['2026-03-04', 5, 9, 2, 6, 120],
  ])),
  'imported_pages_20260302_20260304.csv': strToU8(csv([
    ['date', 'hostname', 'page', 'visits', 'visitors', 'pageviews'],
    ['2026-03-02', 'shop.example', '/a', 8, 7, 20],
    ['2026-03-02', 'shop.example', '/b', 4, 3, 10],
    ['2026-03-04', 'shop.example', '/a', 6, 5, 9],
  ])),
  'imported_custom_events_20260302_20260304.csv': strToU8(csv([
    ['date', 'name', 'link_url', 'path', 'visitors', 'events'],
    ['2026-03-02', 'Purchase', '', '', 3, 4],
  ])),
});

/**
 * Fathom's export: two hours of 2 March (UTC), 30 pageviews in 12 visits, 5 bounces (8 × 0.5 + 4 × 0.25) and 480 s
 * (8 × 30 + 4 × 60); pages; 3 purchases. No visitors (hourly rows have no count that adds up to a day's) and,
 * by page, pageviews only.
 */
const FATHOM = zipSync({
  'shop.example/Site.csv': strToU8(csv([
    ['Timestamp', 'Pageviews', 'Visits', 'Bounce Rate', 'Avg Duration'],
    ['2026-03-02 10:00:00', 20, 8, 0.5, 30],
    ['2026-03-02 11:00:00', 10, 4, 0.25, 60],
  ])),
  'shop.example/Pages.csv': strToU8(csv([
    ['Timestamp', 'Pathname', 'Views'],
    ['2026-03-02 10:00:00', '/a', 20],
    ['2026-03-02 11:00:00', '/b', 10],
  ])),
  'shop.example/Events.csv': strToU8(csv([
    ['Timestamp', 'Event', 'Completions'],
    ['2026-03-02 10:00:00', 'Purchase', 3],
  ])),
});

describe('imported days answer per aggregate', () => {
  let t: TestApp;
  let plausible: string;
  let fathom: string;

  const report = async (site: string, params: string, entity = 'pageview') => {
    const which = entity === 'pageview' ? `entity=pageview&entity_id=${site}` : `entity=event&site_id=${site}&entity_name=Purchase`;
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${which}&${params}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  };
  const upload = async (kind: string, site: string, zip: Uint8Array) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/admin/imports/${kind}?site_id=${site}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/zip' },
      payload: Buffer.from(zip),
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'done', res.body);
  };

  before(async () => {
    t = await startTestApp();
    for (const [name, domain] of [['From Plausible', 'shop.example'], ['From Fathom', 'fathom.example']] as const) {
      const created = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name, domain, timezone: 'UTC' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      const site = created.body.id as string;
      assert.equal((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events`, { name: 'Purchase' })).status, 200);
      const res = await t.app.inject({
        method: 'POST',
        url: '/admin/import',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
        payload: recorded(site, domain),
      });
      assert.equal(JSON.parse(res.body).imported, 5, res.body);
      if (name === 'From Plausible') plausible = site;
      else fathom = site;
    }
    await upload('plausible', plausible, PLAUSIBLE);
    await upload('fathom', fathom, FATHOM);
  });
  after(() => t.close());

  it('has the recorded hits this file counts on (their day holds no imported row)', async () => {
    for (const site of [plausible, fathom]) {
      assert.deepEqual(await report(site, `aggregates=pageviews,visits,visitors,uniques,bounce_rate,avg_duration&${RECORDED_DAY}`), [
        { pageviews: '3', visits: '2', visitors: '2', uniques: '3', bounce_rate: '0.5', avg_duration: '50' },
      ]);
      assert.deepEqual(await report(site, `aggregates=conversions,unique_conversions,value&${RECORDED_DAY}`, 'event'), [
        { conversions: '2', unique_conversions: '2', value: '1799' },
      ]);
    }
  });

  it("Plausible: an event's conversions with its value and unique conversions, which the export lacks", async () => {
    // 4 imported completions plus 2 recorded; value and unique conversions are recorded ones only.
    assert.deepEqual(await report(plausible, `aggregates=conversions,value&${RANGE}`, 'event'), [{ conversions: '6', value: '1799' }]);
    assert.deepEqual(await report(plausible, `aggregates=value,conversions,unique_conversions&${RANGE}`, 'event'), [
      { value: '1799', conversions: '6', unique_conversions: '2' },
    ]);
    assert.deepEqual(await report(plausible, `aggregates=conversions,value&date_grouping=day&${RANGE}`, 'event'), [
      { timestamp: '2026-03-02 00:00:00', conversions: '4', value: '0' },
      { timestamp: '2026-03-03 00:00:00', conversions: '2', value: '1799' },
    ]);
  });

  it('Plausible: pageviews with uniques, and pageviews with visitors of the pages a pattern keeps', async () => {
    // 39 imported pageviews plus 3; uniques (unique pageviews: no table counts them) recorded only.
    assert.deepEqual(await report(plausible, `aggregates=pageviews,uniques,visitors&${RANGE}`), [{ pageviews: '42', uniques: '3', visitors: '17' }]);
    // Pages /a and /b (20 + 10 + 9 imported, 2 recorded) summed: pageviews add up, visitors do not (one person
    // views both): recorded only.
    const pattern = encodeURIComponent(JSON.stringify([{ property: 'pathname', operator: 'matching', value: '^/[ab]$' }]));
    assert.deepEqual(await report(plausible, `aggregates=visitors,pageviews&filters=${pattern}&${RANGE}`), [{ visitors: '2', pageviews: '41' }]);
    // Grouped by page, each row is one page: both exact.
    assert.deepEqual(await report(plausible, `aggregates=pageviews,visitors,bounce_rate&field_grouping=pathname&${RANGE}`), [
      { pathname: '/a', pageviews: '30', visitors: '13', bounce_rate: '0' },
      { pathname: '/b', pageviews: '11', visitors: '4', bounce_rate: '1' },
      { pathname: '/', pageviews: '1', visitors: '1', bounce_rate: '0' },
    ]);
  });

  it('Fathom: pageviews, visits, bounce rate and duration from its days, visitors (which it lacks) recorded only', async () => {
    // 30 + 3 pageviews, 12 + 2 visits, (5 + 1) / 14 bounces, (480 + 100) / 14 s.
    assert.deepEqual(await report(fathom, `aggregates=visitors,pageviews&${RANGE}`), [{ visitors: '2', pageviews: '33' }]);
    assert.deepEqual(await report(fathom, `aggregates=visitors,visits,pageviews,bounce_rate,avg_duration&${RANGE}`), [
      { visitors: '2', visits: '14', pageviews: '33', bounce_rate: '0.4286', avg_duration: '41.43' },
    ]);
    // Sorted by a recorded-only number: the imported day has none.
    assert.deepEqual(await report(fathom, `aggregates=pageviews,visitors&date_grouping=day&sort_by=visitors:desc&${RANGE}`), [
      { timestamp: '2026-03-03 00:00:00', pageviews: '3', visitors: '2' },
      { timestamp: '2026-03-02 00:00:00', pageviews: '30', visitors: '0' },
    ]);
  });

  it("Fathom: pages' pageviews with their visits (which it has not by page), and an event's conversions with its value", async () => {
    assert.deepEqual(await report(fathom, `aggregates=pageviews,visits&field_grouping=pathname&${RANGE}`), [
      { pathname: '/a', pageviews: '21', visits: '1' },
      { pathname: '/b', pageviews: '11', visits: '1' },
      { pathname: '/', pageviews: '1', visits: '1' },
    ]);
    assert.deepEqual(await report(fathom, `aggregates=conversions,value&${RANGE}`, 'event'), [{ conversions: '5', value: '1799' }]);
  });

  it('answers from recorded hits only what needs only numbers the import lacks', async () => {
    assert.deepEqual(await report(fathom, `aggregates=visitors&${RANGE}`), [{ visitors: '2' }]);
    assert.deepEqual(await report(plausible, `aggregates=value,unique_conversions&${RANGE}`, 'event'), [{ value: '1799', unique_conversions: '2' }]);
  });
});
