// Funnels through the API: hand-written visits (steps in and out of order, repeated steps, events, ties, midnight
// in the site's zone and in UTC) and generated traffic, each report compared whole with the oracle
// (test/report/funnel-oracle.ts); and the management routes' answers to bad input, other accounts and read tokens.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { demoTraffic } from '../../src/cli/demo-traffic.js';
import { SqlDialect } from '../../src/report/dialect.js';
import { funnelQuery, funnelResults } from '../../src/report/funnels.js';
import { parseReportRequest } from '../../src/report/parse.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/scale-out.js';
import { funnelOracle, type OracleStep } from './funnel-oracle.js';
import { AGENTS, createSite, f, forSite, importLines, line } from './fixtures.js';
import { prepare, type Filter, type Prepared } from './oracle.js';

const ZONE = 'Europe/Berlin';
const S = 'https://shop.example';
const page = (value: string): OracleStep => ({ type: 'page', value });
const event = (value: string): OracleStep => ({ type: 'event', value });

/** Visits written to test one rule each; `ip` tells the people apart. */
function handWritten(site: string) {
  const ip = (n: number) => `81.2.69.${n}`;
  const pv = (n: number, at: string, path: string, extra: { ua?: string } = {}) => line(site, at, `${S}${path}`, { ip: ip(n), ...extra });
  const ev = (n: number, at: string, name: string, path = '/') => line(site, at, `${S}${path}`, { ip: ip(n), type: 'event', name });
  return [
    // 1: the whole funnel in order, with other pages between.
    pv(1, '2026-01-10T09:00:00Z', '/'), pv(1, '2026-01-10T09:00:30Z', '/features'), pv(1, '2026-01-10T09:01:00Z', '/pricing'),
    ev(1, '2026-01-10T09:02:30Z', 'Signup', '/pricing'), pv(1, '2026-01-10T09:03:00Z', '/thanks'),
    // 2: pricing before home, then pricing again: step 2 is the later pricing.
    pv(2, '2026-01-10T09:10:00Z', '/pricing'), pv(2, '2026-01-10T09:11:00Z', '/'), pv(2, '2026-01-10T09:15:00Z', '/pricing'),
    // 3: home twice (step 1 at the first), pricing, no signup.
    pv(3, '2026-01-10T10:00:00Z', '/'), pv(3, '2026-01-10T10:05:00Z', '/'), pv(3, '2026-01-10T10:06:00Z', '/pricing'),
    // 4: a pageview and an event in the same millisecond.
    pv(4, '2026-01-10T11:00:00Z', '/'), pv(4, '2026-01-10T11:01:00.250Z', '/pricing'), ev(4, '2026-01-10T11:01:00.250Z', 'Signup', '/pricing'),
    // 5: across midnight in Berlin (23:00 UTC), one visit.
    pv(5, '2026-01-10T22:50:00Z', '/'), pv(5, '2026-01-10T23:10:00Z', '/pricing'), ev(5, '2026-01-10T23:20:00Z', 'Signup', '/pricing'),
    // 6: across midnight UTC: the visit's later hits are another visitor-day.
    pv(6, '2026-01-10T23:50:00Z', '/'), pv(6, '2026-01-11T00:10:00Z', '/pricing'), ev(6, '2026-01-11T00:11:00Z', 'Signup', '/pricing'),
    // 7: a repeated page: /docs then /docs again; 8: /docs once.
    pv(7, '2026-01-11T08:00:00Z', '/docs'), pv(7, '2026-01-11T08:00:40Z', '/blog/a'), pv(7, '2026-01-11T08:02:00Z', '/docs'),
    pv(8, '2026-01-11T08:10:00Z', '/docs'),
    // 9: a campaign visit reaching pricing from the blog (patterns), on Firefox.
    pv(9, '2026-01-11T09:00:00Z', '/blog/first-post?utm_source=news', { ua: AGENTS.firefoxLinux }),
    pv(9, '2026-01-11T09:02:00Z', '/blog/2026/another', { ua: AGENTS.firefoxLinux }), pv(9, '2026-01-11T09:04:00Z', '/pricing', { ua: AGENTS.firefoxLinux }),
    ev(9, '2026-01-11T09:05:00Z', 'Signup', '/pricing'),
    // 10: signup first, pricing later in the same visit (an event step then a page step).
    ev(10, '2026-01-11T12:00:00Z', 'Signup'), pv(10, '2026-01-11T12:00:00Z', '/pricing'), pv(10, '2026-01-11T12:03:00Z', '/'),
    // 11: only events (no pageview: never passes filters), 12: a bot, dropped at collection.
    ev(11, '2026-01-11T13:00:00Z', 'Signup'), ev(11, '2026-01-11T13:01:00Z', 'Signup'),
    line(site, '2026-01-11T13:00:00Z', `${S}/`, { ip: ip(12), ua: AGENTS.bot }),
    // 13: quotes, backslashes and LIKE characters in a path and an event name: values, never SQL.
    pv(13, '2026-01-11T14:00:00Z', "/it's_100%25/x"), ev(13, '2026-01-11T14:01:00Z', "It's \\ 100% _done'); DROP TABLE hits; --"),
    // 14-17: an evening visit, then one with both steps of a funnel on both sides of midnight UTC: each step is
    // reached by the first day's visitor, the evening's (four people, so that a rule picking the other day's id by
    // the ids' order counts more visitors whatever the days' salts are).
    ...[14, 15, 16, 17].flatMap((n) => [
      pv(n, '2026-01-10T21:00:00Z', '/blog/first'), pv(n, '2026-01-10T21:01:00Z', '/pricing'),
      pv(n, '2026-01-10T23:55:00Z', '/blog/late'), pv(n, '2026-01-10T23:58:00Z', '/pricing'),
      pv(n, '2026-01-11T00:05:00Z', '/blog/early'), pv(n, '2026-01-11T00:07:00Z', '/pricing'),
    ]),
    // 18, 19: two pageviews in one millisecond, one matching both steps of /shop/a* -> /shop/ab, one only the first,
    // written in either order: the one matching fewer steps comes first, so both visits reach step 2.
    pv(18, '2026-01-11T15:00:00.500Z', '/shop/ab'), pv(18, '2026-01-11T15:00:00.500Z', '/shop/ax'),
    pv(19, '2026-01-11T15:10:00.500Z', '/shop/ax'), pv(19, '2026-01-11T15:10:00.500Z', '/shop/ab'),
    // 20: more pages than a visit keeps first-view flags for (1,000), then /arrive and /arrive-next: the visit's
    // flags are not exact, so its step 1 must come from its hits.
    ...Array.from({ length: 1001 }, (_, i) => pv(20, new Date(Date.parse('2026-01-11T16:00:00Z') + i * 1000).toISOString(), `/many/${i}`)),
    pv(20, '2026-01-11T16:20:00Z', '/arrive'), pv(20, '2026-01-11T16:21:00Z', '/arrive-next'),
    // 21: /edge-a before and after midnight in Berlin (23:00 UTC), then /edge-b: in a range starting at that
    // midnight, step 1 is the second view of /edge-a, which is not the visit's first.
    pv(21, '2026-01-10T22:50:00Z', '/edge-a'), pv(21, '2026-01-10T23:05:00Z', '/edge-a'), pv(21, '2026-01-10T23:07:00Z', '/edge-b'),
  ];
}

