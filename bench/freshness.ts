// `npm run bench -- freshness`: how soon a hit shows. Per store (embedded; scale-out unless BENCH_SCALE_OUT=off), at
// rest and under load (another site's pageviews at FRESH_RATE a second, default 1,000, from autocannon), it sends
// FRESH_HITS pageviews (default 24) spread at random over FRESH_SPREAD_MS (default 9 s, more than two of the
// embedded store's 4-second record files, so they fall all over the batching cycle) and times, from each one's
// answer, until /v1/current_visitors lists its page and until /v1/aggregations counts it (polled every 25 ms).
// Goals (issue 46): under 1 s and under 5 s.

import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import autocannon from 'autocannon';
import { startServer } from '../test/helpers/process.js';
import { freshScaleOut, scaleOutServerEnv } from '../test/helpers/scale-out.js';
import { median } from './median.js';

const HITS = Number(process.env.FRESH_HITS ?? 24);
const SPREAD_MS = Number(process.env.FRESH_SPREAD_MS ?? 9_000);
const RATE = Number(process.env.FRESH_RATE ?? 1_000);
const POLL_MS = 25;
/** Past this, a hit is reported as not seen (and the run fails). */
const GIVE_UP_MS = 30_000;
const TOKEN = 'fresh-bootstrap-token-0123456789';
const AGENT = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

interface Seen {
  current: number;
  report: number;
}

async function api(url: string): Promise<unknown> {
  const res = await fetch(url, { headers: { authorization: `Bearer ${TOKEN}` } });
  if (!res.ok) throw new Error(`${url}: ${res.status} ${await res.text()}`);
  return res.json();
}

/** Milliseconds from now until `check` is true, polled; GIVE_UP_MS + 1 when it never is. */
async function until(check: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < GIVE_UP_MS) {
    if (await check()) return performance.now() - start;
    await sleep(POLL_MS);
  }
  return GIVE_UP_MS + 1;
}

/** One hit on a page of its own, from a visitor of its own; both times from its answer. */
async function timeOne(base: string, site: string, n: number, run: string): Promise<Seen> {
  const path = `/fresh/${run}/${n}`;
  const params = new URLSearchParams({ sid: site, h: 'https://fresh.example', p: path, r: '' });
  const res = await fetch(`${base}/?${params}`, { headers: { 'user-agent': AGENT, 'x-forwarded-for': `198.18.${n >> 8}.${n & 255}` } });
  if (!res.ok) throw new Error(`the collector answered ${res.status}`);
  await res.arrayBuffer();
  const currentQuery = `${base}/v1/current_visitors?site_id=${site}&detailed=true`;
  const reportQuery = `${base}/v1/aggregations?${new URLSearchParams({
    entity: 'pageview', entity_id: site, aggregates: 'pageviews', date_from: new Date(Date.now() - 86_400_000).toISOString().slice(0, 10),
    filters: JSON.stringify([{ property: 'pathname', operator: 'is', value: path }]),
  })}`;
  const [current, report] = await Promise.all([
    until(async () => ((await api(currentQuery)) as { content?: { pathname: string }[] }).content?.some((c) => c.pathname === path) ?? false),
    until(async () => Number(((await api(reportQuery)) as { pageviews?: string }[])[0]?.pageviews ?? 0) === 1),
  ]);
  // Both polls start once the answer is in: each figure is from the answer.
  return { current, report };
}

async function timeMany(base: string, site: string, run: string): Promise<Seen[]> {
  const offsets = Array.from({ length: HITS }, () => Math.random() * SPREAD_MS).sort((a, b) => a - b);
  const start = performance.now();
  return Promise.all(offsets.map(async (at, n) => {
    await sleep(Math.max(0, at - (performance.now() - start)));
    return timeOne(base, site, n, run);
  }));
}

