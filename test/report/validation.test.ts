// GET /v1/aggregations and GET /v1/current_visitors: every invalid request gets SPEC.md's status and body shape
// ({errors:{field:[...]}} for 400, {error} for 404 and 422), the variants real clients send are accepted, and
// current visitors (counts, top lists, the 5-minute edge, the 150 cap) match the oracle.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DemoHit } from '../../src/ingest/demo-traffic.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { AGENTS, createSite, f, importLines, line } from './fixtures.js';
import { aggregationsOf, currentVisitorsOf, prepare, type OracleQuery } from './oracle.js';

const enc = (v: string) => encodeURIComponent(v);
const filters = (list: unknown) => `filters=${enc(JSON.stringify(list))}`;

interface Invalid {
  name: string;
  /** Query string after `?`, `SITE` replaced by the site id and `OTHER` by another account's site. */
  query: string;
  status: 400 | 404 | 422;
  /** For 400: the parameter the message is filed under. */
  field?: string;
  /** A part of the message (case-insensitive). */
  message?: RegExp;
}

const PV = 'entity=pageview&entity_id=SITE';
const EV = 'entity=event&site_id=SITE&entity_name=Purchase';
const RANGE = `date_from=${enc('2026-03-01 00:00:00')}&date_to=${enc('2026-03-31 23:59:59')}`;

