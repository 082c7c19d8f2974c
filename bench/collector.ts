// Collector throughput: sustained hits/second through HTTP into the embedded store and into scale-out mode
// (PostgreSQL + ClickHouse + Redis), each against the same server's bare /healthz under the same load, and all
// against a bare Fastify route in a process of its own (the issue's baseline), then a check that every accepted
// hit was stored. The runs go in rounds (BENCH_ROUNDS, default 3): each round measures the bare route, /healthz and
// the collector one after the other, so that each round's ratios compare runs minutes apart at most; the machine's
// speed drifts by a third within minutes (docs/benchmarks.md, "How figures are reported"). Each round ends with a
// run of engagement beacons (POST with e and sd) from the visitors whose pageviews the round's collector run just
// recorded, so every beacon finds its visit in progress and is stored (checked after SIGTERM), not dropped.

import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import autocannon from 'autocannon';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { DuckEventStore } from '../src/store/duckdb/event-store.js';
import { startServer } from '../test/helpers/process.js';
import { median } from './median.js';
import { threadCpu } from './server-watch.js';
import { clickhouseStatement, freshScaleOut, scaleOutServerEnv, type ScaleOutFixture } from '../test/helpers/scale-out.js';

const AGENTS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  'Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
];

/** Connections the generator keeps open (BENCH_CONNECTIONS overrides; the issue's runs use 64). */
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 64);

/** Rounds of bare route, /healthz and collector runs (BENCH_ROUNDS overrides). */
const ROUNDS = Math.max(1, Number(process.env.BENCH_ROUNDS ?? 3));

/**
 * BENCH_RATE: requests per second the generator offers in every run, all connections together (default: as fast
 * as answers come). At a rate every version sustains, CPU per request compares versions even on a busy machine.
 */
const RATE = Number(process.env.BENCH_RATE ?? 0);

/**
 * CPU time a process has used, all its threads, in microseconds; with `mainThread`, only its main thread's (the
 * event loop, whose task id is the process id). Linux /proc; 0 elsewhere.
 */
