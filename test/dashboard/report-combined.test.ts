// Every goal's numbers in one request (/dashboard/api/report/goal-aggregations): each goal's rows equal what
// /v1/aggregations answers for that goal with the same parameters (totals, per day and per hour, with filters and
// property filters), and the dashboard's access rules: a session of someone who may read the site, nothing else.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, importInOrder, logIn, newLogin, pageCsrf } from './helpers.js';

const AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const DAY = 86_400_000;
const day = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);
const GOALS = ['Signup', 'Purchase', 'Newsletter', 'Quiet'];

describe('every goal in one request', () => {
  let t: TestApp;
  let owner: Browser;
  let csrf: string;
  let site: string;
  let foreign: string;

  const combined = (params: Record<string, string>, browser = owner, token = csrf) =>
    browser.api('GET', `/dashboard/api/report/goal-aggregations?${new URLSearchParams({ site_id: site, ...params })}`, token);
  const v1 = async (goal: string, params: Record<string, string>) => {
    const res = await owner.api('GET', `/v1/aggregations?${new URLSearchParams({ entity: 'event', site_id: site, entity_name: goal, ...params })}`, csrf);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    owner = new Browser(t.app);
    csrf = await logIn(owner, login.email);
    site = (await owner.api('POST', '/v1/sites', csrf, { name: 'Shop' })).body.id;
    for (const name of GOALS) assert.equal((await owner.api('POST', `/v1/sites/${site}/events`, csrf, { name })).status, 200);
    // Another account's site: its goals are not this owner's to read.
    const stranger = new Browser(t.app);
    const strangerCsrf = await logIn(stranger, (await newLogin(t.meta)).email);
    foreign = (await stranger.api('POST', '/v1/sites', strangerCsrf, { name: 'Elsewhere' })).body.id;

    // Three days of visits: some convert to one goal or two, with values, from two countries' pages.
    const lines: string[] = [];
    for (let i = 0; i < 60; i++) {
      const at = (minute: number) => `${day(i % 3)} ${String(1 + (i % 20)).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00`;
      const base = { site_id: site, user_agent: AGENT, ip: `198.51.100.${i + 1}` };
      const url = `https://shop.example/${i % 2 ? 'pricing' : 'blog'}`;
      lines.push(JSON.stringify({ ...base, type: 'pageview', timestamp: at(0), url, referrer: i % 4 ? '' : 'https://www.google.com/' }));
      if (i % 2 === 0) lines.push(JSON.stringify({ ...base, type: 'event', timestamp: at(1), url, name: 'Signup', props: { plan: i % 4 ? 'pro' : 'team' } }));
      if (i % 3 === 0) lines.push(JSON.stringify({ ...base, type: 'event', timestamp: at(2), url, name: 'Purchase', value: 1000 + i * 7 }));
      if (i % 5 === 0) lines.push(JSON.stringify({ ...base, type: 'event', timestamp: at(3), url, name: 'Newsletter' }));
    }
    await importInOrder(t.app, lines);
    await t.flushHits();
  });
  after(() => t.close());

  const ASKED: Record<string, string>[] = [
    { date_from: `${day(2)} 00:00:00`, date_to: `${day(0)} 23:59:59`, aggregates: 'conversions,unique_conversions,value' },
    { date_from: `${day(2)} 00:00:00`, date_to: `${day(0)} 23:59:59`, aggregates: 'conversions', date_grouping: 'day', sort_by: 'timestamp:asc' },
    { date_from: `${day(1)} 00:00:00`, date_to: `${day(0)} 10:30:00`, aggregates: 'conversions,unique_conversions', date_grouping: 'hour', sort_by: 'timestamp:asc' },
    {
      date_from: `${day(2)} 00:00:00`, date_to: `${day(0)} 23:59:59`, aggregates: 'conversions,unique_conversions,value',
      filters: JSON.stringify([{ property: 'pathname', operator: 'is', value: '/blog' }]),
    },
  ];

  it("answers each goal's rows exactly as /v1/aggregations does for that goal", async () => {
    for (const params of ASKED) {
      const res = await combined(params);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      const answer = res.body as { id: string; name: string; rows: Record<string, string>[] }[];
      assert.deepEqual(answer.map((g) => g.name).sort(), [...GOALS].sort(), 'every goal, once');
      for (const g of answer) assert.deepEqual(g.rows, await v1(g.name, params), `${g.name} with ${JSON.stringify(params)}`);
    }
    // Not a vacuous comparison: the goals have different numbers, and values.
    const [totals] = ASKED;
    const byName = new Map(((await combined(totals!)).body as { name: string; rows: Record<string, string>[] }[]).map((g) => [g.name, g.rows[0]]));
    assert.deepEqual(['Signup', 'Purchase', 'Newsletter'].map((n) => byName.get(n)!.conversions), ['30', '20', '12']);
    assert.ok(Number(byName.get('Purchase')!.value) > 20_000, 'values are summed');
    assert.deepEqual(byName.get('Quiet'), { conversions: '0', unique_conversions: '0', value: '0' });
  });

  it('takes the property filters of the page, as /dashboard/api/report/aggregations does', async () => {
    const props = JSON.stringify([{ key: 'plan', operator: 'is', value: 'pro' }]);
    const params = { date_from: `${day(2)} 00:00:00`, date_to: `${day(0)} 23:59:59`, aggregates: 'conversions,unique_conversions', props };
    const res = await combined(params);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    for (const g of res.body as { name: string; rows: unknown[] }[]) {
      const one = await owner.api('GET', `/dashboard/api/report/aggregations?${new URLSearchParams({ entity: 'event', site_id: site, entity_name: g.name, ...params })}`, csrf);
      assert.deepEqual(g.rows, one.body, g.name);
    }
    const signup = (res.body as { name: string; rows: { conversions: string }[] }[]).find((g) => g.name === 'Signup')!;
    assert.equal(signup.rows[0]!.conversions, '15', 'only the pro plan signups');
  });

  it('refuses bad parameters by name, API tokens, other accounts and requests without a session', async () => {
    const bad = await combined({ aggregates: 'pageviews' });
    assert.equal(bad.status, 400);
    assert.ok(JSON.stringify(bad.body).includes('aggregates'), JSON.stringify(bad.body));
    assert.equal((await combined({ aggregates: 'conversions', site_id: foreign })).status, 404, "another account's site");
    assert.equal((await combined({ aggregates: 'conversions' }, new Browser(t.app), '')).status, 401, 'no session');
    // A share page's session reads its one site's goals, and no other site's.
    assert.equal((await owner.api('POST', `/v1/sites/${site}`, csrf, { sharing: 'public' })).status, 200);
    const visitor = new Browser(t.app);
    const shareCsrf = pageCsrf((await visitor.get(`/share/${site}`)).body);
    const shared = await combined({ aggregates: 'conversions' }, visitor, shareCsrf);
    assert.equal(shared.status, 200, JSON.stringify(shared.body));
    assert.equal((shared.body as unknown[]).length, GOALS.length);
    assert.equal((await combined({ aggregates: 'conversions', site_id: foreign }, visitor, shareCsrf)).status, 404, 'only the shared site');
    const token = await t.call(await t.token(['*']), 'GET', `/dashboard/api/report/goal-aggregations?site_id=${site}&aggregates=conversions`);
    assert.equal(token.status, 401, 'an API token uses /v1');
  });
});