const INVALID: Invalid[] = [
  { name: 'missing entity', query: 'entity_id=SITE&aggregates=pageviews', status: 400, field: 'entity' },
  { name: 'empty entity', query: 'entity=&entity_id=SITE&aggregates=pageviews', status: 400, field: 'entity' },
  { name: 'unsupported entity', query: 'entity=visit&entity_id=SITE&aggregates=pageviews', status: 400, field: 'entity' },
  { name: 'missing aggregates', query: PV, status: 400, field: 'aggregates' },
  { name: 'empty aggregates', query: `${PV}&aggregates=`, status: 400, field: 'aggregates' },
  { name: 'missing entity_id for pageview', query: 'entity=pageview&aggregates=pageviews', status: 400, field: 'entity_id' },
  { name: 'an event aggregate for pageviews', query: `${PV}&aggregates=pageviews,conversions`, status: 400, field: 'aggregates' },
  { name: 'a pageview aggregate for events', query: `${EV}&aggregates=visits`, status: 400, field: 'aggregates' },
  { name: 'an unknown aggregate', query: `${PV}&aggregates=sessions`, status: 400, field: 'aggregates' },
  { name: 'missing entity_name for events', query: 'entity=event&site_id=SITE&aggregates=conversions', status: 400, field: 'entity_name' },
  { name: 'missing site_id for events', query: 'entity=event&entity_name=Purchase&aggregates=conversions', status: 400, field: 'site_id' },
  { name: 'entity=event with entity_id', query: 'entity=event&entity_id=ABCDEFGH&aggregates=conversions', status: 400, field: 'entity_id', message: /no longer available/ },
  { name: 'unknown field_grouping', query: `${PV}&aggregates=pageviews&field_grouping=pathname,colour`, status: 400, field: 'field_grouping' },
  { name: 'domain as a grouping', query: `${PV}&aggregates=pageviews&field_grouping=domain`, status: 400, field: 'field_grouping' },
  { name: 'unknown date_grouping', query: `${PV}&aggregates=pageviews&date_grouping=week`, status: 400, field: 'date_grouping' },
  { name: 'keyword as a filter', query: `${PV}&aggregates=pageviews&${filters([f('keyword', 'is', 'x')])}`, status: 400, field: 'filters' },
  { name: 'browser is like (an operator the property does not allow)', query: `${PV}&aggregates=pageviews&${filters([f('browser', 'is like', 'Chr')])}`, status: 400, field: 'filters' },
  { name: 'country_code matching', query: `${PV}&aggregates=pageviews&${filters([f('country_code', 'matching', 'U.')])}`, status: 400, field: 'filters' },
  { name: 'device_type is not like', query: `${PV}&aggregates=pageviews&${filters([f('device_type', 'is not like', 'Mob')])}`, status: 400, field: 'filters' },
  { name: 'an unknown operator', query: `${PV}&aggregates=pageviews&${filters([{ property: 'pathname', operator: 'contains', value: '/' }])}`, status: 400, field: 'filters' },
  { name: 'an unknown property', query: `${PV}&aggregates=pageviews&${filters([f('colour', 'is', 'red')])}`, status: 400, field: 'filters' },
  { name: 'filters not JSON', query: `${PV}&aggregates=pageviews&filters=${enc('[{property:')}`, status: 400, field: 'filters' },
  { name: 'filters an object', query: `${PV}&aggregates=pageviews&filters=${enc('{"property":"pathname","operator":"is","value":"/"}')}`, status: 400, field: 'filters' },
  { name: 'filters not an array of objects', query: `${PV}&aggregates=pageviews&${filters(['pathname'])}`, status: 400, field: 'filters' },
  { name: 'a filter value that is not a string', query: `${PV}&aggregates=pageviews&${filters([{ property: 'pathname', operator: 'is', value: 5 }])}`, status: 400, field: 'filters' },
  { name: 'a filter without a value', query: `${PV}&aggregates=pageviews&${filters([{ property: 'pathname', operator: 'is' }])}`, status: 400, field: 'filters' },
  { name: 'an invalid regular expression', query: `${PV}&aggregates=pageviews&${filters([f('pathname', 'matching', '(')])}`, status: 400, field: 'filters' },
  { name: 'an invalid regular expression, not matching', query: `${PV}&aggregates=pageviews&${filters([f('referrer_source', 'not matching', '[a-')])}`, status: 400, field: 'filters' },
  { name: 'a regular expression over 1000 characters', query: `${PV}&aggregates=pageviews&${filters([f('pathname', 'matching', 'a'.repeat(1001))])}`, status: 400, field: 'filters' },
  { name: 'date_from without a time', query: `${PV}&aggregates=pageviews&date_from=2026-03-05`, status: 400, field: 'date_from' },
  { name: 'date_from in ISO 8601', query: `${PV}&aggregates=pageviews&date_from=2026-03-05T00:00:00`, status: 400, field: 'date_from' },
  { name: 'date_to not a calendar date', query: `${PV}&aggregates=pageviews&date_to=${enc('2026-02-30 00:00:00')}`, status: 400, field: 'date_to' },
  { name: 'date_to with hour 24', query: `${PV}&aggregates=pageviews&date_to=${enc('2026-03-05 24:00:00')}`, status: 400, field: 'date_to' },
  { name: 'date_from after date_to', query: `${PV}&aggregates=pageviews&date_from=${enc('2026-03-05 00:00:01')}&date_to=${enc('2026-03-05 00:00:00')}`, status: 400, field: 'date_from' },
  { name: 'limit 0', query: `${PV}&aggregates=pageviews&limit=0`, status: 400, field: 'limit' },
  { name: 'limit 1001', query: `${PV}&aggregates=pageviews&limit=1001`, status: 400, field: 'limit' },
  { name: 'limit abc', query: `${PV}&aggregates=pageviews&limit=abc`, status: 400, field: 'limit' },
  { name: 'limit -1', query: `${PV}&aggregates=pageviews&limit=-1`, status: 400, field: 'limit' },
  { name: 'an unknown timezone', query: `${PV}&aggregates=pageviews&timezone=Mars/Olympus`, status: 400, field: 'timezone' },
  {
    name: 'date_grouping=hour over more than 7 days',
    query: `${PV}&aggregates=pageviews&date_grouping=hour&date_from=${enc('2026-03-01 00:00:00')}&date_to=${enc('2026-03-08 00:00:01')}`,
    status: 400,
    field: 'date_grouping',
  },
  { name: 'date_grouping=hour over the default range (months)', query: `${PV}&aggregates=pageviews&date_grouping=hour`, status: 400, field: 'date_grouping' },
  { name: 'sort_by without a direction', query: `${PV}&aggregates=pageviews&sort_by=pageviews`, status: 400, field: 'sort_by' },
  { name: 'sort_by with a bad direction', query: `${PV}&aggregates=pageviews&sort_by=pageviews:up`, status: 400, field: 'sort_by' },
  { name: 'sort_by an unknown field', query: `${PV}&aggregates=pageviews&sort_by=colour:asc`, status: 400, field: 'sort_by' },
  { name: 'sort_by an aggregate not requested', query: `${PV}&aggregates=pageviews&sort_by=visits:asc`, status: 422 },
  { name: 'sort_by a field not grouped', query: `${PV}&aggregates=pageviews&field_grouping=pathname&sort_by=browser:desc`, status: 422 },
  { name: 'sort_by an event aggregate for pageviews', query: `${PV}&aggregates=pageviews&sort_by=conversions:desc`, status: 422 },
  { name: 'sort_by timestamp without date_grouping', query: `${PV}&aggregates=pageviews&field_grouping=pathname&sort_by=timestamp:asc`, status: 422 },
  { name: 'pageviews of an unknown site', query: 'entity=pageview&entity_id=NOSUCHID&aggregates=pageviews', status: 404 },
  { name: 'events of an unknown site', query: 'entity=event&site_id=NOSUCHID&entity_name=Purchase&aggregates=conversions', status: 404 },
  { name: 'an unknown event name', query: 'entity=event&site_id=SITE&entity_name=Nope&aggregates=conversions', status: 404 },
  { name: 'event names are exact', query: 'entity=event&site_id=SITE&entity_name=purchase&aggregates=conversions', status: 404 },
  { name: "another account's site", query: 'entity=pageview&entity_id=OTHER&aggregates=pageviews', status: 404 },
  { name: "another account's site, events", query: 'entity=event&site_id=OTHER&entity_name=Purchase&aggregates=conversions', status: 404 },
];

