// Start to ready: from launching the compiled server (scripts/start.mjs, what `npm start` runs after npm and its
// flags script) to its "Plumb listening on" line, on a fresh data directory and on one holding the demo's ~80,000
// hits, with the server's CPU time at that line; beside it, in the same run, a bare Node.js + Fastify process that
// listens (the floor any start of a Fastify server costs here), and the ratio. BENCH_STARTUP_RUNS: starts of each
// (5 by default).

import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { serverNodeFlags } from '../scripts/server-node-flags.mjs';
import { startServer } from '../test/helpers/process.js';
import { median } from './median.js';
import { cpuSeconds, runCli } from './server-watch.js';

interface Start {
  ms: number;
  cpuMs: number;
}

/** One start of the compiled server on `dataDir`, stopped again once it said it listens. */
async function startPlumb(dataDir: string): Promise<Start> {
  const started = performance.now();
  const server = await startServer({ PLUMB_DATA_DIR: dataDir }, { compiled: true });
  const ms = performance.now() - started;
  const cpuMs = cpuSeconds(server.child.pid!) * 1000;
  await server.stop();
  return { ms, cpuMs };
}

// The floor: Node.js with the server's flags, Fastify loaded, one route, listening.
const BARE = `import('fastify').then(async ({ default: Fastify }) => {
  const app = Fastify();
  app.get('/', async () => 'ok');
  await app.listen({ port: 0, host: '127.0.0.1' });
  console.log('listening');
});`;

function startBare(): Promise<Start> {
  const started = performance.now();
  const child = spawn(process.execPath, [...(serverNodeFlags() as string[]), '--input-type=module', '-e', BARE], { stdio: ['ignore', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => {
      if (!d.toString().includes('listening')) return;
      const result = { ms: performance.now() - started, cpuMs: cpuSeconds(child.pid!) * 1000 };
      child.once('exit', () => resolve(result));
      child.kill('SIGTERM');
    });
    child.once('error', reject);
  });
}

/** A data directory holding the demo's month of traffic (`plumb demo`: about 80,000 hits), the server stopped. */
async function seeded(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-startup-'));
  const server = await startServer({ PLUMB_DATA_DIR: dir }, { compiled: true });
  const { code, out } = await runCli(['demo'], { PLUMB_URL: server.url, PLUMB_DATA_DIR: dir });
  await server.stop();
  if (code !== 0) throw new Error(`plumb demo failed (${code}): ${out}`);
  console.log(out.split('\n')[0]);
  return dir;
}

function row(name: string, starts: Start[], floor?: number): string {
  const ms = starts.map((s) => s.ms);
  const cpu = starts.map((s) => s.cpuMs);
  const ratio = floor === undefined ? '' : `${(median(ms) / floor).toFixed(1)}x`;
  return `| ${name} | ${median(ms).toFixed(0)} | ${Math.min(...ms).toFixed(0)}-${Math.max(...ms).toFixed(0)} | ${median(cpu).toFixed(0)} | ${ratio} |`;
}

export async function benchStartup(runs = 5): Promise<void> {
  const full = await seeded();
  const bare: Start[] = [];
  const fresh: Start[] = [];
  const restart: Start[] = [];
  // Interleaved, so that a change in the machine's load falls on every kind alike.
  for (let i = 0; i < runs; i++) {
    bare.push(await startBare());
    const dir = await mkdtemp(join(tmpdir(), 'plumb-startup-'));
    fresh.push(await startPlumb(dir));
    await rm(dir, { recursive: true, force: true });
    restart.push(await startPlumb(full));
  }
  await rm(full, { recursive: true, force: true });

  const floor = median(bare.map((s) => s.ms));
  const load = loadavg().map((l) => l.toFixed(2)).join(' ');
  console.log(`\nStart to ready: launch to "Plumb listening on", ${runs} starts each (${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}, Node ${process.version}, load ${load} at the end)\n`);
  console.log('| start | median ms | range ms | CPU ms at ready (median) | / bare Fastify |');
  console.log('|---|---|---|---|---|');
  console.log(row('bare Node.js + Fastify listening', bare));
  console.log(row('Plumb, fresh data directory', fresh, floor));
  console.log(row('Plumb, ~80,000 hits stored', restart, floor));
}
