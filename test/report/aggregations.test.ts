// GET /v1/aggregations against the oracle (test/report/oracle.ts, docs/reports.md line by line): generated
// traffic and hand-written hits at bucket edges and DST changes, imported once per describe, then a broad matrix
// of aggregates, groupings, filters, orders, limits, ranges and time zones, each compared as a whole answer.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { demoTraffic, type DemoHit } from '../../src/cli/demo-traffic.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { AGENTS, compare, createSite, f, forSite, importLines, line, type Case, type Target } from './fixtures.js';
import { aggregationsOf, EVENT_AGGREGATES, GROUP_FIELDS, localString, PAGEVIEW_AGGREGATES, prepare, type OracleQuery, type Prepared } from './oracle.js';

const ALL = [...PAGEVIEW_AGGREGATES];
const PLACEHOLDER = 'PLACEHOLD';

const generated = (start: string, days: number, seed: number, visitsPerDay = 200): DemoHit[] => [
  ...demoTraffic({ siteId: PLACEHOLDER, start: new Date(start), days, visitsPerDay, seed }),
];

/** Checks that the oracle's visits are the pipeline's: the same hits end up together. */
async function sameVisits(t: TestApp, siteId: string, data: Prepared): Promise<void> {
  const stored = await t.events.listHits(siteId);
  const sig = (type: string, at: number, host: string, path: string) => `${type} ${at} ${host}${path}`;
  const storedVisits = new Map<bigint, string[]>();
  for (const h of stored) {
    const list = storedVisits.get(h.visitId) ?? [];
    list.push(sig(h.type, h.timestamp.getTime(), h.hostname, h.pathname));
    storedVisits.set(h.visitId, list);
  }
  const norm = (visits: string[][]) => visits.map((v) => v.sort().join('|')).sort();
  const oracleVisits = data.visits.map((v) => v.hits.map((h) => sig(h.type, h.at, h.attributes.hostname, h.attributes.pathname)));
  assert.equal(stored.length, data.hits.length, 'the oracle keeps the hits the pipeline keeps');
  assert.deepEqual(norm([...storedVisits.values()]), norm(oracleVisits));
  // And the attributes the oracle enriched are the stored ones.
  const attrs = (x: Record<string, unknown>) => JSON.stringify(Object.keys(x).sort().map((k) => [k, x[k]]));
  // firstView is bookkeeping for report speed, checked against the pairs below rather than enriched by the oracle.
  const storedAttrs = stored.map(({ visitId: _v, visitorId: _w, siteId: _s, firstView: _f, timestamp, ...rest }) => attrs({ ...rest, at: timestamp.getTime() })).sort();
  const oracleAttrs = data.hits.map((h) => attrs({ ...h.attributes, type: h.type, eventName: h.eventName, value: h.value, at: h.at, ...(h.props ? { props: h.props } : {}) })).sort();
  assert.deepEqual(storedAttrs, oracleAttrs);
  // First views: exactly one flagged pageview per (visit, pathname) pair, the earliest.
  const firsts = new Map<string, number>();
  for (const h of stored) {
    if (h.type !== 'pageview') continue;
    const key = `${h.visitId} ${h.pathname}`;
    firsts.set(key, Math.min(firsts.get(key) ?? Infinity, h.timestamp.getTime()));
  }
  const flagged = stored.filter((h) => h.firstView);
  assert.equal(flagged.length, firsts.size, 'one first view per (visit, page)');
  for (const h of flagged) assert.equal(firsts.get(`${h.visitId} ${h.pathname}`), h.timestamp.getTime());
  // Visit facts: entry and exit pages and pageview counts.
  const visits = await t.events.listVisits(siteId);
  const fact = (entry: string, exit: string, pv: number, first: number, last: number) => `${entry} ${exit} ${pv} ${first} ${last}`;
  assert.deepEqual(
    visits.map((v) => fact(v.entryPage, v.exitPage, v.pageviews, v.startedAt.getTime(), v.lastSeenAt.getTime())).sort(),
    data.visits.map((v) => fact(v.entryPage, v.exitPage, v.pageviews, v.firstAt, v.lastAt)).sort(),
  );
}

function run(target: Target, cases: readonly Case[]): void {
  for (const c of cases) it(c.name, () => compare(target, c));
}

// ---------------------------------------------------------------------------------------------------------
// A: four generated days across the US spring change, site in America/New_York, plus hand-written edge hits.

const NY = 'America/New_York';

