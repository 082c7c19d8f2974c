// What /v1 remembers between requests: looked-up sites (for as long as it trusts tokens), where what a user does
// through the server must still show at once (a changed time zone in the next report, a deleted site gone), and
// regular expressions the database accepted, which must not let a bad one through.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { createSite, importLines, line } from '../report/fixtures.js';

describe('lookups kept by /v1', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp({ cacheMs: 60_000 });
  });
  after(() => t.close());

  const daily = (site: string) =>
    t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_grouping=day&date_from=2026-01-09&date_to=2026-01-11`);

  it('reports in the time zone the site was just changed to', async () => {
    const site = await createSite(t, { name: 'Zoned', timezone: 'UTC' });
    // 22:00 UTC on the 10th is already the 11th in Kolkata (UTC+5:30).
    await importLines(t, [line(site, '2026-01-10 22:00:00', 'https://zoned.example/')]);
    assert.deepEqual((await daily(site)).body, [{ timestamp: '2026-01-10 00:00:00', pageviews: '1' }]);
    const changed = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}`, { timezone: 'Asia/Kolkata' });
    assert.equal(changed.status, 200);
    assert.deepEqual((await daily(site)).body, [{ timestamp: '2026-01-11 00:00:00', pageviews: '1' }]);
  });

  it('answers 404 for a site deleted a moment ago', async () => {
    const site = await createSite(t, { name: 'Short-lived', timezone: 'UTC' });
    assert.equal((await daily(site)).status, 200);
    assert.equal((await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${site}`)).status, 200);
    assert.equal((await daily(site)).status, 404);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}`)).status, 404);

  });

  it('answers a repeated regular expression filter the same, and still refuses a bad one', async () => {
    const site = await createSite(t, { name: 'Patterns', timezone: 'UTC' });
    await importLines(t, [
      line(site, '2026-01-10 10:00:00', 'https://patterns.example/blog/1'),
      line(site, '2026-01-10 10:00:00', 'https://patterns.example/about', { ip: '81.2.69.161' }),
    ]);
    const matching = (pattern: string) =>
      t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-01-10&date_to=2026-01-10` +
        `&filters=${encodeURIComponent(JSON.stringify([{ property: 'pathname', operator: 'matching', value: pattern }]))}`);
    for (let i = 0; i < 2; i++) assert.deepEqual((await matching('^/blog/')).body, [{ pageviews: '1' }]);
    for (let i = 0; i < 2; i++) {
      const bad = await matching('^/blog/(');
      assert.equal(bad.status, 400);
      assert.match(String(bad.body.errors.filters), /not a valid regular expression/);
    }
  });
});
