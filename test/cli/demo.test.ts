// `plumb demo` against a running server over real HTTP: run twice it leaves one demo site holding one month, and
// its traffic has what the report can show (campaigns, cities in their countries, a funnel, goals with values,
// custom properties), observed through /v1/aggregations and the dashboard's report API.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.js';
import { DEMO_CITIES, DEMO_FUNNEL } from '../../src/cli/demo-traffic.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, givePassword, logIn } from '../dashboard/helpers.js';

type Row = Record<string, string | number | null>;

describe('plumb demo', () => {
  let t: TestApp;
  let env: Record<string, string>;
  let first: { site: { id: string }; imported: number; replaced: string[] };
  let second: { site: { id: string }; imported: number; replaced: string[] };
  let ownSite: string;
  let site: string;

  const plumb = async (args: string[]) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(args, env, (l) => out.push(l), (l) => err.push(l));
    return { code, out: out.join('\n'), err: err.join('\n') };
  };
  const demoJson = async () => {
    const res = await plumb(['demo', '--days', '30', '--visits-per-day', '40', '--json']);
    assert.equal(res.code, 0, res.err);
    return JSON.parse(res.out);
  };
  const v1 = async (params: Record<string, string>, filters?: unknown[]): Promise<Row[]> => {
    const query = new URLSearchParams({
      ...(params.entity === 'event' ? { site_id: site } : { entity: 'pageview', entity_id: site }),
      ...params,
      ...(filters ? { filters: JSON.stringify(filters) } : {}),
    });
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Row[];
  };
  const demoSites = async () =>
    ((await t.call(OWNER_TOKEN, 'GET', '/v1/sites?limit=100')).body.data as { id: string; name: string }[]).filter((s) => s.name === 'Demo site');

  before(async () => {
    t = await startTestApp();
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    env = { PLUMB_URL: address, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN };
    first = await demoJson();
    // A user's own site that happens to have the demo's name: not the demo's, so never replaced.
    ownSite = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Demo site' })).body.id;
    second = await demoJson();
    site = second.site.id;
    await t.flushHits();
  });
  after(() => t.close());

  it('run twice, leaves one demo site whose report is one month of traffic, not two', async () => {
    assert.deepEqual(first.replaced, []);
    assert.deepEqual(second.replaced, [first.site.id], 'the second run says which site it replaced');
    assert.notEqual(site, first.site.id);
    assert.deepEqual((await demoSites()).map((s) => s.id).sort(), [ownSite, site].sort(), "one demo site, and the user's own site kept");
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${first.site.id}`)).status, 404, 'the old demo is deleted');

    // What the report shows (the whole range by default) is what the second run imported: one month.
    const [pv] = await v1({ aggregates: 'pageviews,visits' });
    const events = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events`)).body.data as { name: string }[];
    let conversions = 0;
    for (const e of events) conversions += Number((await v1({ entity: 'event', entity_name: e.name, aggregates: 'conversions' }))[0]?.conversions ?? 0);
    assert.equal(Number(pv!.pageviews) + conversions, second.imported);
    assert.ok(Number(pv!.visits) > 30 * 40 * 0.7, `${pv!.visits} visits`);
    assert.ok(Math.abs(second.imported - first.imported) < first.imported * 0.1, 'each run imports the same month');
  });

  it('says in words which demo site it replaced, and the new address', async () => {
    const res = await plumb(['demo', '--days', '2', '--visits-per-day', '20', '--no-share']);
    assert.equal(res.code, 0, res.err);
    assert.match(res.out, new RegExp(`^Deleted the earlier demo site ${site} with its traffic: the fresh one below replaces it`, 'm'));
    const id = /\(([A-Z]{8})\) in account 1/.exec(res.out)?.[1];
    assert.ok(id && id !== site, res.out);
    assert.match(res.out, new RegExp(`^Report: ${env.PLUMB_URL}/sites/${id} `, 'm'));
    assert.deepEqual((await demoSites()).map((s) => s.id).sort(), [ownSite, id].sort());
    site = id;
    const again = await demoJson();
    assert.deepEqual(again.replaced, [id]);
    site = again.site.id;
    await t.flushHits();
  });

  it('has UTM-tagged visits from a few campaigns, most visits untagged', async () => {
    const [total] = await v1({ aggregates: 'visits' });
    const rows = await v1({ aggregates: 'visits', field_grouping: 'utm_campaign', sort_by: 'visits:desc', limit: '100' });
    const named = rows.filter((r) => r.utm_campaign);
    assert.ok(named.length >= 3, `campaigns: ${JSON.stringify(rows)}`);
    for (const r of named) assert.ok(['november', 'brand_search', 'v2_launch', 'founder_story'].includes(String(r.utm_campaign)), String(r.utm_campaign));
    const tagged = named.reduce((n, r) => n + Number(r.visits), 0);
    assert.ok(tagged > 0 && tagged < Number(total!.visits) * 0.3, `${tagged} of ${total!.visits} visits tagged`);
    const sources = (await v1({ aggregates: 'visits', field_grouping: 'utm_source,utm_medium', limit: '100' })).filter((r) => r.utm_source);
    assert.ok(sources.some((r) => r.utm_source === 'google' && r.utm_medium === 'cpc'), JSON.stringify(sources));
  });

  it('places every visitor in a named city of its real country', async () => {
    const rows = await v1({ aggregates: 'visits', field_grouping: 'country_code,city', sort_by: 'visits:desc', limit: '1000' });
    const expected = new Map(DEMO_CITIES.map(([c]) => [c.city, c.country]));
    assert.ok(rows.length >= 20, `${rows.length} cities`);
    for (const r of rows) {
      assert.ok(r.city, `a visit without a city: ${JSON.stringify(r)}`);
      assert.equal(r.country_code, expected.get(String(r.city)), `${r.city} is in ${expected.get(String(r.city))}`);
    }
    assert.ok(new Set(rows.map((r) => r.country_code)).size >= 12, 'many countries');
  });

  it('has a funnel: home, pricing, sign-up, and purchases with values made on the sign-up page', async () => {
    const visitsOn = async (path: string) =>
      Number((await v1({ aggregates: 'visits' }, [{ property: 'pathname', operator: 'is', value: path }]))[0]?.visits ?? 0);
    const [home, pricing, signup] = [await visitsOn(DEMO_FUNNEL[0]), await visitsOn(DEMO_FUNNEL[1]), await visitsOn(DEMO_FUNNEL[2])];
    const [purchases] = await v1({ entity: 'event', entity_name: 'Purchase', aggregates: 'conversions,unique_conversions,value' });
    assert.ok(signup > Number(purchases!.conversions) && Number(purchases!.conversions) > 0, `${signup} visits on /signup, ${purchases!.conversions} purchases`);
    assert.ok(home > signup && pricing > signup, `${home} / ${pricing} / ${signup}`);
    // Visits that came in on the home page go on to pricing and sign-up.
    const fromHome = await v1({ aggregates: 'pageviews', field_grouping: 'pathname', limit: '100' }, [{ property: 'entry_page', operator: 'is', value: '/' }]);
    for (const path of DEMO_FUNNEL) assert.ok(fromHome.some((r) => r.pathname === path && Number(r.pageviews) > 0), `${path} after entering on /`);
    // Most purchases happen on the sign-up page, the funnel's last step.
    const where = await v1({ entity: 'event', entity_name: 'Purchase', aggregates: 'conversions', field_grouping: 'pathname', sort_by: 'conversions:desc' });
    assert.equal(where[0]!.pathname, '/signup', JSON.stringify(where));
    assert.ok(Number(where[0]!.conversions) * 2 > Number(purchases!.conversions), JSON.stringify(where));
    // Values in cents, from $9 to $149 a purchase; the newsletter goal has none.
    const value = Number(purchases!.value);
    const count = Number(purchases!.conversions);
    assert.ok(value >= 900 * count && value <= 14900 * count, `value ${value} for ${count} purchases`);
    const [newsletter] = await v1({ entity: 'event', entity_name: 'Newsletter signup', aggregates: 'conversions,value' });
    assert.ok(Number(newsletter!.conversions) > 0);
    assert.equal(Number(newsletter!.value), 0);
  });

  it('carries custom properties on its goals (plan and method on purchases), as the dashboard shows them', async () => {
    await givePassword(t.meta);
    const owner = new Browser(t.app);
    const csrf = await logIn(owner);
    const properties = async (key: string) => {
      const query = new URLSearchParams({ site_id: site, entity_name: 'Purchase', key });
      const res = await owner.api('GET', `/dashboard/api/report/goal-properties?${query}`, csrf);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as { keys: string[]; key: string; total: number; rows: { value: string; conversions: number }[] };
    };
    const [purchases] = await v1({ entity: 'event', entity_name: 'Purchase', aggregates: 'conversions' });
    const plan = await properties('plan');
    assert.deepEqual([...plan.keys].sort(), ['method', 'plan']);
    assert.equal(plan.total, Number(purchases!.conversions));
    assert.deepEqual(plan.rows.map((r) => r.value).sort(), ['business', 'pro', 'starter']);
    assert.equal(plan.rows.reduce((n, r) => n + r.conversions, 0), plan.total, 'every purchase has a plan');
    const method = await properties('method');
    // Drawn at random per purchase (invoice 1 in 10), so a month may lack the rarest: each shown is one of the three.
    const methods = method.rows.map((r) => r.value);
    assert.ok(methods.length >= 2 && methods.every((m) => ['card', 'invoice', 'paypal'].includes(m)), JSON.stringify(methods));
    assert.equal(method.rows.reduce((n, r) => n + r.conversions, 0), method.total, 'every purchase has a method');
  });
});