function cpuMicros(pid: number, mainThread = false): number {
  try {
    // Fields 14 and 15 of /proc/PID/stat (after the parenthesised name): user and system time in clock ticks.
    const fields = readFileSync(mainThread ? `/proc/${pid}/task/${pid}/stat` : `/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
  } catch {
    return 0;
  }
}

/** CPU time of the server's ingest thread (it names itself plumb-ingest), µs; 0 where it is not found. */
function ingestCpuMicros(pid: number): number {
  let seconds = 0;
  for (const { name, seconds: used } of threadCpu(pid).values()) if (name === 'plumb-ingest') seconds += used;
  return seconds * 1e6;
}

/**
 * Context switches of all a process's threads so far (voluntary and not): each hand-off between threads (a message
 * to a worker, a task for libuv's pool) costs some, and on two cores they cost more than the work they hand over.
 */
function contextSwitches(pid: number): number {
  let tasks: string[] = [];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return 0;
  }
  let switches = 0;
  for (const task of tasks) {
    try {
      for (const match of readFileSync(`/proc/${pid}/task/${task}/status`, 'utf8').matchAll(/^(?:non)?voluntary_ctxt_switches:\s+(\d+)$/gm)) {
        switches += Number(match[1]);
      }
    } catch {
      // the thread ended between the listing and the read
    }
  }
  return switches;
}

/**
 * CPU time of the database servers on this machine (Redis, ClickHouse, PostgreSQL: every process of theirs), in
 * microseconds: in scale-out mode they share the two cores with the server and the generator. Linux /proc.
 */
function databaseCpuMicros(): { redis: number; clickhouse: number; postgres: number } {
  const total = { redis: 0, clickhouse: 0, postgres: 0 };
  for (const pid of readdirSync('/proc').filter((d) => /^\d+$/.test(d))) {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const kind = /^redis-server/.test(name) ? 'redis' : /^clickhouse/.test(name) ? 'clickhouse' : /^postgres/.test(name) ? 'postgres' : undefined;
      if (!kind) continue;
      const fields = stat.slice(stat.lastIndexOf(') ') + 2).split(' ');
      total[kind] += ((Number(fields[11]) + Number(fields[12])) * 1e6) / 100;
    } catch {
      // the process ended between the listing and the read
    }
  }
  return total;
}

interface Run {
  rps: number;
  /** CPU of Redis, ClickHouse and PostgreSQL per answered request, µs (whatever else uses them counts too). */
  databasePerRequest: { redis: number; clickhouse: number; postgres: number };
  /** Server CPU per answered request, µs (all threads, DuckDB's included). */
  cpuPerRequest: number;
  /** The same for the server's main thread alone (the event loop), and for its ingest thread (src/ingest/live/ingest-thread.ts). */
  mainPerRequest: number;
  ingestPerRequest: number;
  /** The server's context switches per answered request, all threads. */
  switches: number;
  p50: number;
  p99: number;
  ok: number;
  errors: number;
}

function perRequest<T extends Record<string, number>>(after: T, before: T, requests: number): T {
  return Object.fromEntries(Object.entries(after).map(([k, v]) => [k, (v - before[k]!) / Math.max(1, requests)])) as T;
}

/**
 * What a run sends: the server's /healthz, pageviews (visitor n from 1 up, each with its own address), or
 * engagement beacons from the first `visitors` of those visitors in turn (the pageview run before it made their visits).
 */
type Load = { kind: 'healthz' } | { kind: 'pageview' } | { kind: 'engagement'; visitors: number };

/** The request headers of generated visitor n: its address and one of the agents. */
const visitorHeaders = (n: number) => ({
  'user-agent': AGENTS[n % AGENTS.length]!,
  'x-forwarded-for': `81.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}`,
});

async function load(url: string, seconds: number, what: Load, pid: number): Promise<Run> {
  let n = 0;
  const cpuBefore = cpuMicros(pid);
  const mainBefore = cpuMicros(pid, true);
  const ingestBefore = ingestCpuMicros(pid);
  const switchesBefore = contextSwitches(pid);
  const databaseBefore = databaseCpuMicros();
  const result = await autocannon({
    url,
    connections: CONNECTIONS,
    ...(RATE > 0 ? { overallRate: RATE } : {}),
    pipelining: 1,
    duration: seconds,
    requests: [
      {
        method: 'GET',
        setupRequest: (req) => {
          if (what.kind === 'healthz') return { ...req, path: '/healthz' };
          n++;
          if (what.kind === 'engagement') {
            // The beacon of visitor v's page as the tag sends it: engaged ms and scroll percent in the query.
            const v = ((n - 1) % Math.max(1, what.visitors)) + 1;
            return {
              ...req,
              method: 'POST',
              path: `/?sid=${process.env.BENCH_SITE}&h=https%3A%2F%2Fbench.example&p=%2Fpage-${v % 500}&e=${(n * 7919) % 120_000}&sd=${n % 101}`,
              headers: visitorHeaders(v),
            };
          }
          // Many visitors (addresses via X-Forwarded-For), a few agents, many pages: what a busy site sends.
          return {
            ...req,
            path: `/?sid=${process.env.BENCH_SITE}&h=https%3A%2F%2Fbench.example&p=%2Fpage-${n % 500}&r=https%3A%2F%2Fwww.google.com%2F&cid=${n}`,
            headers: visitorHeaders(n),
          };
        },
      },
    ],
  });
  return {
    rps: result.requests.average,
    cpuPerRequest: (cpuMicros(pid) - cpuBefore) / Math.max(1, result['2xx']),
    mainPerRequest: (cpuMicros(pid, true) - mainBefore) / Math.max(1, result['2xx']),
    ingestPerRequest: (ingestCpuMicros(pid) - ingestBefore) / Math.max(1, result['2xx']),
    switches: (contextSwitches(pid) - switchesBefore) / Math.max(1, result['2xx']),
    databasePerRequest: perRequest(databaseCpuMicros(), databaseBefore, result['2xx']),
    p50: result.latency.p50,
    p99: result.latency.p99,
    ok: result['2xx'],
    errors: result.errors + result.timeouts + result.non2xx,
  };
}

/** A configuration to measure: how to start the server on it, count what it stored, and clean up. */
interface Mode {
  name: string;
  env(dir: string): Record<string, string>;
  /** Hits stored for the site, of `type` when given. */
  storedHits(dir: string, site: string, type?: string): Promise<number>;
  cleanup(): Promise<void>;
}

const embedded: Mode = {
  name: 'embedded (DuckDB)',
  env: (dir) => ({ PLUMB_DATA_DIR: dir }),
  async storedHits(dir, site, type) {
    const db = await DuckDatabase.open(join(dir, 'plumb.duckdb'));
    const events = await DuckEventStore.open(db);
    // Counted by DuckDB: listed as objects, a minute's hits at 13,000 a second ran this process out of heap.
    const stored = Number((await events.query(`SELECT count(*) AS n FROM hits WHERE site_id = ?${type ? ' AND type = ?' : ''}`, type ? [site, type] : [site]))[0]!.n);
    await events.close();
    await db.close();
    return stored;
  },
  cleanup: async () => undefined,
};

function scaleOut(fixture: ScaleOutFixture): Mode {
  return {
    name: 'scale-out (PostgreSQL + ClickHouse + Redis)',
    env: (dir) => scaleOutServerEnv(fixture, dir),
    storedHits: async (_dir, site, type) =>
      Number(await clickhouseStatement(`SELECT count() FROM ${fixture.options.clickhouseDatabase}.hits WHERE site_id = '${site}'${type ? ` AND type = '${type}'` : ''}`)),
    cleanup: () => fixture.drop(),
  };
}

// One Fastify route answering the collector's GIF and nothing else: what HTTP costs on this machine.
const BARE_FASTIFY = `
import Fastify from 'fastify';
const pixel = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const app = Fastify({ logger: false });
app.get('/', (request, reply) => reply.header('cache-control', 'no-store').type('image/gif').send(pixel));
await app.listen({ host: '127.0.0.1', port: 0 });
console.log(app.server.address().port);`;

interface BareRoute {
  /** A run of the route, loaded like the collector (same requests, same generator). */
  measure(seconds: number): Promise<Run>;
  stop(): void;
}

/** The bare Fastify route in a process of its own, warmed up; it waits idle between runs. */
async function startBareFastify(): Promise<BareRoute> {
  const child = spawn(process.execPath, ['--input-type=module', '-e', BARE_FASTIFY], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve) => child.stdout.once('data', (d: Buffer) => resolve(String(d).trim())));
  const url = `http://127.0.0.1:${port}`;
  await load(url, 3, { kind: 'pageview' }, child.pid!);
  return { measure: (seconds) => load(url, seconds, { kind: 'pageview' }, child.pid!), stop: () => child.kill() };
}

/** One round's runs, one after the other. */
interface Round {
  bare: Run;
  healthz: Run;
  collector: Run;
  /** Engagement beacons of the collector run's visitors. */
  engagement: Run;
}

interface Measured {
  mode: string;
  rounds: Round[];
  accepted: number;
  stored: number;
  /** Engagement beacons answered 2xx, and engagement hits stored (every one should be: its visit was in progress). */
  engagementAccepted: number;
  engagementStored: number;
}

async function measure(mode: Mode, seconds: number, bare: BareRoute): Promise<Measured> {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-bench-'));
  const token = 'bench-bootstrap-token-0123456789';
  const server = await startServer({
    ...mode.env(dir),
    PLUMB_BOOTSTRAP_TOKEN: token,
    PLUMB_TRUST_PROXY: 'true',
    PLUMB_RATE_LIMITS: 'off',
    PLUMB_LOG_LEVEL: 'warn',
  });
  const res = await fetch(`${server.url}/v1/sites`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'Bench' }),
  });
  const site = ((await res.json()) as { id: string }).id;
  process.env.BENCH_SITE = site;

  const pid = server.child.pid!;
  const warmup = await load(server.url, 3, { kind: 'pageview' }, pid); // warm-up: JIT, caches, first salts
  const rounds: Round[] = [];
  for (let r = 0; r < ROUNDS; r++) {
    const bareRun = await bare.measure(seconds);
    const healthz = await load(server.url, seconds, { kind: 'healthz' }, pid);
    const collector = await load(server.url, seconds, { kind: 'pageview' }, pid);
    rounds.push({ bare: bareRun, healthz, collector, engagement: await load(server.url, seconds, { kind: 'engagement', visitors: collector.ok }, pid) });
  }
  await server.stop(); // flushes the buffer
  const stored = await mode.storedHits(dir, site);
  const engagementStored = await mode.storedHits(dir, site, 'engagement');
  await mode.cleanup();
  rmSync(dir, { recursive: true, force: true });
  // Every 2xx of the warm-up and the measured runs is an accepted hit and must have been stored.
  const engagementAccepted = rounds.reduce((n, r) => n + r.engagement.ok, 0);
  return { mode: mode.name, rounds, accepted: rounds.reduce((n, r) => n + r.collector.ok, warmup.ok) + engagementAccepted, stored, engagementAccepted, engagementStored };
}

