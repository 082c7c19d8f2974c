// What the benchmarks watch in a server process of their own: its resident memory, sampled, and (during an
// import) how long /healthz takes, asked one request after another; and the CLI run in a process of its own.

import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
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

export interface Watched {
  /** Peak RSS in bytes. */
  peak: number;
  /** The slowest /healthz in ms (0 when it was not asked). */
  slowestHealthz: number;
  /** The 99th percentile of the /healthz answers' times in ms, and how many were asked. */
  p99Healthz: number;
  healthzAsked: number;
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
  const sampler = setInterval(() => (peak = Math.max(peak, rss(pid))), everyMs);
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
      await asking;
      times.sort((a, b) => a - b);
      const p99Healthz = times.length > 0 ? times[Math.min(times.length - 1, Math.floor(times.length * 0.99))]! : 0;
      return { peak, slowestHealthz: times.at(-1) ?? 0, p99Healthz, healthzAsked: times.length };
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
