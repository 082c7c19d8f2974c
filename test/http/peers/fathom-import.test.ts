// Fathom's CSV export imported through /admin/imports/fathom as daily aggregates: a generated export of four
// months of hourly rows (about 200,000, in a site zone with a DST change), report answers over the imported days
// checked against the export's numbers summed per local day, what the hourly rows cannot answer left to recorded
// hits, headers matched in any case, bad rows reported by file and line, re-running replacing, deleting removing.

import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../../helpers/app.js';
import { generateFathomExport, localDay, type DayCounts, type FathomExport } from '../../helpers/fathom-export.js';

const ZONE = 'Europe/Berlin';
const today = localDay(ZONE, Date.now());
const dayBefore = (n: number) => new Date(Date.parse(`${today}T00:00:00Z`) - n * 86_400_000).toISOString().slice(0, 10);
const FIRST = dayBefore(120);
const LAST = dayBefore(1);

const zipOf = (files: Record<string, string>, folder = 'example.com/') =>
  zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [`${folder}${name}`, strToU8(text)])));

/** A ratio as reports write it: rounded half up to `places` decimals, without trailing zeros. */
const ratio = (numerator: number, denominator: number, places: number) => {
  if (denominator === 0) return '0';
  const scale = 10n ** BigInt(places);
  const n = (2n * BigInt(numerator) * scale + BigInt(denominator)) / (2n * BigInt(denominator));
  const fraction = (n % scale).toString().padStart(places, '0').replace(/0+$/, '');
  return fraction ? `${n / scale}.${fraction}` : `${n / scale}`;
};