function nyEdges(site: string): DemoHit[] {
  const E = 'https://edge.example';
  let n = 0;
  const ip = () => `81.2.69.${10 + n++}`;
  return [
    // Day edges: 23:59:59 and 00:00:00 local (EST, UTC-5).
    line(site, '2026-03-08T04:59:59Z', `${E}/edge/before-midnight`, { ip: ip() }),
    line(site, '2026-03-08T05:00:00Z', `${E}/edge/midnight`, { ip: ip() }),
    line(site, '2026-03-07T04:59:59.999Z', `${E}/edge/almost`, { ip: ip() }),
    // The gap: 01:59:59 EST is followed by 03:00:00 EDT.
    line(site, '2026-03-08T06:59:59Z', `${E}/edge/gap-before`, { ip: ip() }),
    line(site, '2026-03-08T07:00:00Z', `${E}/edge/gap-after`, { ip: ip() }),
    // A visit spanning the gap, with an event.
    ...((a) => [
      line(site, '2026-03-08T06:50:00Z', `${E}/edge/span-1`, { ip: a }),
      line(site, '2026-03-08T07:10:00Z', `${E}/edge/span-2`, { ip: a }),
      line(site, '2026-03-08T07:11:30Z', `${E}/edge/span-2`, { ip: a, type: 'event', name: 'Purchase', value: 4321 }),
    ])(ip()),
    // Milliseconds: 15:00:00.250 to 15:00:08.000 is a 7.75 s visit.
    ...((a) => [
      line(site, '2026-03-08T15:00:00.250Z', `${E}/edge/ms-a`, { ip: a, ua: AGENTS.firefoxLinux }),
      line(site, '2026-03-08T15:00:07.125Z', `${E}/edge/ms-b`, { ip: a, ua: AGENTS.firefoxLinux }),
      line(site, '2026-03-08T15:00:08.000Z', `${E}/edge/ms-b`, { ip: a, ua: AGENTS.firefoxLinux, type: 'event', name: 'Purchase', value: 1234 }),
    ])(ip()),
    // Exactly 30:00.000 continues the visit; 30:00.001 starts a new one.
    ...((a) => [
      line(site, '2026-03-07T12:00:00.000Z', `${E}/gap/one`, { ip: a }),
      line(site, '2026-03-07T12:30:00.000Z', `${E}/gap/two`, { ip: a }),
      line(site, '2026-03-07T13:00:00.001Z', `${E}/gap/three`, { ip: a }),
      line(site, '2026-03-07T13:10:00.000Z', `${E}/gap/four`, { ip: a }),
    ])(ip()),
    // Text ordering by UTF-8 bytes: '/Zebra' < '/zebra' < '/Ábc' < '/été'.
    line(site, '2026-03-07T16:00:00Z', `${E}/zebra`, { ip: ip() }),
    line(site, '2026-03-07T16:01:00Z', `${E}/Zebra`, { ip: ip() }),
    line(site, '2026-03-07T16:02:00Z', `${E}/%C3%A9t%C3%A9`, { ip: ip() }),
    line(site, '2026-03-07T16:03:00Z', `${E}/%C3%81bc`, { ip: ip() }),
    line(site, '2026-03-07T16:04:00Z', `${E}/zebra`, { ip: ip(), ua: AGENTS.safariIphone }),
    // '%' and '_' are literal in `is like`.
    line(site, '2026-03-07T17:00:00Z', `${E}/100%_off`, { ip: ip(), referrer: 'https://Search.Example.org/q?x=1' }),
    line(site, '2026-03-07T17:01:00Z', `${E}/100xxoff`, { ip: ip(), referrer: 'https://search.example.org/other' }),
    // Every campaign field.
    line(site, '2026-03-08T18:00:00Z', `${E}/landing?utm_source=Foo&utm_medium=cpc&utm_campaign=spring&utm_term=shoes&utm_content=ad1&keyword=blue&ref=partner`, {
      ip: ip(), referrer: 'https://www.google.com/search?q=shoes',
    }),
    line(site, '2026-03-08T18:05:00Z', `${E}/landing?utm_source=foo&utm_term=boots&kw=red&via=friend`, { ip: ip() }),
    // Backslashes and LIKE metacharacters in a campaign value are literal in `is like`.
    line(site, '2026-03-09T16:00:00Z', `${E}/meta?utm_source=a%5Cb%25c_d`, { ip: ip() }),
    line(site, '2026-03-09T16:01:00Z', `${E}/meta?utm_source=aXbYcZd`, { ip: ip() }),
    // A non-default port: domain `localhost:3000`.
    line(site, '2026-03-09T12:00:00Z', 'http://localhost:3000/dev', { ip: ip() }),
    // A visit of events only (entry and exit page '').
    line(site, '2026-03-09T13:00:00Z', `${E}/no-pageview`, { ip: ip(), type: 'event', name: 'Newsletter signup' }),
    // Attribution is the visit's first hit's: a visit from Hacker News views two more pages (one with a second
    // external referrer and a campaign of its own) and converts; all of it stays under Hacker News.
    ...((a) => [
      line(site, '2026-03-09T14:00:00Z', `${E}/launch`, { ip: a, referrer: 'https://news.ycombinator.com/item?id=42' }),
      line(site, '2026-03-09T14:01:00Z', `${E}/pricing`, { ip: a, referrer: `${E}/launch` }),
      line(site, '2026-03-09T14:02:00Z', `${E}/signup?utm_source=retarget&utm_medium=cpc`, { ip: a, referrer: 'https://www.google.com/' }),
      line(site, '2026-03-09T14:03:00Z', `${E}/signup`, { ip: a, type: 'event', name: 'Purchase', value: 5000 }),
    ])(ip()),
    // A visit whose first hit has no referrer keeps none, though a later pageview brings a campaign.
    ...((a) => [
      line(site, '2026-03-09T15:00:00Z', `${E}/direct`, { ip: a }),
      line(site, '2026-03-09T15:05:00Z', `${E}/direct?utm_source=late&utm_campaign=late`, { ip: a, referrer: 'https://t.co/x' }),
      line(site, '2026-03-09T15:06:00Z', `${E}/direct`, { ip: a, type: 'event', name: 'Purchase', value: 100 }),
    ])(ip()),
    // Visitor-days: a visit across midnight UTC, and the same person again later that day: two visits, one
    // visitor on each UTC day.
    ...((a) => [
      line(site, '2026-03-08T23:50:00Z', `${E}/night/1`, { ip: a, ua: AGENTS.safariIphone }),
      line(site, '2026-03-09T00:10:00Z', `${E}/night/2`, { ip: a, ua: AGENTS.safariIphone }),
      line(site, '2026-03-09T09:00:00Z', `${E}/night/3`, { ip: a, ua: AGENTS.safariIphone }),
    ])(ip()),
    // Bots and other sites' hits are not counted.
    line(site, '2026-03-08T12:00:00Z', `${E}/bot`, { ua: AGENTS.bot }),
    line('NOSUCHSITE', '2026-03-08T12:00:00Z', `${E}/other`),
  ];
}

// Rounding ties: generated data puts some means exactly on a tie (353.325 s over 40 visits, 747.925 s), and the
// rounding cases below add 1.005 s, 1.125 s and 3/160; all must round half up, and rows showing the same
// rounded value are ordered by the tie-break.

const NY_FULL = { from: '2026-03-05 00:00:00', to: '2026-03-10 23:59:59' };

const fieldsAlone: Case[] = GROUP_FIELDS.map((field) => ({ name: `field_grouping=${field} with every aggregate`, query: { aggregates: ALL, fieldGrouping: [field] } }));
const fieldsSorted: Case[] = GROUP_FIELDS.map((field, i) => ({
  name: `field_grouping=${field}, sort_by=${field}:${i % 2 ? 'desc' : 'asc'}`,
  query: { aggregates: ['visits', 'avg_duration'], fieldGrouping: [field], sort: { field, dir: i % 2 ? 'desc' : 'asc' } },
}));

/** Filters: [property, operator, value], each a case of its own (pageviews, visits, bounce_rate per pathname). */
const FILTERS: [string, OracleQuery['filters'][number]['operator'], string][] = [
  ['pathname', 'is', '/pricing'],
  ['pathname', 'is not', '/'],
  ['pathname', 'is like', '/BLOG/*-1'],
  ['pathname', 'is not like', 'docs'],
  ['pathname', 'matching', '^/(docs|guides)/page-[12]$'],
  ['pathname', 'not matching', 'page-\\d$'],
  ['pathname', 'is like', '100%_off'],
  ['pathname', 'is like', '*'],
  ['pathname', 'is like', 'zEbRa'],
  ['pathname', 'is like', 'ÉT'],
  ['pathname', 'is not like', 'áB'],
  ['hostname', 'is', 'https://edge.example'],
  ['hostname', 'is not', 'https://demo.plumb.example'],
  ['hostname', 'is like', 'EDGE'],
  ['hostname', 'is not like', 'demo'],
  ['hostname', 'matching', '^https://e'],
  ['hostname', 'not matching', 'plumb'],
  ['domain', 'is', 'demo.plumb.example'],
  ['domain', 'is', 'localhost:3000'],
  ['domain', 'is not', 'edge.example'],
  ['domain', 'is like', 'localhost:*'],
  ['domain', 'is not like', 'plumb'],
  ['domain', 'matching', '\\.example$'],
  ['domain', 'not matching', '^demo'],
  ['referrer_source', 'is', 'Google'],
  ['referrer_source', 'is not', 'Google'],
  ['referrer_source', 'is like', 'goo'],
  ['referrer_source', 'is not like', 'o'],
  ['referrer_source', 'matching', '^(Bing|DuckDuckGo)$'],
  ['referrer_source', 'not matching', '^$'],
  ['referrer_hostname', 'is', 'https://www.google.com'],
  ['referrer_hostname', 'is like', 'google'],
  ['referrer_hostname', 'matching', '^https://www\\.'],
  ['referrer_pathname', 'is like', '/r/*/comments'],
  ['referrer_pathname', 'is not', ''],
  ['utm_source', 'is', 'newsletter'],
  ['utm_source', 'is not', 'facebook'],
  ['utm_source', 'is like', 'NEWS*'],
  ['utm_source', 'is not like', 'book'],
  ['utm_source', 'matching', 'letter|face'],
  ['utm_source', 'not matching', '^$'],
  ['utm_source', 'is', 'Foo'],
  ['utm_source', 'is like', 'a\\b%c_d'],
  ['utm_source', 'is like', 'A\\*D'],
  ['utm_source', 'is', 'a\\b%c_d'],
  ['utm_medium', 'is', 'email'],
  ['utm_campaign', 'is like', 'NOV'],
  ['utm_content', 'matching', '^(video|ad1)$'],
  ['utm_term', 'is not', ''],
  ['ref', 'is', 'producthunt'],
  ['ref', 'is like', 'hunt'],
  ['ref', 'not matching', '^$'],
  ['entry_page', 'is', '/'],
  ['entry_page', 'is not', '/pricing'],
  ['entry_page', 'is like', '/blog/*'],
  ['entry_page', 'is not like', 'pricing'],
  ['entry_page', 'matching', '^/docs/'],
  ['entry_page', 'not matching', '^/$'],
  ['exit_page', 'is', '/pricing'],
  ['exit_page', 'is not', '/pricing'],
  ['exit_page', 'is like', 'page-1*'],
  ['exit_page', 'is not like', 'PRICING'],
  ['exit_page', 'matching', 'post-\\d+$'],
  ['exit_page', 'not matching', 'pricing'],
  ['browser', 'is', 'Chrome'],
  ['browser', 'is not', 'Safari'],
  ['country_code', 'is', 'US'],
  ['country_code', 'is not', 'DE'],
  ['device_type', 'is', 'Mobile'],
  ['device_type', 'is not', 'Desktop'],
  ['operating_system', 'is', 'iOS'],
  ['operating_system', 'is not', 'Windows'],
  ['city', 'is', 'Hamburg'],
  ['city', 'is not', 'Dublin'],
  ['state', 'is', 'England'],
  ['region', 'is not', 'Ohio'],
];
const filterCases: Case[] = FILTERS.map(([property, operator, value]) => ({
  name: `filter ${property} ${operator} ${JSON.stringify(value)}`,
  query: { aggregates: ['pageviews', 'visits', 'bounce_rate', 'avg_duration'], fieldGrouping: ['pathname'], filters: [f(property, operator, value)] },
}));