describe('funnel reports against the oracle', () => {
  let t: TestApp;
  let siteId: string;
  let data: Prepared;
  const made = new Map<string, string>();

  before(async () => {
    t = await startTestApp();
    siteId = await createSite(t, { name: 'Funnels', timezone: ZONE });
    const generated = forSite([...demoTraffic({ siteId: 'X', start: new Date('2026-01-12T00:00:00Z'), days: 2, visitsPerDay: 150, seed: 47 })], siteId);
    const lines = [...handWritten(siteId), ...generated];
    await importLines(t, lines);
    data = await prepare(lines, { id: siteId, timezone: ZONE });
  });
  after(() => t.close());

  /** The funnel's id, created once through the API with these steps and filters. */
  async function funnel(steps: OracleStep[], filters: Filter[] = []): Promise<string> {
    const key = JSON.stringify([steps, filters]);
    const known = made.get(key);
    if (known) return known;
    const res = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/funnels`, { name: `F ${made.size}`, steps, filters });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    made.set(key, res.body.id);
    return res.body.id as string;
  }

  interface Case {
    name: string;
    steps: OracleStep[];
    own?: Filter[];
    filters?: Filter[];
    from?: string;
    to?: string;
    /** Visits step 1 must have, so a case never compares two empty answers by accident (0: an empty range). */
    atLeast?: number;
  }

  const cases: Case[] = [
    { name: 'home, pricing, signup event', steps: [page('/'), page('/pricing'), event('Signup')], atLeast: 5 },
    { name: 'pricing then home: out of order first', steps: [page('/pricing'), page('/')] },
    { name: 'a repeated page needs two views', steps: [page('/docs'), page('/docs')] },
    { name: 'patterns (* crosses /)', steps: [page('/blog/*'), page('/b*'), page('/pri*ng')] },
    { name: 'a millisecond of two pageviews: the one matching fewer steps first', steps: [page('/shop/a*'), page('/shop/ab')], atLeast: 2 },
    { name: 'steps seen on both sides of midnight UTC', steps: [page('/blog/*'), page('/pricing')], atLeast: 5 },
    { name: 'an event then a page at the same millisecond', steps: [event('Signup'), page('/pricing')] },
    { name: 'a page then an event at the same millisecond', steps: [page('/pricing'), event('Signup')] },
    { name: 'event twice', steps: [event('Signup'), event('Signup')] },
    { name: 'a visit past the pages whose first views are flagged', steps: [page('/arrive'), page('/arrive-next')], atLeast: 1 },
    { name: 'a pattern, in a visit past the pages whose first views are flagged', steps: [page('/arr*ve'), page('/arrive-next')], atLeast: 1 },
    { name: "the funnel's own filter (campaign)", steps: [page('/blog/*'), page('/pricing')], own: [f('utm_source', 'is', 'news')], atLeast: 1 },
    { name: 'request filters added to its own', steps: [page('/'), page('/pricing')], own: [f('browser', 'is', 'Chrome')], filters: [f('pathname', 'is', '/features'), f('pathname', 'is', '/thanks')], atLeast: 1 },
    { name: 'negative and regex filters', steps: [page('/'), page('/pricing'), page('/signup')], filters: [f('pathname', 'not matching', '^/blog'), f('browser', 'is not', 'Firefox')] },
    { name: 'visit-level filter (entry page)', steps: [page('/'), page('/pricing')], filters: [f('entry_page', 'is', '/')] },
    { name: 'generated traffic, the demo funnel', steps: [page('/'), page('/pricing'), page('/signup')], from: '2026-01-12', to: '2026-01-13', atLeast: 20 },
    {
      name: 'eight steps',
      steps: [page('/'), page('/*'), page('/pricing'), page('/*'), page('/signup'), page('/*'), event('Purchase'), page('/*')],
      from: '2026-01-12', to: '2026-01-13', atLeast: 20,
    },
    { name: 'a range cutting visits (Berlin midnight)', steps: [page('/'), page('/pricing'), event('Signup')], from: '2026-01-11', to: '2026-01-11', atLeast: 2 },
    { name: "a range starting after a visit's first view of step 1", steps: [page('/edge-a'), page('/edge-b')], from: '2026-01-11', to: '2026-01-11', atLeast: 1 },
    { name: "a pattern, in a range starting after a visit's first view of step 1", steps: [page('/edge-*'), page('/edge-b')], from: '2026-01-11', to: '2026-01-11', atLeast: 1 },
    { name: 'an empty range', steps: [page('/'), page('/pricing')], from: '2026-02-01', to: '2026-02-03', atLeast: 0 },
    { name: 'quotes and LIKE characters are values', steps: [page("/it's_100%25/*"), event("It's \\ 100% _done'); DROP TABLE hits; --")], atLeast: 1 },
  ];

  for (const c of cases) {
    it(c.name, async () => {
      const id = await funnel(c.steps, c.own ?? []);
      const from = c.from ?? '2026-01-10';
      const to = c.to ?? '2026-01-11';
      const params = new URLSearchParams({ date_from: from, date_to: to });
      if (c.filters) params.set('filters', JSON.stringify(c.filters));
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}/report?${params.toString().replace(/\+/g, '%20')}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const expected = funnelOracle(data, c.steps, [...(c.own ?? []), ...(c.filters ?? [])], `${from} 00:00:00`, `${to} 23:59:59`, ZONE);
      const first = Number(expected[0]!.visits);
      if ((c.atLeast ?? 1) === 0) assert.equal(first, 0);
      else assert.ok(first >= (c.atLeast ?? 1), `the oracle finds ${first} visits at step 1: the case tests too little`);
      assert.deepEqual(res.body.steps, expected);
      assert.equal(res.body.id, id);
      assert.equal(res.body.date_from, `${from} 00:00:00`);
      assert.equal(res.body.date_to, `${to} 23:59:59`);
    });
  }

  // Where subqueries are named once (DuckDB) a funnel is a join per step (funnels.ts, chainedSteps), the hit of
  // each step found by time alone when no hit can match two steps, else in the walk's order passing over the rows
  // earlier steps took; ClickHouse walks each visit's hits. Here each case is answered both ways on DuckDB, and
  // both must equal the oracle.
  const onClickHouse = TEST_STORE === 'scale-out' ? 'DuckDB SQL; ClickHouse walks every funnel, as the cases above check' : false;
  it('both ways of answering (a join per step, the walk) equal the oracle', { skip: onClickHouse }, async () => {
    const walkOnly = new (class extends SqlDialect {
      override readonly commonTableExpressions: boolean = false;
    })();
    const site = (await t.meta.getSite(siteId))!;
    let byRow = 0;
    for (const c of cases) {
      const from = c.from ?? '2026-01-10';
      const to = c.to ?? '2026-01-11';
      const filters = [...(c.own ?? []), ...(c.filters ?? [])];
      const request = parseReportRequest({ entity: 'pageview', entity_id: siteId, aggregates: 'visits', date_from: from, date_to: to, filters: JSON.stringify(filters) });
      const { query } = await t.reports.compile(request, site);
      const expected = funnelOracle(data, c.steps, filters, `${from} 00:00:00`, `${to} 23:59:59`, ZONE);
      for (const dialect of [new SqlDialect(), walkOnly]) {
        const compiled = funnelQuery(dialect, query, c.steps);
        if (dialect !== walkOnly) {
          assert.ok(compiled.sql.includes('funnel_step_1') && !compiled.sql.includes('list_position'), `${c.name}: a join per step`);
          if (compiled.sql.includes('rowid')) byRow++;
        } else assert.ok(!compiled.sql.includes('funnel_step_1'), `${c.name}: walked`);
        const [row] = (await t.events.query(compiled.sql, compiled.params)) as Record<string, unknown>[];
        assert.deepEqual(funnelResults(row, c.steps), expected, `${c.name}, ${dialect === walkOnly ? 'walked' : 'default'}`);
      }
    }
    // Most cases have steps no hit can match two of; the rest (repeated steps, overlapping patterns) pass over rows.
    assert.ok(byRow >= 4 && byRow <= cases.length - 8, `${byRow} of ${cases.length} cases by row`);
  });

  it('the hand-written funnel: the numbers worked out by hand', async () => {
    const id = await funnel([page('/'), page('/pricing'), event('Signup')]);
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}/report?date_from=2026-01-10&date_to=2026-01-11`);
    const [home, pricing, signup] = res.body.steps;
    // Home: visits 1-6 and 10; pricing after it: 1-6 (10's pricing came first); signup after that: 1, 4, 5, 6.
    assert.deepEqual([home.visits, pricing.visits, signup.visits], ['7', '6', '4']);
    assert.deepEqual([pricing.conversion_rate, signup.conversion_rate, signup.step_conversion_rate], ['0.8571', '0.5714', '0.6667']);
    assert.deepEqual([home.drop_off, pricing.drop_off, signup.drop_off], ['0', '1', '2']);
    // Visit 6 crossed midnight UTC: its pricing and signup are the next visitor-day, so 4 visits are 4 visitors.
    assert.equal(signup.visitors, '4');
    assert.equal(home.median_seconds, null);
    // Home to pricing: 60, 240, 360, 60.25, 1200, 1200 s: the middle two are 240 and 360.
    assert.equal(pricing.median_seconds, '300');
  });

  it('the deprecated timezone parameter moves the range, as in /v1/aggregations', async () => {
    const steps = [page('/'), page('/pricing')];
    const id = await funnel(steps);
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}/report?date_from=2026-01-11&date_to=2026-01-11&timezone=UTC`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.steps, funnelOracle(data, steps, [], '2026-01-11 00:00:00', '2026-01-11 23:59:59', 'UTC'));
  });

  it('bad report parameters are 400s naming the parameter', async () => {
    const id = await funnel([page('/'), page('/pricing')]);
    const base = `/v1/sites/${siteId}/funnels/${id}/report`;
    for (const [query, field] of [
      ['date_from=2026-13-01', 'date_from'],
      ['date_from=2026-01-05&date_to=2026-01-01', 'date_from'],
      ['date_to=1999-01-01', 'date_to'],
      ['timezone=Mars/Base', 'timezone'],
      ['filters=nope', 'filters'],
      [`filters=${encodeURIComponent(JSON.stringify([{ property: 'keyword', operator: 'is', value: 'x' }]))}`, 'filters'],
      [`filters=${encodeURIComponent(JSON.stringify([{ property: 'pathname', operator: 'matching', value: '(' }]))}`, 'filters'],
    ] as const) {
      const res = await t.call(OWNER_TOKEN, 'GET', `${base}?${query}`);
      assert.equal(res.status, 400, `${query}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body.errors?.[field]), `${query}: ${JSON.stringify(res.body)}`);
    }
    const missing = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/00000000-0000-4000-8000-000000000000/report`);
    assert.equal(missing.status, 404);
    assert.equal(typeof missing.body.error, 'string');
  });
});

describe('funnel management', () => {
  let t: TestApp;
  let siteId: string;
  let otherSite: string;
  const steps = [page('/'), page('/pricing')];

  before(async () => {
    t = await startTestApp();
    siteId = await createSite(t, { name: 'Mine', timezone: 'UTC' });
    const other = await t.meta.createAccount({ name: 'Other', email: 'other@example.com', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const otherToken = await t.token(['*'], { accountId: other.id });
    otherSite = (await t.call(otherToken, 'POST', '/v1/sites', { name: 'Theirs' })).body.id;
  });
  after(() => t.close());

  it('creates, reads, lists, updates and deletes', async () => {
    const created = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/funnels`, { name: ' Checkout ', steps: [page('/cart'), event('Purchase')] });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.object, 'funnel');
    assert.equal(created.body.name, 'Checkout');
    assert.deepEqual(created.body.steps, [page('/cart'), event('Purchase')]);
    assert.deepEqual(created.body.filters, []);
    const id = created.body.id as string;
    const got = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}`);
    assert.deepEqual(got.body, created.body);
    const updated = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/funnels/${id}`, { filters: [f('utm_source', 'is', 'news')] });
    assert.equal(updated.status, 200, JSON.stringify(updated.body));
    assert.equal(updated.body.name, 'Checkout');
    assert.deepEqual(updated.body.filters, [f('utm_source', 'is', 'news')]);
    const list = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels`);
    assert.equal(list.body.object, 'list');
    assert.equal(list.body.url, `/v1/sites/${siteId}/funnels`);
    assert.ok(list.body.data.some((x: { id: string }) => x.id === id));
    const deleted = await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${siteId}/funnels/${id}`);
    assert.deepEqual(deleted.body, { id, object: 'funnel', deleted: true });
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}`)).status, 404);
    assert.equal((await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${siteId}/funnels/${id}`)).status, 404);
  });

  it('pages the list in creation order', async () => {
    const site = await createSite(t, { name: 'Paged', timezone: 'UTC' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/funnels`, { name: `F${i}`, steps })).body.id);
    const first = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/funnels?limit=2`);
    assert.deepEqual(first.body.data.map((x: { id: string }) => x.id), ids.slice(0, 2));
    assert.equal(first.body.has_more, true);
    const next = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/funnels?limit=2&starting_after=${ids[1]}`);
    assert.deepEqual(next.body.data.map((x: { id: string }) => x.id), ids.slice(2));
    assert.equal(next.body.has_more, false);
    const back = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/funnels?ending_before=${ids[2]}`);
    assert.deepEqual(back.body.data.map((x: { id: string }) => x.id), ids.slice(0, 2));
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/funnels?limit=0`)).status, 400);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/funnels?starting_after=nope`)).status, 400);
  });

  it('takes form bodies: steps as JSON text or nested keys', async () => {
    const form = (body: string) =>
      t.app.inject({
        method: 'POST',
        url: `/v1/sites/${siteId}/funnels`,
        headers: { authorization: `Bearer ${OWNER_TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
        payload: body,
      });
    const json = await form(`name=Form&steps=${encodeURIComponent(JSON.stringify(steps))}&filters=${encodeURIComponent(JSON.stringify([f('browser', 'is', 'Chrome')]))}`);
    assert.equal(json.statusCode, 200, json.body);
    assert.deepEqual(JSON.parse(json.body).steps, steps);
    assert.deepEqual(JSON.parse(json.body).filters, [f('browser', 'is', 'Chrome')]);
    const nested = await form(
      'name=Nested&steps[0][type]=page&steps[0][value]=/&steps[1][type]=event&steps[1][value]=Signup' +
        '&filters[0][property]=browser&filters[0][operator]=is&filters[0][value]=Firefox',
    );
    assert.equal(nested.statusCode, 200, nested.body);
    assert.deepEqual(JSON.parse(nested.body).steps, [page('/'), event('Signup')]);
    assert.deepEqual(JSON.parse(nested.body).filters, [f('browser', 'is', 'Firefox')]);
    const gap = await form('name=Gap&steps[0][type]=page&steps[0][value]=/&steps[2][type]=page&steps[2][value]=/x');
    assert.equal(gap.statusCode, 400, gap.body);
    assert.ok(JSON.parse(gap.body).errors.steps);
  });

  it('bad bodies are 400s naming the field', async () => {
    const url = `/v1/sites/${siteId}/funnels`;
    const bad: [unknown, string][] = [
      [{ steps }, 'name'],
      [{ name: '', steps }, 'name'],
      [{ name: 'x'.repeat(256), steps }, 'name'],
      [{ name: 'No steps' }, 'steps'],
      [{ name: 'One', steps: [page('/')] }, 'steps'],
      [{ name: 'Nine', steps: Array.from({ length: 9 }, (_, i) => page(`/${i}`)) }, 'steps'],
      [{ name: 'Kind', steps: [page('/'), { type: 'goal', value: 'x' }] }, 'steps'],
      [{ name: 'Path', steps: [page('pricing'), page('/')] }, 'steps'],
      [{ name: 'Query', steps: [page('/a?b=1'), page('/')] }, 'steps'],
      [{ name: 'Empty event', steps: [page('/'), event('')] }, 'steps'],
      [{ name: 'Value', steps: [page('/'), { type: 'page', value: 3 }] }, 'steps'],
      [{ name: 'Not a list', steps: 'x' }, 'steps'],
      [{ name: 'Filter', steps, filters: [{ property: 'nope', operator: 'is', value: 'x' }] }, 'filters'],
      [{ name: 'Filter', steps, filters: 'nope' }, 'filters'],
    ];
    for (const [body, field] of bad) {
      const res = await t.call(OWNER_TOKEN, 'POST', url, body);
      assert.equal(res.status, 400, `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body.errors?.[field]), `${JSON.stringify(body)}: ${JSON.stringify(res.body)}`);
    }
    const notObject = await t.call(OWNER_TOKEN, 'POST', url, [1, 2]);
    assert.equal(notObject.status, 400);
    const created = (await t.call(OWNER_TOKEN, 'POST', url, { name: 'Ok', steps })).body.id;
    const update = await t.call(OWNER_TOKEN, 'POST', `${url}/${created}`, { steps: [page('/')] });
    assert.equal(update.status, 400);
    assert.ok(update.body.errors.steps);
  });

  it('unknown sites and funnels, and other accounts, are 404s; read tokens may read but not manage', async () => {
    const id = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/funnels`, { name: 'Mine', steps })).body.id;
    for (const path of [`/v1/sites/NOPE1234/funnels`, `/v1/sites/${otherSite}/funnels`, `/v1/sites/${siteId}/funnels/not-a-uuid`, `/v1/sites/${otherSite}/funnels/${id}`]) {
      const res = await t.call(OWNER_TOKEN, 'GET', path);
      assert.equal(res.status, 404, path);
      assert.equal(typeof res.body.error, 'string');
    }
    assert.equal((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${otherSite}/funnels`, { name: 'X', steps })).status, 404);
    const reader = await t.token([`read:${siteId}`]);
    assert.equal((await t.call(reader, 'GET', `/v1/sites/${siteId}/funnels/${id}`)).status, 200);
    assert.equal((await t.call(reader, 'GET', `/v1/sites/${siteId}/funnels/${id}/report`)).status, 200);
    for (const [method, path, body] of [
      ['POST', `/v1/sites/${siteId}/funnels`, { name: 'X', steps }],
      ['POST', `/v1/sites/${siteId}/funnels/${id}`, { name: 'Y' }],
      ['DELETE', `/v1/sites/${siteId}/funnels/${id}`, undefined],
    ] as const) {
      const res = await t.call(reader, method, path, body);
      assert.equal(res.status, 400, `${method} ${path}`);
      assert.equal(typeof res.body.error, 'string');
    }
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}`)).body.name, 'Mine');
    const none = await t.call(undefined, 'GET', `/v1/sites/${siteId}/funnels`);
    assert.equal(none.status, 401);
  });

  it('a site keeps at most 100 funnels, and its funnels go with it', async () => {
    const site = await createSite(t, { name: 'Full', timezone: 'UTC' });
    for (let i = 0; i < 100; i++) assert.equal((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/funnels`, { name: `F${i}`, steps })).status, 200);
    const over = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/funnels`, { name: 'One more', steps });
    assert.equal(over.status, 400);
    assert.match(over.body.error, /100 funnels/);
    assert.equal((await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${site}`)).status, 200);
    assert.equal((await t.meta.listFunnels(site, { limit: 100 })).items.length, 0);
  });

  it('any body, JSON or form, and any report query: a success or a 400 in the spec shapes, never a 500', async () => {
    const text = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('__proto__', 'constructor', 'toString', '/', '/a*', '', 'page', 'event', '[]', '{}', '[{"type":"page","value":"/"}]'));
    const step = fc.oneof(fc.record({ type: fc.oneof(fc.constantFrom('page', 'event'), text), value: fc.oneof(text, fc.integer()) }, { requiredKeys: [] }), fc.anything({ maxDepth: 1 }));
    const jsonBody = fc.record({ name: fc.oneof(text, fc.integer()), steps: fc.oneof(fc.array(step, { maxLength: 10 }), text), filters: fc.oneof(fc.array(fc.anything({ maxDepth: 1 }), { maxLength: 3 }), text) }, { requiredKeys: [] });
    const formKeys = fc.array(fc.tuple(fc.oneof(fc.constantFrom('name', 'steps', 'filters', 'steps[0][type]', 'steps[1][value]', 'steps[9][type]', 'steps[x]', 'filters[0][property]', '__proto__'), text), text), { maxLength: 6 });
    await fc.assert(
      fc.asyncProperty(fc.oneof(jsonBody.map((b) => ({ json: b })), formKeys.map((f) => ({ form: f }))), async (input) => {
        const form = 'form' in input;
        const res = await t.app.inject({
          method: 'POST',
          url: `/v1/sites/${siteId}/funnels`,
          headers: { authorization: `Bearer ${OWNER_TOKEN}`, 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json' },
          payload: form ? new URLSearchParams(input.form).toString() : JSON.stringify(input.json),
        });
        assert.ok([200, 400].includes(res.statusCode), `${res.statusCode}: ${res.body.slice(0, 300)}`);
        const body = JSON.parse(res.body);
        if (res.statusCode === 400) assert.ok(typeof body.error === 'string' || typeof body.errors === 'object', res.body);
        else await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${siteId}/funnels/${body.id}`);
      }),
      { numRuns: 150, seed: 47 },
    );
    const id = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/funnels`, { name: 'Fuzzed', steps })).body.id;
    const params = fc.array(fc.tuple(fc.constantFrom('date_from', 'date_to', 'timezone', 'filters', 'filters[0][property]', 'filters[][value]', 'limit', '__proto__'), text), { maxLength: 4 });
    await fc.assert(
      fc.asyncProperty(params, async (pairs) => {
        const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}/report?${new URLSearchParams(pairs)}`);
        assert.ok([200, 400].includes(res.status), `${res.status}: ${JSON.stringify(res.body).slice(0, 300)}`);
        if (res.status === 400) assert.ok(typeof res.body.error === 'string' || typeof res.body.errors === 'object');
      }),
      { numRuns: 100, seed: 48 },
    );
  });

  it('the routes are in the OpenAPI document as Plumb extensions', async () => {
    const doc = (await t.call(undefined, 'GET', '/openapi.json')).body;
    const paths = Object.keys(doc.paths);
    for (const p of ['/v1/sites/{site_id}/funnels', '/v1/sites/{site_id}/funnels/{funnel_id}', '/v1/sites/{site_id}/funnels/{funnel_id}/report']) {
      assert.ok(paths.includes(p), p);
    }
    assert.match(doc.paths['/v1/sites/{site_id}/funnels/{funnel_id}/report'].get.description, /Plumb extension/);
  });
});
