// Soak: the collector and the report page's requests together for SOAK_MINUTES (60) against the compiled server in
// a process of its own, a line a minute of its RSS, open file descriptors, event-loop delay and hit-log size, then
// each series' last half against its first half: PASS or FAIL per series (NOT JUDGED when a half had no minute
// quiet enough to judge), and a non-zero exit unless every series passed. What it looks for is growth without bound
// (a leak of memory, descriptors, log segments, or work piling up on the event loop) that a benchmark of seconds
// cannot see. `npm run bench -- soak`: only when named (bench/run.ts).

import { readdirSync, readFileSync, statSync, type Dirent } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { DEFAULT_DEMO_EVENTS, demoTraffic, random } from '../src/cli/demo-traffic.js';
import { startServer } from '../test/helpers/process.js';
import { cpuSeconds, rss } from './server-watch.js';

/** The run's settings, from the environment (docs/benchmarks.md, "Soak"). */
const MINUTES = positive('SOAK_MINUTES', 60);
/** Collector hits a second, paced: a busy site's steady traffic, well below what the collector sustains. */
const HIT_RATE = positive('SOAK_HIT_RATE', 300);
/** Seconds between two range changes on the report page (each fires the page's whole set of requests). */
const REPORT_SECONDS = positive('SOAK_REPORT_SECONDS', 5);
/** Visitors the hits come from: returning visitors, so that the ingest thread's visit states reach a steady size. */
const VISITORS = Math.round(positive('SOAK_VISITORS', 20_000));
/** Seconds a printed line covers (60: a line a minute; shorter for trying the benchmark). */
const LINE_SECONDS = positive('SOAK_LINE_SECONDS', 60);

/**
 * Cores' worth of CPU other processes may use in a line's time for its event-loop delay to be judged: on a shared
 * machine, a minute when others took the cores measures them (a starved process's delay grows with their load, not
 * with anything of its own), while memory, descriptors and the hit log are judged whatever the machine does.
 */
const QUIET_CORES = positive('SOAK_QUIET_CORES', 0.5);

/** How far a series' last half may rise above its first half: max(last) <= GROWTH x max(first) + the series' slack. */
const GROWTH = 1.25;
const MiB = 2 ** 20;
/** A hit-log segment and the zeroes written ahead of its records (src/ingest/live/hit-log.ts): the log's sawtooth. */
const HIT_LOG_SEGMENT = 33 * MiB;

const TOKEN = 'soak-bootstrap-token-0123456789';
const ADMIN = 'soak-admin-token-0123456789abcdef';

const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
];
/** A crawler: dropped as a bot, answered like a hit (the collector's drops are part of its steady work). */
const BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/** First octets of public address blocks in many countries, so that the geo lookup sees varied places. */
const NETWORKS = [81, 92, 24, 66, 185, 203, 177, 41, 110, 5, 151, 200, 62, 86, 121];
const REFERRERS = [
  '',
  '',
  'https://www.google.com/',
  'https://www.google.de/',
  'https://www.bing.com/',
  'https://duckduckgo.com/',
  'https://news.ycombinator.com/',
  'https://t.co/abc',
  'https://www.reddit.com/r/programming/',
  'https://blog.example.org/some-post',
];
const CAMPAIGNS = ['', '', '', '', '{"utm_source":"newsletter","utm_medium":"email","utm_campaign":"december"}', '{"utm_source":"twitter","utm_campaign":"launch"}'];