/** Other visitors' pageviews at RATE a second while `work` runs. */
async function underLoad<T>(base: string, site: string, work: () => Promise<T>): Promise<{ value: T; sent: number }> {
  let n = 0;
  let finished!: () => void;
  const done = new Promise<void>((resolve) => (finished = resolve));
  // With a callback autocannon gives its instance, which can be stopped.
  const instance = autocannon({
    url: base,
    connections: 32,
    overallRate: RATE,
    pipelining: 1,
    duration: 3600,
    requests: [{
      method: 'GET',
      setupRequest: (req) => {
        n++;
        return {
          ...req,
          path: `/?sid=${site}&h=https%3A%2F%2Ffresh.example&p=%2Fload-${n % 300}&r=https%3A%2F%2Fwww.google.com%2F`,
          headers: { 'user-agent': AGENT, 'x-forwarded-for': `81.${(n >> 16) & 255}.${(n >> 8) & 255}.${n & 255}` },
        };
      },
    }],
  }, () => finished());
  await sleep(3_000); // the rate reached, record files already cut under it
  try {
    return { value: await work(), sent: n };
  } finally {
    instance.stop();
    await done;
  }
}

const fmt = (ms: number) => (ms > GIVE_UP_MS ? 'never' : `${(ms / 1000).toFixed(2)} s`);
function row(store: string, phase: string, seen: Seen[], extra = ''): boolean {
  const current = seen.map((s) => s.current);
  const report = seen.map((s) => s.report);
  const ok = Math.max(...current) < 1_000 && Math.max(...report) < 5_000;
  console.log(`| ${store} | ${phase}${extra} | ${seen.length} | ${fmt(median(current))} | ${fmt(Math.max(...current))} | ${fmt(median(report))} | ${fmt(Math.max(...report))} | ${ok ? 'yes' : 'NO'} |`);
  return ok;
}

export async function benchFreshness(): Promise<void> {
  const stores: { name: string; env: (dir: string) => Promise<Record<string, string>>; cleanup?: () => Promise<void> }[] = [
    { name: 'embedded (DuckDB)', env: async (dir) => ({ PLUMB_DATA_DIR: dir }) },
  ];
  if (process.env.BENCH_SCALE_OUT !== 'off') {
    let drop: (() => Promise<void>) | undefined;
    stores.push({
      name: 'scale-out (PostgreSQL + ClickHouse + Redis)',
      env: async (dir) => {
        const fixture = await freshScaleOut();
        drop = () => fixture.drop();
        return scaleOutServerEnv(fixture, dir);
      },
      cleanup: async () => drop?.(),
    });
  }
  console.log(`\nFreshness: ${HITS} hits spread over ${SPREAD_MS / 1000} s, polled every ${POLL_MS} ms; under load, other pageviews at ${RATE}/s (${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'})\n`);
  console.log('| store | phase | hits | current visitors, median | max | report, median | max | under 1 s and 5 s |');
  console.log('|---|---|---|---|---|---|---|---|');
  let allOk = true;
  for (const store of stores) {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-fresh-'));
    const server = await startServer({
      ...(await store.env(dir)), PLUMB_BOOTSTRAP_TOKEN: TOKEN, PLUMB_TRUST_PROXY: 'true', PLUMB_RATE_LIMITS: 'off', PLUMB_LOG_LEVEL: 'warn',
    }, { compiled: true });
    try {
      const newSite = async (name: string) => {
        const res = await fetch(`${server.url}/v1/sites`, {
          method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ name }),
        });
        return ((await res.json()) as { id: string }).id;
      };
      // The timed hits go to a site of their own: among the load's thousands of visits, a page with one would not be
      // in current visitors' top 150.
      const site = await newSite('Fresh');
      const busy = await newSite('Busy');
      allOk = row(store.name, 'at rest', await timeMany(server.url, site, 'rest')) && allOk;
      const loaded = await underLoad(server.url, busy, () => timeMany(server.url, site, 'load'));
      allOk = row(store.name, 'under load', loaded.value, ` (${loaded.sent.toLocaleString('en-US')} other hits sent)`) && allOk;
    } finally {
      await server.stop();
      await store.cleanup?.();
      rmSync(dir, { recursive: true, force: true });
    }
  }
  if (!allOk) process.exitCode = 1;
}
