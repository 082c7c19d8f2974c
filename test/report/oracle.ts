// A reference implementation of docs/reports.md in plain TypeScript, independent of SQL and of src/report/: the raw
// import lines in, the rows `GET /v1/aggregations` and `GET /v1/current_visitors` must answer out. It reuses only
// enrichment and the reading of custom properties (tested elsewhere) and isBotUserAgent; sessions, time zones, filters,
// grouping, arithmetic and ordering are all done here, on purpose the slow and obvious way.

import type { HitAttributes } from '../../src/domain/hits.js';
import type { DemoHit } from '../../src/cli/demo-traffic.js';
import { readProps, type PropList } from '../../src/domain/props.js';
import { Enricher, isBotUserAgent } from '../../src/ingest/enrich/index.js';

export interface OracleSite {
  id: string;
  timezone: string;
  multiDomain?: boolean;
  multiDomainOption?: 'combined' | 'separate' | null;
}

export type Operator = 'is' | 'is not' | 'is like' | 'is not like' | 'matching' | 'not matching';

export interface Filter {
  property: string;
  operator: Operator;
  value: string;
}

export type DateGrouping = 'hour' | 'day' | 'month' | 'year';

export const PAGEVIEW_AGGREGATES = ['pageviews', 'visits', 'uniques', 'avg_duration', 'bounce_rate', 'visitors'] as const;
export const EVENT_AGGREGATES = ['conversions', 'unique_conversions', 'value'] as const;
/** Pageview aggregates of the engagement hits (docs/reports.md, "Engagement"): null for a group without any. */
export const ENGAGEMENT_AGGREGATES = ['scroll_depth', 'time_on_page'] as const;

export const GROUP_FIELDS = [
  'hostname', 'pathname', 'entry_page', 'exit_page', 'referrer_hostname', 'referrer_pathname', 'referrer_source',
  'browser', 'country_code', 'city', 'state', 'region', 'device_type', 'operating_system', 'utm_campaign',
  'utm_content', 'utm_medium', 'utm_source', 'utm_term', 'keyword', 'ref',
] as const;

export interface OracleQuery {
  entity: 'pageview' | 'event';
  eventName?: string;
  aggregates: string[];
  dateGrouping?: DateGrouping;
  fieldGrouping: string[];
  filters: Filter[];
  sort?: { field: string; dir: 'asc' | 'desc' };
  /** Local `YYYY-MM-DD HH:MM:SS` in `timezone`, inclusive. */
  from: string;
  /** Local `YYYY-MM-DD HH:MM:SS` in `timezone`, inclusive to the second. */
  to: string;
  timezone: string;
  limit?: number;
}

export type Row = Record<string, string | null>;

/** A visit as the oracle reconstructs it. */
export interface OracleVisit {
  n: number;
  firstAt: number;
  lastAt: number;
  entryPage: string;
  exitPage: string;
  exitHostname: string;
  pageviews: number;
  referrerHostname: string;
  referrerPathname: string;
  /** The first hit's attribution fields (docs/reports.md, "Attribution"). */
  attribution: Partial<HitAttributes>;
  hits: OracleHit[];
}

const ATTRIBUTION_KEYS = [
  'referrerHostname', 'referrerPathname', 'referrerSource', 'utmCampaign', 'utmContent', 'utmMedium', 'utmSource', 'utmTerm', 'ref', 'keyword',
] as const;

export interface OracleHit {
  type: 'pageview' | 'event' | 'engagement';
  at: number;
  /** As enriched, with the attribution fields replaced by the visit's (its first hit's). */
  attributes: HitAttributes;
  /** The visitor on the 24-hour visitor-day model: the same person (ip, agent) on one UTC day. */
  visitorDay: string;
  eventName: string;
  value: number;
  /** Custom properties as every format reads them (readProps, tested with it); absent when the line has none. */
  props?: PropList;
  visit: OracleVisit;
  /** Engagement hits: the deepest scroll so far (percent) and the engaged time since the page's previous one. */
  scrollDepth?: number;
  engagedMs?: number;
}

/** The site's hits after bot filtering, enrichment and sessionisation: what every query starts from. */
export interface Prepared {
  site: OracleSite;
  hits: OracleHit[];
  visits: OracleVisit[];
}

const VISIT_GAP_MS = 30 * 60 * 1000;

let enricher: Promise<Enricher> | undefined;

