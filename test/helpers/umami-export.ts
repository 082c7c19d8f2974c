// A generated Umami export (website_event joined with session, as psql's \copy writes it in CSV, or as Umami
// Cloud's data export writes it) with the numbers Umami itself would report for it, so importer tests can check
// Plumb's reports against the source.

import { random } from '../../src/cli/demo-traffic.js';

const COLUMNS = [
  'event_id', 'website_id', 'session_id', 'visit_id', 'created_at', 'hostname', 'url_path', 'url_query', 'referrer_domain',
  'referrer_path', 'referrer_query', 'page_title', 'event_type', 'event_name', 'browser', 'os', 'device', 'screen',
  'language', 'country', 'region', 'city',
] as const;

/**
 * Umami Cloud's data export: the columns of Umami's ClickHouse website_event, with campaign parameters and click
 * ids in columns of their own (as importers of other products read it; Umami's own docs list its import format).
 */
const CLOUD_COLUMNS = [
  'website_id', 'session_id', 'visit_id', 'event_id', 'hostname', 'browser', 'os', 'device', 'screen', 'language',
  'country', 'region', 'city', 'url_path', 'url_query', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content',
  'utm_term', 'referrer_path', 'referrer_query', 'referrer_domain', 'page_title', 'gclid', 'fbclid', 'msclkid',
  'ttclid', 'li_fat_id', 'twclid', 'event_type', 'event_name', 'tag', 'distinct_id', 'created_at', 'job_id',
] as const;

type Row = Record<(typeof COLUMNS)[number] | (typeof CLOUD_COLUMNS)[number], string>;

export interface UmamiSourceNumbers {
  pageviews: number;
  visits: number;
  bounces: number;
  /** Sum over visits of (last event - first event), milliseconds. */
  durationMs: number;
  pageviewsByDay: Map<string, number>;
  pageviewsByBrowser: Map<string, number>;
  pageviewsByCountry: Map<string, number>;
  pageviewsByDevice: Map<string, number>;
  eventsByName: Map<string, number>;
  /** Visits that came with utm_source=newsletter. */
  newsletterVisits: number;
}

export interface UmamiExport {
  csv: string;
  numbers: UmamiSourceNumbers;
  /** Line numbers (1 = header) of the rows that must be refused. */
  badLines: number[];
}

const uuid = (r: () => number) =>
  'xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx'.replace(/[xy]/g, (c) => {
    const n = Math.floor(r() * 16);
    return (c === 'x' ? n : (n & 3) | 8).toString(16);
  });

function csvValue(v: string): string {
  return /[",\n\r]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v;
}

/** psql's text for a timestamptz in UTC: `2026-03-01 12:34:56.789+00` (fraction only when not zero). */
function pgTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  const fraction = iso.slice(19, 23) === '.000' ? '' : iso.slice(19, 23);
  return `${iso.slice(0, 10)} ${iso.slice(11, 19)}${fraction}+00`;
}

/** Umami Cloud's text for a time: UTC to the second, without an offset. */
const cloudTime = (ms: number) => new Date(ms).toISOString().slice(0, 19).replace('T', ' ');

const inc = (m: Map<string, number>, k: string, by = 1) => m.set(k, (m.get(k) ?? 0) + by);

// Umami's own names, as its export holds them, and what Plumb reports them as.
const BROWSERS: [string, string][] = [['chrome', 'Chrome'], ['safari', 'Safari'], ['ios', 'Safari'], ['firefox', 'Firefox'], ['edge-chromium', 'Edge'], ['samsung', 'Samsung Internet']];
const SYSTEMS = ['Windows 10', 'Mac OS', 'iOS', 'Android OS', 'Linux'];
const DEVICES: [string, string][] = [['desktop', 'Desktop'], ['laptop', 'Desktop'], ['mobile', 'Mobile'], ['tablet', 'Tablet']];
const COUNTRIES = ['US', 'DE', 'FR', 'GB', 'JP', 'BR', 'IN', 'NL', ''];
const PAGES = ['/', '/pricing', '/blog', '/blog/launch', '/docs', '/docs/install', '/about', '/contact'];
const REFERRERS: [string, string][] = [['', ''], ['', ''], ['google.com', '/search'], ['news.ycombinator.com', '/item'], ['t.co', '/x']];

/**
 * `days` days of traffic from `start` (UTC midnight, ms), about `visitsPerDay` visits a day, for the Umami website
 * `websiteId` on `hostname`. Visits have gaps under 10 minutes inside and are an hour or more apart, so Umami's
 * visits and Plumb's 30-minute visits are the same.
 */