const nyCases: Case[] = [
  // Page counts (each plan of the compiler must agree with the oracle, including the visits that cross the
  // range's ends or a bucket boundary and are counted from their hits).
  { name: 'top pages: visits and pageviews by pathname', query: { aggregates: ['visits', 'pageviews'], fieldGrouping: ['pathname'] } },
  { name: 'top pages by uniques', query: { aggregates: ['uniques', 'visits'], fieldGrouping: ['pathname'], limit: 7 } },
  { name: 'uniques by day', query: { aggregates: ['uniques', 'pageviews'], dateGrouping: 'day' } },
  { name: 'uniques by hour over a day', query: { aggregates: ['uniques'], dateGrouping: 'hour', from: '2026-03-07 22:00:00', to: '2026-03-08 06:00:00' } },
  { name: 'pages by day', query: { aggregates: ['visits', 'uniques'], fieldGrouping: ['pathname'], dateGrouping: 'day' } },
  { name: 'pages, range cutting through visits', query: { aggregates: ['visits', 'pageviews', 'uniques'], fieldGrouping: ['pathname'], from: '2026-03-06 13:17:00', to: '2026-03-07 09:41:30' } },
  { name: 'pages with pathname filters', query: { aggregates: ['visits', 'uniques'], fieldGrouping: ['pathname'], filters: [f('pathname', 'is like', '/blog/*'), f('pathname', 'matching', '^/docs/'), f('pathname', 'is not', '/blog/post-1')] } },
  { name: 'every pageview aggregate by day', query: { aggregates: ALL, dateGrouping: 'day' } },
  { name: 'every pageview aggregate by hour, across the DST change', query: { aggregates: ALL, dateGrouping: 'hour', from: '2026-03-07 20:00:00', to: '2026-03-08 08:00:00' } },
  { name: 'every pageview aggregate by month, sorted by uniques', query: { aggregates: ALL, dateGrouping: 'month', sort: { field: 'uniques', dir: 'desc' } } },
  { name: 'uniques with a pathname filter', query: { aggregates: ['uniques', 'pageviews'], filters: [f('pathname', 'not matching', '^/$')] } },
  // Attribution and visitor-days.
  { name: 'attribution: referrer_hostname counts each visit once', query: { aggregates: ['visits', 'pageviews', 'visitors'], fieldGrouping: ['referrer_hostname'] } },
  { name: 'attribution: filter referrer_source is Hacker News keeps the whole visit', query: { aggregates: ['pageviews', 'visits'], fieldGrouping: ['pathname'], filters: [f('referrer_source', 'is', 'Hacker News')] } },
  { name: "attribution: a later campaign is not the visit's", query: { aggregates: ['pageviews'], filters: [f('utm_source', 'is', 'retarget')] }, nonEmpty: false },
  { name: 'attribution: utm_source by entry_page', query: { aggregates: ['visits', 'visitors'], fieldGrouping: ['utm_source', 'entry_page'] } },
  { name: 'visitors: by UTC day around the visit across midnight', query: { aggregates: ['visitors', 'visits', 'pageviews'], dateGrouping: 'day', timezone: 'UTC', filters: [f('pathname', 'is like', '/night/')] } },
  { name: 'visitors: by hour over the night', query: { aggregates: ['visitors', 'uniques'], dateGrouping: 'hour', timezone: 'UTC', from: '2026-03-08 22:00:00', to: '2026-03-09 10:00:00' } },
  { name: 'visitors: with visit-level groups and filters', query: { aggregates: ['visitors', 'bounce_rate'], fieldGrouping: ['exit_page'], filters: [f('entry_page', 'is not', '/')] } },
  { name: 'visitors: sorted, limited', query: { aggregates: ['pageviews', 'visitors'], fieldGrouping: ['browser', 'country_code'], sort: { field: 'visitors', dir: 'desc' }, limit: 4 } },
  // Totals.
  ...PAGEVIEW_AGGREGATES.map((a): Case => ({ name: `aggregates=${a}`, query: { aggregates: [a] } })),
  { name: 'every pageview aggregate', query: { aggregates: ALL } },
  { name: 'every pageview aggregate, reversed order', query: { aggregates: [...ALL].reverse() } },
  ...PAGEVIEW_AGGREGATES.map((a): Case => ({ name: `aggregates=${a}, date_grouping=day`, query: { aggregates: [a], dateGrouping: 'day' } })),
  // Date groupings (hour: the range is under 7 days).
  ...(['hour', 'day', 'month', 'year'] as const).map((g): Case => ({ name: `date_grouping=${g}`, query: { aggregates: ALL, dateGrouping: g } })),
  { name: 'date_grouping=hour across the gap', query: { aggregates: ALL, dateGrouping: 'hour', from: '2026-03-07 22:00:00', to: '2026-03-08 05:00:00' } },
  { name: 'date_grouping=hour, sort_by=timestamp:desc', query: { aggregates: ['pageviews'], dateGrouping: 'hour', sort: { field: 'timestamp', dir: 'desc' } } },
  { name: 'date_grouping=day, sort_by=pageviews:desc', query: { aggregates: ['pageviews', 'visits'], dateGrouping: 'day', sort: { field: 'pageviews', dir: 'desc' } } },
  { name: 'date_grouping=hour, sort_by=visits:asc (ties by timestamp)', query: { aggregates: ['visits'], dateGrouping: 'hour', sort: { field: 'visits', dir: 'asc' } } },
  // Fields.
  ...fieldsAlone,
  ...fieldsSorted,
  { name: 'pathname + browser', query: { aggregates: ALL, fieldGrouping: ['pathname', 'browser'] } },
  { name: 'browser + pathname (order matters for ties)', query: { aggregates: ['visits'], fieldGrouping: ['browser', 'pathname'] } },
  { name: 'country_code + device_type', query: { aggregates: ALL, fieldGrouping: ['country_code', 'device_type'] } },
  { name: 'referrer_source + utm_source', query: { aggregates: ALL, fieldGrouping: ['referrer_source', 'utm_source'] } },
  { name: 'entry_page + exit_page', query: { aggregates: ['visits', 'pageviews'], fieldGrouping: ['entry_page', 'exit_page'] } },
  { name: 'hostname + keyword + utm_term', query: { aggregates: ['pageviews'], fieldGrouping: ['hostname', 'keyword', 'utm_term'] } },
  { name: 'city + state + region', query: { aggregates: ['uniques'], fieldGrouping: ['city', 'state', 'region'] } },
  { name: 'browser by day', query: { aggregates: ALL, fieldGrouping: ['browser'], dateGrouping: 'day' } },
  { name: 'device_type by hour', query: { aggregates: ['pageviews', 'visits'], fieldGrouping: ['device_type'], dateGrouping: 'hour', from: '2026-03-07 00:00:00', to: '2026-03-08 23:59:59' } },
  { name: 'exit_page by month, sort_by=visits:desc', query: { aggregates: ['visits'], fieldGrouping: ['exit_page'], dateGrouping: 'month', sort: { field: 'visits', dir: 'desc' } } },
  // Filters.
  ...filterCases,
  { name: 'positive filters on one property are ORed', query: { aggregates: ALL, filters: [f('pathname', 'is', '/pricing'), f('pathname', 'is like', 'post-1'), f('pathname', 'matching', '^/docs/page-2$')], fieldGrouping: ['pathname'] } },
  { name: 'negative filters on one property are ANDed', query: { aggregates: ALL, filters: [f('pathname', 'is not', '/pricing'), f('pathname', 'is not like', 'blog'), f('pathname', 'not matching', '^/$')] } },
  { name: 'positive and negative on one property', query: { aggregates: ALL, filters: [f('pathname', 'is like', '/blog/'), f('pathname', 'is like', '/docs/'), f('pathname', 'not matching', '-1\\d?$')], fieldGrouping: ['pathname'] } },
  { name: 'filters on different properties are ANDed', query: { aggregates: ALL, filters: [f('browser', 'is', 'Chrome'), f('country_code', 'is', 'US'), f('pathname', 'is', '/pricing')] } },
  { name: 'filters on different properties are ANDed (no tie)', query: { aggregates: ALL, filters: [f('browser', 'is', 'Chrome'), f('country_code', 'is', 'US'), f('pathname', 'is like', 'pricing')] } },
  { name: 'OR within, AND across', query: { aggregates: ALL, filters: [f('browser', 'is', 'Chrome'), f('browser', 'is', 'Firefox'), f('device_type', 'is not', 'Mobile'), f('referrer_source', 'is', 'Google'), f('referrer_source', 'is', 'Bing')], fieldGrouping: ['browser', 'referrer_source'] } },
  { name: 'entry_page and exit_page filters together', query: { aggregates: ALL, filters: [f('entry_page', 'is', '/'), f('exit_page', 'is', '/pricing')], fieldGrouping: ['pathname'] } },
  { name: 'entry_page filter, grouped by entry_page and exit_page', query: { aggregates: ['visits', 'pageviews'], filters: [f('entry_page', 'is like', 'post')], fieldGrouping: ['entry_page', 'exit_page'] } },
  { name: 'domain and hostname together', query: { aggregates: ALL, filters: [f('domain', 'is like', 'example'), f('hostname', 'is not like', 'demo')], fieldGrouping: ['pathname'] } },
  { name: 'a filter with a date grouping', query: { aggregates: ALL, filters: [f('device_type', 'is', 'Mobile')], dateGrouping: 'day' } },
  { name: 'a filter that matches nothing, totals', query: { aggregates: ALL, filters: [f('pathname', 'is', '/nowhere')] }, nonEmpty: false },
  { name: 'a filter that matches nothing, grouped', query: { aggregates: ALL, filters: [f('pathname', 'is', '/nowhere')], fieldGrouping: ['pathname'] }, nonEmpty: false },
  { name: 'a filter that matches nothing, by day', query: { aggregates: ['visits'], filters: [f('country_code', 'is', 'ZZ')], dateGrouping: 'day' }, nonEmpty: false },
  // Orders and limits.
  { name: 'sort_by=pageviews:asc', query: { aggregates: ['pageviews', 'visits'], fieldGrouping: ['pathname'], sort: { field: 'pageviews', dir: 'asc' } } },
  { name: 'sort_by=visits:desc (second aggregate)', query: { aggregates: ['pageviews', 'visits'], fieldGrouping: ['pathname'], sort: { field: 'visits', dir: 'desc' } } },
  { name: 'sort_by=avg_duration:desc', query: { aggregates: ['pageviews', 'avg_duration'], fieldGrouping: ['pathname'], sort: { field: 'avg_duration', dir: 'desc' } } },
  { name: 'sort_by=bounce_rate:asc', query: { aggregates: ['bounce_rate', 'visits'], fieldGrouping: ['entry_page'], sort: { field: 'bounce_rate', dir: 'asc' } } },
  { name: 'sort_by=uniques:desc', query: { aggregates: ['uniques'], fieldGrouping: ['referrer_source', 'browser'], sort: { field: 'uniques', dir: 'desc' } } },
  { name: 'sort_by=pathname:desc', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], sort: { field: 'pathname', dir: 'desc' } } },
  { name: 'sort_by=browser:asc with a second field', query: { aggregates: ['pageviews'], fieldGrouping: ['browser', 'device_type'], sort: { field: 'browser', dir: 'asc' } } },
  { name: 'sort_by=device_type:desc, second field', query: { aggregates: ['pageviews'], fieldGrouping: ['browser', 'device_type'], sort: { field: 'device_type', dir: 'desc' } } },
  { name: 'sort_by=timestamp:asc with a field', query: { aggregates: ['pageviews'], fieldGrouping: ['device_type'], dateGrouping: 'day', sort: { field: 'timestamp', dir: 'asc' } } },
  { name: 'sort_by=timestamp:desc with a field', query: { aggregates: ['pageviews'], fieldGrouping: ['device_type'], dateGrouping: 'day', sort: { field: 'timestamp', dir: 'desc' } } },
  { name: 'sort_by a field with a date grouping', query: { aggregates: ['visits'], fieldGrouping: ['browser'], dateGrouping: 'day', sort: { field: 'browser', dir: 'desc' } } },
  { name: 'limit=1', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], limit: 1 } },
  { name: 'limit=5', query: { aggregates: ['pageviews', 'visits'], fieldGrouping: ['pathname'], limit: 5 } },
  { name: 'limit=5, ascending', query: { aggregates: ['visits'], fieldGrouping: ['pathname'], limit: 5, sort: { field: 'visits', dir: 'asc' } } },
  { name: 'limit=1000', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname', 'city'], limit: 1000 } },
  { name: 'at most 500 rows by default with field_grouping', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname', 'city'] } },
  { name: 'limit with a date grouping only', query: { aggregates: ['pageviews'], dateGrouping: 'hour', limit: 5 } },
  { name: 'no default cap without field_grouping', query: { aggregates: ['pageviews'], dateGrouping: 'hour', from: '2026-03-04 00:00:00', to: '2026-03-10 23:59:59' } },
  // Ranges: ends exactly on a hit's second.
  { name: 'date_to on the second of 23:59:59.999', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-06 23:59:00', to: '2026-03-06 23:59:59' } },
  { name: 'date_from on the hit after midnight', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-08 00:00:00', to: '2026-03-08 00:00:59' } },
  { name: 'date_from = date_to = the hit second', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-07 23:59:59', to: '2026-03-07 23:59:59' } },
  { name: 'a range ending one second before a hit', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-07 23:00:00', to: '2026-03-07 23:59:58' }, nonEmpty: false },
  { name: 'range ends on the gap edges', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-08 01:59:59', to: '2026-03-08 03:00:00' } },
  { name: 'a date_from inside the gap (02:30 = 07:30 UTC)', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-08 02:30:00', to: '2026-03-08 08:00:00' } },
  { name: 'a date_to inside the gap', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-08 01:00:00', to: '2026-03-08 02:59:59' } },
  { name: 'avg_duration counts the whole visit beyond the range', query: { aggregates: ['avg_duration', 'bounce_rate'], fieldGrouping: ['pathname'], from: '2026-03-08 03:00:00', to: '2026-03-08 03:10:00' } },
  { name: 'milliseconds in avg_duration', query: { aggregates: ['avg_duration', 'visits', 'pageviews'], filters: [f('pathname', 'is like', '/edge/ms-')] } },
  { name: 'the 30-minute rule', query: { aggregates: ['visits', 'avg_duration', 'bounce_rate', 'uniques'], filters: [f('pathname', 'is like', '/gap/')], fieldGrouping: ['entry_page', 'exit_page'] } },
  { name: 'one day', query: { aggregates: ALL, fieldGrouping: ['referrer_source'], from: '2026-03-08 00:00:00', to: '2026-03-08 23:59:59' } },
  // Other reporting zones through the deprecated `timezone`.
  { name: 'timezone=UTC by day', query: { aggregates: ALL, dateGrouping: 'day', timezone: 'UTC' } },
  { name: 'timezone=UTC by hour around midnight UTC', query: { aggregates: ['pageviews'], dateGrouping: 'hour', timezone: 'UTC', from: '2026-03-07 20:00:00', to: '2026-03-08 08:00:00' } },
  { name: 'timezone=Europe/Berlin by day', query: { aggregates: ['pageviews', 'visits'], dateGrouping: 'day', timezone: 'Europe/Berlin' } },
  { name: 'timezone=Asia/Kolkata by hour (half-hour offset)', query: { aggregates: ['pageviews', 'visits'], dateGrouping: 'hour', timezone: 'Asia/Kolkata', from: '2026-03-08 00:00:00', to: '2026-03-09 00:00:00' } },
  { name: 'timezone=Asia/Kolkata by day', query: { aggregates: ALL, dateGrouping: 'day', timezone: 'Asia/Kolkata' } },
  { name: 'timezone=Pacific/Chatham by hour (45-minute offset)', query: { aggregates: ['pageviews'], dateGrouping: 'hour', timezone: 'Pacific/Chatham', from: '2026-03-08 12:00:00', to: '2026-03-09 12:00:00' } },
  { name: 'timezone=America/New_York sent explicitly', query: { aggregates: ['pageviews'], dateGrouping: 'day' }, sendTimezone: true },
];

/** Events: `Purchase` and `Newsletter signup` as the import created them. */
const eventCases: Case[] = (['Purchase', 'Newsletter signup'] as const).flatMap((eventName): Case[] => [
  ...EVENT_AGGREGATES.map((a): Case => ({ name: `${eventName}: aggregates=${a}`, query: { entity: 'event', eventName, aggregates: [a] }, nonEmpty: eventName === 'Purchase' || a !== 'value' })),
  { name: `${eventName}: every aggregate`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES] } },
  { name: `${eventName}: by day`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], dateGrouping: 'day' } },
  { name: `${eventName}: by hour`, query: { entity: 'event', eventName, aggregates: ['conversions'], dateGrouping: 'hour' } },
  { name: `${eventName}: by pathname`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], fieldGrouping: ['pathname'] } },
  { name: `${eventName}: by browser, sorted by value`, query: { entity: 'event', eventName, aggregates: ['conversions', 'value'], fieldGrouping: ['browser'], sort: { field: 'value', dir: 'desc' } } },
  { name: `${eventName}: by entry_page and exit_page`, query: { entity: 'event', eventName, aggregates: ['unique_conversions'], fieldGrouping: ['entry_page', 'exit_page'] } },
  { name: `${eventName}: by referrer_source and country_code`, query: { entity: 'event', eventName, aggregates: ['conversions'], fieldGrouping: ['referrer_source', 'country_code'] } },
  { name: `${eventName}: filter country_code is not US`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], filters: [f('country_code', 'is not', 'US')] } },
  { name: `${eventName}: filter entry_page is not /`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], filters: [f('entry_page', 'is not', '/')] } },
  { name: `${eventName}: filter exit_page is like pricing`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], filters: [f('exit_page', 'is like', 'pricing')] } },
  { name: `${eventName}: filter pathname is like pricing`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], filters: [f('pathname', 'is like', 'PRICING')], dateGrouping: 'day' } },
  { name: `${eventName}: by utm_source and referrer_source (the visit's first touch)`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], fieldGrouping: ['utm_source', 'referrer_source'] } },
  { name: `${eventName}: filter referrer_hostname is like ycombinator`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], filters: [f('referrer_hostname', 'is like', 'ycombinator')] }, nonEmpty: eventName === 'Purchase' },
  { name: `${eventName}: limit 3`, query: { entity: 'event', eventName, aggregates: ['conversions'], fieldGrouping: ['pathname'], limit: 3 } },
  { name: `${eventName}: one day`, query: { entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], from: '2026-03-08 00:00:00', to: '2026-03-08 23:59:59' } },
]);

