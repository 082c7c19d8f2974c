// The worked example of docs/reports.md ("Attribution", "Visitors"), with its literal answers: a visit from
// Hacker News that views three pages and converts, a direct visit, and the same person back the next day.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { createSite, importLines, line } from './fixtures.js';

const SITE = 'https://blog.example';
const RANGE = 'date_from=2026-11-02%2000:00:00&date_to=2026-11-03%2023:59:59';

describe('docs/reports.md worked example: attribution belongs to the visit, visitors are visitor-days', () => {
  let t: TestApp;
  let site = '';
  const get = async (query: string) => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${query}&${RANGE}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  before(async () => {
    t = await startTestApp();
    site = await createSite(t, { name: 'Blog', timezone: 'UTC' });
    const ann = { ip: '81.2.69.160' };
    await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events`, { name: 'Signup' });
    await importLines(t, [
      // Ann arrives from Hacker News with a campaign tag, reads two more pages, comes back to /pricing through a
      // Google search within the same visit, and signs up.
      line(site, '2026-11-02 10:00:00', `${SITE}/?utm_source=hn`, { ...ann, referrer: 'https://news.ycombinator.com/item?id=1' }),
      line(site, '2026-11-02 10:01:00', `${SITE}/pricing`, { ...ann, referrer: `${SITE}/` }),
      line(site, '2026-11-02 10:03:00', `${SITE}/pricing`, { ...ann, referrer: 'https://www.google.com/' }),
      line(site, '2026-11-02 10:04:00', `${SITE}/signup`, { ...ann, type: 'event', name: 'Signup', value: 0 }),
      // Bob types the address.
      line(site, '2026-11-02 11:00:00', `${SITE}/`, { ip: '81.2.69.161' }),
      // Ann again the next day, directly: a new visit and a new visitor-day.
      line(site, '2026-11-03 09:00:00', `${SITE}/pricing`, ann),
    ]);
  });
  after(() => t.close());

  it('the referrer table adds up to the visits the site had', async () => {
    assert.deepEqual(await get(`entity=pageview&entity_id=${site}&aggregates=visits,pageviews`), [{ visits: '3', pageviews: '5' }]);
    assert.deepEqual(await get(`entity=pageview&entity_id=${site}&aggregates=visits,pageviews&field_grouping=referrer_hostname`), [
      { referrer_hostname: '', visits: '2', pageviews: '2' },
      { referrer_hostname: 'https://news.ycombinator.com', visits: '1', pageviews: '3' },
    ]);
  });

  it('a conversion carries the campaign that brought its visitor', async () => {
    assert.deepEqual(await get(`entity=event&site_id=${site}&entity_name=Signup&aggregates=conversions&field_grouping=utm_source,referrer_source`), [
      { utm_source: 'hn', referrer_source: 'Hacker News', conversions: '1' },
    ]);
    const filter = encodeURIComponent(JSON.stringify([{ property: 'utm_source', operator: 'is', value: 'hn' }]));
    assert.deepEqual(await get(`entity=event&site_id=${site}&entity_name=Signup&aggregates=conversions,unique_conversions&filters=${filter}`), [
      { conversions: '1', unique_conversions: '1' },
    ]);
  });

  it('visitors count visitor-days; uniques count (visit, page) pairs', async () => {
    assert.deepEqual(await get(`entity=pageview&entity_id=${site}&aggregates=visitors,visits,uniques,pageviews`), [
      { visitors: '3', visits: '3', uniques: '4', pageviews: '5' },
    ]);
    assert.deepEqual(await get(`entity=pageview&entity_id=${site}&aggregates=visitors,visits&date_grouping=day`), [
      { timestamp: '2026-11-02 00:00:00', visitors: '2', visits: '2' },
      { timestamp: '2026-11-03 00:00:00', visitors: '1', visits: '1' },
    ]);
    assert.deepEqual(await get(`entity=pageview&entity_id=${site}&aggregates=visitors,uniques,pageviews&field_grouping=pathname`), [
      { pathname: '/', visitors: '2', uniques: '2', pageviews: '2' },
      { pathname: '/pricing', visitors: '2', uniques: '2', pageviews: '3' },
    ]);
  });
});
