// The report page's own API for custom properties (/dashboard/api/report/...): a goal's completions broken down
// by a property, property filters on every report of the page, hostile input answered in words, the dashboard's
// access rules, and /v1 unchanged.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { addMember, Browser, logIn, newLogin } from './helpers.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('custom properties in the report page', () => {
  let t: TestApp;
  let owner: Browser;
  let csrf: string;
  let accountId: number;
  let site: string;
  let other: string;

  /** A hit from visitor n (own address), through the collector; an event when `name` is given. */
  const hit = async (n: number, path: string, name?: string, payload?: object) => {
    const q = new URLSearchParams({ sid: site, h: 'https://shop.example', p: path, ...(name ? { name } : {}), ...(payload ? { payload: JSON.stringify(payload) } : {}) });
    const res = await t.app.inject({ method: name ? 'POST' : 'GET', url: `/?${q}`, headers: { 'user-agent': CHROME }, remoteAddress: `203.0.113.${n}` });
    assert.ok(res.statusCode < 300, res.body);
  };
  const api = (path: string, params: Record<string, string>, browser = owner, token = csrf) =>
    browser.api('GET', `/dashboard/api/report/${path}?${new URLSearchParams({ date_from: '2000-01-01', ...params })}`, token);
  const props = (...filters: unknown[]) => JSON.stringify(filters);

  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    accountId = login.id;
    owner = new Browser(t.app);
    csrf = await logIn(owner, login.email);
    site = (await owner.api('POST', '/v1/sites', csrf, { name: 'Shop' })).body.id;
    other = (await owner.api('POST', '/v1/sites', csrf, { name: 'Other' })).body.id;
    assert.equal((await owner.api('POST', `/v1/sites/${site}/events`, csrf, { name: 'Signup' })).status, 200);
    await hit(1, '/a');
    await hit(1, '/a', 'Signup', { plan: 'pro', seats: 3 });
    await hit(2, '/b');
    await hit(2, '/b', 'Signup', { plan: 'pro' });
    await hit(2, '/b', 'Signup', { plan: 'pro' });
    await hit(3, '/c');
    await hit(3, '/c', 'Signup', { plan: 'team' });
    await hit(4, '/d');
    await hit(4, '/d', 'Signup');
    await hit(5, '/e');
    await t.flushHits();
  });
  after(() => t.close());

  it("breaks a goal's completions down by its most used property, with every key it carries and the total", async () => {
    const res = await api('goal-properties', { site_id: site, entity_name: 'Signup' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, {
      keys: ['plan', 'seats'],
      key: 'plan',
      total: 5,
      rows: [
        { value: 'pro', conversions: 3, unique_conversions: 2 },
        { value: 'team', conversions: 1, unique_conversions: 1 },
      ],
    });
    const seats = await api('goal-properties', { site_id: site, entity_name: 'Signup', key: 'seats' });
    assert.deepEqual([seats.body.key, seats.body.rows], ['seats', [{ value: '3', conversions: 1, unique_conversions: 1 }]]);
    const limited = await api('goal-properties', { site_id: site, entity_name: 'Signup', key: 'plan', limit: '1' });
    assert.deepEqual(limited.body.rows.map((r: { value: string }) => r.value), ['pro']);
    // A key no completion carries falls back to the most used one.
    assert.equal((await api('goal-properties', { site_id: site, entity_name: 'Signup', key: 'nope' })).body.key, 'plan');
  });

  it('filters every report of the page by a property: the event itself on goal reports, its visit on page reports', async () => {
    const pageviews = async (filters: string, extra: Record<string, string> = {}) =>
      (await api('aggregations', { entity: 'pageview', entity_id: site, aggregates: 'pageviews,visits,visitors', props: filters, ...extra })).body;
    assert.deepEqual(await pageviews(props({ key: 'plan', operator: 'is', value: 'pro' })), [{ pageviews: '2', visits: '2', visitors: '2' }]);
    assert.deepEqual(await pageviews(props({ key: 'plan', operator: 'is not', value: 'pro' })), [{ pageviews: '3', visits: '3', visitors: '3' }]);
    assert.deepEqual(
      await pageviews(props({ key: 'plan', operator: 'is', value: 'pro' }), { filters: JSON.stringify([{ property: 'pathname', operator: 'is', value: '/a' }]) }),
      [{ pageviews: '1', visits: '1', visitors: '1' }],
      "ANDed with SPEC.md's filters",
    );
    const byPage = await api('aggregations', { entity: 'pageview', entity_id: site, aggregates: 'pageviews', field_grouping: 'pathname', props: props({ key: 'plan', operator: 'is like', value: 'TE' }) });
    assert.deepEqual(byPage.body, [{ pathname: '/c', pageviews: '1' }]);
    const conversions = async (filters: string) =>
      (await api('aggregations', { entity: 'event', site_id: site, entity_name: 'Signup', aggregates: 'conversions,unique_conversions', props: filters })).body;
    assert.deepEqual(await conversions(props({ key: 'plan', operator: 'is not', value: 'pro' })), [{ conversions: '2', unique_conversions: '2' }]);
    assert.deepEqual(await conversions(props({ key: 'plan', operator: 'is', value: 'pro' }, { key: 'plan', operator: 'is', value: 'team' })), [{ conversions: '4', unique_conversions: '3' }], 'one key: ORed');
    assert.deepEqual(await conversions(props({ key: 'plan', operator: 'is', value: 'pro' }, { key: 'seats', operator: 'is', value: '3' })), [{ conversions: '1', unique_conversions: '1' }], 'two keys: ANDed');
    const filtered = await api('goal-properties', { site_id: site, entity_name: 'Signup', props: props({ key: 'plan', operator: 'is', value: 'pro' }) });
    assert.deepEqual([filtered.body.total, filtered.body.rows], [3, [{ value: 'pro', conversions: 3, unique_conversions: 2 }]]);
    // Without property filters the answer is /v1's.
    const plain = await api('aggregations', { entity: 'pageview', entity_id: site, aggregates: 'pageviews,visits,bounce_rate' });
    const v1 = await owner.api('GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews,visits,bounce_rate&date_from=2000-01-01`, csrf);
    assert.deepEqual(plain.body, v1.body);
  });

  it('takes hostile keys and values as plain text and refuses malformed filters with a 400 naming props', async () => {
    const hostile: [string, string][] = [["'); DROP TABLE hits; --", "x' OR '1'='1"], ['__proto__', 'constructor'], ['.*+?()[]{}|^$\\', '%_*'], ['ü 😀', '\u0000']];
    for (const [key, value] of hostile) {
      for (const operator of ['is', 'is not', 'is like', 'is not like']) {
        const res = await api('aggregations', { entity: 'event', site_id: site, entity_name: 'Signup', aggregates: 'conversions', props: props({ key, operator, value }) });
        assert.equal(res.status, 200, `${key} ${operator}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body[0].conversions, operator.includes('not') ? '5' : '0', `${key} ${operator}`);
      }
      const breakdown = await api('goal-properties', { site_id: site, entity_name: 'Signup', key });
      assert.equal(breakdown.status, 200);
    }
    const bad = [
      'not json', '{}', props('x'), props({ key: '', operator: 'is', value: 'x' }), props({ key: 'k'.repeat(301), operator: 'is', value: 'x' }),
      props({ key: 'k', operator: 'matching', value: 'x' }), props({ key: 'k', operator: 'is', value: '' }), props({ key: 'k', operator: 'is', value: 'v'.repeat(2001) }),
      props(...Array.from({ length: 21 }, (_, i) => ({ key: `k${i}`, operator: 'is', value: 'x' }))), 'x'.repeat(200_000),
    ];
    for (const filters of bad) {
      const res = await api('aggregations', { entity: 'pageview', entity_id: site, aggregates: 'pageviews', props: filters });
      assert.equal(res.status, 400, filters.slice(0, 80));
      assert.ok(Object.hasOwn(res.body.errors, 'props'), JSON.stringify(res.body));
    }
    assert.equal((await api('goal-properties', { site_id: site, entity_name: 'Signup', limit: '0' })).status, 400);
    assert.equal((await api('goal-properties', { site_id: site, entity_name: 'Signup', key: 'k'.repeat(301) })).status, 400);
    assert.equal((await api('goal-properties', { site_id: site, entity_name: 'Nope' })).status, 404);
  });

  it("applies the dashboard's access rules: session with its anti-CSRF value, the viewer's sites, no token, no other account", async () => {
    const params = { site_id: site, entity_name: 'Signup' };
    assert.equal((await api('goal-properties', params, owner, 'wrong')).status, 401);
    assert.equal((await api('goal-properties', params, new Browser(t.app), 'x')).status, 401, 'no session');
    const token = await t.token(['*'], { accountId });
    const withToken = await t.app.inject({ method: 'GET', url: `/dashboard/api/report/goal-properties?site_id=${site}&entity_name=Signup`, headers: { authorization: `Bearer ${token}` } });
    assert.equal(withToken.statusCode, 401, 'a token is for /v1');
    const { email } = await addMember(t.team, accountId, 'viewer', [other]);
    const viewer = new Browser(t.app);
    const viewerCsrf = await logIn(viewer, email);
    assert.equal((await api('goal-properties', params, viewer, viewerCsrf)).status, 404, "a viewer of other sites does not see this one's");
    assert.equal((await api('aggregations', { entity: 'pageview', entity_id: other, aggregates: 'pageviews' }, viewer, viewerCsrf)).status, 200);
    const stranger = new Browser(t.app);
    const strangerCsrf = await logIn(stranger, (await newLogin(t.meta)).email);
    assert.equal((await api('goal-properties', params, stranger, strangerCsrf)).status, 404, "another account's site");
  });

  it("leaves /v1 as SPEC.md has it: a props parameter is one more unknown parameter, ignored", async () => {
    const url = `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2000-01-01`;
    const plain = await owner.api('GET', url, csrf);
    const withProps = await owner.api('GET', `${url}&props=${encodeURIComponent(props({ key: 'plan', operator: 'is', value: 'pro' }))}`, csrf);
    assert.deepEqual([plain.body, withProps.body], [[{ pageviews: '5' }], [{ pageviews: '5' }]]);
  });
});
