// The report page's journeys and funnel report with what /v1 does not take (src/http/dashboard/report-api.ts):
// custom property filters, and for journeys the funnel filter. Over generated traffic with properties, each answer
// equals the oracle's over the visits those filters keep (a visit with a hit in the range carrying the property; a
// visit that continued or dropped at a funnel's step, walked alone by the funnel oracle), and without them the
// answer is /v1's to the byte; bad parameters, unknown funnels and API tokens are refused.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, givePassword, logIn } from '../dashboard/helpers.js';
import { funnelOracle, type OracleStep } from './funnel-oracle.js';
import { journeysOf } from './journey-oracle.js';
import { demoSite } from './fixtures.js';
import { localToUtc, type OracleVisit, type Prepared } from './oracle.js';

const ZONE = 'Europe/Berlin';
const FROM = '2026-01-12';
const TO = '2026-01-13';
const RANGE = { from: `${FROM} 00:00:00`, to: `${TO} 23:59:59`, timezone: ZONE };
const STEPS: OracleStep[] = [{ type: 'page', value: '/' }, { type: 'page', value: '/pricing' }, { type: 'page', value: '/signup' }];

describe("the report page's journeys and funnel report with custom property and funnel filters", () => {
  let t: TestApp;
  let owner: Browser;
  let csrf: string;
  let siteId: string;
  let funnelId: string;
  let data: Prepared;

  before(async () => {
    t = await startTestApp();
    await givePassword(t.meta, 1);
    owner = new Browser(t.app);
    csrf = await logIn(owner);
    ({ siteId, data } = await demoSite(t, { name: 'Dashboard filters', timezone: ZONE, from: FROM, days: 2, visitsPerDay: 150, seed: 52 }));
    const created = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/funnels`, { name: 'Signup', steps: STEPS });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    funnelId = created.body.id as string;
  });
  after(() => t.close());

  const ask = (route: string, params: Record<string, string>) =>
    owner.api('GET', `/dashboard/api/report/${route}?${new URLSearchParams(params).toString().replace(/\+/g, '%20')}`, csrf);
  const scope = () => ({ entity: 'pageview', entity_id: siteId, date_from: FROM, date_to: TO });
  /** `data` with only `visits` (and their hits). */
  const only = (visits: OracleVisit[]): Prepared => ({ site: data.site, visits, hits: data.hits.filter((h) => visits.includes(h.visit)) });
  /** The visits with a hit in the range carrying `key` = `value` (docs/reports.md, "Custom properties"). */
  const withProp = (key: string, value: string) => {
    const [start, end] = [localToUtc(RANGE.from, ZONE), localToUtc(RANGE.to, ZONE) + 1000];
    return data.visits.filter((v) => v.hits.some((h) => h.at >= start && h.at < end && (h.props ?? []).some(([k, x]) => k === key && x === value)));
  };

  it('journeys with a custom property filter are the journeys of the visits with that property', async () => {
    const kept = withProp('plan', 'pro');
    assert.ok(kept.length > 3 && kept.length < data.visits.length / 2, `${kept.length} visits: the filter must choose some, not all`);
    for (const steps of [2, 4]) {
      const res = await ask('journeys', { ...scope(), props: JSON.stringify([{ key: 'plan', operator: 'is', value: 'pro' }]), steps: String(steps), limit: '50' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, journeysOf(only(kept), { ...RANGE, filters: [], steps, limit: 50 }) as unknown, `steps=${steps}`);
    }
  });

  it('journeys with the funnel filter are the journeys of the visits that continued or dropped at the step', async () => {
    // How many steps each visit reached, walked alone as the funnel report walks it.
    const reached = new Map(data.visits.map((v) => [v, funnelOracle(only([v]), STEPS, [], RANGE.from, RANGE.to, ZONE).filter((r) => r.visits === '1').length]));
    for (const [step, outcome] of [[1, 'dropped'], [2, 'continued']] as const) {
      const kept = data.visits.filter((v) => reached.get(v)! >= step && (outcome === 'continued' ? reached.get(v)! > step : reached.get(v) === step));
      assert.ok(kept.length > 0, `step ${step} ${outcome}: no visit`);
      const res = await ask('journeys', { ...scope(), funnel: funnelId, funnel_step: String(step), funnel_outcome: outcome, limit: '100' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, journeysOf(only(kept), { ...RANGE, filters: [], steps: 3, limit: 100 }) as unknown, `step ${step} ${outcome}`);
    }
  });

  it("a funnel's report with a custom property filter is the funnel of the visits with that property", async () => {
    const kept = withProp('method', 'card');
    const res = await ask('funnel-report', { ...scope(), funnel_id: funnelId, props: JSON.stringify([{ key: 'method', operator: 'is', value: 'card' }]) });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const expected = funnelOracle(only(kept), STEPS, [], RANGE.from, RANGE.to, ZONE);
    assert.deepEqual(res.body.steps, expected);
    assert.ok(Number(expected[1]!.visits) > 0, 'some of those visits reached step 2');
    assert.deepEqual([res.body.id, res.body.name], [funnelId, 'Signup']);
  });

  it('without those filters both answer what /v1 answers', async () => {
    const range = `date_from=${FROM}&date_to=${TO}`;
    const journeys = await ask('journeys', { ...scope(), steps: '3' });
    assert.deepEqual(journeys.body, (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/journeys?${range}&steps=3`)).body);
    const funnel = await ask('funnel-report', { ...scope(), funnel_id: funnelId });
    assert.deepEqual(funnel.body, (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${funnelId}/report?${range}`)).body);
  });

  it('refuses bad parameters, a funnel filter on a funnel, unknown funnels and API tokens', async () => {
    const bad = async (route: string, params: Record<string, string>, field: string) => {
      const res = await ask(route, { ...scope(), ...params });
      assert.equal(res.status, 400, `${route} ${JSON.stringify(params)}: ${JSON.stringify(res.body)}`);
      assert.ok(Object.hasOwn(res.body.errors, field), JSON.stringify(res.body));
    };
    await bad('journeys', { steps: '9' }, 'steps');
    await bad('journeys', { limit: '0' }, 'limit');
    await bad('journeys', { props: '[{"key":"plan"}]' }, 'props');
    await bad('journeys', { funnel: funnelId, funnel_step: '7', funnel_outcome: 'dropped' }, 'funnel_step');
    await bad('journeys', { date_from: 'yesterday-ish' }, 'date_from');
    await bad('funnel-report', { funnel_id: funnelId, funnel: funnelId, funnel_step: '1', funnel_outcome: 'dropped' }, 'funnel');
    for (const id of ['', 'nope', '00000000-0000-4000-8000-000000000000']) {
      const res = await ask('funnel-report', { ...scope(), funnel_id: id });
      assert.equal(res.status, 404, `${JSON.stringify(id)}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, { error: 'Funnel not found' });
    }
    // Another site's id is not the viewer's to read.
    const other = await ask('journeys', { ...scope(), entity_id: 'ZZZZZZZZ' });
    assert.equal(other.status, 404, JSON.stringify(other.body));
    const token = await t.call(OWNER_TOKEN, 'GET', `/dashboard/api/report/journeys?entity=pageview&entity_id=${siteId}`);
    assert.equal(token.status, 401, JSON.stringify(token.body));
  });
});