describe('/admin/imports/fathom', () => {
  let t: TestApp;
  let site: string;
  let source: FathomExport;
  let zip: Uint8Array;
  let importId: string;
  const range = `date_from=${FIRST}&date_to=${LAST}`;

  const upload = (body: Uint8Array | string, query: string) =>
    t.app.inject({
      method: 'POST',
      url: `/admin/imports/fathom?${query}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/zip' },
      payload: Buffer.from(body),
    });
  const report = async (params: string, siteId = site) => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${siteId}&${params}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  };
  const total = (keep: (day: string) => boolean = () => true) => {
    const out: DayCounts = { pageviews: 0, visits: 0, bounces: 0, duration: 0 };
    for (const [day, c] of source.byDay) {
      if (!keep(day)) continue;
      out.pageviews += c.pageviews;
      out.visits += c.visits;
      out.bounces += c.bounces;
      out.duration += c.duration;
    }
    return out;
  };

  before(async () => {
    // A short request timeout, so the server closes connections idle for half a second (twice it): the import
    // below takes longer than that after its upload, and must still answer.
    t = await startTestApp({ requestTimeoutMs: 250 });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'From Fathom', domain: 'example.com', timezone: ZONE })).body.id;
    source = generateFathomExport({ zone: ZONE, firstDay: FIRST, endDay: today, pagesPerHour: 40 });
    zip = zipOf(source.files);
  });
  after(() => t.close());

  it('imports every hourly row of a four-month export and says which columns it did not read', async () => {
    assert.ok(source.rows > 150_000, `a realistic size: ${source.rows} rows`);
    // Over a real connection, which stays idle while the rows are read after the upload.
    const address = t.app.server.address() as AddressInfo;
    const res = await fetch(`http://127.0.0.1:${address.port}/admin/imports/fathom?site_id=${site}&file_name=fathom.zip`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/zip' },
      body: zip,
    });
    const text = await res.text();
    assert.equal(res.status, 200, text);
    const body = JSON.parse(text);
    importId = body.id;
    assert.deepEqual([body.kind, body.status, body.imported, body.rejected], ['fathom', 'done', source.rows, 0]);
    assert.deepEqual([body.first_hit_at, body.last_hit_at], [`${FIRST} 00:00:00`, `${LAST} 00:00:00`]);
    assert.equal(body.read.length, 7);
    // Uniques and the hostname are known and left out on purpose; Foo is not Fathom's.
    assert.deepEqual(body.skipped, ['example.com/Pages.csv: columns not read: Foo']);
    const events = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events`);
    assert.deepEqual(events.body.data.map((e: { name: string }) => e.name).sort(), ['Newsletter', 'Signup']);
    // Whoever may read the site's reports learns which days are imported, from which product, and nothing else.
    const days = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/imported_days`);
    assert.deepEqual(days.body, { object: 'list', data: [{ kind: 'fathom', first_day: FIRST, last_day: LAST }] });
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/sites/ZZZZZZZZ/imported_days')).status, 404);
    assert.equal((await t.call(undefined, 'GET', `/v1/sites/${site}/imported_days`)).status, 401);
  });

  it("adds each hour to the site's local day: totals, days and months, bounce rate and duration", async () => {
    const all = total();
    assert.deepEqual(await report(`aggregates=pageviews,visits,bounce_rate,avg_duration&${range}`), [{
      pageviews: String(all.pageviews), visits: String(all.visits), bounce_rate: ratio(all.bounces, all.visits, 4), avg_duration: ratio(all.duration, all.visits, 2),
    }]);
    const days = await report(`aggregates=pageviews,visits&date_grouping=day&${range}`);
    assert.deepEqual(days, [...source.byDay].sort().map(([day, c]) => ({ timestamp: `${day} 00:00:00`, pageviews: String(c.pageviews), visits: String(c.visits) })));
    const months = await report(`aggregates=bounce_rate&date_grouping=month&${range}`);
    for (const row of months) {
      const c = total((d) => d.startsWith(row.timestamp!.slice(0, 7)));
      assert.equal(row.bounce_rate, ratio(c.bounces, c.visits, 4), row.timestamp);
    }
  });

  it('answers pageviews by page, referrer, browser, country and device, and filtered by one of them', async () => {
    for (const [field, values] of source.byField) {
      const rows = await report(`aggregates=pageviews&field_grouping=${field}&limit=1000&${range}`);
      assert.deepEqual(new Map(rows.map((r) => [r[field]!, Number(r.pageviews)])), values, field);
    }
    const pages = [...source.byField.get('pathname')!].sort((a, b) => b[1] - a[1] || Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])));
    assert.deepEqual(await report(`aggregates=pageviews&field_grouping=pathname&limit=3&${range}`), pages.slice(0, 3).map(([pathname, n]) => ({ pathname, pageviews: String(n) })));
    const filter = encodeURIComponent(JSON.stringify([{ property: 'country_code', operator: 'is not', value: 'US' }]));
    const notUs = [...source.byField.get('country_code')!].filter(([c]) => c !== 'US').reduce((a, [, n]) => a + n, 0);
    assert.deepEqual(await report(`aggregates=pageviews&filters=${filter}&${range}`), [{ pageviews: String(notUs) }]);
  });

  it("answers an event's completions by day", async () => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=event&site_id=${site}&entity_name=Signup&aggregates=conversions&date_grouping=day&${range}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, [...source.events.get('Signup')!].sort().map(([day, n]) => ({ timestamp: `${day} 00:00:00`, conversions: String(n) })));
  });

  it('leaves to recorded hits what hourly rows cannot answer: visitors, and visits by field; answers the rest', async () => {
    // Nothing was recorded in the range, so a number from recorded hits alone is zero, or no rows; the numbers
    // the export has in the same request are its own (per aggregate, docs/reports.md "Imported data").
    assert.deepEqual(await report(`aggregates=pageviews,visitors&${range}`), [{ pageviews: String(total().pageviews), visitors: '0' }]);
    assert.deepEqual(await report(`aggregates=visits&field_grouping=browser&${range}`), []);
    const pages = [...source.byField.get('pathname')!].sort((a, b) => b[1] - a[1] || Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])));
    assert.deepEqual(await report(`aggregates=pageviews,bounce_rate&field_grouping=pathname&limit=3&${range}`), pages.slice(0, 3).map(([pathname, n]) => ({ pathname, pageviews: String(n), bounce_rate: '0' })));
  });

  it('re-running the same export replaces it; deleting it removes its days', async () => {
    const again = await upload(zip, `site_id=${site}`);
    assert.equal(again.statusCode, 200, again.body);
    assert.deepEqual(again.json().replaced, [importId]);
    assert.deepEqual(await report(`aggregates=pageviews&${range}`), [{ pageviews: String(total().pageviews) }]);
    assert.equal((await t.call(ADMIN_TOKEN, 'DELETE', `/admin/imports/${again.json().id}`)).status, 200);
    assert.deepEqual(await report(`aggregates=pageviews&${range}`), [{ pageviews: '0' }]);
  });

  it('reads the newer export of one file per dimension, daily rows too, and refuses totals it cannot place on days', async () => {
    // Fathom does not publish these files' headers: these are the names Plumb reads (docs/collection.md).
    const other = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Per dimension', timezone: 'America/New_York' })).body.id;
    const suffix = '2026-02-01-to-2026-02-28';
    const files = {
      [`pageviews-site-totals-${suffix}.csv`]: 'date,visits,uniques,pageviews,avg_duration,bounce_rate\n2026-02-01,10,9,25,60,0.5\n2026-02-02,4,4,6,15,0.25\n',
      [`pageviews-pathname-${suffix}.csv`]: 'date,pathname,visits,uniques,pageviews\n2026-02-01,/a,6,6,20\n2026-02-01,/b,2,2,5\n2026-02-02,/a,4,4,6\n',
      [`pageviews-browser-${suffix}.csv`]: 'date,browser,pageviews\n2026-02-01,Firefox,25\n2026-02-02,Chrome,6\n',
      [`pageviews-device-type-${suffix}.csv`]: 'date,device_type,pageviews\n2026-02-01,Phone,25\n2026-02-02,Desktop,6\n',
      [`pageviews-country-${suffix}.csv`]: 'date,country_code,pageviews\n2026-02-01,DE,25\n2026-02-02,US,6\n',
      [`pageviews-referrer-hostname-${suffix}.csv`]: 'date,referrer_hostname,pageviews\n2026-02-01,news.example,3\n',
      [`pageviews-city-${suffix}.csv`]: 'date,city,pageviews\n2026-02-01,Berlin,25\n',
    };
    const res = await upload(zipOf(files, ''), `site_id=${other}`);
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([res.json().imported, res.json().rejected], [12, 0]);
    // Per page only views are kept (as from Site.csv's siblings); the answer says what it left.
    assert.deepEqual(res.json().skipped, [`pageviews-pathname-${suffix}.csv: columns not read: visits`, `pageviews-city-${suffix}.csv (not used)`]);
    const range = 'date_from=2026-02-01&date_to=2026-02-02';
    // Daily rows stay on their day, whatever the site's zone.
    assert.deepEqual(await report(`aggregates=pageviews,visits,bounce_rate,avg_duration&date_grouping=day&${range}`, other), [
      { timestamp: '2026-02-01 00:00:00', pageviews: '25', visits: '10', bounce_rate: '0.5', avg_duration: '60' },
      { timestamp: '2026-02-02 00:00:00', pageviews: '6', visits: '4', bounce_rate: '0.25', avg_duration: '15' },
    ]);
    const by = async (field: string) => (await report(`aggregates=pageviews&field_grouping=${field}&sort_by=pageviews:desc&${range}`, other)).map((r) => [r[field], r.pageviews]);
    assert.deepEqual(await by('pathname'), [['/a', '26'], ['/b', '5']]);
    assert.deepEqual(await by('browser'), [['Firefox', '25'], ['Chrome', '6']]);
    assert.deepEqual(await by('device_type'), [['Mobile', '25'], ['Desktop', '6']]);
    assert.deepEqual(await by('country_code'), [['DE', '25'], ['US', '6']]);
    assert.deepEqual(await by('referrer_hostname'), [['https://news.example', '3']]);

    // Exported without a date grouping, the totals are one row for the whole range: refused, saying why.
    const undated = await upload(zipOf({ [`pageviews-site-totals-${suffix}.csv`]: 'visits,pageviews\n14,31\n' }, ''), `site_id=${other}`);
    assert.equal(undated.statusCode, 400);
    assert.match(undated.json().error, /lacks the columns timestamp .*rows need an hour or a day: export with a date grouping/);
    const monthly = await upload(zipOf({ [`pageviews-site-totals-${suffix}.csv`]: 'date,pageviews\n2026-02,31\n' }, ''), `site_id=${other}`);
    assert.equal(monthly.statusCode, 200, monthly.body);
    assert.deepEqual([monthly.json().imported, monthly.json().rejected], [0, 1]);
    assert.match(monthly.json().errors[0].message, /must be an hour in UTC \(YYYY-MM-DD HH:00:00\) or a day \(YYYY-MM-DD\)/);
  });

  it('matches headers in any case and spelling, reports bad rows by file and line, refuses what is no Fathom export', async () => {
    const other = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Kolkata', timezone: 'Asia/Kolkata' })).body.id;
    const files = {
      // 18:00 UTC is 23:30 in Kolkata: the hour is counted whole on the day it starts in.
      'site.CSV': 'TIMESTAMP,PAGEVIEWS,visits,bounce_rate,avg_duration\n2026-01-01 18:00:00,10,4,0.25,30\n2026-01-01 19:00:00,7,3,33.3333%,12.333333\nyesterday,1,1,0,0\n2026-01-02 00:00:00,x,1,0,0\n',
      'pages.csv': 'timestamp,PATHNAME,pageviews\n2026-01-01 18:00:00,/a,10\n2026-01-01 19:00:00,https://example.com/b?x=1,7\n2026-01-01 20:00:00,nope,1\n',
      'Referrers.csv': 'Timestamp,Views\n2026-01-01 18:00:00,3\n',
      'notes.txt.csv': 'a\n1\n',
    };
    const res = await upload(zipOf(files, ''), `site_id=${other}`);
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json();
    assert.deepEqual([body.imported, body.rejected], [4, 3]);
    assert.deepEqual(body.errors.map((e: { file: string; line: number }) => [e.file, e.line]), [['pages.csv', 4], ['site.CSV', 4], ['site.CSV', 5]]);
    assert.deepEqual(body.skipped, ['Referrers.csv (lacks referrerhostname)', 'notes.txt.csv (not used)']);
    assert.deepEqual(await report('aggregates=pageviews,visits,bounce_rate,avg_duration&date_grouping=day&date_from=2026-01-01&date_to=2026-01-02', other), [
      { timestamp: '2026-01-01 00:00:00', pageviews: '10', visits: '4', bounce_rate: '0.25', avg_duration: '30' },
      { timestamp: '2026-01-02 00:00:00', pageviews: '7', visits: '3', bounce_rate: '0.3333', avg_duration: '12.33' },
    ]);
    assert.deepEqual(await report('aggregates=pageviews&field_grouping=pathname&date_from=2026-01-01&date_to=2026-01-02', other), [
      { pathname: '/a', pageviews: '10' }, { pathname: '/b', pageviews: '7' },
    ]);
    const noSite = await upload(zipOf({ 'Pages.csv': 'Timestamp,Pathname,Views\n' }), `site_id=${other}`);
    assert.equal(noSite.statusCode, 400);
    assert.match(noSite.json().error, /no Site\.csv/);
    const noViews = await upload(zipOf({ 'Site.csv': 'Timestamp,Visits\n2026-01-01 00:00:00,1\n' }), `site_id=${other}`);
    assert.equal(noViews.statusCode, 400);
    assert.match(noViews.json().error, /lacks the columns pageviews/);
    const notZip = await upload('Timestamp,Pageviews\n', `site_id=${other}`);
    assert.equal(notZip.statusCode, 400);
    assert.match(notZip.json().error, /not a zip/);
    const wrongType = await t.app.inject({ method: 'POST', url: `/admin/imports/fathom?site_id=${other}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, payload: '{}' });
    assert.equal(wrongType.statusCode, 400);
  });
});
