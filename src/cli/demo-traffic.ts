// A realistic, reproducible month of traffic for one site: Zipf-like page popularity, a daily rhythm, search,
// social and campaign referrers, many countries and devices, a few conversions, some bots. It drives
// `plumb demo`, the import tests (which check the counts it reports) and the benchmarks.

export interface DemoOptions {
  siteId: string;
  /** First day (UTC midnight is used). */
  start: Date;
  days: number;
  /** Average visits per day (each day varies around it). */
  visitsPerDay: number;
  hostname?: string;
  seed?: number;
  /** Conversion goals: probability per visit and value range in cents ([0, 0] for none). */
  events?: readonly DemoEvent[];
}

export interface DemoEvent {
  name: string;
  rate: number;
  value: readonly [number, number];
}

/** One import line (DESIGN.md section 4), as an object. */
export interface DemoHit {
  type: 'pageview' | 'event';
  site_id: string;
  timestamp: string;
  url: string;
  referrer: string;
  user_agent: string;
  ip: string;
  name?: string;
  value?: number;
}

/** What the generated traffic must produce once imported (bots excluded). */
export interface DemoTotals {
  pageviews: number;
  visits: number;
  bounces: number;
  bots: number;
  events: Record<string, { conversions: number; value: number }>;
}

export const DEFAULT_DEMO_EVENTS: readonly DemoEvent[] = [
  { name: 'Newsletter signup', rate: 0.04, value: [0, 0] },
  { name: 'Purchase', rate: 0.012, value: [900, 14900] },
];

/** Small deterministic PRNG (mulberry32): the same seed gives the same month (test exports use it too). */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

type Weighted<T> = readonly (readonly [T, number])[];

function picker<T>(items: Weighted<T>): (r: number) => T {
  const total = items.reduce((s, [, w]) => s + w, 0);
  return (r) => {
    let x = r * total;
    for (const [item, w] of items) if ((x -= w) < 0) return item;
    return items[items.length - 1]![0];
  };
}

const SECTIONS = ['blog', 'docs', 'guides', 'changelog', 'pricing', 'about', 'careers', 'integrations', 'customers', 'legal'];
const PAGES: string[] = ['/', '/pricing', '/features', '/signup', '/login', '/contact'];
for (const section of SECTIONS) for (let i = 1; i <= 20; i++) PAGES.push(`/${section}/${section === 'blog' ? `post-${i}` : `page-${i}`}`);
// Zipf-like popularity: the k-th page is about 1/k as popular as the first.
const pickPage = picker(PAGES.map((p, k) => [p, 1 / (k + 1)] as const));

const REFERRERS: Weighted<{ referrer: string; query?: string }> = [
  [{ referrer: '' }, 30],
  [{ referrer: 'https://www.google.com/' }, 28],
  [{ referrer: 'https://www.google.de/' }, 4],
  [{ referrer: 'https://www.bing.com/search?q=plumb' }, 4],
  [{ referrer: 'https://duckduckgo.com/' }, 5],
  [{ referrer: 'https://t.co/abc123' }, 5],
  [{ referrer: 'https://news.ycombinator.com/item?id=1' }, 4],
  [{ referrer: 'https://www.reddit.com/r/selfhosted/comments/xyz' }, 4],
  [{ referrer: 'https://www.linkedin.com/feed/' }, 3],
  [{ referrer: 'https://github.com/plumb/plumb' }, 3],
  [{ referrer: 'https://blog.example.org/best-analytics-tools' }, 2],
  [{ referrer: '', query: 'utm_source=newsletter&utm_medium=email&utm_campaign=november' }, 5],
  [{ referrer: 'https://www.facebook.com/', query: 'utm_source=facebook&utm_medium=social&utm_campaign=launch&utm_content=video' }, 2],
  [{ referrer: '', query: 'ref=producthunt' }, 1],
];

/** Address blocks (/16) that DB-IP places in these countries. */
const COUNTRY_BLOCKS: Weighted<string> = [
  ['3.12', 18], ['3.15', 12], ['2.30', 8], ['2.96', 4], ['2.162', 7], ['2.165', 3], ['2.3', 5], ['2.6', 2],
  ['4.180', 3], ['13.81', 1], ['3.96', 4], ['1.6', 5], ['1.39', 2], ['4.201', 3], ['15.228', 2], ['1.21', 4],
  ['1.42', 2], ['2.138', 2], ['2.33', 2], ['2.66', 1], ['31.0', 1], ['35.30', 1], ['1.96', 2], ['4.168', 1],
];

const AGENTS: Weighted<string> = [
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 30],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15', 12],
  ['Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 10],
  ['Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', 5],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0', 5],
  ['Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0', 7],
  ['Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1', 16],
  ['Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36', 11],
  ['Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1', 3],
  ['Mozilla/5.0 (Linux; Android 14; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36', 1],
];
const BOT_AGENT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

