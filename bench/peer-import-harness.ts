// The harness the Plausible, Fathom and Umami import benchmarks share: two runs of `plumb import PEER` into a real
// server, measured and tabled alike.

import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { AdminClient } from '../src/cli/admin-client.js';
import type { PeerKind } from '../src/cli/peer-import.js';
import { startServer } from '../test/helpers/process.js';
import { cpuSeconds, rss, runCli, watchServer } from './server-watch.js';

const ADMIN = 'bench-admin-token-0123456789abcdef';
const OWNER = 'bench-bootstrap-token-0123456789';

/** What a peer's export generator wrote, as much as the import and the reports must then show. */
export interface Made {
  rows: number;
  pageviews: number;
  firstDay: string;
  /** Absent where the generator does not work it out: the report then runs to its own default end. */
  lastDay?: string;
}

export interface Run<M extends Made> {
  made: M;
  /** The export as the CLI reads it: the file, or the folder's files together. */
  exportBytes: number;
  seconds: number;
  serverPeak: number;
  cliPeak: number;
  serverCpu: number;
  cliCpu: number;
  slowest: number;
  imported: number;
  rejected: number;
  /** Page views the reports show for the export's days once imported. */
  stored: number;
}

export interface Column<M extends Made> {
  head: string;
  cell: (r: Run<M>) => string;
}

export interface PeerBench<M extends Made> {
  kind: PeerKind;
  /** The site's fields besides its name: what the peer's export needs of it (a time zone, a domain). */
  site: Record<string, string>;
  /** '.zip' or '.csv' for a file, '' for a folder. */
  ending: string;
  write: (path: string, size: number) => Promise<M>;
  columns: readonly Column<M>[];
}

export const megabytes = (bytes: number): string => (bytes / 1e6).toFixed(0);
export const count = (n: number): string => n.toLocaleString('en');

export const rowsColumn = (head: string): Column<Made> => ({ head, cell: (r) => count(r.made.rows) });
export const exportMbColumn = (head: string): Column<Made> => ({ head, cell: (r) => megabytes(r.exportBytes) });

/**
 * The figures every peer's table shows, in the same order. The Fathom table never had the CPU µs a row, and keeps
 * without it so that its figures line up with those already recorded in docs/benchmarks.md.
 */
export function measuredColumns({ cpuPerRow }: { cpuPerRow: boolean }): Column<Made>[] {
  return [
    { head: 'wall s', cell: (r) => r.seconds.toFixed(1) },
    { head: 'rows/s', cell: (r) => count(Math.round(r.made.rows / r.seconds)) },
    { head: 'server CPU s', cell: (r) => r.serverCpu.toFixed(1) },
    ...(cpuPerRow ? [{ head: 'server CPU µs/row', cell: (r: Run<Made>) => ((r.serverCpu / r.made.rows) * 1e6).toFixed(1) }] : []),
    { head: 'CLI CPU s', cell: (r) => r.cliCpu.toFixed(1) },
    { head: 'server peak RSS MiB', cell: (r) => (r.serverPeak / 2 ** 20).toFixed(0) },
    { head: 'CLI peak RSS MiB', cell: (r) => (r.cliPeak / 2 ** 20).toFixed(0) },
    { head: 'slowest /healthz ms', cell: (r) => r.slowest.toFixed(0) },
  ];
}

const titleOf = (kind: PeerKind) => kind[0]!.toUpperCase() + kind.slice(1);

function bytesOnDisk(path: string): number {
  const stat = statSync(path);
  return stat.isDirectory() ? readdirSync(path).reduce((sum, name) => sum + statSync(join(path, name)).size, 0) : stat.size;
}

/** `plumb import KIND PATH --json` in a process of its own, so that its work never shows as the server's. */
async function importExport(kind: PeerKind, path: string, site: string, url: string) {
  let cliPeak = 0;
  let cliCpu = 0;
  // Sampled while it runs: its /proc entry is gone once it has exited.
  const { code, out } = await runCli(['import', kind, path, '--site', site, '--json'], { PLUMB_URL: url, PLUMB_ADMIN_TOKEN: ADMIN }, (pid) => {
    const sampler = setInterval(() => {
      cliPeak = Math.max(cliPeak, rss(pid));
      cliCpu = Math.max(cliCpu, cpuSeconds(pid));
    }, 100);
    return () => clearInterval(sampler);
  });
  return { code, out, cliPeak, cliCpu };
}

