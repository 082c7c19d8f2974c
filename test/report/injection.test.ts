// Hostile values in every report parameter reach DuckDB only as bound values: they match nothing (or match
// literally), never change the query, and never break the tables.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

const HOSTILE = [
  "'; DROP TABLE hits; --",
  "' OR '1'='1",
  '" OR ""="',
  '\\',
  "\\'; SELECT 1; --",
  'a\u0000b',
  '$1',
  '?',
  '%',
  '_',
  '*',
  'ünïcödé ✓ 😀',
  ') UNION SELECT * FROM tokens --',
  "'); DELETE FROM visits; --",
];

describe('report parameters against SQL injection', () => {
  let t: TestApp;
  let site: string;
  before(async () => {
    t = await startTestApp();
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Hostile' })).body.id;
    const line = (path: string) =>
      JSON.stringify({ type: 'pageview', site_id: site, timestamp: '2026-05-01 10:00:00', url: `https://ex.test${path}`, user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', ip: '81.2.69.142' });
    await t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: [line('/plain'), line(`/${encodeURIComponent("it's")}`), line('/50%25off'), line('/a_b')].join('\n'),
    });
    await t.flushHits();
  });
  after(() => t.close());

  const report = (filters: unknown[], extra = '') =>
    t.call(
      OWNER_TOKEN,
      'GET',
      `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-05-01%2000:00:00&date_to=2026-05-02%2000:00:00&filters=${encodeURIComponent(JSON.stringify(filters))}${extra}`,
    );

  for (const value of HOSTILE) {
    it(`treats ${JSON.stringify(value)} as a plain value in every operator`, async () => {
      for (const [positive, negative] of [['is', 'is not'], ['is like', 'is not like']] as const) {
        for (const property of ['pathname', 'domain', 'utm_source', 'entry_page']) {
          const yes = await report([{ property, operator: positive, value }]);
          const no = await report([{ property, operator: negative, value }]);
          assert.equal(yes.status, 200, `${property} ${positive}: ${JSON.stringify(yes.body)}`);
          assert.equal(no.status, 200, `${property} ${negative}: ${JSON.stringify(no.body)}`);
          // Every hit matches exactly one of the pair: the value changed nothing but what is compared.
          assert.equal(Number(yes.body[0].pageviews) + Number(no.body[0].pageviews), 4, `${property} ${positive}`);
          if (positive === 'is') assert.equal(yes.body[0].pageviews, '0', `${property} is`);
        }
      }
      for (const operator of ['matching', 'not matching']) {
        const res = await report([{ property: 'pathname', operator, value }]);
        assert.ok(res.status === 200 || res.status === 400, `${operator}: ${res.status}`);
        if (res.status === 400) assert.ok(res.body.errors.filters);
      }
      const timezone = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&timezone=${encodeURIComponent(value)}`);
      assert.equal(timezone.status, 400);
      const entity = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=event&site_id=${site}&entity_name=${encodeURIComponent(value)}&aggregates=conversions`);
      assert.equal(entity.status, 404);
      const siteId = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${encodeURIComponent(value)}&aggregates=pageviews`);
      assert.equal(siteId.status, 404);
    });
  }

  it('matches quotes, percent signs and underscores literally', async () => {
    const count = async (operator: string, value: string) => (await report([{ property: 'pathname', operator, value }])).body[0].pageviews;
    assert.equal(await count('is', "/it's"), '1');
    assert.equal(await count('is like', '%'), '1', '% is literal in is like');
    assert.equal(await count('is like', '_'), '1', '_ is literal in is like');
    assert.equal(await count('is like', "it'"), '1');
    assert.equal(await count('matching', "^/it's$"), '1');
  });

  it('leaves every table intact', async () => {
    const res = await report([]);
    assert.equal(res.body[0].pageviews, '4');
    assert.equal((await t.events.listVisits(site)).length, 1);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/token')).status, 200);
  });
});
