// GET /v1/sites/{site_id}/journeys against the journey oracle (test/report/journey-oracle.ts) over generated visits
// with reloads, repeats, events, an entry page, filters, visits across midnight in the site's zone and an empty
// range; and every bad input answered with SPEC.md's status and error shape.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DemoHit } from '../../src/cli/demo-traffic.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { journeysOf, type JourneyQuery } from './journey-oracle.js';
import { AGENTS, createSite, importLines, line } from './fixtures.js';
import { localString, prepare, type Filter, type Prepared } from './oracle.js';

const ZONE = 'America/New_York';
const HOST = 'https://shop.example';
const PAGES = ['/', '/blog', '/pricing', '/docs', '/signup', '/about', '/blog/post-1'];
const UAS = [AGENTS.chromeWin, AGENTS.firefoxLinux, AGENTS.safariIphone];

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

/**
 * Visits of 80 visitors over 2026-11-02..04 UTC: each 1-3 visits hours apart, of 1-7 pageviews a minute or few
 * apart, with reloads (the same page again), pages seen twice, events between pages, and a third of them starting
 * around local midnight so they cross it. Entry pages lean to `/` and `/blog` so the top prefixes are shared.
 */
function generated(site: string): DemoHit[] {
  const rnd = random(47);
  const pick = <T>(list: readonly T[]) => list[Math.floor(rnd() * list.length)]!;
  const lines: DemoHit[] = [];
  for (let v = 0; v < 80; v++) {
    const ip = `81.2.69.${10 + v}`;
    const ua = UAS[v % UAS.length]!;
    const referrer = v % 4 === 0 ? 'https://www.google.com/' : v % 4 === 1 ? 'https://news.ycombinator.com/' : '';
    const visits = 1 + Math.floor(rnd() * 3);
    for (let k = 0; k < visits; k++) {
      // Local midnight in New York is 05:00 UTC in November.
      let at = v % 3 === 0 ? Date.UTC(2026, 10, 2 + k, 4, 40 + Math.floor(rnd() * 15)) : Date.UTC(2026, 10, 2 + k, 12 + Math.floor(rnd() * 8), Math.floor(rnd() * 60));
      let page = rnd() < 0.6 ? pick(['/', '/blog']) : pick(PAGES);
      const views = 1 + Math.floor(rnd() * 7);
      for (let p = 0; p < views; p++) {
        lines.push(line(site, new Date(at).toISOString(), `${HOST}${page}`, { ip, ua, referrer: p === 0 ? referrer : `${HOST}/` }));
        at += 30_000 + Math.floor(rnd() * 240_000);
        if (rnd() < 0.25) {
          lines.push(line(site, new Date(at).toISOString(), `${HOST}${page}`, { ip, ua, type: 'event', name: 'Click' }));
          at += 10_000;
        }
        // A reload keeps the page; otherwise move on (sometimes back to the entry page: a repeat, not a reload).
        if (rnd() >= 0.2) page = rnd() < 0.15 ? lines.find((l) => l.user_agent === ua && l.ip === ip)!.url.slice(HOST.length) || '/' : pick(PAGES);
      }
    }
  }
  return lines;
}

/** Hand-made visits whose journeys the docs' rules fix literally. */
function handMade(site: string): DemoHit[] {
  const night = { ip: '81.2.69.200' };
  const tie = { ip: '81.2.69.201' };
  return [
    // Across local midnight (05:00 UTC): /night, /pricing twice (a reload), an event, /signup: one journey.
    line(site, '2026-11-02T04:55:00.000Z', `${HOST}/night`, night),
    line(site, '2026-11-02T05:05:00.000Z', `${HOST}/pricing`, night),
    line(site, '2026-11-02T05:06:00.000Z', `${HOST}/pricing`, night),
    line(site, '2026-11-02T05:07:00.000Z', `${HOST}/signup`, { ...night, type: 'event', name: 'Click' }),
    line(site, '2026-11-02T05:10:00.000Z', `${HOST}/signup`, night),
    // Two pageviews of the same instant: ordered by pathname, whatever order they came in.
    line(site, '2026-11-03T15:00:00.000Z', `${HOST}/tie-z`, tie),
    line(site, '2026-11-03T15:00:00.000Z', `${HOST}/tie-a`, tie),
    line(site, '2026-11-03T15:01:00.000Z', `${HOST}/tie-b`, tie),
  ];
}

const f = (property: string, operator: Filter['operator'], value: string): Filter => ({ property, operator, value });