describe('GET /v1/aggregations matches the oracle: generated traffic across a US DST change', () => {
  let t: TestApp;
  let site = '';
  let data: Prepared;
  const target: Target = { t: () => t, siteId: () => site, data: () => data, zone: NY, defaults: NY_FULL };

  before(async () => {
    t = await startTestApp({ visitorSlices: 4 }); // grouped visitors in slices, as on a large store
    site = await createSite(t, { name: 'New York', timezone: NY });
    const lines = [...forSite(generated('2026-03-06T00:00:00Z', 4, 7), site), ...nyEdges(site)];
    await importLines(t, lines);
    data = await prepare(lines, { id: site, timezone: NY });
  });
  after(() => t.close());

  it('the oracle sessionises and enriches like the pipeline', () => sameVisits(t, site, data));
  it('the edge hits carry the expected event visit', () => {
    const event = data.hits.find((h) => h.eventName === 'Newsletter signup' && h.attributes.pathname === '/no-pageview');
    assert.equal(event?.visit.entryPage, '');
    const ms = data.visits.find((v) => v.entryPage === '/edge/ms-a');
    assert.equal(ms && ms.lastAt - ms.firstAt, 7750);
    assert.deepEqual(data.visits.filter((v) => v.entryPage.startsWith('/gap/')).map((v) => [v.entryPage, v.exitPage, v.pageviews]), [['/gap/one', '/gap/two', 2], ['/gap/three', '/gap/four', 2]]);
  });
  run(target, nyCases);
  run(target, eventCases);

  it('grouping by any attribution field puts each visit in exactly one group', async () => {
    const total = async (extra: string) => {
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=visits,visitors&date_from=${encodeURIComponent(NY_FULL.from)}&date_to=${encodeURIComponent(NY_FULL.to)}&limit=1000${extra}`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body as Record<string, string>[];
    };
    const [all] = await total('');
    for (const field of ['referrer_hostname', 'referrer_pathname', 'referrer_source', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term', 'ref', 'keyword']) {
      const rows = await total(`&field_grouping=${field}`);
      assert.equal(rows.reduce((n, r) => n + Number(r.visits), 0), Number(all!.visits), field);
    }
  });

  it('the default cap is exercised: pathname + city has over 500 groups', () => {
    const all = aggregationsOf(data, { entity: 'pageview', aggregates: ['pageviews'], fieldGrouping: ['pathname', 'city'], filters: [], timezone: NY, ...NY_FULL, limit: 100_000 });
    assert.ok(all.length > 500, String(all.length));
  });

  it('defaults for events: date_from the first conversion, date_to now', async () => {
    for (const eventName of ['Purchase', 'Newsletter signup']) {
      const first = Math.min(...data.hits.filter((h) => h.eventName === eventName).map((h) => h.at));
      const q: OracleQuery = {
        entity: 'event', eventName, aggregates: [...EVENT_AGGREGATES], fieldGrouping: [], filters: [], dateGrouping: 'day', timezone: NY,
        from: localString(first, NY), to: localString(Date.now(), NY),
      };
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=event&site_id=${site}&entity_name=${encodeURIComponent(eventName)}&aggregates=${EVENT_AGGREGATES.join(',')}&date_grouping=day`);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body, aggregationsOf(data, q));
    }
  });

  it('defaults: date_from the first pageview, date_to now', async () => {
    const first = Math.min(...data.hits.filter((h) => h.type === 'pageview').map((h) => h.at));
    const q: OracleQuery = {
      entity: 'pageview', aggregates: ALL, fieldGrouping: [], filters: [], dateGrouping: 'day', timezone: NY,
      from: localString(first, NY), to: localString(Date.now(), NY),
    };
    const res = await t.call(
      OWNER_TOKEN,
      'GET',
      `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=${ALL.join(',')}&date_grouping=day`,
    );
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, aggregationsOf(data, q));
  });
});