/** The request of one hit number `n`: a pageview most of the time, sometimes a goal's conversion or a bot. */
function hit(site: string, n: number, next: () => number): { method: 'GET' | 'POST'; path: string; headers: Record<string, string> } {
  // Zipf-like page popularity over 300 pages, and returning visitors drawn from the pool.
  const page = Math.floor(300 ** next()) - 1;
  const visitor = Math.floor(next() * VISITORS);
  const ip = `${NETWORKS[visitor % NETWORKS.length]}.${(visitor >> 12) & 255}.${(visitor >> 4) & 255}.${(visitor & 15) + 1}`;
  const agent = next() < 0.02 ? BOT : AGENTS[visitor % AGENTS.length]!;
  const params = new URLSearchParams({
    sid: site,
    h: 'https://soak.example',
    p: page === 0 ? '/' : `/docs/page-${page}`,
    r: REFERRERS[Math.floor(next() * REFERRERS.length)]!,
    cid: String(n),
  });
  const qs = CAMPAIGNS[Math.floor(next() * CAMPAIGNS.length)]!;
  if (qs !== '') params.set('qs', qs);
  const headers = { 'user-agent': agent, 'x-forwarded-for': ip };
  const roll = next();
  if (roll < 0.04) {
    params.set('name', 'Newsletter signup');
    params.set('payload', JSON.stringify({ position: ['footer', 'popup', 'blog post'][n % 3] }));
    return { method: 'POST', path: `/?${params}`, headers };
  }
  if (roll < 0.05) {
    params.set('name', 'Purchase');
    params.set('payload', JSON.stringify({ _value: 900 + (n % 140) * 100, plan: ['starter', 'pro', 'business'][n % 3] }));
    return { method: 'POST', path: `/?${params}`, headers };
  }
  return { method: 'GET', path: `/?${params}`, headers };
}

/** A range of the report's date picker as site-time days, with the period before it (the comparison). */
interface Range {
  name: string;
  days: number;
  grouping: 'hour' | 'day' | 'month';
}
const RANGES: Range[] = [
  { name: 'today', days: 1, grouping: 'hour' },
  { name: 'last 7 days', days: 7, grouping: 'day' },
  { name: 'last 30 days', days: 30, grouping: 'day' },
  { name: 'last 12 months', days: 365, grouping: 'month' },
];
const BREAKDOWNS = ['pathname', 'entry_page', 'exit_page', 'referrer_source', 'utm_source', 'country_code', 'region', 'city', 'browser', 'operating_system', 'device_type'];
/** Requests the browser has in flight at once to one host (HTTP/1.1). */
const BROWSER_CONNECTIONS = 6;

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/**
 * The /v1 requests the report page makes when its range changes (src/web/report/): the headline's totals and chart
 * for the period and its comparison, each goal's conversions, the breakdowns' top tens and the live visitors. The
 * page asks every goal at once through a dashboard route that needs a login session; with an API token, one
 * /v1/aggregations each.
 */
function rangeChange(site: string, goals: string[], range: Range): string[] {
  const today = Date.UTC(new Date().getUTCFullYear(), new Date().getUTCMonth(), new Date().getUTCDate());
  const period = (endMs: number) => ({ date_from: `${day(endMs - (range.days - 1) * 86_400_000)} 00:00:00`, date_to: `${day(endMs)} 23:59:59` });
  const current = period(today);
  const previous = period(today - range.days * 86_400_000);
  const ask = (params: Record<string, string>) => `/v1/aggregations?${new URLSearchParams(params)}`;
  const pages = (p: Record<string, string>) => ({ entity: 'pageview', entity_id: site, ...p });
  const headline = 'visitors,visits,pageviews,bounce_rate,avg_duration';
  return [
    ...[current, previous].flatMap((p) => [
      ask(pages({ ...p, aggregates: headline })),
      ask(pages({ ...p, aggregates: headline, date_grouping: range.grouping, sort_by: 'timestamp:asc' })),
    ]),
    ...goals.map((name) => ask({ entity: 'event', site_id: site, entity_name: name, ...current, aggregates: 'conversions,unique_conversions,value' })),
    ...BREAKDOWNS.map((field) => ask(pages({ ...current, aggregates: 'visitors,pageviews', field_grouping: field, sort_by: 'visitors:desc', limit: '10' }))),
    `/v1/current_visitors?site_id=${site}&detailed=true`,
  ];
}

/** What the report requests saw in a line's time. */
interface ReportTally {
  answered: number;
  failed: number;
  times: number[];
}

