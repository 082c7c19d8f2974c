// A generated Fathom CSV export (Site.csv, Pages.csv, Referrers.csv, Browsers.csv, Countries.csv, DeviceTypes.csv,
// Events.csv; hourly rows in UTC) with the sums per local day of the site that Plumb should report, worked out
// here with Intl's time zones, independently of Plumb's own.

import { random } from '../../src/cli/demo-traffic.js';

export interface DayCounts {
  pageviews: number;
  visits: number;
  bounces: number;
  duration: number;
}

export interface FathomExport {
  /** File name → CSV text. */
  files: Record<string, string>;
  /** Local day → the site's numbers. */
  byDay: Map<string, DayCounts>;
  /** Field → value as Plumb reports it → pageviews over all days. */
  byField: Map<string, Map<string, number>>;
  /** Event name → local day → completions. */
  events: Map<string, Map<string, number>>;
  /** Hourly rows written, all files. */
  rows: number;
}

const PAGES = Array.from({ length: 200 }, (_, i) => (i === 0 ? '/' : `/blog/post-${i}`));
const REFERRERS: [string, string][] = [['https://www.google.com', 'https://www.google.com'], ['news.ycombinator.com', 'https://news.ycombinator.com'], ['https://t.co', 'https://t.co'], ['duckduckgo.com', 'https://duckduckgo.com']];
const BROWSERS = ['Chrome', 'Safari', 'Firefox', 'Edge'];
const COUNTRIES: [string, string][] = [['United States', 'US'], ['Germany', 'DE'], ['FR', 'FR'], ['Japan', 'JP'], ['gb', 'GB']];
const DEVICES: [string, string][] = [['Desktop', 'Desktop'], ['Phone', 'Mobile'], ['Tablet', 'Tablet']];
const EVENTS = ['Signup', 'Newsletter'];

/** `YYYY-MM-DD` of an instant in `zone`. */
export const localDay = (zone: string, ms: number) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date(ms));

const hourText = (ms: number) => new Date(ms).toISOString().replace('T', ' ').slice(0, 19);

/**
 * Every UTC hour whose local day in `zone` is from `firstDay` to before `endDay`, with `pagesPerHour` pages each
 * (realistic sizes: 120 days of 40 pages an hour is about 200,000 rows).
 */
export function generateFathomExport(o: { zone: string; firstDay: string; endDay: string; pagesPerHour: number; seed?: number }): FathomExport {
  const r = random(o.seed ?? 7);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)]!;
  const site = ['Timestamp,Visitors,Pageviews,Visits,Bounce Rate,Avg Duration'];
  const pages = ['Timestamp,Hostname,Pathname,Views,Uniques,Foo'];
  const referrers = ['Timestamp,Referrer Hostname,Referrer Pathname,Views'];
  const browsers = ['Timestamp,Browser,Pageviews'];
  const countries = ['Timestamp,Country,Pageviews'];
  const devices = ['Timestamp,Device Type,Pageviews'];
  const events = ['Timestamp,Event,Completions'];
  const byDay = new Map<string, DayCounts>();
  const byField = new Map<string, Map<string, number>>();
  const eventDays = new Map<string, Map<string, number>>();
  const add = (field: string, value: string, n: number) => {
    const m = byField.get(field) ?? new Map<string, number>();
    m.set(value, (m.get(value) ?? 0) + n);
    byField.set(field, m);
  };
  const start = Date.parse(`${o.firstDay}T00:00:00Z`) - 15 * 3_600_000;
  const end = Date.parse(`${o.endDay}T00:00:00Z`) + 15 * 3_600_000;
  for (let hour = start; hour < end; hour += 3_600_000) {
    const day = localDay(o.zone, hour);
    if (day < o.firstDay || day >= o.endDay) continue;
    const at = hourText(hour);
    let views = 0;
    const seen = new Set<string>();
    for (let i = 0; i < o.pagesPerHour; i++) {
      const page = pick(PAGES);
      if (seen.has(page)) continue;
      seen.add(page);
      const n = 1 + Math.floor(r() * 12);
      views += n;
      pages.push(`${at},example.com,${page},${n},${Math.max(1, n - 2)},x`);
      add('pathname', page, n);
    }
    const visits = Math.max(1, Math.floor(views / (1.5 + r())));
    const bounces = Math.floor(visits * r() * 0.8);
    const duration = Math.floor(visits * (20 + r() * 200));
    site.push(`${at},${Math.max(1, visits - 3)},${views},${visits},${(bounces / visits).toFixed(6)},${(duration / visits).toFixed(4)}`);
    const d = byDay.get(day) ?? { pageviews: 0, visits: 0, bounces: 0, duration: 0 };
    byDay.set(day, { pageviews: d.pageviews + views, visits: d.visits + visits, bounces: d.bounces + bounces, duration: d.duration + duration });
    // Each field's views split over its values: they add up to the hour's.
    const split = (field: string, values: readonly [string, string][], lines: string[]) => {
      let left = views;
      values.forEach(([written, plumb], i) => {
        const n = i === values.length - 1 ? left : Math.floor(left * r() * 0.7);
        left -= n;
        if (n === 0) return;
        lines.push(`${at},${written},${n}`);
        add(field, plumb, n);
      });
    };
    split('browser', BROWSERS.map((b) => [b, b]), browsers);
    split('country_code', COUNTRIES, countries);
    split('device_type', DEVICES, devices);
    for (const [written, plumb] of REFERRERS) {
      if (r() < 0.4) continue;
      const n = 1 + Math.floor(r() * 5);
      referrers.push(`${at},${written},/,${n}`);
      add('referrer_hostname', plumb, n);
    }
    for (const name of EVENTS) {
      if (r() < 0.5) continue;
      const n = 1 + Math.floor(r() * 3);
      events.push(`${at},${name},${n}`);
      const m = eventDays.get(name) ?? new Map<string, number>();
      m.set(day, (m.get(day) ?? 0) + n);
      eventDays.set(name, m);
    }
  }
  const lists = { 'Site.csv': site, 'Pages.csv': pages, 'Referrers.csv': referrers, 'Browsers.csv': browsers, 'Countries.csv': countries, 'DeviceTypes.csv': devices, 'Events.csv': events };
  const files = Object.fromEntries(Object.entries(lists).map(([name, lines]) => [name, `${lines.join('\n')}\n`]));
  const rows = Object.values(lists).reduce((a, l) => a + l.length - 1, 0);
  return { files, byDay, byField, events: eventDays, rows };
}