// ---------------------------------------------------------------------------------------------------------
// B: the autumn changes (Berlin 2026-10-25, New York 2026-11-01), the spring change in Berlin, half-hour and
// 45-minute zones, and multi-domain sites, each a site of its own in one app.

const BERLIN = 'Europe/Berlin';
const KOLKATA = 'Asia/Kolkata';
const CHATHAM = 'Pacific/Chatham';

function berlinEdges(site: string): DemoHit[] {
  const E = 'https://berlin.example';
  let n = 0;
  const ip = () => `81.2.70.${10 + n++}`;
  return [
    // Spring 2026-03-29: 01:59:59 CET (00:59:59Z), then 03:00:00 CEST (01:00:00Z).
    line(site, '2026-03-29T00:59:59Z', `${E}/spring/before`, { ip: ip() }),
    line(site, '2026-03-29T01:00:00Z', `${E}/spring/after`, { ip: ip() }),
    line(site, '2026-03-28T22:59:59Z', `${E}/spring/2359`, { ip: ip() }),
    line(site, '2026-03-28T23:00:00Z', `${E}/spring/0000`, { ip: ip() }),
    // Autumn 2026-10-25: 02:30 happens at 00:30Z (CEST) and at 01:30Z (CET).
    line(site, '2026-10-25T00:30:00Z', `${E}/autumn/first-0230`, { ip: ip() }),
    line(site, '2026-10-25T01:30:00Z', `${E}/autumn/second-0230`, { ip: ip() }),
    line(site, '2026-10-25T00:59:59Z', `${E}/autumn/0259-first`, { ip: ip() }),
    line(site, '2026-10-25T01:00:00Z', `${E}/autumn/0200-second`, { ip: ip() }),
    line(site, '2026-10-24T21:59:59Z', `${E}/autumn/2359`, { ip: ip() }),
    line(site, '2026-10-24T22:00:00Z', `${E}/autumn/0000`, { ip: ip() }),
    line(site, '2026-10-25T22:59:59Z', `${E}/autumn/2359-after`, { ip: ip() }),
    line(site, '2026-10-25T23:00:00Z', `${E}/autumn/0000-after`, { ip: ip() }),
    // Month and year edges.
    line(site, '2025-12-31T22:59:59Z', `${E}/year/2359`, { ip: ip() }),
    line(site, '2025-12-31T23:00:00Z', `${E}/year/0000`, { ip: ip() }),
    line(site, '2026-09-30T21:59:59Z', `${E}/month/2359`, { ip: ip() }),
    line(site, '2026-09-30T22:00:00Z', `${E}/month/0000`, { ip: ip() }),
  ];
}