function checkError(res: { status: number; body: any }, c: { status: number; field?: string; message?: RegExp }, label: string): void {
  assert.equal(res.status, c.status, `${label}: ${JSON.stringify(res.body)}`);
  if (c.status === 400) {
    assert.equal(typeof res.body, 'object', label);
    assert.deepEqual(Object.keys(res.body), ['errors'], `${label}: ${JSON.stringify(res.body)}`);
    const messages = res.body.errors[c.field!];
    assert.ok(Array.isArray(messages) && messages.length > 0, `${label}: no message under ${c.field}: ${JSON.stringify(res.body)}`);
    for (const m of messages) assert.equal(typeof m, 'string');
    if (c.message) assert.ok(messages.some((m: string) => c.message!.test(m.toLowerCase())), `${label}: ${JSON.stringify(messages)}`);
  } else {
    assert.deepEqual(Object.keys(res.body), ['error'], `${label}: ${JSON.stringify(res.body)}`);
    assert.equal(typeof res.body.error, 'string');
  }
}

describe('GET /v1/aggregations: invalid requests and accepted variants', () => {
  let t: TestApp;
  let site = '';
  let other = '';
  let lines: DemoHit[] = [];
  const url = (query: string) => `/v1/aggregations?${query.replace(/SITE/g, site).replace(/OTHER/g, other)}`;

  before(async () => {
    t = await startTestApp();
    site = await createSite(t, { name: 'Validation', timezone: 'Europe/Berlin' });
    const res = await t.call(ADMIN_TOKEN, 'POST', '/admin/accounts', { name: 'Other', email: 'other@example.com' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const otherToken = await t.token(['*'], { accountId: res.body.id });
    other = (await t.call(otherToken, 'POST', '/v1/sites', { name: 'Not yours' })).body.id;
    assert.ok(other);
    lines = [
      line(site, '2026-03-05T10:00:00Z', 'https://v.example/a?utm_source=news'),
      line(site, '2026-03-05T10:01:00Z', 'https://v.example/b'),
      line(site, '2026-03-05T10:02:00Z', 'https://v.example/b', { type: 'event', name: 'Purchase', value: 999 }),
      line(site, '2026-03-06T11:00:00Z', 'https://v.example/a', { ip: '81.2.69.200', ua: AGENTS.safariIphone, referrer: 'https://www.google.com/' }),
      line(other, '2026-03-05T10:00:00Z', 'https://o.example/a', { type: 'event', name: 'Purchase', value: 1 }),
    ];
    await importLines(t, lines);
  });
  after(() => t.close());

  for (const c of INVALID) {
    it(`${c.status}: ${c.name}`, async () => checkError(await t.call(OWNER_TOKEN, 'GET', url(c.query)), c, url(c.query)));
  }

  it('404 for a token scoped to another site (read:OTHER)', async () => {
    const token = await t.token([`read:${other}`]);
    checkError(await t.call(token, 'GET', url(`${PV}&aggregates=pageviews`)), { status: 404 }, 'read:OTHER');
    checkError(await t.call(token, 'GET', url(`${EV}&aggregates=conversions`)), { status: 404 }, 'read:OTHER, event');
    const unrelated = await t.token(['read:ZZZZZZZZ']);
    checkError(await t.call(unrelated, 'GET', url(`${PV}&aggregates=pageviews`)), { status: 404 }, 'read:ZZZZZZZZ');
  });

  it('401 without a token', async () => {
    const res = await t.call(undefined, 'GET', url(`${PV}&aggregates=pageviews`));
    assert.equal(res.status, 401);
    assert.equal(typeof res.body.error, 'string');
  });

  it('a read:SITE token and an all-sites-readonly token may read', async () => {
    for (const abilities of [[`read:${site}`], [`manage:${site}`], ['all-sites-readonly']]) {
      const token = await t.token(abilities);
      const res = await t.call(token, 'GET', url(`${PV}&aggregates=pageviews&${RANGE}`));
      assert.equal(res.status, 200, `${abilities}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(res.body, [{ pageviews: '3' }]);
    }
  });

  it('accepts the boundaries: limit 1 and 1000, a 1000-character regex, hour over exactly 7 days, date_from = date_to', async () => {
    const ok = [
      `${PV}&aggregates=pageviews&field_grouping=pathname&limit=1&${RANGE}`,
      `${PV}&aggregates=pageviews&field_grouping=pathname&limit=1000&${RANGE}`,
      `${PV}&aggregates=pageviews&${filters([f('pathname', 'matching', 'a'.repeat(1000))])}&${RANGE}`,
      `${PV}&aggregates=pageviews&date_grouping=hour&date_from=${enc('2026-03-01 00:00:00')}&date_to=${enc('2026-03-08 00:00:00')}`,
      `${PV}&aggregates=pageviews&date_from=${enc('2026-03-05 11:00:00')}&date_to=${enc('2026-03-05 11:00:00')}`,
      `${EV}&aggregates=conversions&${RANGE}`,
    ];
    for (const q of ok) {
      const res = await t.call(OWNER_TOKEN, 'GET', url(q));
      assert.equal(res.status, 200, `${q}: ${JSON.stringify(res.body)}`);
      assert.ok(Array.isArray(res.body));
    }
  });

  describe('the variants real clients send mean the same as leaving them out', () => {
    const base: OracleQuery = {
      entity: 'pageview', aggregates: ['pageviews', 'visits', 'bounce_rate'], fieldGrouping: ['pathname'], filters: [],
      from: '2026-03-01 00:00:00', to: '2026-03-31 23:59:59', timezone: 'Europe/Berlin',
    };
    const plain = `${PV}&aggregates=pageviews,visits,bounce_rate&field_grouping=pathname&${RANGE}`;
    const variants: [string, string, Partial<OracleQuery>][] = [
      ['date_grouping=none', `${plain}&date_grouping=none`, {}],
      ['timezone=UTC', `${plain}&timezone=UTC`, { timezone: 'UTC' }],
      ['filters={}', `${plain}&filters=${enc('{}')}`, {}],
      ['filters=[]', `${plain}&filters=${enc('[]')}`, {}],
      ['all four together', `${plain}&date_grouping=none&timezone=UTC&filters=${enc('{}')}`, { timezone: 'UTC' }],
      ['timezone=UTC with date_grouping=day', `${plain}&timezone=UTC&date_grouping=day`, { timezone: 'UTC', dateGrouping: 'day' }],
    ];
    for (const [name, query, change] of variants) {
      it(name, async () => {
        const res = await t.call(OWNER_TOKEN, 'GET', url(query));
        assert.equal(res.status, 200, JSON.stringify(res.body));
        const data = await prepare(lines, { id: site, timezone: 'Europe/Berlin' });
        const expected = aggregationsOf(data, { ...base, ...change });
        assert.ok(expected.length > 0);
        assert.deepEqual(res.body, expected);
      });
    }
  });
});

// ---------------------------------------------------------------------------------------------------------
// Current visitors.

describe('GET /v1/current_visitors', () => {
  let t: TestApp;
  let site = '';
  const lines: DemoHit[] = [];
  const H = 'https://live.example';

  before(async () => {
    t = await startTestApp();
    site = await createSite(t, { name: 'Live', timezone: 'UTC' });
    const base = Date.now();
    const at = (agoMs: number) => new Date(base - agoMs).toISOString();
    const bulk: DemoHit[] = [];
    // 160 one-page visits on distinct pages inside the window (over the 150 cap), each from its own referrer.
    for (let i = 0; i < 160; i++) {
      bulk.push(line(site, at(60_000 + i * 1000), `${H}/page/${String(i).padStart(3, '0')}`, {
        ip: `81.2.80.${i + 1}`, referrer: `https://ref${String(i % 155).padStart(3, '0')}.example/from/${i % 2}`,
      }));
    }
    // Popular pages: several visits ending on the same page, some with the same referrer.
    for (let i = 0; i < 7; i++) {
      const ip = `81.2.81.${i + 1}`;
      bulk.push(line(site, at(20 * 60_000), `${H}/start`, { ip, referrer: i < 4 ? 'https://www.google.com/search?q=x' : '' }));
      bulk.push(line(site, at(10 * 60_000 + i * 1000), `${H}/${i < 4 ? 'popular' : 'second'}`, { ip, referrer: `${H}/start` }));
      bulk.push(line(site, at(2 * 60_000 + i * 1000), `${H}/${i < 4 ? 'popular' : 'second'}`, { ip, referrer: `${H}/start` }));
    }
    // A visit whose latest pageview is old but whose event is recent: it counts, under that pageview.
    bulk.push(line(site, at(12 * 60_000), `${H}/checkout`, { ip: '81.2.82.1', referrer: 'https://news.ycombinator.com/item?id=9' }));
    bulk.push(line(site, at(90_000), `${H}/checkout`, { ip: '81.2.82.1', type: 'event', name: 'Purchase', value: 100 }));
    // A visit of events only counts in the total but has no latest pageview.
    bulk.push(line(site, at(45_000), `${H}/event-only`, { ip: '81.2.82.2', type: 'event', name: 'Signup' }));
    // Visits that ended 6 to 20 minutes ago do not count.
    for (let i = 0; i < 5; i++) bulk.push(line(site, at(6 * 60_000 + i * 60_000), `${H}/gone`, { ip: `81.2.83.${i + 1}`, referrer: 'https://gone.example/' }));
    // Bots and other sites do not count.
    bulk.push(line(site, at(30_000), `${H}/bot`, { ua: AGENTS.bot, ip: '81.2.84.1' }));
    lines.push(...bulk);
    await importLines(t, bulk);

    // The edge: imported last, just before the requests, relative to a fresh now.
    const now = Date.now();
    const edge = [
      line(site, new Date(now - (4 * 60_000 + 59_000)).toISOString(), `${H}/edge-in`, { ip: '81.2.85.1', ua: AGENTS.firefoxLinux, referrer: 'https://edge.example/in' }),
      line(site, new Date(now - (5 * 60_000 + 1_000)).toISOString(), `${H}/edge-out`, { ip: '81.2.85.2', ua: AGENTS.firefoxLinux, referrer: 'https://edge.example/out' }),
    ];
    lines.push(...edge);
    await importLines(t, edge);
  });
  after(() => t.close());

  const ask = async (detailed?: boolean) => {
    const now = Date.now();
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?site_id=${site}${detailed === undefined ? '' : `&detailed=${detailed}`}`);
    const data = await prepare(lines, { id: site, timezone: 'UTC' });
    return { res, expected: currentVisitorsOf(data, now, detailed === true), data, now };
  };

  it('detailed=true: total, content and referrers as the oracle says, top 150 each', async () => {
    const { res, expected } = await ask(true);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    // The oracle's own view: the 4:59 visit is in, the 5:01 one out, the lists are capped.
    assert.ok(expected.content!.some((c) => c.pathname === '/edge-in'));
    assert.ok(!expected.content!.some((c) => c.pathname === '/edge-out' || c.pathname === '/gone'));
    assert.ok(expected.referrers!.some((r) => r.referrer_hostname === 'https://edge.example'));
    assert.equal(expected.content!.length, 150);
    assert.equal(expected.referrers!.length, 150);
    assert.equal(expected.total, 160 + 7 + 1 + 1 + 1);
    assert.deepEqual(expected.content!.slice(0, 3), [
      { hostname: H, pathname: '/popular', total: 4 },
      { hostname: H, pathname: '/second', total: 3 },
      { hostname: H, pathname: '/checkout', total: 1 },
    ]);
    assert.deepEqual(res.body, expected);
  });

  it('detailed=false and no detailed: only the total', async () => {
    for (const detailed of [false, undefined]) {
      const { res, expected } = await ask(detailed);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, { total: expected.total });
      assert.equal(expected.total, 170);
    }
  });

  it('400 without site_id, 404 for an unknown site or one out of scope', async () => {
    checkError(await t.call(OWNER_TOKEN, 'GET', '/v1/current_visitors'), { status: 400, field: 'site_id' }, 'no site_id');
    checkError(await t.call(OWNER_TOKEN, 'GET', '/v1/current_visitors?detailed=true'), { status: 400, field: 'site_id' }, 'no site_id, detailed');
    checkError(await t.call(OWNER_TOKEN, 'GET', '/v1/current_visitors?site_id=NOSUCHID'), { status: 404 }, 'unknown site');
    const token = await t.token(['read:ZZZZZZZZ']);
    checkError(await t.call(token, 'GET', `/v1/current_visitors?site_id=${site}`), { status: 404 }, 'read:ZZZZZZZZ');
  });

  it('a site without hits has no current visitors', async () => {
    const empty = await createSite(t, { name: 'Quiet', timezone: 'UTC' });
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?site_id=${empty}&detailed=true`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { total: 0, content: [], referrers: [] });
  });
});