/** The CLI's summary; a failure, or output that is not the summary, with the start of what it printed. */
function summaryOf(kind: PeerKind, code: number | null, out: string): { imported: number; rejected: number } {
  try {
    if (code !== 0) throw new Error(`exit ${code}`);
    return JSON.parse(out) as { imported: number; rejected: number };
  } catch (err) {
    throw new Error(`plumb import ${kind} failed (${err instanceof Error ? err.message : String(err)}):\n${out.slice(0, 2000)}`);
  }
}

async function once<M extends Made>(peer: PeerBench<M>, size: number, dir: string): Promise<Run<M>> {
  const path = join(dir, `${peer.kind}-${size}${peer.ending}`);
  const data = join(dir, `data-${size}`);
  const made = await peer.write(path, size);
  const exportBytes = bytesOnDisk(path);
  const server = await startServer({
    PLUMB_DATA_DIR: data,
    PLUMB_ADMIN_TOKEN: ADMIN,
    PLUMB_BOOTSTRAP_TOKEN: OWNER,
    PLUMB_RATE_LIMITS: 'off',
    PLUMB_LOG_LEVEL: 'warn',
  });
  try {
    const client = new AdminClient(server.url, ADMIN);
    const site = (await client.api<{ id: string }>('POST', '/v1/sites', OWNER, { name: `${titleOf(peer.kind)} bench`, ...peer.site })).id;
    const watch = watchServer(server.child.pid!, { everyMs: 100, healthz: server.url });
    const cpuBefore = cpuSeconds(server.child.pid!);
    const started = performance.now();
    const cli = await importExport(peer.kind, path, site, server.url);
    const seconds = (performance.now() - started) / 1000;
    const serverCpu = cpuSeconds(server.child.pid!) - cpuBefore;
    const { peak, slowestHealthz } = await watch.stop();
    const { imported, rejected } = summaryOf(peer.kind, cli.code, cli.out);
    const days = `date_from=${made.firstDay}${made.lastDay === undefined ? '' : `&date_to=${made.lastDay}`}`;
    const report = await client.api<{ pageviews: string }[]>('GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&${days}`, OWNER);
    return {
      made, exportBytes, seconds, serverPeak: peak, cliPeak: cli.cliPeak, serverCpu, cliCpu: cli.cliCpu, slowest: slowestHealthz,
      imported, rejected, stored: Number(report[0]?.pageviews ?? 0),
    };
  } finally {
    await server.stop();
    rmSync(path, { recursive: true, force: true });
    rmSync(data, { recursive: true, force: true });
  }
}

/**
 * Runs `peer` at a tenth of `size` and at `size` (each with a fresh server), then prints the machine, the load and
 * the table; a run that lost rows fails the benchmark. Two sizes, because the peaks should not grow with the export.
 */
export async function benchPeerImport<M extends Made>(peer: PeerBench<M>, size: number): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), `plumb-bench-${peer.kind}-`));
  try {
    const load = () => loadavg().map((l) => l.toFixed(1)).join(' ');
    const before = load();
    const runs = [await once(peer, Math.round(size / 10), dir), await once(peer, size, dir)];
    console.log(`\n${titleOf(peer.kind)} import benchmark: ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; load average before: ${before}, after: ${load()}\n`);
    console.log(`| ${peer.columns.map((c) => c.head).join(' | ')} |`);
    console.log(`|${'---|'.repeat(peer.columns.length)}`);
    for (const r of runs) {
      console.log(`| ${peer.columns.map((c) => c.cell(r)).join(' | ')} |`);
      if (r.imported !== r.made.rows || r.rejected !== 0 || r.stored !== r.made.pageviews) {
        console.log(`ROWS LOST: ${r.made.rows} rows, ${r.imported} imported, ${r.rejected} rejected; ${r.made.pageviews} page views, ${r.stored} reported`);
        process.exitCode = 1;
      }
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