function nyFallEdges(site: string): DemoHit[] {
  const E = 'https://fall.example';
  let n = 0;
  const ip = () => `81.2.71.${10 + n++}`;
  return [
    // 2026-11-01: 01:30 happens at 05:30Z (EDT) and at 06:30Z (EST).
    line(site, '2026-11-01T05:30:00Z', `${E}/first-0130`, { ip: ip() }),
    line(site, '2026-11-01T06:30:00Z', `${E}/second-0130`, { ip: ip() }),
    line(site, '2026-11-01T04:59:59Z', `${E}/0059`, { ip: ip() }),
    line(site, '2026-11-01T07:00:00Z', `${E}/0200`, { ip: ip() }),
    line(site, '2026-11-01T03:59:59Z', `${E}/2359`, { ip: ip() }),
    line(site, '2026-11-01T04:00:00Z', `${E}/0000`, { ip: ip() }),
    // A visit through the repeated hour: 01:50 EDT to 01:10 EST is 20 minutes.
    ...((a) => [line(site, '2026-11-01T05:50:00Z', `${E}/through-1`, { ip: a }), line(site, '2026-11-01T06:10:00Z', `${E}/through-2`, { ip: a })])(ip()),
  ];
}

function kolkataLines(site: string): DemoHit[] {
  const E = 'https://in.example';
  // Kolkata is UTC+5:30: local midnight is 18:30Z the day before.
  return [
    line(site, '2026-03-01T18:29:59Z', `${E}/a`, { ip: '81.2.72.1' }),
    line(site, '2026-03-01T18:30:00Z', `${E}/b`, { ip: '81.2.72.2' }),
    line(site, '2026-03-01T19:29:59Z', `${E}/c`, { ip: '81.2.72.3' }),
    line(site, '2026-03-01T19:30:00Z', `${E}/d`, { ip: '81.2.72.4' }),
    line(site, '2026-03-31T18:29:59Z', `${E}/month-end`, { ip: '81.2.72.5' }),
    line(site, '2026-03-31T18:30:00Z', `${E}/month-start`, { ip: '81.2.72.6' }),
    line(site, '2026-03-02T05:00:00Z', `${E}/a`, { ip: '81.2.72.7', ua: AGENTS.safariIphone }),
    line(site, '2026-03-02T05:10:00Z', `${E}/b`, { ip: '81.2.72.7', ua: AGENTS.safariIphone }),
  ];
}

function chathamLines(site: string): DemoHit[] {
  const E = 'https://nz.example';
  // Chatham: UTC+13:45 until 2026-04-05 03:45 local, then UTC+12:45 (03:45 -> 02:45, 02:45-03:45 repeats).
  return [
    line(site, '2026-04-04T10:14:59Z', `${E}/2359`, { ip: '81.2.73.1' }),
    line(site, '2026-04-04T10:15:00Z', `${E}/0000`, { ip: '81.2.73.2' }),
    line(site, '2026-04-04T13:15:00Z', `${E}/first-0300`, { ip: '81.2.73.3' }),
    line(site, '2026-04-04T14:15:00Z', `${E}/second-0300`, { ip: '81.2.73.4' }),
    line(site, '2026-04-05T11:14:59Z', `${E}/2359-after`, { ip: '81.2.73.5' }),
    line(site, '2026-04-05T11:15:00Z', `${E}/0000-after`, { ip: '81.2.73.6' }),
  ];
}