/** An import line's timestamp as the import reads it: `YYYY-MM-DD HH:MM:SS` UTC or ISO 8601 with `Z`. */
export function importTime(text: string): number {
  const plain = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)$/.exec(text);
  if (plain) {
    const [y, mo, d, h, mi, s] = plain.slice(1).map(Number) as [number, number, number, number, number, number];
    return Date.UTC(y, mo - 1, d, h, mi, s);
  }
  if (/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,6})?Z$/.test(text)) return Math.floor(new Date(text).getTime());
  throw new Error(`oracle: bad timestamp ${text}`);
}

export async function prepare(lines: readonly DemoHit[], site: OracleSite): Promise<Prepared> {
  const e = await (enricher ??= Enricher.create());
  // The import processes hits oldest first, keeping file order for equal times.
  const ordered = lines
    .map((line, i) => ({ line, i, at: importTime(line.timestamp) }))
    .filter(({ line }) => line.site_id === site.id)
    .sort((a, b) => a.at - b.at || a.i - b.i);
  const multi = site.multiDomain === true;
  const separate = multi && site.multiDomainOption === 'separate';
  const seenHosts = new Set<string>();
  const open = new Map<string, OracleVisit>();
  const hits: OracleHit[] = [];
  const visits: OracleVisit[] = [];
  for (const { line, at } of ordered) {
    if (isBotUserAgent(line.user_agent)) continue;
    if (line.type === 'event' && !line.name) continue;
    const attributes = e.enrich(
      { type: line.type, siteId: line.site_id, timestamp: new Date(at), url: line.url, referrer: line.referrer ?? '', userAgent: line.user_agent ?? '', ip: line.ip ?? '' },
      multi ? { sameSiteHosts: [...seenHosts] } : {},
    );
    if (!attributes) continue;
    if (multi && line.type === 'pageview') seenHosts.add(attributes.hostname);

    const key = [line.ip ?? '', line.user_agent ?? '', ...(separate ? [attributes.hostname] : [])].join('\0');
    let visit = open.get(key);
    if (!visit || at - visit.lastAt > VISIT_GAP_MS) {
      visit = {
        n: visits.length, firstAt: at, lastAt: at, entryPage: '', exitPage: '', exitHostname: '', pageviews: 0,
        referrerHostname: attributes.referrerHostname, referrerPathname: attributes.referrerPathname,
        attribution: Object.fromEntries(ATTRIBUTION_KEYS.map((k) => [k, attributes[k]])), hits: [],
      };
      visits.push(visit);
      open.set(key, visit);
    }
    visit.lastAt = at;
    if (line.type === 'pageview') {
      if (visit.pageviews === 0) visit.entryPage = attributes.pathname;
      visit.pageviews++;
      visit.exitPage = attributes.pathname;
      visit.exitHostname = attributes.hostname;
    }
    const hit: OracleHit = {
      type: line.type,
      at,
      attributes: { ...attributes, ...visit.attribution },
      visitorDay: `${key}\0${new Date(at).toISOString().slice(0, 10)}`,
      eventName: line.type === 'event' ? line.name! : '',
      value: line.type === 'event' ? (line.value ?? 0) : 0,
      visit,
    };
    const props = line.props === undefined ? [] : readProps(line.props);
    if (props.length > 0) hit.props = props;
    visit.hits.push(hit);
    hits.push(hit);
  }
  return { site, hits, visits };
}

// ---------------------------------------------------------------------------------------------------------
// Time zones, with nothing but Intl.DateTimeFormat.

const formatters = new Map<string, Intl.DateTimeFormat>();
function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit',
    });
    formatters.set(zone, f);
  }
  return f;
}

interface LocalParts {
  y: number;
  mo: number;
  d: number;
  h: number;
  mi: number;
  s: number;
}

/** The wall-clock time of a UTC instant in `zone`. */
export function localParts(at: number, zone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const p of formatter(zone).formatToParts(new Date(at))) if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return { y: parts.year!, mo: parts.month!, d: parts.day!, h: parts.hour!, mi: parts.minute!, s: parts.second! };
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const show = (p: LocalParts) => `${pad(p.y, 4)}-${pad(p.mo)}-${pad(p.d)} ${pad(p.h)}:${pad(p.mi)}:${pad(p.s)}`;

/** `at` as local `YYYY-MM-DD HH:MM:SS` in `zone`. */
export function localString(at: number, zone: string): string {
  return show(localParts(at, zone));
}

