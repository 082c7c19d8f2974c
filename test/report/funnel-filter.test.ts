// The dashboard report API's funnel filter (funnel, funnel_step, funnel_outcome): over generated traffic, totals and
// a pathname breakdown of the visits that continued or dropped at each step equal the oracle's over the same
// visits (each visit walked by test/report/funnel-oracle.ts alone); and bad parameters and other accounts' funnels
// refused with a 400 naming the parameter.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, givePassword, logIn, newLogin } from '../dashboard/helpers.js';
import { funnelOracle, type OracleStep } from './funnel-oracle.js';
import { demoSite, f } from './fixtures.js';
import { aggregationsOf, type Filter, type OracleQuery, type OracleVisit, type Prepared } from './oracle.js';

const ZONE = 'Europe/Berlin';
const FROM = '2026-01-12';
const TO = '2026-01-13';
const page = (value: string): OracleStep => ({ type: 'page', value });
const event = (value: string): OracleStep => ({ type: 'event', value });

/** How many steps of `steps` the visit reached (in order, within the range, the visit taking part by `filters`). */
function reachedBy(data: Prepared, visit: OracleVisit, steps: readonly OracleStep[], filters: readonly Filter[]): number {
  const alone: Prepared = { site: data.site, hits: visit.hits, visits: [visit] };
  const rows = funnelOracle(alone, steps, filters, `${FROM} 00:00:00`, `${TO} 23:59:59`, ZONE);
  return rows.filter((r) => r.visits === '1').length;
}

