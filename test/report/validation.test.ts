// GET /v1/aggregations and GET /v1/current_visitors: every invalid request gets SPEC.md's status and body shape
// ({errors:{field:[...]}} for 400, {error} for 404 and 422), the variants real clients send are accepted, and
// current visitors (counts, top lists, the 5-minute edge, the 150 cap) match the oracle.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { DemoHit } from '../../src/cli/demo-traffic.js';
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

/** Names that plain-object lookups (`name in object`, `object[name]`) find on every object's prototype. */
const PROTOTYPE_NAMES = ['__proto__', 'constructor', 'prototype', 'toString', 'valueOf', 'hasOwnProperty', '__defineGetter__', 'isPrototypeOf'];

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
  { name: 'date_from in ISO 8601 without an offset', query: `${PV}&aggregates=pageviews&date_from=2026-03-05T00:00:00`, status: 400, field: 'date_from', message: /yyyy-mm-dd hh:mm:ss.*iso 8601/ },
  { name: 'date_from in ISO 8601 without seconds', query: `${PV}&aggregates=pageviews&date_from=2026-03-05T00:00Z`, status: 400, field: 'date_from' },
  { name: 'date_to with an offset over 23:59', query: `${PV}&aggregates=pageviews&date_to=2026-03-05T10:00:00%2B24:00`, status: 400, field: 'date_to' },
  { name: 'date_to with a named zone', query: `${PV}&aggregates=pageviews&date_to=${enc('2026-03-05 10:00:00 CET')}`, status: 400, field: 'date_to' },
  { name: 'date_from as a day-first date', query: `${PV}&aggregates=pageviews&date_from=05/03/2026`, status: 400, field: 'date_from' },
  { name: 'date_from as a Unix time', query: `${PV}&aggregates=pageviews&date_from=1772668800`, status: 400, field: 'date_from' },
  { name: 'date_to a date-only that is not a calendar date', query: `${PV}&aggregates=pageviews&date_to=2026-02-30`, status: 400, field: 'date_to' },
  { name: 'date_from before 2000', query: `${PV}&aggregates=pageviews&date_from=${enc('1999-12-31 23:59:59')}`, status: 400, field: 'date_from', message: /2000-01-01 00:00:00 to 2099-12-31 23:59:59/ },
  { name: 'date_to after 2099, date-only', query: `${PV}&aggregates=pageviews&date_to=2100-01-01`, status: 400, field: 'date_to', message: /2099-12-31 23:59:59/ },
  { name: 'date_to after 2099, an instant', query: `${PV}&aggregates=pageviews&date_to=2100-01-01T00:00:00.000Z`, status: 400, field: 'date_to', message: /2099-12-31 23:59:59/ },
  { name: 'date_from before 2000 as written, even with an offset that lands in 2000', query: `${PV}&aggregates=pageviews&date_from=1999-12-31T23:00:00-02:00`, status: 400, field: 'date_from', message: /2000-01-01/ },
  { name: 'date_from at 0100-01-01 (whole-process stall before the bound)', query: `${PV}&aggregates=pageviews&date_grouping=year&date_from=0100-01-01%2000:00:00&date_to=${enc('2026-03-31 23:59:59')}`, status: 400, field: 'date_from', message: /2000-01-01 00:00:00/ },
  { name: 'date_to at 9999-12-31 with date_grouping=day', query: `${PV}&aggregates=pageviews&date_grouping=day&date_to=9999-12-31%2023:59:59`, status: 400, field: 'date_to', message: /2099-12-31 23:59:59/ },
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
  { name: 'sort_by nope:desc', query: `${PV}&aggregates=pageviews&sort_by=nope:desc`, status: 400, field: 'sort_by' },
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `sort_by ${name}:asc`, query: `${PV}&aggregates=pageviews&sort_by=${enc(name)}:asc`, status: 400, field: 'sort_by' })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `field_grouping=${name}`, query: `${PV}&aggregates=pageviews&field_grouping=${enc(name)}`, status: 400, field: 'field_grouping' })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `a filter on property ${name}`, query: `${PV}&aggregates=pageviews&${filters([f(name, 'is', 'x')])}`, status: 400, field: 'filters', message: /unknown property/ })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `a nested filter on property ${name}`, query: `${PV}&aggregates=pageviews&filters[0][property]=${enc(name)}&filters[0][operator]=is&filters[0][value]=x`, status: 400, field: 'filters', message: /unknown property/ })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `a filter with operator ${name}`, query: `${PV}&aggregates=pageviews&${filters([f('pathname', name as never, 'x')])}`, status: 400, field: 'filters', message: /unknown operator/ })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `aggregates=${name}`, query: `${PV}&aggregates=${enc(name)}`, status: 400, field: 'aggregates' })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `date_grouping=${name}`, query: `${PV}&aggregates=pageviews&date_grouping=${enc(name)}`, status: 400, field: 'date_grouping' })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `timezone=${name}`, query: `${PV}&aggregates=pageviews&timezone=${enc(name)}`, status: 400, field: 'timezone' })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `entity=${name}`, query: `entity=${enc(name)}&entity_id=SITE&aggregates=pageviews`, status: 400, field: 'entity' })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `entity_id=${name}`, query: `entity=pageview&entity_id=${enc(name)}&aggregates=pageviews`, status: 404 })),
  ...PROTOTYPE_NAMES.map((name): Invalid => ({ name: `entity_name=${name}`, query: `entity=event&site_id=SITE&entity_name=${enc(name)}&aggregates=conversions`, status: 404 })),
  { name: 'a filter object with inherited-looking keys only', query: `${PV}&aggregates=pageviews&filters=${enc('[{"constructor":"x","toString":"y","__proto__":{"property":"pathname"}}]')}`, status: 400, field: 'filters' },
  // Nested filters (PHP and Rails clients): anything not exactly the accepted forms is an error, never ignored.
  { name: 'a nested filter with an unknown key', query: `${PV}&aggregates=pageviews&filters[0][property]=pathname&filters[0][operator]=is&filters[0][value]=/a&filters[0][foo]=1`, status: 400, field: 'filters', message: /filters\[0\]\[foo\]/ },
  { name: 'filters[x]', query: `${PV}&aggregates=pageviews&filters[x]=1`, status: 400, field: 'filters', message: /filters\[x\]/ },
  { name: 'filtersX', query: `${PV}&aggregates=pageviews&filtersX=1`, status: 400, field: 'filters', message: /filtersx/ },
  { name: 'filters[0] without a key', query: `${PV}&aggregates=pageviews&filters[0]=pathname`, status: 400, field: 'filters' },
  { name: 'filters[] with a JSON value', query: `${PV}&aggregates=pageviews&filters[]=${enc('{"property":"pathname","operator":"is","value":"/a"}')}`, status: 400, field: 'filters' },
  { name: 'a nested filter three levels deep', query: `${PV}&aggregates=pageviews&filters[0][property][0]=pathname&filters[0][operator]=is&filters[0][value]=/a`, status: 400, field: 'filters' },
  { name: 'JSON filters mixed with nested ones', query: `${PV}&aggregates=pageviews&${filters([f('pathname', 'is', '/b')])}&filters[0][property]=pathname&filters[0][operator]=is&filters[0][value]=/a`, status: 400, field: 'filters', message: /not both/ },
  { name: 'an empty JSON filters mixed with nested ones', query: `${PV}&aggregates=pageviews&filters=&filters[0][property]=pathname&filters[0][operator]=is&filters[0][value]=/a`, status: 400, field: 'filters', message: /not both/ },
  { name: 'numbered and [] forms mixed', query: `${PV}&aggregates=pageviews&filters[0][property]=pathname&filters[0][operator]=is&filters[0][value]=/a&filters[][property]=pathname&filters[][operator]=is&filters[][value]=/b`, status: 400, field: 'filters', message: /not both/ },
  { name: 'a negative index', query: `${PV}&aggregates=pageviews&filters[-1][property]=pathname&filters[-1][operator]=is&filters[-1][value]=/a`, status: 400, field: 'filters', message: /index/ },
  { name: 'an index with a leading zero', query: `${PV}&aggregates=pageviews&filters[00][property]=pathname&filters[00][operator]=is&filters[00][value]=/a`, status: 400, field: 'filters', message: /index/ },
  { name: 'an index in exponent notation', query: `${PV}&aggregates=pageviews&filters[1e0][property]=pathname&filters[1e0][operator]=is&filters[1e0][value]=/a`, status: 400, field: 'filters', message: /index/ },
  { name: 'a huge index', query: `${PV}&aggregates=pageviews&filters[99999999999999999999][property]=pathname`, status: 400, field: 'filters', message: /index/ },
  { name: 'index 50 (at most 50 filters)', query: `${PV}&aggregates=pageviews&filters[50][property]=pathname&filters[50][operator]=is&filters[50][value]=/a`, status: 400, field: 'filters', message: /at most 50/ },
  { name: 'a gap in the indexes', query: `${PV}&aggregates=pageviews&filters[0][property]=pathname&filters[0][operator]=is&filters[0][value]=/a&filters[2][property]=pathname&filters[2][operator]=is&filters[2][value]=/b`, status: 400, field: 'filters', message: /filters\[1\] is missing/ },
  { name: 'a numbered filter without its value', query: `${PV}&aggregates=pageviews&filters[0][property]=pathname&filters[0][operator]=is`, status: 400, field: 'filters', message: /filters\[0\] is incomplete: it lacks value/ },
  { name: 'a numbered key given twice', query: `${PV}&aggregates=pageviews&filters[0][property]=pathname&filters[0][property]=hostname&filters[0][operator]=is&filters[0][value]=/a`, status: 400, field: 'filters', message: /more than once/ },
  { name: 'a [] filter left incomplete by the next one starting', query: `${PV}&aggregates=pageviews&filters[][property]=pathname&filters[][operator]=is&filters[][property]=hostname&filters[][operator]=is&filters[][value]=x`, status: 400, field: 'filters', message: /filter 1 of filters\[\]\[…\] is incomplete: it lacks value/ },
  { name: 'a [] filter in an order that leaves two incomplete', query: `${PV}&aggregates=pageviews&filters[][property]=pathname&filters[][operator]=is&filters[][property]=hostname&filters[][value]=x&filters[][operator]=is&filters[][value]=y`, status: 400, field: 'filters', message: /incomplete/ },
  { name: 'a nested filter with an unknown property', query: `${PV}&aggregates=pageviews&filters[0][property]=colour&filters[0][operator]=is&filters[0][value]=red`, status: 400, field: 'filters', message: /unknown property "colour"/ },
  { name: 'a nested filter with an operator the property does not allow', query: `${PV}&aggregates=pageviews&filters[][property]=browser&filters[][operator]=is%20like&filters[][value]=Chr`, status: 400, field: 'filters', message: /browser allows only/ },
  { name: 'a nested filter on keyword', query: `${PV}&aggregates=pageviews&filters[0][property]=keyword&filters[0][operator]=is&filters[0][value]=x`, status: 400, field: 'filters', message: /keyword/ },
  { name: 'a nested invalid regular expression', query: `${PV}&aggregates=pageviews&filters[0][property]=pathname&filters[0][operator]=matching&filters[0][value]=(`, status: 400, field: 'filters' },
  { name: '51 nested filters', query: `${PV}&aggregates=pageviews&${Array.from({ length: 51 }, () => 'filters[][property]=pathname&filters[][operator]=is&filters[][value]=/a').join('&')}`, status: 400, field: 'filters', message: /at most 50/ },
  { name: '51 JSON filters', query: `${PV}&aggregates=pageviews&${filters(Array.from({ length: 51 }, () => f('pathname', 'is', '/a')))}`, status: 400, field: 'filters', message: /at most 50/ },
  { name: 'empty entity_id for pageview is still missing', query: 'entity=pageview&entity_id=&aggregates=pageviews', status: 400, field: 'entity_id', message: /is required/ },
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

  describe('what published Fathom API clients send', () => {
    const base: OracleQuery = {
      entity: 'pageview', aggregates: ['pageviews', 'visits'], fieldGrouping: [], filters: [],
      from: '2026-03-01 00:00:00', to: '2026-03-31 23:59:59', timezone: 'Europe/Berlin',
    };
    const expect = async (query: string, oracle: Partial<OracleQuery>, label = query) => {
      const res = await t.call(OWNER_TOKEN, 'GET', url(query));
      assert.equal(res.status, 200, `${label}: ${JSON.stringify(res.body)}`);
      const expected = aggregationsOf(await prepare(lines, { id: site, timezone: 'Europe/Berlin' }), { ...base, ...oracle });
      assert.deepEqual(res.body, expected, label);
      return res.body as Record<string, string>[];
    };

    it('entity=event&entity_id=&site_id=X&entity_name=Y (a Ruby gem always sends entity_id, empty)', async () => {
      const event: Partial<OracleQuery> = { entity: 'event', eventName: 'Purchase', aggregates: ['conversions', 'unique_conversions', 'value'] };
      const rows = await expect(`entity=event&entity_id=&site_id=SITE&entity_name=Purchase&aggregates=conversions,unique_conversions,value&${RANGE}`, event);
      assert.deepEqual(rows, [{ conversions: '1', unique_conversions: '1', value: '999' }]);
      await expect(`entity=event&site_id=SITE&entity_name=Purchase&aggregates=conversions,unique_conversions,value&${RANGE}`, event);
    });

    it('filters[0][property]=pathname&filters[0][operator]=is&filters[0][value]=/a (PHP) is the JSON filter', async () => {
      const rows = await expect(`${PV}&aggregates=pageviews,visits&filters[0][property]=pathname&filters[0][operator]=is&filters[0][value]=/a&${RANGE}`, { filters: [f('pathname', 'is', '/a')] });
      assert.deepEqual(rows, [{ pageviews: '2', visits: '2' }], 'filtered, not the total of 3 pageviews');
      const json = await t.call(OWNER_TOKEN, 'GET', url(`${PV}&aggregates=pageviews,visits&${filters([f('pathname', 'is', '/a')])}&${RANGE}`));
      assert.deepEqual(json.body, rows);
    });

    it('the numbered form percent-encoded (http_build_query), in any key order, over several filters', async () => {
      const query = [
        'filters%5B1%5D%5Bvalue%5D=%2Fb', 'filters%5B0%5D%5Bproperty%5D=pathname', 'filters%5B1%5D%5Bproperty%5D=pathname',
        'filters%5B0%5D%5Boperator%5D=is', 'filters%5B0%5D%5Bvalue%5D=%2Fa', 'filters%5B1%5D%5Boperator%5D=is',
        'filters%5B2%5D%5Bproperty%5D=browser', 'filters%5B2%5D%5Boperator%5D=is+not', 'filters%5B2%5D%5Bvalue%5D=Safari',
      ].join('&');
      const rows = await expect(`${PV}&aggregates=pageviews,visits&${query}&${RANGE}`, {
        filters: [f('pathname', 'is', '/a'), f('pathname', 'is', '/b'), f('browser', 'is not', 'Safari')],
      });
      assert.deepEqual(rows, [{ pageviews: '2', visits: '1' }]);
    });

    it('filters[][property]=…&filters[][operator]=…&filters[][value]=… (Rails): each triple in order is one filter', async () => {
      const rows = await expect(
        `${PV}&aggregates=pageviews,visits&filters[][property]=pathname&filters[][operator]=is&filters[][value]=/a&filters[][property]=browser&filters[][operator]=is&filters[][value]=Chrome&${RANGE}`,
        { filters: [f('pathname', 'is', '/a'), f('browser', 'is', 'Chrome')] },
      );
      assert.deepEqual(rows, [{ pageviews: '1', visits: '1' }]);
      // Refusals carry the JSON form's messages (browser allows only is and is not).
      const refused = await t.call(OWNER_TOKEN, 'GET', url(`${PV}&aggregates=pageviews&filters[][value]=/a&filters[][property]=pathname&filters[][operator]=is&filters[][operator]=is%20like&filters[][value]=chr&filters[][property]=browser&${RANGE}`));
      const json = await t.call(OWNER_TOKEN, 'GET', url(`${PV}&aggregates=pageviews&${filters([f('pathname', 'is', '/a'), f('browser', 'is like', 'chr')])}&${RANGE}`));
      assert.equal(refused.status, 400);
      assert.deepEqual(refused.body, json.body, 'nested filters get the JSON form\'s messages');
      // Keys in another order within each filter; a new filter starts where a key repeats.
      const reordered = await expect(
        `${PV}&aggregates=pageviews,visits&filters[][value]=/a&filters[][property]=pathname&filters[][operator]=is&filters[][operator]=is%20like&filters[][value]=v.EXAMPLE&filters[][property]=hostname&${RANGE}`,
        { filters: [f('pathname', 'is', '/a'), f('hostname', 'is like', 'v.EXAMPLE')] },
        'reordered keys',
      );
      assert.deepEqual(reordered, [{ pageviews: '2', visits: '2' }]);
    });

    it('50 nested filters are accepted, like 50 JSON ones', async () => {
      const nested = Array.from({ length: 50 }, (_, i) => `filters[${i}][property]=pathname&filters[${i}][operator]=is%20not&filters[${i}][value]=/x${i}`).join('&');
      await expect(`${PV}&aggregates=pageviews,visits&${nested}&${RANGE}`, { filters: Array.from({ length: 50 }, (_, i) => f('pathname', 'is not', `/x${i}`)) });
    });

    it('unknown parameters that do not start with filters are still ignored', async () => {
      await expect(`${PV}&aggregates=pageviews,visits&${RANGE}&foo=1&constructor=2&__proto__=3&Filters[0][property]=x`, {});
    });
  });
});

