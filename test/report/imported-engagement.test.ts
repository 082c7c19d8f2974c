// Imported engagement (docs/reports.md, "Engagement" and "Imported data"): a Plausible export whose pages carry
// total_scroll_depth, total_time_on_page and the visits each is over, with recorded engagement hits on a day of
// their own; scroll_depth and time_on_page add the export's sums and pairs to the recorded ones in the totals, by
// page, by day and under pathname filters, a range of recorded days only ignores them, and an older export without
// the columns adds nothing. Every expected number is worked out by hand in the comments.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import type { StoredHit } from '../../src/domain/hits.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

const AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
/** Imported days are the 2nd and 4th, recorded hits the 3rd. */
const RANGE = 'date_from=2026-03-02&date_to=2026-03-04';
const RECORDED_DAY = 'date_from=2026-03-03&date_to=2026-03-03';

const csv = (rows: (string | number)[][]) => `${rows.map((r) => r.join(',')).join('\n')}\n`;
const VISITORS = csv([
  ['date', 'visitors', 'pageviews', 'bounces', 'visits', 'visit_duration'],
  ['2026-03-02', 10, 30, 4, 12, 600],
  ['2026-03-04', 5, 10, 2, 6, 120],
]);

/**
 * Pages with engagement. Scroll: /a 500 over 8 and 310 over 4, /b 90 over 3 (810 over 12 for /a; 900 over 15 in
 * all). Time: /a 400 s over 5 and 121 s over 2; /b's cells empty (an export without new time on page for it). /c
 * has none. Lines 6 to 8 are refused: a scroll sum above 100 % of its visits, a number that is none, and more
 * seconds than milliseconds can hold exactly.
 */
const ENGAGED_EXPORT = zipSync({
  'imported_visitors_20260302_20260304.csv': strToU8(VISITORS),
  'imported_pages_20260302_20260304.csv': strToU8(csv([
    ['date', 'hostname', 'page', 'visits', 'visitors', 'pageviews', 'total_scroll_depth', 'total_scroll_depth_visits', 'total_time_on_page', 'total_time_on_page_visits'],
    ['2026-03-02', 'shop.example', '/a', 8, 7, 20, 500, 8, 400, 5],
    ['2026-03-02', 'shop.example', '/b', 4, 3, 10, 90, 3, '', ''],
    ['2026-03-04', 'shop.example', '/a', 6, 5, 9, 310, 4, 121, 2],
    ['2026-03-04', 'shop.example', '/c', 1, 1, 1, 0, 0, 0, 0],
    ['2026-03-04', 'shop.example', '/d', 1, 1, 1, 500, 2, 0, 0],
    ['2026-03-04', 'shop.example', '/e', 1, 1, 1, 'x', 1, 0, 0],
    ['2026-03-04', 'shop.example', '/f', 1, 1, 1, 0, 0, 999_999_999_999_999, 1],
  ])),
});

/** An export made before Plausible had engagement: pages without the four columns. */
const OLDER_EXPORT = zipSync({
  'imported_visitors_20260302_20260304.csv': strToU8(VISITORS),
  'imported_pages_20260302_20260304.csv': strToU8(csv([
    ['date', 'hostname', 'page', 'visits', 'visitors', 'pageviews'],
    ['2026-03-02', 'shop.example', '/a', 8, 7, 20],
  ])),
});

/**
 * Recorded on 3 March: visitor A views / then /a, visitor B views /b. Their engagement hits, per (visit, page)
 * pair: A's / scrolls to 40 then 60 with 10 s and 5 s (60 %, 15 s); A's /a 100 % with 30.001 s; B's /b 25 % with
 * 4 s. So 185 over 3 pairs of scroll and 49,001 ms over 3 pairs of time.
 */
const ENGAGEMENT: Record<string, { scrollDepth: number; engagedMs: number }[]> = {
  '/': [{ scrollDepth: 40, engagedMs: 10_000 }, { scrollDepth: 60, engagedMs: 5_000 }],
  '/a': [{ scrollDepth: 100, engagedMs: 30_001 }],
  '/b': [{ scrollDepth: 25, engagedMs: 4_000 }],
};

