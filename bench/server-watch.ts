// What the benchmarks watch in a server process of their own: its resident memory and its threads' CPU, sampled,
// and (during an import) how long /healthz takes, asked one request after another; and the CLI run in a process of
// its own.

import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Resident memory of a process in bytes (Linux), 0 where /proc is not there. */
export function rss(pid: number): number {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU time a process has used so far, all its threads, user and system, in seconds (Linux; 0 elsewhere). */
export function cpuSeconds(pid: number): number {
  try {
    // Fields 14 and 15 of /proc/PID/stat (after the parenthesised name, which may hold spaces) in clock ticks.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** Each thread of a process now: its name (src/thread-name.ts names Plumb's) and CPU seconds so far (Linux). */
export function threadCpu(pid: number): Map<number, { name: string; seconds: number }> {
  const threads = new Map<number, { name: string; seconds: number }>();
  let tids: string[] = [];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return threads;
  }
  for (const tid of tids) {
    try {
      const stat = readFileSync(`/proc/${pid}/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      threads.set(Number(tid), { name, seconds: (Number(fields[11]) + Number(fields[12])) / 100 });
    } catch {
      // The thread ended between the listing and the read.
    }
  }
  return threads;
}

/**
 * CPU seconds by thread from a first sampling of a process's threads to each later one: by name, the main thread as
 * "main", threads that ended counted up to their last sampling (threads started meanwhile from zero).
 */
class ThreadCpu {
  private readonly first: Map<number, { name: string; seconds: number }>;
  private readonly last = new Map<number, { name: string; seconds: number }>();

  constructor(private readonly pid: number) {
    this.first = threadCpu(pid);
  }

  sample(): void {
    for (const [tid, thread] of threadCpu(this.pid)) this.last.set(tid, thread);
  }

  byName(): Map<string, number> {
    const names = new Map<string, number>();
    for (const [tid, { name, seconds }] of this.last) {
      const key = tid === this.pid ? 'main' : name;
      names.set(key, (names.get(key) ?? 0) + seconds - (this.first.get(tid)?.seconds ?? 0));
    }
    return names;
  }
}

/**
 * `threads` (Watched.threads) as a line: Plumb's named threads and the main thread each, the rest together (DuckDB's
 * queries run in libuv's pool; V8's and Node's own threads), in CPU seconds and µs per hit for `hits` hits.
 */
export function describeThreads(threads: Map<string, number>, hits: number): string {
  const parts: [string, number][] = [];
  let other = 0;
  for (const [name, seconds] of threads) {
    if (name === 'main' || name.startsWith('plumb-')) parts.push([name, seconds]);
    else other += seconds;
  }
  parts.sort((a, b) => b[1] - a[1]);
  parts.push(["other threads (DuckDB's queries in libuv's pool, V8, Node)", other]);
  return parts.map(([name, seconds]) => `${name} ${seconds.toFixed(1)} s (${((seconds * 1e6) / hits).toFixed(1)} µs/hit)`).join(', ');
}

export interface Watched {
  /** Peak RSS in bytes. */
  peak: number;
  /** The slowest /healthz in ms (0 when it was not asked). */
  slowestHealthz: number;
  /** The 99th percentile of the /healthz answers' times in ms, and how many were asked. */
  p99Healthz: number;
  healthzAsked: number;
  /** CPU seconds by thread name while watched ("main" for the main thread; Plumb names its worker threads). */
  threads: Map<string, number>;
}

export interface Watch {
  /** Stops watching: what was seen. */
  stop(): Promise<Watched>;
}

/** Samples the server's RSS every `everyMs`; with `healthz` also asks its /healthz until stopped. */
export function watchServer(pid: number, { everyMs, healthz }: { everyMs: number; healthz?: string }): Watch {
  let peak = rss(pid);
  const times: number[] = [];
  let watching = true;
  const threads = new ThreadCpu(pid);
  const sampler = setInterval(() => {
    peak = Math.max(peak, rss(pid));
    threads.sample();
  }, everyMs);
  const asking = (async () => {
    while (healthz && watching) {
      const started = performance.now();
      await (await fetch(`${healthz}/healthz`)).text();
      times.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  })();
  return {
    async stop() {
      watching = false;
      clearInterval(sampler);
      threads.sample();
      await asking;
      times.sort((a, b) => a - b);
      const p99Healthz = times.length > 0 ? times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]! : 0;
      return { peak, slowestHealthz: times.at(-1) ?? 0, p99Healthz, healthzAsked: times.length, threads: threads.byName() };
    },
  };
}

/** `plumb` as users run it: bin/plumb.js, which runs the compiled CLI (built by bench/run.ts before anything is timed). */
const PLUMB = fileURLToPath(new URL('../bin/plumb.js', import.meta.url));

/**
 * Runs `plumb` in a child process, so its own work never shows as the server's; its exit code and output.
 * `watch(pid)` is called once it started and returns what to call when it exits (to sample the CLI itself).
 */
export function runCli(args: string[], env: Record<string, string>, watch?: (pid: number) => () => void): Promise<{ code: number | null; out: string }> {
  // BENCH_CLI_NODE_ARGS: extra Node.js flags for the CLI (`--cpu-prof --cpu-prof-dir=/tmp/p` to profile it).
  const extra = (process.env.BENCH_CLI_NODE_ARGS ?? '').split(' ').filter((a) => a !== '');
  const child = spawn(process.execPath, [...extra, PLUMB, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const stop = watch && child.pid !== undefined ? watch(child.pid) : undefined;
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  return new Promise((resolve) =>
    child.on('exit', (code) => {
      stop?.();
      resolve({ code, out });
    }),
  );
}