/** Asks the report page's requests every REPORT_SECONDS until `until`, cycling through the ranges. */
async function browseReports(url: string, site: string, goals: string[], until: number, tally: () => ReportTally): Promise<void> {
  for (let change = 0; Date.now() < until; change++) {
    const started = Date.now();
    const queue = rangeChange(site, goals, RANGES[change % RANGES.length]!);
    const worker = async () => {
      for (let path = queue.shift(); path !== undefined; path = queue.shift()) {
        const asked = performance.now();
        try {
          const res = await fetch(url + path, { headers: { authorization: `Bearer ${TOKEN}` } });
          await res.arrayBuffer();
          const t = tally();
          t.times.push(performance.now() - asked);
          if (res.ok) t.answered++;
          else t.failed++;
        } catch {
          tally().failed++;
        }
      }
    };
    await Promise.all(Array.from({ length: BROWSER_CONNECTIONS }, worker));
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, started + REPORT_SECONDS * 1000 - Date.now())));
  }
}

/** Open file descriptors of a process (Linux /proc; 0 elsewhere). */
function openFds(pid: number): number {
  try {
    return readdirSync(`/proc/${pid}/fd`).length;
  } catch {
    return 0;
  }
}

/**
 * Bytes of the files under a directory (the hit log: its segments, and the batches staged in load/ for the store),
 * and how many segments (`*.log` files) it holds.
 */
function directorySize(dir: string): { bytes: number; files: number } {
  let bytes = 0;
  let files = 0;
  let entries: Dirent[] = [];
  try {
    entries = readdirSync(dir, { withFileTypes: true, recursive: true });
  } catch {
    return { bytes, files }; // not there yet
  }
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    try {
      bytes += statSync(join(entry.parentPath, entry.name)).size;
      if (entry.name.endsWith('.log')) files++;
    } catch {
      // deleted between the listing and the stat (a confirmed segment, a loaded batch)
    }
  }
  return { bytes, files };
}

/** CPU seconds the whole machine has been busy so far, every core (Linux /proc/stat: all but idle and I/O wait). */
function machineBusySeconds(): number {
  try {
    const [user, nice, system, , , irq, softirq, steal] = readFileSync('/proc/stat', 'utf8').split('\n')[0]!.trim().split(/\s+/).slice(1).map(Number);
    return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
  } catch {
    return 0;
  }
}

/** CPU seconds used so far by everything but the server and this process (the load generator and the report page). */
function othersCpuSeconds(server: number): number {
  const own = process.cpuUsage();
  return machineBusySeconds() - cpuSeconds(server) - (own.user + own.system) / 1e6;
}

