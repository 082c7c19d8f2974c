// Runs the real server (src/main.ts) as a child process, the way `npm start` does, for end-to-end tests.

import { spawn, type ChildProcess } from 'node:child_process';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { serverNodeFlags } from '../../scripts/server-node-flags.mjs';
import { sourceEntry } from './root.js';

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  stdout: () => string;
  /** SIGTERM, then the exit code. */
  stop(): Promise<number | null>;
}

/**
 * The test process's environment for a server started with `env`. A server given no CLICKHOUSE_URL is an embedded
 * one: the cluster `npm run test:cluster` names for the tests' ClickHouse (CLICKHOUSE_CLUSTER) is not its setting,
 * and would stop its start.
 */
function inheritedEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const { CLICKHOUSE_CLUSTER: cluster, ...inherited } = process.env;
  return env.CLICKHOUSE_URL !== undefined && cluster !== undefined ? { ...inherited, CLICKHOUSE_CLUSTER: cluster } : inherited;
}

/**
 * `compiled`: run the built server through scripts/start.mjs, exactly what `npm start` runs (for measuring memory:
 * the TypeScript loader of the default adds about 40 MiB that a user's server does not have). `onOutput`: each
 * piece of its output as it comes, before it listens too.
 */
export function startServer(
  env: Record<string, string>,
  { compiled = false, onOutput }: { compiled?: boolean; onOutput?: (text: string) => void } = {},
): Promise<ServerProcess> {
  // BENCH_SERVER_NODE_ARGS: extra Node.js flags for the server (`--cpu-prof --cpu-prof-dir=/tmp/p` to profile a
  // benchmark's server: Node refuses --cpu-prof in NODE_OPTIONS).
  // The flags `npm start` gives the server (PLUMB_SINGLE_THREADED_GC=off in the caller's environment leaves them out).
  const extra = [...(serverNodeFlags() as string[]), ...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter((a) => a !== '')];
  const entry = compiled ? ['scripts/start.mjs'] : sourceEntry('src/main.ts');
  const child = spawn(process.execPath, [...extra, ...entry], {
    // MALLOC_ARENA_MAX as `npm start` sets it (package.json), unless the caller's environment has its own.
    env: { ...inheritedEnv(env), MALLOC_ARENA_MAX: process.env.MALLOC_ARENA_MAX || '2', PORT: '0', HOST: '127.0.0.1', PLUMB_LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  // Keep the start of the output (bootstrap lines) and not megabytes of request logs from load tests.
  const keep = (d: Buffer) => {
    if (out.length < 1_000_000) out += d.toString();
    onOutput?.(d.toString());
  };
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    // A server that never says it listens is stopped too: left running, it would keep the test file from ending.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server did not start within 30 s:\n${out}`));
    }, 30_000);
    const check = () => {
      const m = /Plumb listening on (http:\/\/[\d.:]+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, url: m[1]!, stdout: () => out, stop: async () => (child.kill('SIGTERM'), exited) });
      }
    };
    child.stdout!.on('data', check);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code}:\n${out}`));
    });
  });
}

/** Runs the server expecting it to refuse to start; resolves with its exit code and output. */
export function runServerExpectingExit(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, sourceEntry('src/main.ts'), {
    env: { ...inheritedEnv(env), PORT: '0', HOST: '127.0.0.1', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  return new Promise((resolve) => child.on('exit', (code) => resolve({ code, output })));
}