describe('imported engagement: Plausible pages with total_scroll_depth and total_time_on_page', () => {
  let t: TestApp;
  let site = '';
  let older = '';
  let importBody: { imported: number; rejected: number; errors: { file: string; line: number; message: string }[] };

  const report = async (where: string, params: string) => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${where}&${params}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string | null>[];
  };
  const upload = async (where: string, zip: Uint8Array) => {
    const res = await t.app.inject({
      method: 'POST',
      url: `/admin/imports/plausible?site_id=${where}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/zip' },
      payload: Buffer.from(zip),
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.json().status, 'done', res.body);
    return res.json();
  };
  const filters = (list: object[]) => `filters=${encodeURIComponent(JSON.stringify(list))}`;

  before(async () => {
    t = await startTestApp();
    const create = async (name: string, domain: string) => {
      const created = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name, domain, timezone: 'UTC' });
      assert.equal(created.status, 200, JSON.stringify(created.body));
      return created.body.id as string;
    };
    site = await create('Engaged import', 'shop.example');
    older = await create('Older import', 'old.example');
    const hit = (ip: string, time: string, path: string) =>
      JSON.stringify({ type: 'pageview', site_id: site, timestamp: `2026-03-03 ${time}`, url: `https://shop.example${path}`, user_agent: AGENT, ip });
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: [hit('203.0.113.1', '10:00:00', '/'), hit('203.0.113.1', '10:01:40', '/a'), hit('203.0.113.2', '11:00:00', '/b')].join('\n'),
    });
    assert.equal(JSON.parse(res.body).imported, 3, res.body);
    // Engagement hits as the pipeline stores them: the pageview's visit and context, a minute apart after it.
    const stored: StoredHit[] = [];
    for (const pv of (await t.events.listHits(site)).filter((h) => h.type === 'pageview')) {
      const { props: _props, ...rest } = pv;
      (ENGAGEMENT[pv.pathname] ?? []).forEach(({ scrollDepth, engagedMs }, i) => {
        const timestamp = new Date(pv.timestamp.getTime() + (i + 1) * 60_000);
        stored.push({ ...rest, type: 'engagement', timestamp, firstView: false, eventName: '', value: 0, scrollDepth, engagedMs });
      });
    }
    assert.equal(stored.length, 4);
    await t.events.write(stored, []);
    importBody = await upload(site, ENGAGED_EXPORT);
    await upload(older, OLDER_EXPORT);
  });
  after(() => t.close());

  it('reads the four columns, refusing rows whose numbers cannot be engagement', () => {
    assert.deepEqual([importBody.imported, importBody.rejected], [6, 3]);
    assert.deepEqual(importBody.errors.map((e) => [e.file, e.line]), [
      ['imported_pages_20260302_20260304.csv', 6], ['imported_pages_20260302_20260304.csv', 7], ['imported_pages_20260302_20260304.csv', 8],
    ]);
    assert.match(importBody.errors[0]!.message, /total_scroll_depth/);
    assert.match(importBody.errors[1]!.message, /whole numbers/);
    assert.match(importBody.errors[2]!.message, /total_time_on_page/);
  });

  it('answers the recorded pairs alone over recorded days', async () => {
    // Scroll 185 / 3 = 61.666..; time 49.001 s / 3 = 16.333.. s.
    assert.deepEqual(await report(site, `aggregates=pageviews,scroll_depth,time_on_page&${RECORDED_DAY}`), [
      { pageviews: '3', scroll_depth: '61.67', time_on_page: '16.33' },
    ]);
  });

  it('adds the export sums and pairs to the recorded ones in the totals', async () => {
    // Scroll (185 + 900) / (3 + 15) = 60.277..; time (49,001 + 521,000) ms / (3 + 7) = 57.0001 s.
    assert.deepEqual(await report(site, `aggregates=pageviews,scroll_depth,time_on_page&${RANGE}`), [
      { pageviews: '43', scroll_depth: '60.28', time_on_page: '57' },
    ]);
    // Engagement alone, and beside the visit facts, which keep their own imported parts: (720 + 100) s / (18 + 2).
    assert.deepEqual(await report(site, `aggregates=time_on_page,scroll_depth&${RANGE}`), [{ time_on_page: '57', scroll_depth: '60.28' }]);
    assert.deepEqual(await report(site, `aggregates=visits,avg_duration,scroll_depth&${RANGE}`), [{ visits: '20', avg_duration: '41', scroll_depth: '60.28' }]);
  });

  it('adds them per page, a page without engagement anywhere null, last in either direction', async () => {
    // /a: scroll (100 + 810) / (1 + 12) = 70, time (30,001 + 521,000) ms / (1 + 7) = 68.875125 s. /: recorded only.
    // /b: scroll (25 + 90) / (1 + 3) = 28.75, time 4 s / 1 (the export has none). /c: imported, no engagement.
    const byPage = `aggregates=pageviews,scroll_depth,time_on_page&field_grouping=pathname&${RANGE}`;
    const a = { pathname: '/a', pageviews: '30', scroll_depth: '70', time_on_page: '68.88' };
    const root = { pathname: '/', pageviews: '1', scroll_depth: '60', time_on_page: '15' };
    const b = { pathname: '/b', pageviews: '11', scroll_depth: '28.75', time_on_page: '4' };
    const c = { pathname: '/c', pageviews: '1', scroll_depth: null, time_on_page: null };
    assert.deepEqual(await report(site, `${byPage}&sort_by=scroll_depth:desc`), [a, root, b, c]);
    assert.deepEqual(await report(site, `${byPage}&sort_by=time_on_page:asc`), [b, root, a, c]);
    assert.deepEqual(await report(site, `${byPage}&sort_by=scroll_depth:asc&limit=2`), [b, root]);
  });

  it('adds them under pathname filters: pairs of several pages add up', async () => {
    // /a and /b: scroll (100 + 25 + 810 + 90) / (1 + 1 + 12 + 3) = 60.294..; time (34,001 + 521,000) ms / (2 + 7) = 61.666.. s.
    const two = filters([{ property: 'pathname', operator: 'matching', value: '^/[ab]$' }]);
    assert.deepEqual(await report(site, `aggregates=scroll_depth,time_on_page&${two}&${RANGE}`), [{ scroll_depth: '60.29', time_on_page: '61.67' }]);
    const one = filters([{ property: 'pathname', operator: 'is', value: '/c' }]);
    assert.deepEqual(await report(site, `aggregates=pageviews,scroll_depth&${one}&${RANGE}`), [{ pageviews: '1', scroll_depth: null }]);
  });

  it('adds them per day', async () => {
    // 2 March: scroll 590 / 11 = 53.636..; time 400 s / 5. 4 March: scroll 310 / 4; time 121 s / 2.
    assert.deepEqual(await report(site, `aggregates=scroll_depth,time_on_page&date_grouping=day&${RANGE}`), [
      { timestamp: '2026-03-02 00:00:00', scroll_depth: '53.64', time_on_page: '80' },
      { timestamp: '2026-03-03 00:00:00', scroll_depth: '61.67', time_on_page: '16.33' },
      { timestamp: '2026-03-04 00:00:00', scroll_depth: '77.5', time_on_page: '60.5' },
    ]);
  });

  it('leaves engagement to recorded hits where no imported table has it', async () => {
    // By browser: the export's browsers carry no engagement (none here at all), so the recorded pairs alone.
    assert.deepEqual(await report(site, `aggregates=scroll_depth&field_grouping=browser&${RANGE}`), [{ browser: 'Firefox', scroll_depth: '61.67' }]);
    // Not whole days: recorded hits only, as for every number.
    assert.deepEqual(await report(site, `aggregates=scroll_depth&date_from=2026-03-02&date_to=2026-03-04%2012:00:00`), [{ scroll_depth: '61.67' }]);
  });

  it('adds nothing from an export without the columns', async () => {
    assert.deepEqual(await report(older, `aggregates=pageviews,scroll_depth,time_on_page&${RANGE}`), [{ pageviews: '40', scroll_depth: null, time_on_page: null }]);
    assert.deepEqual(await report(older, `aggregates=pageviews,scroll_depth&field_grouping=pathname&${RANGE}`), [{ pathname: '/a', pageviews: '20', scroll_depth: null }]);
  });
});