export function generateUmamiExport(opts: { websiteId: string; hostname: string; start: number; days: number; visitsPerDay: number; seed?: number; badRows?: boolean; cloud?: boolean }): UmamiExport {
  const r = random(opts.seed ?? 7);
  const cloud = opts.cloud ?? false;
  const columns = cloud ? CLOUD_COLUMNS : COLUMNS;
  // Umami Cloud writes whole seconds: times are made whole here, so durations are the same either way.
  const second = (ms: number) => (cloud ? ms - (ms % 1000) : ms);
  const time = cloud ? cloudTime : pgTime;
  const cloudOnly = { utm_source: '', utm_medium: '', utm_campaign: '', utm_content: '', utm_term: '', gclid: '', fbclid: '', msclkid: '', ttclid: '', li_fat_id: '', twclid: '', tag: '', distinct_id: '', job_id: '' };
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)]!;
  const rows: Row[] = [];
  const numbers: UmamiSourceNumbers = {
    pageviews: 0, visits: 0, bounces: 0, durationMs: 0,
    pageviewsByDay: new Map(), pageviewsByBrowser: new Map(), pageviewsByCountry: new Map(), pageviewsByDevice: new Map(), eventsByName: new Map(),
    newsletterVisits: 0,
  };
  const DAY = 86_400_000;
  for (let day = 0; day < opts.days; day++) {
    const visits = Math.round(opts.visitsPerDay * (0.8 + r() * 0.4));
    // Sessions: one visitor's device; a session makes one visit a day here (visits of a session an hour apart
    // would be the same, but one is enough for the numbers).
    for (let v = 0; v < visits; v++) {
      const [browser, plumbBrowser] = pick(BROWSERS);
      const [device, plumbDevice] = pick(DEVICES);
      const country = pick(COUNTRIES);
      const session = { id: uuid(r), browser, os: pick(SYSTEMS), device, country };
      const visitId = uuid(r);
      // Leave the last 40 minutes of the day free, so no visit crosses midnight (days then match exactly).
      let at = second(opts.start + day * DAY + Math.floor(r() * (DAY - 40 * 60_000)));
      const first = at;
      const [refDomain, refPath] = pick(REFERRERS);
      const campaign = r() < 0.2 ? 'utm_source=newsletter&utm_medium=email' : '';
      if (campaign) numbers.newsletterVisits++;
      const pageviews = 1 + Math.floor(r() * r() * 6);
      numbers.visits++;
      if (pageviews === 1) numbers.bounces++;
      for (let p = 0; p < pageviews; p++) {
        if (p > 0) at += second(5_000 + Math.floor(r() * 300_000));
        // Umami Cloud's rows here carry the campaign in its columns only, so a reader must take it from there.
        const tagged = p === 0 && campaign !== '';
        rows.push({
          ...cloudOnly, ...(cloud && tagged ? { utm_source: 'newsletter', utm_medium: 'email' } : {}),
          event_id: uuid(r), website_id: opts.websiteId, session_id: session.id, visit_id: visitId, created_at: time(at),
          hostname: opts.hostname, url_path: pick(PAGES), url_query: tagged && !cloud ? campaign : '',
          referrer_domain: p === 0 ? refDomain : '', referrer_path: p === 0 ? refPath : '', referrer_query: '',
          page_title: 'Plumb, "simple" analytics', event_type: '1', event_name: '', browser: session.browser, os: session.os,
          device: session.device, screen: '1920x1080', language: 'en-US', country: session.country,
          region: session.country ? `${session.country}-01` : '', city: session.country ? 'Springfield' : '',
        });
        numbers.pageviews++;
        inc(numbers.pageviewsByDay, new Date(at).toISOString().slice(0, 10));
        inc(numbers.pageviewsByBrowser, plumbBrowser);
        inc(numbers.pageviewsByCountry, session.country);
        inc(numbers.pageviewsByDevice, plumbDevice);
      }
      if (r() < 0.15) {
        at += second(2_000 + Math.floor(r() * 60_000));
        const name = r() < 0.5 ? 'Signup' : 'Download';
        rows.push({
          ...cloudOnly,
          event_id: uuid(r), website_id: opts.websiteId, session_id: session.id, visit_id: visitId, created_at: time(at),
          hostname: opts.hostname, url_path: '/pricing', url_query: '', referrer_domain: '', referrer_path: '', referrer_query: '',
          page_title: 'Pricing', event_type: '2', event_name: name, browser: session.browser, os: session.os, device: session.device,
          screen: '1920x1080', language: 'en-US', country: session.country, region: '', city: '',
        });
        inc(numbers.eventsByName, name);
      }
      numbers.durationMs += at - first;
    }
  }
  // The documented query orders by created_at.
  rows.sort((a, b) => (a.created_at < b.created_at ? -1 : a.created_at > b.created_at ? 1 : 0));
  const lines = [columns.join(','), ...rows.map((row) => columns.map((c) => csvValue(row[c])).join(','))];
  const badLines: number[] = [];
  if (opts.badRows) {
    const bad = (row: Partial<Row>) => {
      const full = { ...rows[0]!, ...row };
      lines.push(columns.map((c) => csvValue(full[c])).join(','));
      badLines.push(lines.length);
    };
    bad({ created_at: 'yesterday' });
    bad({ session_id: '' });
    bad({ event_type: '4' });
    bad({ event_type: '2', event_name: '' });
    lines.push('too,few,columns');
    badLines.push(lines.length);
  }
  return { csv: `${lines.join('\n')}\n`, numbers, badLines };
}