// ---------------------------------------------------------------------------------------------------------
// The date forms clients send: date-only days, ISO 8601 instants, and the accepted bounds.

describe('GET /v1/aggregations: date_from and date_to forms', () => {
  let t: TestApp;
  let site = '';
  let data: Awaited<ReturnType<typeof prepare>>;
  const H = 'https://dates.example';
  // Europe/Berlin: CET (+01:00) in November, CEST (+02:00) on 1 October. One hit per visitor, so counts are plain.
  const at = [
    '2026-09-30T21:59:59.000Z', // 2026-09-30 23:59:59 Berlin
    '2026-09-30T22:00:00.000Z', // 2026-10-01 00:00:00 Berlin (= 2026-10-01T00:00:00+02:00)
    '2026-10-01T00:00:00.000Z', // 02:00:00 Berlin
    '2026-10-01T00:00:00.900Z',
    '2026-10-01T00:00:01.000Z',
    '2026-11-02T22:59:59.000Z', // 2026-11-02 23:59:59 Berlin
    '2026-11-02T23:00:00.000Z', // 2026-11-03 00:00:00 Berlin
    '2026-11-03T22:59:59.000Z', // 2026-11-03 23:59:59 Berlin
    '2026-11-03T22:59:59.999Z',
    '2026-11-03T23:00:00.000Z', // 2026-11-04 00:00:00 Berlin
  ];
  let lines: DemoHit[] = [];
  const url = (query: string) => `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&${query}`;
  const pageviews = async (query: string): Promise<string> => {
    const res = await t.call(OWNER_TOKEN, 'GET', url(query));
    assert.equal(res.status, 200, `${query}: ${JSON.stringify(res.body)}`);
    return res.body[0].pageviews;
  };
  const oracle = (from: string, to: string, timezone = 'Europe/Berlin') =>
    aggregationsOf(data, { entity: 'pageview', aggregates: ['pageviews'], fieldGrouping: [], filters: [], from, to, timezone })[0]!.pageviews;

  before(async () => {
    t = await startTestApp();
    site = await createSite(t, { name: 'Dates', timezone: 'Europe/Berlin' });
    lines = at.map((ts, i) => line(site, ts, `${H}/p${i}`, { ip: `81.2.70.${i + 1}` }));
    await importLines(t, lines);
    data = await prepare(lines, { id: site, timezone: 'Europe/Berlin' });
  });
  after(() => t.close());

  it('date_from=2026-11-03&date_to=2026-11-03: the whole local day, its first to its last second', async () => {
    assert.equal(await pageviews('date_from=2026-11-03&date_to=2026-11-03'), '3');
    assert.equal(oracle('2026-11-03 00:00:00', '2026-11-03 23:59:59'), '3');
    assert.equal(await pageviews(`date_from=2026-11-03&date_to=${enc('2026-11-03 23:59:59')}`), '3');
    assert.equal(await pageviews(`date_from=${enc('2026-11-03 00:00:00')}&date_to=2026-11-03`), '3');
    // In another reporting zone the day is another stretch of time.
    assert.equal(await pageviews('date_from=2026-11-03&date_to=2026-11-03&timezone=UTC'), oracle('2026-11-03 00:00:00', '2026-11-03 23:59:59', 'UTC'));
    assert.equal(oracle('2026-11-03 00:00:00', '2026-11-03 23:59:59', 'UTC'), '3');
  });

  it('date_from=2026-10-01T00:00:00.000Z (toISOString): exactly that instant, whatever the zone', async () => {
    // [00:00:00Z, 00:00:01Z): the date_to second is counted whole, its fraction dropped.
    assert.equal(await pageviews('date_from=2026-10-01T00:00:00.000Z&date_to=2026-10-01T00:00:00.000Z'), '2');
    assert.equal(oracle('2026-10-01 02:00:00', '2026-10-01 02:00:00'), '2');
    assert.equal(await pageviews('date_from=2026-10-01T00:00:00.000Z&date_to=2026-10-01T00:00:00.000Z&timezone=America/New_York'), '2');
    assert.equal(await pageviews('date_from=2026-10-01T00:00:00Z&date_to=2026-10-01T00:00:00.999Z'), '2');
    assert.equal(await pageviews('date_from=2026-10-01T00:00:00.999Z&date_to=2026-10-01T00:00:01Z'), '3');
  });

  it('date_from=2026-10-01T00:00:00+02:00: the offset given, not the zone\'s local time', async () => {
    const expected = oracle('2026-10-01 00:00:00', '2026-10-01 02:00:00');
    assert.equal(expected, '3');
    for (const from of ['2026-10-01T00:00:00%2B02:00', '2026-10-01T00:00:00+02:00', '2026-10-01T00:00:00.000%2B02:00', '2026-10-01T00:00:00.123456789%2B0200', '2026-09-30T22:00:00Z', '2026-09-30T17:00:00-05:00', '2026-09-30t22:00:00z']) {
      // An unencoded + arrives as a space; it still reads as +02:00.
      assert.equal(await pageviews(`date_from=${from}&date_to=2026-10-01T00:00:00.000Z`), expected, from);
      assert.equal(await pageviews(`date_from=${from}&date_to=2026-10-01T00:00:00.000Z&timezone=Asia/Tokyo`), expected, `${from}, timezone=Asia/Tokyo`);
    }
    // The same local time written for the site's zone means the same.
    assert.equal(await pageviews(`date_from=${enc('2026-10-01 00:00:00')}&date_to=${enc('2026-10-01 02:00:00')}`), expected);
  });

  it('the ends of a day from toISOString() of both ends (mackenly/fathom-api)', async () => {
    assert.equal(await pageviews('date_from=2026-11-02T23:00:00.000Z&date_to=2026-11-03T22:59:59.999Z'), '3');
    // An exclusive-style end (the next midnight) counts that whole second too.
    assert.equal(await pageviews('date_from=2026-11-02T23:00:00.000Z&date_to=2026-11-03T23:00:00.000Z'), '4');
  });

  it('mixed forms, date grouping on instants, and date_from after date_to', async () => {
    assert.equal(await pageviews(`date_from=2026-10-01&date_to=2026-10-01T00:00:00Z`), '3');
    const res = await t.call(OWNER_TOKEN, 'GET', url('date_grouping=day&date_from=2026-09-30T00:00:00Z&date_to=2026-11-30'));
    assert.equal(res.status, 200, JSON.stringify(res.body));
    const expected = aggregationsOf(data, { entity: 'pageview', aggregates: ['pageviews'], dateGrouping: 'day', fieldGrouping: [], filters: [], from: '2026-09-30 02:00:00', to: '2026-11-30 23:59:59', timezone: 'Europe/Berlin' });
    assert.deepEqual(res.body, expected);
    assert.equal(expected.length, 5);
    checkError(await t.call(OWNER_TOKEN, 'GET', url('date_from=2026-10-01T00:00:01Z&date_to=2026-10-01T00:00:00Z')), { status: 400, field: 'date_from' }, 'from after to');
  });

  it('accepts the bounds themselves, in every form', async () => {
    for (const q of [
      `date_from=2000-01-01&date_to=2099-12-31`,
      `date_from=${enc('2000-01-01 00:00:00')}&date_to=${enc('2099-12-31 23:59:59')}&date_grouping=year`,
      `date_from=2000-01-01T00:00:00-12:00&date_to=2099-12-31T23:59:59.999%2B14:00&date_grouping=month`,
      `date_to=${enc('2099-12-31 23:59:59')}&date_grouping=day`,
    ]) {
      const res = await t.call(OWNER_TOKEN, 'GET', url(q));
      assert.equal(res.status, 200, `${q}: ${JSON.stringify(res.body)}`);
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

  // The server's clock stops at the moment the edge hits are placed around, so a slow machine cannot move them.
  let frozen = 0;

  before(async () => {
    t = await startTestApp({ now: () => new Date(frozen || Date.now()) });
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
    frozen = now;
  });
  after(() => t.close());

  const ask = async (detailed?: boolean) => {
    const now = frozen;
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