/** A gauge's value in the server's /metrics text (prom-client's default metrics, prefixed plumb_). */
function gauge(text: string, name: string): number {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

/** A counter's total over its labels. */
function counter(text: string, name: string): number {
  let total = 0;
  for (const m of text.matchAll(new RegExp(`^${name}(?:\\{[^}]*\\})? ([0-9.e+-]+)$`, 'gm'))) total += Number(m[1]);
  return total;
}

/** One printed line: the maxima of the samples in its time, and what /metrics said at its end. */
interface Line {
  /** Minutes since the load started, at the line's end. */
  minutes: number;
  rss: number;
  fds: number;
  hitLog: number;
  segments: number;
  /** Every file of the data directory: the DuckDB file, its WAL, the hit log. */
  database: number;
  /** Event-loop delay in ms over the line's time: 99th percentile and max (prom-client resets its histogram at each read). */
  loopP99: number;
  /** Cores' worth of CPU the machine's other processes used in the line's time (0.5: half a core). */
  others: number;
  loopMax: number;
  hitsPerSecond: number;
  reportsP99: number;
  reportsFailed: number;
}

interface Series {
  name: string;
  unit: string;
  value: (line: Line) => number;
  slack: number;
  /** Only the lines when the machine was quiet (QUIET_CORES) count. */
  quietOnly?: boolean;
}

const SERIES: Series[] = [
  { name: 'server RSS', unit: 'MiB', value: (l) => l.rss / MiB, slack: 32 },
  { name: 'open file descriptors', unit: '', value: (l) => l.fds, slack: 8 },
  { name: 'event-loop delay p99', unit: 'ms', value: (l) => l.loopP99, slack: 20, quietOnly: true },
  { name: 'hit-log size', unit: 'MiB', value: (l) => l.hitLog / MiB, slack: HIT_LOG_SEGMENT / MiB },
];

export async function benchSoak(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-soak-'));
  const server = await startServer(
    { PLUMB_DATA_DIR: dir, PLUMB_BOOTSTRAP_TOKEN: TOKEN, PLUMB_ADMIN_TOKEN: ADMIN, PLUMB_TRUST_PROXY: 'true', PLUMB_RATE_LIMITS: 'off', PLUMB_LOG_LEVEL: 'warn' },
    { compiled: true },
  );
  const pid = server.child.pid!;
  try {
    const post = async (path: string, body: string, token: string, type = 'application/json') => {
      const res = await fetch(server.url + path, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': type }, body });
      if (!res.ok) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
      return res.json() as Promise<Record<string, unknown>>;
    };
    const site = (await post('/v1/sites', JSON.stringify({ name: 'Soak', timezone: 'UTC' }), TOKEN)).id as string;
    const goals = DEFAULT_DEMO_EVENTS.map((e) => e.name);
    for (const name of goals) await post(`/v1/sites/${site}/events`, JSON.stringify({ name }), TOKEN);
    // A month of history for the reports to read (the demo's traffic, through the importer).
    const history = [...demoTraffic({ siteId: site, start: new Date(Date.now() - 30 * 86_400_000), days: 30, visitsPerDay: 1000 })];
    const imported = (await post('/admin/import', history.map((h) => JSON.stringify(h)).join('\n'), ADMIN, 'application/x-ndjson')).imported;

    const seconds = Math.round(MINUTES * 60);
    console.log(
      `\nSoak: ${MINUTES} min, ${HIT_RATE} hits/s (${VISITORS.toLocaleString('en')} returning visitors), the report page's ${rangeChange(site, goals, RANGES[0]!).length} requests every ${REPORT_SECONDS} s; ` +
        `${Number(imported).toLocaleString('en')} hits of history; ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown CPU'}), Node ${process.version}, started ${new Date().toISOString()}\n`,
    );
    console.log("| minutes | RSS MiB | open fds | loop delay p99 / max ms | hit log MiB (segments) | data directory MiB | hits/s | reports p99 ms (failed) | other processes' CPU, cores |");
    console.log('|---|---|---|---|---|---|---|---|---|');

    const until = Date.now() + seconds * 1000;
    let tally: ReportTally = { answered: 0, failed: 0, times: [] };
    const next = random(48);
    let n = 0;
    const hits = autocannon({
      url: server.url,
      connections: 16,
      overallRate: HIT_RATE,
      duration: seconds,
      requests: [{ setupRequest: (req) => ({ ...req, ...hit(site, ++n, next) }) }],
    });
    const reports = browseReports(server.url, site, goals, until, () => tally);

    // Samples every 5 s (a line's maxima), /metrics once a line: its event-loop histogram covers the time since the last read.
    const rows: Line[] = [];
    // The import's lines count as hits received: the first line's rate starts from here.
    let hitsBefore = counter(await (await fetch(`${server.url}/metrics`)).text(), 'plumb_hits_received_total');
    let lineStart = Date.now();
    let othersBefore = othersCpuSeconds(pid);
    let peak = { rss: 0, fds: 0, hitLog: 0, segments: 0 };
    while (Date.now() < until) {
      await new Promise((resolve) => setTimeout(resolve, Math.min(5000, Math.max(0, until - Date.now()))));
      const log = directorySize(join(dir, 'hit-log'));
      peak = { rss: Math.max(peak.rss, rss(pid)), fds: Math.max(peak.fds, openFds(pid)), hitLog: Math.max(peak.hitLog, log.bytes), segments: Math.max(peak.segments, log.files) };
      if (Date.now() - lineStart < LINE_SECONDS * 1000 - 2500 && Date.now() < until) continue;
      const metrics = await (await fetch(`${server.url}/metrics`)).text();
      const received = counter(metrics, 'plumb_hits_received_total');
      const elapsed = (Date.now() - lineStart) / 1000;
      const times = tally.times.sort((a, b) => a - b);
      const line: Line = {
        minutes: (Date.now() - (until - seconds * 1000)) / 60_000,
        ...peak,
        database: directorySize(dir).bytes,
        loopP99: gauge(metrics, 'plumb_nodejs_eventloop_lag_p99_seconds') * 1000,
        loopMax: gauge(metrics, 'plumb_nodejs_eventloop_lag_max_seconds') * 1000,
        hitsPerSecond: (received - hitsBefore) / elapsed,
        others: (othersCpuSeconds(pid) - othersBefore) / elapsed,
        reportsP99: times.length > 0 ? times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]! : 0,
        reportsFailed: tally.failed,
      };
      rows.push(line);
      console.log(
        `| ${line.minutes.toFixed(LINE_SECONDS % 60 === 0 ? 0 : 2)} | ${(line.rss / MiB).toFixed(0)} | ${line.fds} | ${line.loopP99.toFixed(1)} / ${line.loopMax.toFixed(1)} | ${(line.hitLog / MiB).toFixed(1)} (${line.segments}) | ` +
          `${(line.database / MiB).toFixed(0)} | ${line.hitsPerSecond.toFixed(0)} | ${line.reportsP99.toFixed(0)} (${line.reportsFailed}) | ${line.others.toFixed(2)} |`,
      );
      hitsBefore = received;
      othersBefore = othersCpuSeconds(pid);
      lineStart = Date.now();
      tally = { answered: 0, failed: 0, times: [] };
      peak = { rss: 0, fds: 0, hitLog: 0, segments: 0 };
    }
    const [loaded] = await Promise.all([hits, reports]);

    console.log(`\nEach series' last half against its first half: max(last) <= ${GROWTH} x max(first) + slack\n`);
    console.log('| series | first half max | last half max | limit | verdict |');
    console.log('|---|---|---|---|---|');
    const half = Math.floor(rows.length / 2);
    let failed = false;
    for (const s of SERIES) {
      const judged = (lines: Line[]) => (s.quietOnly ? lines.filter((l) => l.others <= QUIET_CORES) : lines);
      const first = judged(rows.slice(0, half));
      const last = judged(rows.slice(half));
      const f = (v: number) => `${v.toFixed(s.unit === '' ? 0 : 1)}${s.unit ? ` ${s.unit}` : ''}`;
      const of = (lines: Line[], all: number) => (lines.length === 0 ? '-' : `${f(Math.max(...lines.map(s.value)))}${lines.length < all ? ` (${lines.length} quiet lines of ${all})` : ''}`);
      if (first.length === 0 || last.length === 0) {
        // Too short, or the machine too busy in a half: no verdict is a failure to show the server bounded.
        failed = true;
        const why = half === 0 ? 'too short to compare: fewer than 2 lines' : `no line of a half had other processes under ${QUIET_CORES} cores`;
        console.log(`| ${s.name} | ${of(first, half)} | ${of(last, rows.length - half)} | - | NOT JUDGED (${why}) |`);
        continue;
      }
      const limit = GROWTH * Math.max(...first.map(s.value)) + s.slack;
      const pass = Math.max(...last.map(s.value)) <= limit;
      failed ||= !pass;
      console.log(`| ${s.name} | ${of(first, half)} | ${of(last, rows.length - half)} | ${f(limit)} (slack ${s.slack.toFixed(0)}) | ${pass ? 'PASS' : 'FAIL'} |`);
    }
    const hitErrors = loaded.errors + loaded.timeouts + loaded.non2xx;
    const reportFailures = rows.reduce((s, l) => s + l.reportsFailed, 0);
    const answered = hitErrors === 0 && reportFailures === 0;
    console.log(
      `| errors | hits: ${loaded['2xx'].toLocaleString('en')} answered 2xx, ${hitErrors} not | reports: ${reportFailures} failed | none | ${answered ? 'PASS' : 'FAIL'} |`,
    );
    console.log(`\nload average at the end: ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
    if (failed || !answered) process.exitCode = 1;
  } finally {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  }
}

/** A number above 0 from the environment variable `name`, or `fallback`. */
function positive(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!(value > 0)) throw new Error(`${name} must be a number above 0`);
  return value;
}