// Visits per hour of day (UTC): quiet nights, busy afternoons.
const HOURS: Weighted<number> = Array.from({ length: 24 }, (_, h) => [h, 1 + 4 * Math.sin((Math.PI * Math.max(0, h - 5)) / 19) ** 2] as const);

const pad = (n: number, w = 2) => String(n).padStart(w, '0');
const stamp = (t: number) => {
  const d = new Date(t);
  return `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
};

/**
 * Generates the traffic day by day, each day's hits in time order (a visit may run past midnight into the next
 * day's hits, which stay in order because each day is sorted as a whole with the overflow of the day before).
 * Returns the totals through `totals`, complete once the iterator is exhausted.
 */
export function* demoTraffic(options: DemoOptions, totals: DemoTotals = emptyTotals()): Generator<DemoHit> {
  const rnd = random(options.seed ?? 42);
  const host = options.hostname ?? 'https://demo.plumb.example';
  const events = options.events ?? DEFAULT_DEMO_EVENTS;
  const pickReferrer = picker(REFERRERS);
  const pickBlock = picker(COUNTRY_BLOCKS);
  const pickAgent = picker(AGENTS);
  const pickHour = picker(HOURS);
  for (const e of events) totals.events[e.name] ??= { conversions: 0, value: 0 };
  // Every visit gets an address of its own within its block: a counter per block never repeats within a day.
  const counters = new Map<string, number>();
  const address = (block: string) => {
    const n = (counters.get(block) ?? 0) + 1;
    counters.set(block, n);
    return `${block}.${Math.floor(n / 250) % 250}.${(n % 250) + 2}`;
  };
  const day0 = Date.UTC(options.start.getUTCFullYear(), options.start.getUTCMonth(), options.start.getUTCDate());
  let carry: { t: number; hit: DemoHit }[] = [];

  for (let day = 0; day < options.days; day++) {
    const dayStart = day0 + day * 86_400_000;
    const dayEnd = dayStart + 86_400_000;
    const weekday = new Date(dayStart).getUTCDay();
    const visits = Math.round(options.visitsPerDay * (weekday === 0 || weekday === 6 ? 0.7 : 1.1) * (0.85 + 0.3 * rnd()));
    const hits = carry;
    for (let v = 0; v < visits; v++) {
      const ip = address(pickBlock(rnd()));
      const agent = pickAgent(rnd());
      let t = dayStart + pickHour(rnd()) * 3_600_000 + Math.floor(rnd() * 3_600_000);
      const source = pickReferrer(rnd());
      // About 45% of visits bounce; the rest read a few pages.
      const pages = rnd() < 0.45 ? 1 : 2 + Math.floor(-Math.log(1 - rnd()) * 2.5);
      let page = pickPage(rnd());
      let referrer = source.referrer;
      const base = { site_id: options.siteId, user_agent: agent, ip };
      const viewed: { t: number; url: string }[] = [];
      for (let p = 0; p < pages; p++) {
        const query = p === 0 && source.query ? `?${source.query}` : '';
        const url = `${host}${page}${query}`;
        hits.push({ t, hit: { ...base, type: 'pageview', timestamp: stamp(t), url, referrer } });
        viewed.push({ t, url });
        referrer = `${host}${page}`;
        page = rnd() < 0.3 ? '/pricing' : pickPage(rnd());
        t += 5_000 + Math.floor(rnd() * 8 * 60_000); // well inside 30 minutes
      }
      totals.visits++;
      totals.pageviews += pages;
      if (pages === 1) totals.bounces++;
      for (const e of events) {
        if (rnd() >= e.rate) continue;
        const at = viewed[Math.floor(rnd() * viewed.length)]!;
        const value = e.value[1] > 0 ? e.value[0] + Math.floor(rnd() * (e.value[1] - e.value[0])) : 0;
        const et = at.t + 1000 + Math.floor(rnd() * 30_000);
        hits.push({ t: et, hit: { ...base, type: 'event', timestamp: stamp(et), url: at.url, referrer: '', name: e.name, value } });
        totals.events[e.name]!.conversions++;
        totals.events[e.name]!.value += value;
      }
    }
    // A few crawler hits a day, which Plumb must drop.
    for (let b = 0; b < Math.max(1, Math.round(visits / 200)); b++) {
      const t = dayStart + Math.floor(rnd() * 86_400_000);
      hits.push({ t, hit: { type: 'pageview', site_id: options.siteId, timestamp: stamp(t), url: `${host}${pickPage(rnd())}`, referrer: '', user_agent: BOT_AGENT, ip: '66.249.66.1' } });
      totals.bots++;
    }
    hits.sort((a, b) => a.t - b.t);
    carry = [];
    for (const h of hits) {
      if (h.t >= dayEnd && day < options.days - 1) carry.push(h);
      else yield h.hit;
    }
  }
}

export function emptyTotals(): DemoTotals {
  return { pageviews: 0, visits: 0, bounces: 0, bots: 0, events: {} };
}
