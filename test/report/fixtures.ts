// Shared by the report tests: hand-written import lines, importing them, and turning an oracle query into the
// `GET /v1/aggregations` request that must answer the same rows.

import assert from 'node:assert/strict';
import { demoTraffic, type DemoHit } from '../../src/cli/demo-traffic.js';
import { ADMIN_TOKEN, OWNER_TOKEN, type TestApp } from '../helpers/app.js';
import { aggregationsOf, prepare, type Filter, type OracleQuery, type Prepared } from './oracle.js';

export const AGENTS = {
  chromeWin: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  safariIphone: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  bot: 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
};

export interface LineOptions {
  referrer?: string;
  ua?: string;
  ip?: string;
  type?: 'pageview' | 'event';
  name?: string;
  value?: number;
}

/** One import line. `at` is an ISO instant (`2026-03-08T04:59:59.999Z`) or the import's UTC `YYYY-MM-DD HH:MM:SS`. */
export function line(siteId: string, at: string, url: string, o: LineOptions = {}): DemoHit {
  const hit: DemoHit = {
    type: o.type ?? 'pageview',
    site_id: siteId,
    timestamp: at,
    url,
    referrer: o.referrer ?? '',
    user_agent: o.ua ?? AGENTS.chromeWin,
    ip: o.ip ?? '81.2.69.142',
  };
  if (hit.type === 'event') {
    hit.name = o.name ?? 'Purchase';
    hit.value = o.value ?? 0;
  }
  return hit;
}

/** Creates a site through the API and returns its id. */
export async function createSite(
  t: TestApp,
  body: { name: string; timezone: string; multi_domain?: boolean; multi_domain_option?: 'combined' | 'separate' },
): Promise<string> {
  const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', body);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body.id as string;
}

/** Imports the lines in one request (one import: one visit state) and writes them. */
export async function importLines(t: TestApp, lines: readonly DemoHit[]): Promise<{ imported: number; rejected: number }> {
  const res = await t.app.inject({
    method: 'POST',
    url: '/admin/import',
    headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
    payload: lines.map((l) => JSON.stringify(l)).join('\n'),
  });
  assert.equal(res.statusCode, 200, res.body);
  await t.flushHits();
  return JSON.parse(res.body);
}

/** Replaces the placeholder site id of generated lines with the real one. */
export const forSite = (lines: readonly DemoHit[], siteId: string): DemoHit[] => lines.map((l) => ({ ...l, site_id: siteId }));

/**
 * A new site in `timezone` with `days` of the demo's traffic from `from` (`YYYY-MM-DD`, UTC midnight) imported, and
 * the oracle's view of the same lines.
 */
export async function demoSite(
  t: TestApp,
  o: { name: string; timezone: string; from: string; days: number; visitsPerDay: number; seed: number },
): Promise<{ siteId: string; data: Prepared }> {
  const siteId = await createSite(t, { name: o.name, timezone: o.timezone });
  const lines = forSite([...demoTraffic({ siteId: 'X', start: new Date(`${o.from}T00:00:00Z`), days: o.days, visitsPerDay: o.visitsPerDay, seed: o.seed })], siteId);
  await importLines(t, lines);
  return { siteId, data: await prepare(lines, { id: siteId, timezone: o.timezone }) };
}

/** The request for an oracle query; `timezone` is sent only when it differs from the site's (or when forced). */
export function requestUrl(siteId: string, siteZone: string, q: OracleQuery, options: { sendTimezone?: boolean } = {}): string {
  const params = new URLSearchParams();
  params.set('entity', q.entity);
  if (q.entity === 'pageview') params.set('entity_id', siteId);
  else {
    params.set('site_id', siteId);
    params.set('entity_name', q.eventName ?? '');
  }
  params.set('aggregates', q.aggregates.join(','));
  if (q.dateGrouping) params.set('date_grouping', q.dateGrouping);
  if (q.fieldGrouping.length > 0) params.set('field_grouping', q.fieldGrouping.join(','));
  if (q.filters.length > 0) params.set('filters', JSON.stringify(q.filters));
  if (q.sort) params.set('sort_by', `${q.sort.field}:${q.sort.dir}`);
  params.set('date_from', q.from);
  params.set('date_to', q.to);
  if (q.timezone !== siteZone || options.sendTimezone) params.set('timezone', q.timezone);
  if (q.limit !== undefined) params.set('limit', String(q.limit));
  return `/v1/aggregations?${params.toString().replace(/\+/g, '%20')}`;
}

export interface Case {
  name: string;
  query: Partial<OracleQuery>;
  /** Send `timezone` even though it is the site's. */
  sendTimezone?: boolean;
  /** The oracle must find something: guards against cases that compare two empty answers by accident. */
  nonEmpty?: boolean;
}

export interface Target {
  t: () => TestApp;
  siteId: () => string;
  data: () => Prepared;
  zone: string;
  defaults: Pick<OracleQuery, 'from' | 'to'>;
}

export function fullQuery(target: Target, partial: Partial<OracleQuery>): OracleQuery {
  return {
    entity: 'pageview',
    aggregates: ['pageviews'],
    fieldGrouping: [],
    filters: [],
    timezone: target.zone,
    ...target.defaults,
    ...partial,
  };
}

/** Asks the API and the oracle the same question and compares the whole answers. */
export async function compare(target: Target, c: Case): Promise<void> {
  const q = fullQuery(target, c.query);
  const expected = aggregationsOf(target.data(), q);
  if (c.nonEmpty !== false) {
    const empty = expected.length === 0 || (q.dateGrouping === undefined && q.fieldGrouping.length === 0 && Object.values(expected[0]!).every((v) => v === '0'));
    assert.ok(!empty, `oracle found nothing for ${c.name}: the case tests too little`);
  }
  const url = requestUrl(target.siteId(), target.zone, q, { sendTimezone: c.sendTimezone });
  const res = await target.t().call(OWNER_TOKEN, 'GET', url);
  assert.equal(res.status, 200, `${url}\n${JSON.stringify(res.body)}`);
  assert.deepEqual(res.body, expected, url);
}

export const f = (property: string, operator: Filter['operator'], value: string): Filter => ({ property, operator, value });