interface Case {
  name: string;
  query: Partial<JourneyQuery>;
  /** Send `timezone` though it is the site's. */
  sendTimezone?: boolean;
}

const CASES: Case[] = [
  { name: 'defaults: three steps, ten per depth', query: {} },
  { name: 'five steps, three per depth', query: { steps: 5, limit: 3 } },
  { name: 'two steps, every prefix', query: { steps: 2, limit: 100 } },
  { name: 'an entry page', query: { entryPage: '/blog', steps: 4, limit: 5 } },
  { name: 'an entry page and a hit filter', query: { entryPage: '/', filters: [f('browser', 'is', 'Firefox')] } },
  { name: 'a visit takes part when one of its pageviews passes', query: { filters: [f('pathname', 'is', '/pricing')], steps: 4, limit: 20 } },
  { name: 'a negative hit filter', query: { filters: [f('pathname', 'is not', '/')], limit: 20 } },
  { name: 'a visit filter (the visit’s entry page)', query: { filters: [f('entry_page', 'is', '/blog')], steps: 3, limit: 20 } },
  { name: 'visit and hit filters together', query: { filters: [f('exit_page', 'is not', '/signup'), f('referrer_source', 'is', 'Google')], limit: 20 } },
  { name: 'a regular expression and a like', query: { filters: [f('pathname', 'matching', '^/blog'), f('referrer_hostname', 'is like', '*GOOGLE*')], limit: 20 } },
  { name: 'one local day crossed at its start by night visits', query: { from: '2026-11-02 00:00:00', to: '2026-11-02 23:59:59', steps: 3, limit: 30 } },
  { name: 'one local day crossed at its end by night visits', query: { from: '2026-11-01 00:00:00', to: '2026-11-01 23:59:59', steps: 3, limit: 30 } },
  { name: 'another zone than the site’s', query: { timezone: 'Asia/Tokyo', from: '2026-11-02 12:00:00', to: '2026-11-03 18:00:00', limit: 30 } },
  { name: 'the site’s zone sent explicitly', query: { steps: 2 }, sendTimezone: true },
];