function multiDomainLines(site: string): DemoHit[] {
  // One visitor moving between two domains of the site: one visit when combined, two when separate; and the
  // move is not a referral either way.
  const lines: DemoHit[] = [];
  for (let v = 0; v < 6; v++) {
    const ip = `81.2.74.${v + 1}`;
    const base = Date.UTC(2026, 5, 10, 9 + v, 0, 0);
    const at = (min: number) => new Date(base + min * 60_000).toISOString();
    lines.push(line(site, at(0), `https://one.example/start-${v % 2}`, { ip, referrer: v % 3 ? 'https://news.ycombinator.com/' : '' }));
    lines.push(line(site, at(2), 'https://two.example/pricing', { ip, referrer: 'https://one.example/start' }));
    if (v % 2) lines.push(line(site, at(5), 'https://one.example/back', { ip, referrer: 'https://two.example/pricing' }));
    if (v === 3) lines.push(line(site, at(6), 'https://two.example/pricing', { ip, type: 'event', name: 'Purchase', value: 500 }));
  }
  return lines;
}

function roundingLines(site: string): DemoHit[] {
  // Means exactly on a rounding tie: 1.005 s (not exact in binary floating point), 1.125 s (exact), and a
  // bounce rate of 3/160 = 0.01875 (not exact either).
  const lines: DemoHit[] = [];
  const visit = (path: string, ip: string, ms: number, hour: number) => {
    const t0 = Date.UTC(2026, 4, 5, hour, 0, 0);
    lines.push(line(site, new Date(t0).toISOString(), `https://round.example${path}`, { ip }));
    if (ms >= 0) lines.push(line(site, new Date(t0 + ms).toISOString(), `https://round.example${path}`, { ip }));
  };
  visit('/tie/1005', '81.2.75.1', 1000, 1);
  visit('/tie/1005', '81.2.75.2', 1010, 1);
  visit('/tie/1125', '81.2.75.3', 1000, 2);
  visit('/tie/1125', '81.2.75.4', 1250, 2);
  for (let i = 0; i < 160; i++) visit('/tie/bounce', `81.2.76.${i + 1}`, i < 3 ? -1 : 2000, 3 + Math.floor(i / 40));
  // Two groups whose avg_duration differs but is reported the same ("61.67"): 61.67 s and 185/3 s.
  visit('/sort/a', '81.2.77.1', 61_670, 8);
  visit('/sort/b', '81.2.77.2', 61_000, 9);
  visit('/sort/b', '81.2.77.3', 62_000, 9);
  visit('/sort/b', '81.2.77.4', 62_000, 9);
  return lines;
}

interface SiteSpec {
  name: string;
  zone: string;
  multi?: 'combined' | 'separate';
  lines: (site: string) => DemoHit[];
  defaults: { from: string; to: string };
  cases: Case[];
}

const autumnCases = (label: string, zone: string, from: string, to: string, extra: Case[] = []): Case[] => [
  { name: `${label}: totals`, query: { aggregates: ALL } },
  ...(['hour', 'day', 'month', 'year'] as const).map((g): Case => ({
    name: `${label}: date_grouping=${g}`,
    query: { aggregates: ['pageviews', 'visits', 'avg_duration'], dateGrouping: g, ...(g === 'hour' ? { from, to } : {}) },
  })),
  { name: `${label}: hour with pathname`, query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], dateGrouping: 'hour', from, to } },
  { name: `${label}: day by browser, sort_by=timestamp:desc`, query: { aggregates: ['visits'], fieldGrouping: ['browser'], dateGrouping: 'day', sort: { field: 'timestamp', dir: 'desc' } } },
  { name: `${label}: referrer groups`, query: { aggregates: ALL, fieldGrouping: ['referrer_hostname', 'referrer_pathname'] } },
  { name: `${label}: Purchase by day`, query: { entity: 'event', eventName: 'Purchase', aggregates: [...EVENT_AGGREGATES], dateGrouping: 'day' } },
  { name: `${label}: Newsletter signup by hour`, query: { entity: 'event', eventName: 'Newsletter signup', aggregates: ['conversions'], dateGrouping: 'hour', from, to } },
  { name: `${label}: by day in UTC`, query: { aggregates: ['pageviews'], dateGrouping: 'day', timezone: 'UTC' } },
  { name: `${label}: by hour in ${zone === BERLIN ? NY : BERLIN}`, query: { aggregates: ['pageviews'], dateGrouping: 'hour', timezone: zone === BERLIN ? NY : BERLIN, from, to } },
  ...extra,
];