describe('the funnel filter of the dashboard report API', () => {
  let t: TestApp;
  let owner: Browser;
  let csrf: string;
  let siteId: string;
  let data: Prepared;

  before(async () => {
    t = await startTestApp();
    await givePassword(t.meta, 1);
    owner = new Browser(t.app);
    csrf = await logIn(owner);
    ({ siteId, data } = await demoSite(t, { name: 'Funnel filter', timezone: ZONE, from: FROM, days: 2, visitsPerDay: 150, seed: 47 }));
  });
  after(() => t.close());

  async function createFunnel(steps: OracleStep[], filters: Filter[] = []): Promise<string> {
    const res = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/funnels`, { name: `F ${steps.length}`, steps, filters });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  }

  const ask = (params: Record<string, string>, browser = owner) =>
    browser.api('GET', `/dashboard/api/report/aggregations?${new URLSearchParams(params).toString().replace(/\+/g, '%20')}`, csrf);

  const cases: { name: string; steps: OracleStep[]; own?: Filter[]; filters?: Filter[] }[] = [
    { name: 'the demo funnel', steps: [page('/'), page('/pricing'), page('/signup')] },
    { name: 'with a page pattern and an event step', steps: [page('/*'), page('/pricing'), event('Purchase')] },
    { name: "with the funnel's own filter and the report's", steps: [page('/'), page('/pricing'), page('/signup')], own: [f('browser', 'is not', 'Safari')], filters: [f('pathname', 'is not', '/contact')] },
  ];

  for (const c of cases) {
    it(`${c.name}: totals and pages of the visits that continued or dropped, at every step`, async () => {
      const id = await createFunnel(c.steps, c.own ?? []);
      const walkFilters = [...(c.own ?? []), ...(c.filters ?? [])];
      const reached = new Map(data.visits.map((v) => [v, reachedBy(data, v, c.steps, walkFilters)]));
      for (let step = 1; step <= c.steps.length; step++) {
        const outcomes = step < c.steps.length ? (['continued', 'dropped'] as const) : (['continued'] as const);
        for (const outcome of outcomes) {
          const chosen = data.visits.filter((v) => {
            const n = reached.get(v)!;
            return n >= step && (step === c.steps.length || (outcome === 'continued' ? n > step : n === step));
          });
          const only: Prepared = { site: data.site, visits: chosen, hits: data.hits.filter((h) => chosen.includes(h.visit)) };
          const base: Record<string, string> = {
            entity: 'pageview', entity_id: siteId, date_from: FROM, date_to: TO, funnel: id, funnel_step: String(step), funnel_outcome: outcome,
            ...(c.filters ? { filters: JSON.stringify(c.filters) } : {}),
          };
          const query = (q: Partial<OracleQuery>): OracleQuery => ({
            entity: 'pageview', aggregates: [], fieldGrouping: [], filters: c.filters ?? [], from: `${FROM} 00:00:00`, to: `${TO} 23:59:59`, timezone: ZONE, ...q,
          });
          const what = `step ${step} ${outcome}`;
          const totals = ['visitors', 'visits', 'pageviews', 'bounce_rate', 'avg_duration'];
          const got = await ask({ ...base, aggregates: totals.join(',') });
          assert.equal(got.status, 200, `${what}: ${JSON.stringify(got.body)}`);
          const expected = aggregationsOf(only, query({ aggregates: totals }));
          assert.deepEqual(got.body, expected, what);
          // The cases are chosen so that no outcome is empty: a filter that kept nothing would prove little.
          assert.ok(Number(expected[0]!.visits) > 0, `${what}: the oracle selects no visit`);

          const pages = await ask({ ...base, aggregates: 'visitors,visits,pageviews', field_grouping: 'pathname' });
          assert.equal(pages.status, 200, `${what}: ${JSON.stringify(pages.body)}`);
          assert.deepEqual(pages.body, aggregationsOf(only, query({ aggregates: ['visitors', 'visits', 'pageviews'], fieldGrouping: ['pathname'] })), `${what} by page`);
        }
      }
    });
  }

  it("dropped after step k counts the funnel report's drop_off of step k+1", async () => {
    const id = await createFunnel([page('/'), page('/pricing'), page('/signup')]);
    const report = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}/report?date_from=${FROM}&date_to=${TO}`);
    assert.equal(report.status, 200);
    for (const step of [1, 2]) {
      const res = await ask({ entity: 'pageview', entity_id: siteId, date_from: FROM, date_to: TO, aggregates: 'visits', funnel: id, funnel_step: String(step), funnel_outcome: 'dropped' });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.equal(res.body[0].visits, report.body.steps[step].drop_off);
    }
  });

  // Adds imported days to the range: the tests after it ask for no number.
  it('leaves imported days out: they have no visits to walk', async () => {
    const id = await createFunnel([page('/'), page('/pricing')]);
    const params = { entity: 'pageview', entity_id: siteId, date_from: FROM, date_to: TO, aggregates: 'visits,pageviews,visitors' };
    const filtered = { ...params, funnel: id, funnel_step: '1', funnel_outcome: 'continued' };
    const before = (await ask(filtered)).body;
    const recorded = (await ask(params)).body[0];
    const done = { status: 'done' as const, digest: 'd', imported: 2, rejected: 0, firstHitAt: new Date(`${FROM}T00:00:00Z`), lastHitAt: new Date(`${TO}T00:00:00Z`), failure: null };
    const run = await t.meta.createImport({ siteId, kind: 'plausible', fileName: 'old.zip', visitIdBase: 0n, owner: 'test' });
    await t.events.writeImportedDays([FROM, TO].map((day) => ({
      importId: run.id, siteId, day, dimension: '' as const, value: '', pageviews: 1000, visits: 500, visitors: 400, bounces: 0, visitDuration: 0, lacks: 0,
    })));
    assert.ok(await t.meta.finishImport(run.id, 'test', done));
    t.doneImports.forget(siteId);
    // The unfiltered report counts them; the filtered one is unchanged.
    const withImported = (await ask(params)).body[0];
    assert.equal(Number(withImported.visits), Number(recorded.visits) + 1000, JSON.stringify(withImported));
    assert.deepEqual((await ask(filtered)).body, before);
  });

  it('bad funnel parameters are 400s naming the parameter; another account\'s funnel is unknown', async () => {
    const id = await createFunnel([page('/'), page('/pricing')]);
    // Another account's site and funnel.
    const stranger = new Browser(t.app);
    const strangerLogin = await newLogin(t.meta);
    const strangerCsrf = await logIn(stranger, strangerLogin.email);
    const theirSite = (await stranger.api('POST', '/v1/sites', strangerCsrf, { name: 'Theirs' })).body.id as string;
    const theirs = await stranger.api('POST', `/v1/sites/${theirSite}/funnels`, strangerCsrf, { name: 'Theirs', steps: [page('/'), page('/pricing')] });
    assert.equal(theirs.status, 200, JSON.stringify(theirs.body));
    const base = `entity=pageview&entity_id=${siteId}&aggregates=visits&date_from=${FROM}&date_to=${TO}`;
    for (const [params, field] of [
      [`funnel=${id}`, 'funnel_step'],
      [`funnel_step=1&funnel_outcome=dropped`, 'funnel'],
      [`funnel=&funnel_step=1&funnel_outcome=dropped`, 'funnel'],
      [`funnel=not-a-uuid&funnel_step=1&funnel_outcome=dropped`, 'funnel'],
      [`funnel=00000000-0000-4000-8000-000000000000&funnel_step=1&funnel_outcome=dropped`, 'funnel'],
      [`funnel=${theirs.body.id}&funnel_step=1&funnel_outcome=dropped`, 'funnel'],
      [`funnel=${id}&funnel=${id}&funnel_step=1&funnel_outcome=dropped`, 'funnel'],
      [`funnel=${id}&funnel_step=0&funnel_outcome=dropped`, 'funnel_step'],
      [`funnel=${id}&funnel_step=3&funnel_outcome=dropped`, 'funnel_step'],
      [`funnel=${id}&funnel_step=1.5&funnel_outcome=dropped`, 'funnel_step'],
      [`funnel=${id}&funnel_step=${'9'.repeat(400)}&funnel_outcome=dropped`, 'funnel_step'],
      [`funnel=${id}&funnel_step=1`, 'funnel_outcome'],
      [`funnel=${id}&funnel_step=1&funnel_outcome=left`, 'funnel_outcome'],
      [`funnel=${id}&funnel_step=1&funnel_outcome=constructor`, 'funnel_outcome'],
      [`funnel=${id}&funnel_step=2&funnel_outcome=dropped`, 'funnel_outcome'],
    ] as const) {
      const res = await owner.api('GET', `/dashboard/api/report/aggregations?${base}&${params}`, csrf);
      assert.equal(res.status, 400, `${params}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body.errors?.[field]), `${params}: ${JSON.stringify(res.body)}`);
    }
    // The stranger cannot use this site's funnel on their own site, nor read this site at all.
    const onTheirs = await stranger.api('GET', `/dashboard/api/report/aggregations?entity=pageview&entity_id=${theirSite}&aggregates=visits&funnel=${id}&funnel_step=1&funnel_outcome=continued`, strangerCsrf);
    assert.equal(onTheirs.status, 400, JSON.stringify(onTheirs.body));
    assert.ok(Array.isArray(onTheirs.body.errors?.funnel));
    const onMine = await stranger.api('GET', `/dashboard/api/report/aggregations?${base}&funnel=${id}&funnel_step=1&funnel_outcome=continued`, strangerCsrf);
    assert.equal(onMine.status, 404, JSON.stringify(onMine.body));
    // The funnel filter works on every route of the page's API: every goal's numbers too.
    const goals = await owner.api('GET', `/dashboard/api/report/page-goal-aggregations?entity_id=${siteId}&date_from=${FROM}&date_to=${TO}&funnel=${id}&funnel_step=9&funnel_outcome=continued`, csrf);
    assert.equal(goals.status, 400);
    assert.ok(Array.isArray(goals.body.errors?.funnel_step));
  });
});