describe('GET /v1/sites/{site_id}/journeys', () => {
  let t: TestApp;
  let site = '';
  let data: Prepared;
  const defaults: JourneyQuery = { from: '2026-11-01 00:00:00', to: '2026-11-05 23:59:59', timezone: ZONE, filters: [], steps: 3, limit: 10 };

  const urlOf = (q: JourneyQuery, sendTimezone = false, siteId = site) => {
    const params = new URLSearchParams({ date_from: q.from, date_to: q.to });
    if (q.timezone !== ZONE || sendTimezone) params.set('timezone', q.timezone);
    if (q.filters.length > 0) params.set('filters', JSON.stringify(q.filters));
    if (q.entryPage !== undefined) params.set('entry_page', q.entryPage);
    params.set('steps', String(q.steps));
    params.set('limit', String(q.limit));
    return `/v1/sites/${siteId}/journeys?${params.toString().replace(/\+/g, '%20')}`;
  };
  const get = async (url: string, token = OWNER_TOKEN) => t.call(token, 'GET', url);

  before(async () => {
    t = await startTestApp();
    site = await createSite(t, { name: 'Shop', timezone: ZONE });
    const lines = [...generated(site), ...handMade(site)];
    await importLines(t, lines);
    data = await prepare(lines, { id: site, timezone: ZONE });
  });
  after(() => t.close());

  for (const c of CASES) {
    it(`equals the oracle: ${c.name}`, async () => {
      const q = { ...defaults, ...c.query };
      const expected = journeysOf(data, q);
      assert.ok(Number(expected.total_visits) > 0 && expected.paths.length > 0, `the oracle found nothing for ${c.name}: the case tests too little`);
      const url = urlOf(q, c.sendTimezone);
      const res = await get(url);
      assert.equal(res.status, 200, `${url}\n${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, expected, url);
    });
  }

  it('the generated visits have what the cases rely on: reloads, repeats, deep journeys and limits that cut', () => {
    const all = journeysOf(data, { ...defaults, steps: 5, limit: 100 });
    const raw = journeysOf(data, { ...defaults, steps: 2, limit: 100 });
    assert.ok(Number(all.total_visits) > 100);
    assert.ok(all.paths.some((p) => p.pages.length === 5 && new Set(p.pages).size < 5), 'a page seen twice in one journey');
    assert.ok(raw.paths.filter((p) => p.pages.length === 1).length > 3);
    assert.ok(journeysOf(data, defaults).paths.filter((p) => p.pages.length === 3).length === 10, 'the limit cuts at depth 3');
  });

  it('a visit across local midnight is one journey; a reload and an event are not steps', async () => {
    const res = await get(`/v1/sites/${site}/journeys?date_from=2026-11-01&date_to=2026-11-02&entry_page=/night`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, {
      date_from: '2026-11-01 00:00:00',
      date_to: '2026-11-02 23:59:59',
      entry_page: '/night',
      steps: 3,
      total_visits: '1',
      paths: [
        { pages: ['/night'], visits: '1', ended: '0' },
        { pages: ['/night', '/pricing'], visits: '1', ended: '0' },
        { pages: ['/night', '/pricing', '/signup'], visits: '1', ended: '1' },
      ],
    });
    // Cut at local midnight, the same visit is two pieces: each range sees only its own pageviews.
    const before = await get(`/v1/sites/${site}/journeys?date_from=2026-11-01&date_to=2026-11-01&entry_page=/night`);
    assert.deepEqual(before.body.paths, [{ pages: ['/night'], visits: '1', ended: '1' }]);
    const afterMidnight = await get(`/v1/sites/${site}/journeys?date_from=2026-11-02&date_to=2026-11-02&entry_page=/pricing&limit=100`);
    assert.ok(afterMidnight.body.paths.some((p: { pages: string[] }) => p.pages.join() === '/pricing,/signup'));
  });

  it('lists the top prefixes of a depth whose parents are not the top ones (only some heads are grouped in full)', async () => {
    // A/B is the busiest pair but splits 6 and 4; P/Q/R alone has 8; E/F/G 3; thirty journeys of their own once each.
    const shape = [
      ...Array.from({ length: 6 }, () => ['/a', '/b', '/c']),
      ...Array.from({ length: 4 }, () => ['/a', '/b', '/d']),
      ...Array.from({ length: 8 }, () => ['/p', '/q', '/r']),
      ...Array.from({ length: 3 }, () => ['/e', '/f', '/g']),
      ...Array.from({ length: 30 }, (_, i) => [`/x${i}`, `/y${i}`, `/z${i}`]),
      // The only journeys of four pages, under a pair no sample of the busiest pairs holds.
      ...Array.from({ length: 2 }, () => ['/k', '/l', '/m', '/n']),
    ];
    const other = await createSite(t, { name: 'Pruned', timezone: 'UTC' });
    const lines = shape.flatMap((pages, v) =>
      pages.map((page, i) => line(other, new Date(Date.UTC(2026, 10, 3, 10, v, i * 10)).toISOString(), `${HOST}${page}`, { ip: `81.2.70.${v}` })),
    );
    await importLines(t, lines);
    const prepared = await prepare(lines, { id: other, timezone: 'UTC' });
    for (const limit of [1, 2, 3]) {
      const q: JourneyQuery = { from: '2026-11-03 00:00:00', to: '2026-11-03 23:59:59', timezone: 'UTC', filters: [], steps: 3, limit };
      const res = await get(urlOf(q, false, other));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, journeysOf(prepared, q), `limit ${limit}`);
      const deepest = (res.body.paths as { pages: string[]; visits: string }[]).filter((p) => p.pages.length === 3);
      assert.deepEqual(deepest[0], { pages: ['/p', '/q', '/r'], visits: '8', ended: '8' }, `limit ${limit}`);
      const four: JourneyQuery = { ...q, steps: 4 };
      const deeper = await get(urlOf(four, false, other));
      assert.deepEqual(deeper.body, journeysOf(prepared, four), `four steps, limit ${limit}`);
      const fourth = (deeper.body.paths as { pages: string[] }[]).filter((p) => p.pages.length === 4);
      assert.deepEqual(fourth, [{ pages: ['/k', '/l', '/m', '/n'], visits: '2', ended: '2' }], `four steps, limit ${limit}`);
    }
  });

  it('pageviews of the same instant are ordered by pathname', async () => {
    const res = await get(`/v1/sites/${site}/journeys?date_from=2026-11-03&date_to=2026-11-03&entry_page=/tie-a`);
    assert.deepEqual(res.body.paths, [
      { pages: ['/tie-a'], visits: '1', ended: '0' },
      { pages: ['/tie-a', '/tie-z'], visits: '1', ended: '0' },
      { pages: ['/tie-a', '/tie-z', '/tie-b'], visits: '1', ended: '1' },
    ]);
  });

  it('an empty range, an entry page nobody entered by and a filter nothing passes answer zero journeys', async () => {
    for (const q of [
      { ...defaults, from: '2026-10-01 00:00:00', to: '2026-10-31 23:59:59' },
      { ...defaults, entryPage: '/nowhere' },
      { ...defaults, filters: [f('country_code', 'is', 'ZZ')] },
    ]) {
      const res = await get(urlOf(q));
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, journeysOf(data, q));
      assert.equal(res.body.total_visits, '0');
      assert.deepEqual(res.body.paths, []);
    }
  });

  it('defaults: the whole recorded range up to now, three steps, ten per depth, any entry page', async () => {
    const res = await get(`/v1/sites/${site}/journeys`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.steps, 3);
    assert.equal(res.body.entry_page, null);
    assert.equal(res.body.total_visits, journeysOf(data, defaults).total_visits);
    const first = Math.min(...data.hits.filter((h) => h.type === 'pageview').map((h) => h.at));
    assert.equal(res.body.date_from, localString(first, ZONE));
  });

  it('takes the nested filters form as /v1/aggregations does', async () => {
    const q = { ...defaults, filters: [f('browser', 'is', 'Safari'), f('pathname', 'is', '/docs')] };
    const nested = `/v1/sites/${site}/journeys?date_from=2026-11-01&date_to=2026-11-05&filters[][property]=browser&filters[][operator]=is&filters[][value]=Safari&filters[][property]=pathname&filters[][operator]=is&filters[][value]=/docs`;
    const res = await get(nested);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.paths, journeysOf(data, q).paths);
  });

  it('answers bad parameters with 400 and the field at fault', async () => {
    const bad: [string, string][] = [
      ['steps=1', 'steps'],
      ['steps=6', 'steps'],
      ['steps=three', 'steps'],
      ['steps=3&steps=4', 'steps'],
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=ten', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=1.5', 'limit'],
      [`entry_page=/${'a'.repeat(2000)}`, 'entry_page'],
      ['date_from=2026-13-01', 'date_from'],
      ['date_to=yesterday', 'date_to'],
      ['date_from=2026-11-05&date_to=2026-11-01', 'date_from'],
      ['timezone=Mars/Olympus', 'timezone'],
      ['filters=nope', 'filters'],
      [`filters=${encodeURIComponent(JSON.stringify([f('planet', 'is', 'x')]))}`, 'filters'],
      [`filters=${encodeURIComponent(JSON.stringify([f('pathname', 'matching', '(')]))}`, 'filters'],
      ['filters[0][property]=pathname', 'filters'],
    ];
    for (const [query, field] of bad) {
      const res = await get(`/v1/sites/${site}/journeys?${query}`);
      assert.equal(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body.errors?.[field]), `${query}: ${JSON.stringify(res.body)}`);
    }
    // Faults of the range and of the journey's own parameters come in one answer.
    const both = await get(`/v1/sites/${site}/journeys?steps=9&date_from=x`);
    assert.deepEqual(Object.keys(both.body.errors).sort(), ['date_from', 'steps']);
  });

  it("an unknown site, another account's site and a missing token are refused as SPEC.md says", async () => {
    const unknown = await get('/v1/sites/NOSUCHSITE/journeys');
    assert.equal(unknown.status, 404);
    assert.equal(typeof unknown.body.error, 'string');
    const other = await t.meta.createAccount({ name: 'Other', email: 'journeys-other@example.com', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const theirs = await get(`/v1/sites/${site}/journeys`, await t.token(['*'], { accountId: other.id }));
    assert.equal(theirs.status, 404);
    const anonymous = await t.call(undefined, 'GET', `/v1/sites/${site}/journeys`);
    assert.equal(anonymous.status, 401);
    // A token reading this one site only may ask; one for another site of the account may not.
    const second = await createSite(t, { name: 'Second', timezone: 'UTC' });
    assert.equal((await get(`/v1/sites/${site}/journeys?steps=2`, await t.token([`read:${site}`]))).status, 200);
    assert.equal((await get(`/v1/sites/${site}/journeys`, await t.token([`read:${second}`]))).status, 404);
  });

  it('is described in /openapi.json as a Plumb extension', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    const doc = JSON.parse(res.body);
    const op = doc.paths['/v1/sites/{site_id}/journeys']?.get;
    assert.ok(op, Object.keys(doc.paths).join(', '));
    assert.match(op.summary, /Plumb extension/);
    assert.deepEqual(
      op.parameters.filter((p: { in: string }) => p.in === 'query').map((p: { name: string }) => p.name).sort(),
      ['date_from', 'date_to', 'entry_page', 'filters', 'limit', 'steps', 'timezone'],
    );
  });
});
