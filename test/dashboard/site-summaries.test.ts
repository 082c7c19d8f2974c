// The sites page's summaries (/dashboard/api/site-summaries): each site's visitors of the last 24 hours and hour by
// hour equal /v1/aggregations' answers to the same queries, in sites of three time zones (one offset by half an
// hour); hits before the range are left out; a viewer of chosen sites and another account see only their own; the
// request is bounded and needs the session's anti-CSRF header.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatTimestamp } from '../../src/domain/time.js';
import { MAX_SUMMARY_SITES } from '../../src/http/dashboard/site-summaries.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { addMember, Browser, importInOrder, logIn, newLogin } from './helpers.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const HOUR = 3_600_000;

interface Person {
  browser: Browser;
  csrf: string;
}
interface Summary {
  site_id: string;
  date_from: string;
  date_to: string;
  visitors: number;
  hours: { timestamp: string; visitors: number }[];
}

describe('site summaries', () => {
  let t: TestApp;
  let accountId: number;
  let owner: Person;
  const sites: Record<string, string> = {};
  // Visitors each site had in its last 24 hours: one per hit below with a distinct address.
  const inRange: Record<string, number> = { UTC: 4, 'Asia/Kolkata': 2, 'America/New_York': 0 };

  const person = async (email: string): Promise<Person> => {
    const browser = new Browser(t.app);
    return { browser, csrf: await logIn(browser, email) };
  };
  const summaries = async (p: Person, ids: string[]) => {
    const res = await p.browser.api('GET', `/dashboard/api/site-summaries?site_ids=${ids.join(',')}`, p.csrf);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data as Summary[];
  };
  const v1 = async (query: Record<string, string>) => {
    const res = await owner.browser.api('GET', `/v1/aggregations?${new URLSearchParams(query)}`, owner.csrf);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  };

  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    accountId = login.id;
    owner = await person(login.email);
    for (const zone of Object.keys(inRange)) {
      const res = await owner.browser.api('POST', '/v1/sites', owner.csrf, { name: zone, timezone: zone });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      sites[zone] = res.body.id;
    }
    const now = Date.now();
    const hit = (site: string, hoursAgo: number, ip: string) =>
      JSON.stringify({ type: 'pageview', site_id: site, timestamp: formatTimestamp(new Date(now - hoursAgo * HOUR)), url: 'https://example.test/', referrer: '', user_agent: UA, ip });
    await importInOrder(t.app, [
      // Each hit its own visitor: two hits of one address would be two visitor-days when midnight UTC fell between.
      hit(sites.UTC!, 0.2, '3.1.0.1'), hit(sites.UTC!, 0.3, '3.1.0.6'), hit(sites.UTC!, 5, '3.1.0.2'), hit(sites.UTC!, 20, '3.1.0.3'),
      hit(sites.UTC!, 30, '3.1.0.4'), hit(sites.UTC!, 50, '3.1.0.5'),
      hit(sites['Asia/Kolkata']!, 1, '3.2.0.1'), hit(sites['Asia/Kolkata']!, 10, '3.2.0.2'), hit(sites['Asia/Kolkata']!, 26, '3.2.0.3'),
      hit(sites['America/New_York']!, 40, '3.3.0.1'),
    ]);
    await t.flushHits();
  });
  after(() => t.close());

  it("gives each site's last 24 hours as /v1 answers them, in whole local hours", async () => {
    const data = await summaries(owner, Object.values(sites));
    assert.deepEqual(data.map((s) => s.site_id), Object.values(sites), 'in the order asked');
    for (const [zone, id] of Object.entries(sites)) {
      const s = data.find((d) => d.site_id === id)!;
      const query = { entity: 'pageview', entity_id: id, aggregates: 'visitors', date_from: s.date_from, date_to: s.date_to };
      const [total] = await v1(query);
      assert.equal(s.visitors, Number(total?.visitors ?? 0), `${zone}: the total is /v1's`);
      assert.equal(s.visitors, inRange[zone], `${zone}: hits older than the range are left out`);
      const hourly = await v1({ ...query, date_grouping: 'hour' });
      assert.deepEqual(
        s.hours.filter((h) => h.visitors > 0),
        hourly.filter((r) => Number(r.visitors) > 0).map((r) => ({ timestamp: r.timestamp, visitors: Number(r.visitors) })),
        `${zone}: the hours are /v1's`,
      );
      assert.equal(s.hours.length, 24);
      // 24 whole local hours, the last one the current hour of the site's zone.
      assert.ok(s.hours.every((h) => /^\d{4}-\d{2}-\d{2} \d{2}:00:00$/.test(h.timestamp)), `${zone}: hours start on the hour`);
      assert.equal(new Set(s.hours.map((h) => h.timestamp)).size, 24, `${zone}: no hour twice`);
      const localNow = new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', hourCycle: 'h23' })
        .format(new Date()).replace(', ', ' ');
      assert.equal(s.hours.at(-1)!.timestamp, `${localNow}:00:00`, `${zone}: ends with the current local hour`);
      const span = Date.parse(s.date_to) - Date.parse(s.date_from);
      assert.ok(span > 23 * HOUR && span <= 24 * HOUR, `${zone}: the range is between 23 and 24 hours`);
    }
  });

  it('shows a viewer of chosen sites only those, and nobody another account\'s sites', async () => {
    const viewer = await person((await addMember(t.team, accountId, 'viewer', [sites.UTC!])).email);
    assert.deepEqual((await summaries(viewer, Object.values(sites))).map((s) => s.site_id), [sites.UTC]);
    const stranger = await person((await newLogin(t.meta)).email);
    assert.deepEqual(await summaries(stranger, Object.values(sites)), []);
  });

  it('is bounded and needs the session with its anti-CSRF header', async () => {
    const tooMany = Array.from({ length: MAX_SUMMARY_SITES + 1 }, (_, i) => `SITE${i}`);
    const bounded = await owner.browser.api('GET', `/dashboard/api/site-summaries?site_ids=${tooMany.join(',')}`, owner.csrf);
    assert.equal(bounded.status, 400);
    assert.ok(JSON.stringify(bounded.body).includes('site_ids'), JSON.stringify(bounded.body));
    assert.equal((await owner.browser.api('GET', '/dashboard/api/site-summaries', owner.csrf)).status, 400);
    assert.equal((await owner.browser.api('GET', `/dashboard/api/site-summaries?site_ids=${sites.UTC}`, undefined)).status, 401);
    assert.equal((await new Browser(t.app).api('GET', `/dashboard/api/site-summaries?site_ids=${sites.UTC}`, undefined)).status, 401);
  });
});