export async function benchCollector(seconds = 15): Promise<void> {
  // BENCH_SCALE_OUT=off skips the scale-out run, BENCH_EMBEDDED=off the embedded one.
  const modes: Mode[] = process.env.BENCH_EMBEDDED === 'off' ? [] : [embedded];
  if (process.env.BENCH_SCALE_OUT !== 'off') modes.push(scaleOut(await freshScaleOut()));
  const bare = await startBareFastify();
  const results: Measured[] = [];
  try {
    for (const mode of modes) results.push(await measure(mode, seconds, bare));
  } finally {
    bare.stop();
  }

  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  console.log(`\nCollector benchmark (${ROUNDS} rounds of ${seconds} s runs, ${CONNECTIONS} connections, ${cpus().length} cores, ${cpu})\n`);
  console.log('| configuration | run | requests/s | p50 ms | p99 ms | server CPU µs/request (main thread / ingest thread) | context switches/request | Redis / ClickHouse / PostgreSQL CPU µs/request | 2xx | errors |');
  console.log('|---|---|---|---|---|---|---|---|---|---|');
  const row = (config: string, name: string, r: Run) =>
    console.log(`| ${config} | ${name} | ${r.rps.toFixed(0)} | ${r.p50} | ${r.p99} | ${r.cpuPerRequest.toFixed(0)} (${r.mainPerRequest.toFixed(0)} / ${r.ingestPerRequest.toFixed(0)}) | ${r.switches.toFixed(2)} | ${Object.values(r.databasePerRequest).map((v) => v.toFixed(0)).join(' / ')} | ${r.ok} | ${r.errors} |`);
  for (const m of results) {
    m.rounds.forEach((r, i) => {
      row('bare Fastify, own process', `round ${i + 1}: GET / the same GIF (baseline)`, r.bare);
      row(m.mode, `round ${i + 1}: GET /healthz`, r.healthz);
      row(m.mode, `round ${i + 1}: GET / pageview (collector)`, r.collector);
      row(m.mode, `round ${i + 1}: POST / engagement (collector)`, r.engagement);
    });
  }
  console.log('');
  for (const m of results) {
    const ratios = (of: (r: Round) => number) => {
      const each = m.rounds.map(of);
      return `${median(each).toFixed(2)} (rounds: ${each.map((v) => v.toFixed(2)).join(', ')})`;
    };
    const collectors = m.rounds.map((r) => r.collector);
    console.log(
      `${m.mode}: collector / bare Fastify route, median of the rounds' ratios ${ratios((r) => r.collector.rps / r.bare.rps)}; ` +
        `collector / same server's /healthz ${ratios((r) => r.collector.rps / r.healthz.rps)}`,
    );
    const engagements = m.rounds.map((r) => r.engagement);
    console.log(
      `  engagement beacons / bare Fastify route ${ratios((r) => r.engagement.rps / r.bare.rps)}; / the round's pageviews ${ratios((r) => r.engagement.rps / r.collector.rps)}; ` +
        `medians ${median(engagements.map((r) => r.rps)).toFixed(0)} beacons/s, p99 ${median(engagements.map((r) => r.p99))} ms, server CPU ${median(engagements.map((r) => r.cpuPerRequest)).toFixed(0)} µs a beacon`,
    );
    console.log(
      `  collector medians: ${median(collectors.map((r) => r.rps)).toFixed(0)} hits/s, p99 ${median(collectors.map((r) => r.p99))} ms, ` +
        `server CPU ${median(collectors.map((r) => r.cpuPerRequest)).toFixed(0)} µs a hit; bare route median ${median(m.rounds.map((r) => r.bare.rps)).toFixed(0)} requests/s`,
    );
    // A few more than accepted may be stored: requests in flight when a run's time is up are served, but the
    // load generator drops their answers (at most one per connection per run, the warm-up's included).
    const lost = m.stored < m.accepted;
    const inFlight = (2 * m.rounds.length + 1) * CONNECTIONS; // pageview and engagement runs, and the warm-up
    console.log(
      `  hits answered 2xx: ${m.accepted}, stored after SIGTERM: ${m.stored} ` +
        `(${lost ? 'LOST HITS' : `none lost; ${m.stored - m.accepted} more were in flight when a run ended`})`,
    );
    // Engagement beacons in flight at a run's end are stored too; fewer stored than answered means some were dropped
    // (no visit in progress) or lost.
    const engagementShort = m.engagementStored < m.engagementAccepted;
    console.log(
      `  engagement beacons answered 2xx: ${m.engagementAccepted}, engagement hits stored: ${m.engagementStored} ` +
        `(${engagementShort ? 'DROPPED OR LOST' : 'every beacon recorded'})`,
    );
    if (lost || engagementShort || m.stored - m.accepted > inFlight) process.exitCode = 1;
  }
}