const SITES: SiteSpec[] = [
  {
    name: 'Berlin',
    zone: BERLIN,
    lines: (site) => [...forSite(generated('2026-10-23T00:00:00Z', 4, 11, 150), site), ...berlinEdges(site)],
    defaults: { from: '2025-12-01 00:00:00', to: '2026-10-31 23:59:59' },
    cases: autumnCases('Berlin', BERLIN, '2026-10-24 12:00:00', '2026-10-26 12:00:00', [
      { name: 'Berlin: the repeated hour 02:00 by hour', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], dateGrouping: 'hour', from: '2026-10-25 01:00:00', to: '2026-10-25 04:00:00', filters: [f('pathname', 'is like', '/autumn/')] } },
      { name: 'Berlin: date_from 02:30 in the overlap takes the first (CEST) one', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-10-25 02:30:00', to: '2026-10-25 03:00:00' } },
      { name: 'Berlin: date_to 02:30 in the overlap takes the first (CEST) one', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-10-25 00:00:00', to: '2026-10-25 02:30:00', filters: [f('pathname', 'is like', '/autumn/')] } },
      { name: 'Berlin: the spring gap by hour', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], dateGrouping: 'hour', from: '2026-03-28 23:00:00', to: '2026-03-29 04:00:00' } },
      { name: 'Berlin: date_from in the spring gap', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-29 02:30:00', to: '2026-03-29 05:00:00' }, nonEmpty: false },
      { name: 'Berlin: date_to in the spring gap', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-29 01:00:00', to: '2026-03-29 02:30:00' } },
      { name: 'Berlin: days around both changes', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], dateGrouping: 'day', filters: [f('hostname', 'is', 'https://berlin.example')] } },
      { name: 'Berlin: months and years at their edges', query: { aggregates: ['pageviews'], dateGrouping: 'month', filters: [f('pathname', 'matching', '^/(year|month)/')] } },
      { name: 'Berlin: years', query: { aggregates: ['pageviews', 'visits'], dateGrouping: 'year', filters: [f('pathname', 'matching', '^/(year|month)/')] } },
      { name: 'Berlin: hour over exactly 7 days is allowed', query: { aggregates: ['pageviews'], dateGrouping: 'hour', from: '2026-10-26 00:00:00', to: '2026-11-02 00:00:00' } },
    ]),
  },
  {
    name: 'New York, autumn',
    zone: NY,
    lines: (site) => [...forSite(generated('2026-10-30T00:00:00Z', 4, 3, 150), site), ...nyFallEdges(site)],
    defaults: { from: '2026-10-29 00:00:00', to: '2026-11-03 23:59:59' },
    cases: autumnCases('New York autumn', NY, '2026-10-31 12:00:00', '2026-11-02 12:00:00', [
      { name: 'New York autumn: the repeated hour 01:00 by hour', query: { aggregates: ['pageviews', 'visits', 'avg_duration'], fieldGrouping: ['pathname'], dateGrouping: 'hour', from: '2026-10-31 23:00:00', to: '2026-11-01 03:00:00', filters: [f('hostname', 'is', 'https://fall.example')] } },
      { name: 'New York autumn: date_from 01:30 takes the first (EDT) one', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-11-01 01:30:00', to: '2026-11-01 01:59:59', filters: [f('hostname', 'is', 'https://fall.example')] } },
      { name: 'New York autumn: date_to 01:30 takes the first (EDT) one', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-11-01 00:00:00', to: '2026-11-01 01:30:00', filters: [f('hostname', 'is', 'https://fall.example')] } },
      { name: 'New York autumn: midnight edges by day', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], dateGrouping: 'day', filters: [f('hostname', 'is', 'https://fall.example')] } },
    ]),
  },
  {
    name: 'Kolkata',
    zone: KOLKATA,
    lines: kolkataLines,
    defaults: { from: '2026-03-01 00:00:00', to: '2026-04-30 23:59:59' },
    cases: [
      { name: 'Kolkata: by day', query: { aggregates: ALL, fieldGrouping: ['pathname'], dateGrouping: 'day' } },
      { name: 'Kolkata: by hour', query: { aggregates: ['pageviews'], dateGrouping: 'hour', from: '2026-03-01 20:00:00', to: '2026-03-02 12:00:00' } },
      { name: 'Kolkata: by month', query: { aggregates: ['pageviews', 'visits'], dateGrouping: 'month' } },
      { name: 'Kolkata: range ending at local midnight - 1 s', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-01 23:00:00', to: '2026-03-01 23:59:59' } },
      { name: 'Kolkata: range starting at local midnight', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-03-02 00:00:00', to: '2026-03-02 00:59:59' } },
      { name: 'Kolkata: reported in Chatham', query: { aggregates: ['pageviews'], dateGrouping: 'hour', timezone: CHATHAM, from: '2026-03-02 07:00:00', to: '2026-03-02 20:00:00' } },
    ],
  },
  {
    name: 'Chatham',
    zone: CHATHAM,
    lines: chathamLines,
    defaults: { from: '2026-04-01 00:00:00', to: '2026-04-30 23:59:59' },
    cases: [
      { name: 'Chatham: by day across the change', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], dateGrouping: 'day' } },
      { name: 'Chatham: by hour through the repeated hour', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], dateGrouping: 'hour', from: '2026-04-04 23:00:00', to: '2026-04-05 05:00:00' } },
      { name: 'Chatham: date_from 03:00 in the overlap', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], from: '2026-04-05 03:00:00', to: '2026-04-05 03:30:00' } },
      { name: 'Chatham: in UTC by day', query: { aggregates: ['pageviews'], fieldGrouping: ['pathname'], dateGrouping: 'day', timezone: 'UTC' } },
    ],
  },
  {
    name: 'Rounding',
    zone: 'UTC',
    lines: roundingLines,
    defaults: { from: '2026-05-01 00:00:00', to: '2026-05-31 23:59:59' },
    cases: [
      { name: 'avg_duration on an exact tie (1.125 s) rounds half up', query: { aggregates: ['avg_duration', 'visits'], filters: [f('pathname', 'is', '/tie/1125')] } },
      { name: 'avg_duration on a tie binary floating point cannot hold (1.005 s) rounds half up', query: { aggregates: ['avg_duration', 'visits'], filters: [f('pathname', 'is', '/tie/1005')] }, },
      { name: 'bounce_rate on a tie binary floating point cannot hold (3/160 = 0.01875)', query: { aggregates: ['bounce_rate', 'visits'], filters: [f('pathname', 'is', '/tie/bounce')] }, },
      {
        name: 'equal reported aggregates are ties, broken by the field (avg_duration "61.67" twice)',
        query: { aggregates: ['avg_duration'], fieldGrouping: ['pathname'], filters: [f('pathname', 'is like', '/sort/')], sort: { field: 'avg_duration', dir: 'asc' } },
      },
      {
        name: 'equal reported aggregates are ties, descending',
        query: { aggregates: ['avg_duration', 'visits'], fieldGrouping: ['pathname'], filters: [f('pathname', 'is like', '/sort/')] },
      },
      { name: 'rounding, by pathname without the ties', query: { aggregates: ['visits', 'pageviews'], fieldGrouping: ['pathname'] } },
    ],
  },
  {
    name: 'Multi combined',
    zone: 'UTC',
    multi: 'combined',
    lines: multiDomainLines,
    defaults: { from: '2026-06-01 00:00:00', to: '2026-06-30 23:59:59' },
    cases: [
      { name: 'multi-domain combined: totals', query: { aggregates: ALL } },
      { name: 'multi-domain combined: by hostname', query: { aggregates: ALL, fieldGrouping: ['hostname'] } },
      { name: 'multi-domain combined: entry and exit', query: { aggregates: ['visits'], fieldGrouping: ['entry_page', 'exit_page'] } },
      { name: 'multi-domain combined: referrers', query: { aggregates: ['pageviews', 'visits'], fieldGrouping: ['referrer_hostname', 'referrer_source'] } },
      { name: 'multi-domain combined: domain filter', query: { aggregates: ALL, filters: [f('domain', 'is', 'two.example')] } },
      { name: 'multi-domain combined: Purchase by entry page', query: { entity: 'event', eventName: 'Purchase', aggregates: [...EVENT_AGGREGATES], fieldGrouping: ['entry_page'] } },
    ],
  },
  {
    name: 'Multi separate',
    zone: 'UTC',
    multi: 'separate',
    lines: multiDomainLines,
    defaults: { from: '2026-06-01 00:00:00', to: '2026-06-30 23:59:59' },
    cases: [
      { name: 'multi-domain separate: totals', query: { aggregates: ALL } },
      { name: 'multi-domain separate: by hostname', query: { aggregates: ALL, fieldGrouping: ['hostname'] } },
      { name: 'multi-domain separate: entry and exit', query: { aggregates: ['visits'], fieldGrouping: ['entry_page', 'exit_page'] } },
      { name: 'multi-domain separate: referrers', query: { aggregates: ['pageviews', 'visits'], fieldGrouping: ['referrer_hostname', 'referrer_source'] } },
      { name: 'multi-domain separate: exit_page filter', query: { aggregates: ALL, filters: [f('exit_page', 'is', '/pricing')], fieldGrouping: ['hostname'] } },
      { name: 'multi-domain separate: Purchase by entry page', query: { entity: 'event', eventName: 'Purchase', aggregates: [...EVENT_AGGREGATES], fieldGrouping: ['entry_page'] } },
    ],
  },
];

describe('GET /v1/aggregations matches the oracle: DST changes, odd offsets, multi-domain sites', () => {
  let t: TestApp;
  const ids = new Map<string, string>();
  const prepared = new Map<string, Prepared>();

  before(async () => {
    t = await startTestApp({ visitorSlices: 4 }); // grouped visitors in slices, as on a large store
    const all: DemoHit[] = [];
    for (const s of SITES) {
      const id = await createSite(t, { name: s.name, timezone: s.zone, ...(s.multi ? { multi_domain: true, multi_domain_option: s.multi } : {}) });
      ids.set(s.name, id);
      const lines = s.lines(id);
      all.push(...lines);
      prepared.set(s.name, await prepare(lines, { id, timezone: s.zone, multiDomain: s.multi !== undefined, multiDomainOption: s.multi ?? null }));
    }
    await importLines(t, all);
  });
  after(() => t.close());

  for (const s of SITES) {
    it(`${s.name}: the oracle sessionises and enriches like the pipeline`, () => sameVisits(t, ids.get(s.name)!, prepared.get(s.name)!));
    run({ t: () => t, siteId: () => ids.get(s.name)!, data: () => prepared.get(s.name)!, zone: s.zone, defaults: s.defaults }, s.cases);
  }
  it('multi-domain: combined keeps one visit per visitor, separate one per domain', () => {
    assert.equal(prepared.get('Multi combined')!.visits.length, 6);
    assert.equal(prepared.get('Multi separate')!.visits.length, 6 + 6);
  });
});