/** Local minus UTC, in milliseconds, at the instant `at`. */
function offsetAt(at: number, zone: string): number {
  const whole = at - (((at % 1000) + 1000) % 1000);
  const p = localParts(whole, zone);
  return Date.UTC(p.y, p.mo - 1, p.d, p.h, p.mi, p.s) - whole;
}

/**
 * The UTC instant of a local `YYYY-MM-DD HH:MM:SS` in `zone`. A time in a DST gap or overlap takes the offset in
 * force just before the change (docs/reports.md).
 */
export function localToUtc(text: string, zone: string): number {
  const m = /^(\d{4})-(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)$/.exec(text);
  if (!m) throw new Error(`oracle: bad local time ${text}`);
  const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
  const wall = Date.UTC(y, mo - 1, d, h, mi, s);
  const before = offsetAt(wall - 14 * 3_600_000 - 86_400_000 / 2, zone);
  const after = offsetAt(wall + 14 * 3_600_000 + 86_400_000 / 2, zone);
  if (offsetAt(wall - before, zone) === before) return wall - before;
  if (offsetAt(wall - after, zone) === after) return wall - after;
  return wall - before; // inside a gap
}

function bucketOf(at: number, zone: string, grouping: DateGrouping): string {
  const p = localParts(at, zone);
  switch (grouping) {
    case 'hour':
      return show({ ...p, mi: 0, s: 0 });
    case 'day':
      return show({ ...p, h: 0, mi: 0, s: 0 });
    case 'month':
      return show({ ...p, d: 1, h: 0, mi: 0, s: 0 });
    case 'year':
      return show({ ...p, mo: 1, d: 1, h: 0, mi: 0, s: 0 });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Properties and filters.

const ATTRIBUTE: Record<string, keyof HitAttributes> = {
  hostname: 'hostname', pathname: 'pathname', referrer_hostname: 'referrerHostname', referrer_pathname: 'referrerPathname',
  referrer_source: 'referrerSource', browser: 'browser', country_code: 'countryCode', city: 'city', state: 'state',
  region: 'region', device_type: 'deviceType', operating_system: 'operatingSystem', utm_campaign: 'utmCampaign',
  utm_content: 'utmContent', utm_medium: 'utmMedium', utm_source: 'utmSource', utm_term: 'utmTerm', keyword: 'keyword', ref: 'ref',
};

/** A hit's value of a grouping or filter property. */
export function propertyOf(hit: OracleHit, property: string): string {
  if (property === 'entry_page') return hit.visit.entryPage;
  if (property === 'exit_page') return hit.visit.exitPage;
  if (property === 'domain') return hit.attributes.hostname.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
  const key = ATTRIBUTE[property];
  if (!key) throw new Error(`oracle: unknown property ${property}`);
  return hit.attributes[key];
}

function isLike(value: string, pattern: string): boolean {
  const parts = pattern.toLowerCase().split('*').map((p) => p.replace(/[\\^$.*+?()[\]{}|/]/g, '\\$&'));
  return new RegExp(parts.join('[\\s\\S]*')).test(value.toLowerCase());
}

function matches(value: string, f: Filter): boolean {
  switch (f.operator) {
    case 'is':
      return value === f.value;
    case 'is not':
      return value !== f.value;
    case 'is like':
      return isLike(value, f.value);
    case 'is not like':
      return !isLike(value, f.value);
    case 'matching':
      return new RegExp(f.value).test(value);
    case 'not matching':
      return !new RegExp(f.value).test(value);
  }
}

const POSITIVE = new Set<Operator>(['is', 'is like', 'matching']);

/** /v1's filter rules on one hit: per property any positive and every negative filter holds; all properties. */
export function passes(hit: OracleHit, filters: readonly Filter[]): boolean {
  const byProperty = new Map<string, Filter[]>();
  for (const f of filters) byProperty.set(f.property, [...(byProperty.get(f.property) ?? []), f]);
  for (const [property, list] of byProperty) {
    const value = propertyOf(hit, property);
    const positives = list.filter((f) => POSITIVE.has(f.operator));
    const negatives = list.filter((f) => !POSITIVE.has(f.operator));
    if (positives.length > 0 && !positives.some((f) => matches(value, f))) return false;
    if (!negatives.every((f) => matches(value, f))) return false;
  }
  return true;
}

// ---------------------------------------------------------------------------------------------------------
// Exact decimals: a rational num/den rounded half up to `places`, written without trailing zeros.

function decimal(num: bigint, den: bigint, places: number): { text: string; value: number } {
  if (den === 0n) return { text: '0', value: 0 };
  const scale = 10n ** BigInt(places);
  const scaled = num * scale;
  let q = scaled / den;
  if ((scaled % den) * 2n >= den) q += 1n;
  const int = q / scale;
  const frac = (q % scale).toString().padStart(places, '0').replace(/0+$/, '');
  const text = frac ? `${int}.${frac}` : `${int}`;
  return { text, value: Number(text) };
}

function aggregate(name: string, hits: readonly OracleHit[]): string {
  const visits = new Set(hits.map((h) => h.visit));
  switch (name) {
    case 'pageviews':
    case 'conversions':
      return String(hits.length);
    case 'visits':
    case 'unique_conversions':
      return String(visits.size);
    case 'visitors':
      return String(new Set(hits.map((h) => h.visitorDay)).size);
    case 'uniques':
      return String(new Set(hits.map((h) => `${h.visit.n}\0${h.attributes.pathname}`)).size);
    case 'avg_duration': {
      let ms = 0n;
      for (const v of visits) ms += BigInt(v.lastAt - v.firstAt);
      return decimal(ms, BigInt(visits.size) * 1000n, 2).text;
    }
    case 'bounce_rate': {
      const bounces = [...visits].filter((v) => v.pageviews === 1).length;
      return decimal(BigInt(bounces), BigInt(visits.size), 4).text;
    }
    case 'value':
      return String(hits.reduce((s, h) => s + h.value, 0));
    default:
      throw new Error(`oracle: unknown aggregate ${name}`);
  }
}

/**
 * An engagement aggregate over a group's engagement hits: per (visit, page) pair the deepest scroll and the summed
 * engaged time, then the mean over the pairs (percent; seconds), rounded half up to 2 decimals; null without any.
 */
function engagementOf(name: string, hits: readonly OracleHit[]): string | null {
  const pairs = new Map<string, { deepest: number; ms: number }>();
  for (const h of hits) {
    const key = `${h.visit.n}\0${h.attributes.pathname}`;
    const pair = pairs.get(key) ?? { deepest: 0, ms: 0 };
    pair.deepest = Math.max(pair.deepest, h.scrollDepth ?? 0);
    pair.ms += h.engagedMs ?? 0;
    pairs.set(key, pair);
  }
  if (pairs.size === 0) return null;
  const all = [...pairs.values()];
  if (name === 'scroll_depth') return decimal(BigInt(all.reduce((s, p) => s + p.deepest, 0)), BigInt(all.length), 2).text;
  return decimal(BigInt(all.reduce((s, p) => s + p.ms, 0)), BigInt(all.length) * 1000n, 2).text;
}

const byBytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The rows `GET /v1/aggregations` answers for `query`, from the raw import lines. */
export async function aggregations(lines: readonly DemoHit[], site: OracleSite, query: OracleQuery): Promise<Row[]> {
  return aggregationsOf(await prepare(lines, site), query);
}

/** The rows `GET /v1/aggregations` answers for `query` over the prepared hits. */
export function aggregationsOf(data: Prepared, query: OracleQuery): Row[] {
  const from = localToUtc(query.from, query.timezone);
  const to = localToUtc(query.to, query.timezone) + 1000;
  const selected = data.hits.filter(
    (h) =>
      (query.entity === 'pageview' ? h.type === 'pageview' : h.type === 'event' && h.eventName === query.eventName) &&
      h.at >= from &&
      h.at < to &&
      passes(h, query.filters),
  );

  const groups = new Map<string, { fields: string[]; timestamp: string | undefined; hits: OracleHit[] }>();
  for (const hit of selected) {
    const fields = query.fieldGrouping.map((f) => propertyOf(hit, f));
    const timestamp = query.dateGrouping ? bucketOf(hit.at, query.timezone, query.dateGrouping) : undefined;
    const key = JSON.stringify([fields, timestamp]);
    let group = groups.get(key);
    if (!group) groups.set(key, (group = { fields, timestamp, hits: [] }));
    group.hits.push(hit);
  }
  const grouped = query.dateGrouping !== undefined || query.fieldGrouping.length > 0;
  if (!grouped && groups.size === 0) groups.set(JSON.stringify([[], undefined]), { fields: [], timestamp: undefined, hits: [] });

  // Engagement hits pass the same range and filters and fall into groups by their own values and times; only
  // groups with a pageview are answered.
  const engaged = new Map<string, OracleHit[]>();
  if (query.entity === 'pageview') {
    for (const hit of data.hits) {
      if (hit.type !== 'engagement' || hit.at < from || hit.at >= to || !passes(hit, query.filters)) continue;
      const fields = query.fieldGrouping.map((f) => propertyOf(hit, f));
      const timestamp = query.dateGrouping ? bucketOf(hit.at, query.timezone, query.dateGrouping) : undefined;
      const key = JSON.stringify([fields, timestamp]);
      engaged.set(key, [...(engaged.get(key) ?? []), hit]);
    }
  }

  const rows = [...groups.entries()].map(([key, g]) => {
    const row: Row = {};
    query.fieldGrouping.forEach((f, i) => (row[f] = g.fields[i]!));
    if (g.timestamp !== undefined) row.timestamp = g.timestamp;
    for (const a of query.aggregates) {
      row[a] = (ENGAGEMENT_AGGREGATES as readonly string[]).includes(a) ? engagementOf(a, engaged.get(key) ?? []) : aggregate(a, g.hits);
    }
    return row;
  });

  const sort = query.sort ?? (query.dateGrouping ? { field: 'timestamp', dir: 'asc' as const } : { field: query.aggregates[0]!, dir: 'desc' as const });
  const isAggregate = query.aggregates.includes(sort.field);
  const tieFields = [...(query.dateGrouping ? ['timestamp'] : []), ...query.fieldGrouping];
  rows.sort((a, b) => {
    const [x, y] = [a[sort.field], b[sort.field]];
    // A group without engagement (null) comes last in either direction.
    if (x === null || y === null) {
      if (x !== y) return x === null ? 1 : -1;
    } else {
      const primary = isAggregate ? Number(x) - Number(y) : byBytes(x!, y!);
      if (primary !== 0) return sort.dir === 'asc' ? primary : -primary;
    }
    for (const f of tieFields) {
      const c = byBytes(a[f]!, b[f]!);
      if (c !== 0) return c;
    }
    return 0;
  });

  const limit = query.limit ?? (query.fieldGrouping.length > 0 ? 500 : Infinity);
  return rows.slice(0, limit);
}

// ---------------------------------------------------------------------------------------------------------
// Current visitors.

export interface CurrentVisitors {
  total: number;
  content?: { hostname: string; pathname: string; total: number }[];
  referrers?: { referrer_hostname: string; referrer_pathname: string; total: number }[];
}

function top<T extends { total: number }>(counts: Map<string, [string, string, number]>, make: (a: string, b: string, n: number) => T): T[] {
  return [...counts.values()]
    .sort((x, y) => y[2] - x[2] || byBytes(x[0], y[0]) || byBytes(x[1], y[1]))
    .slice(0, 150)
    .map(([a, b, n]) => make(a, b, n));
}

/** What `GET /v1/current_visitors` answers at `now` (ms), from the raw import lines. */
export async function currentVisitors(lines: readonly DemoHit[], site: OracleSite, now: number, detailed: boolean): Promise<CurrentVisitors> {
  return currentVisitorsOf(await prepare(lines, site), now, detailed);
}

export function currentVisitorsOf(data: Prepared, now: number, detailed: boolean): CurrentVisitors {
  const visits = data.visits.filter((v) => v.hits.some((h) => h.at > now - 5 * 60_000 && h.at <= now));
  if (!detailed) return { total: visits.length };
  const content = new Map<string, [string, string, number]>();
  const referrers = new Map<string, [string, string, number]>();
  const count = (map: Map<string, [string, string, number]>, a: string, b: string) => {
    const key = `${a}\0${b}`;
    const entry = map.get(key) ?? [a, b, 0];
    entry[2]++;
    map.set(key, entry);
  };
  for (const v of visits) {
    if (v.pageviews > 0) count(content, v.exitHostname, v.exitPage);
    if (v.referrerHostname) count(referrers, v.referrerHostname, v.referrerPathname);
  }
  return {
    total: visits.length,
    content: top(content, (hostname, pathname, total) => ({ hostname, pathname, total })),
    referrers: top(referrers, (referrer_hostname, referrer_pathname, total) => ({ referrer_hostname, referrer_pathname, total })),
  };
}
