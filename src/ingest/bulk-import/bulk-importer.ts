// The main thread's side of set-based NDJSON imports: streams request bodies to files for the import thread
// (started on first use), answers its site and goal lookups from the ingest side's cached directory, and has the
// event store load each chunk's rows from the files the thread wrote, in order, before the chunk is answered.

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import type { Metrics } from '../../metrics.js';
import { removeCsvFiles, type CsvRows } from '../../store/event-csv.js';
import type { ImportLookups } from './batch-import.js';
import type { ImportResult } from '../line-import.js';
import { spoolBody } from './import-body.js';
import { IMPORT_SESSION_MS, type FromImportThread, type ImportThreadConfig, type ToImportThread } from './import-protocol.js';
import type { SiteDirectory } from '../site-directory.js';
import { startWorker } from '../../start-worker.js';
import type { CounterDeltas } from '../pipeline.js';

/** Adds counts gathered on another thread to the process's metrics. */
export function addCounts(m: Metrics, c: CounterDeltas): void {
  for (const type of ['pageview', 'event', 'engagement'] as const) {
    if (c.received[type] > 0) m.hitsReceived.inc({ type }, c.received[type]);
    if (c.recorded[type] > 0) m.hitsRecorded.inc({ type }, c.recorded[type]);
  }
  for (const [reason, n] of Object.entries(c.dropped)) m.hitsDropped.inc({ reason }, n);
}

/** A chunk's site and goal lookups answered from a site directory, as the live pipeline would ask it. */
export function directoryLookups(sites: SiteDirectory): ImportLookups {
  return {
    sites: async (ids) => new Map(await Promise.all(ids.map(async (id) => [id, await sites.site(id)] as const))),
    goals: async (names) => {
      // In the order asked: goals are made on first use, up to a site's limit, as the live pipeline makes them.
      const goals: (string | undefined)[] = [];
      for (const [siteId, name] of names) goals.push((await sites.goalByName(siteId, name))?.name);
      return goals;
    },
  };
}

export interface BulkImporterDeps {
  sites: SiteDirectory;
  /** Loads a chunk's rows atomically (EventStore.writeCsv). */
  load: (rows: CsvRows) => Promise<void>;
  metrics: Metrics;
  excludedHosts: readonly string[];
  /** How long the import thread may sit idle before it is stopped (default: as long as an import's state lives). */
  idleMs?: number;
  /** Hits per load (default: a DuckDB row group; tests make it small). */
  loadHits?: number;
  /** Visits stored in one load, at least (default: a DuckDB row group; tests make it small). */
  visitRows?: number;
}

interface Chunk {
  resolve: (r: ImportResult) => void;
  reject: (err: Error) => void;
  /** The last load holding its rows (loads are made in order, so the earlier ones are done with it); the first failure, if any. */
  loads: Promise<void>;
  failure?: Error;
}

interface Running {
  thread: Worker;
  dir: string;
}

/** The import thread's old-generation heap bound. */
const IMPORT_HEAP_MB = 1024;

/**
 * The import thread's young generation: V8 sizes it from the old generation's bound, smaller than its default for
 * an unbounded heap, and on a machine of two cores the thread collects it itself (scripts/server-node-flags.mjs),
 * its largest item. 48 MB: 4-9% more hits a second and 5-11% less CPU a hit in alternating imports; 96 no better
 * (docs/benchmarks.md, "Import: measurements behind the code").
 */
const IMPORT_YOUNG_MB = 48;

export class BulkImporter {
  private running: Promise<Running> | undefined;
  /** Imports being received or worked on; the thread is stopped once there has been none for `idleMs`. */
  private active = 0;
  private idleTimer: NodeJS.Timeout | undefined;
  private readonly idleMs: number;
  private lastId = 0;
  private readonly chunks = new Map<number, Chunk>();
  /** The last load: loads are made one after another, in the order the thread sent them. */
  private loading: Promise<void> = Promise.resolve();
  private readonly lookups: ImportLookups;

  constructor(private readonly deps: BulkImporterDeps) {
    this.lookups = directoryLookups(deps.sites);
    this.idleMs = deps.idleMs ?? IMPORT_SESSION_MS;
  }

  /**
   * Imports an NDJSON body on the import thread: streamed to a file that the thread reads (nothing on this thread
   * grows with the body); resolves once the chunk's rows are stored. Rejects with a 413 for a body over the limit.
   * `handedOver` is called once the thread has the chunk (its session's next chunk may follow).
   */
  async importChunk(session: string | undefined, body: Readable, firstLine: number, handedOver: () => void = () => undefined): Promise<ImportResult> {
    this.active++;
    clearTimeout(this.idleTimer);
    let file: string | undefined;
    try {
      const { thread, dir } = await (this.running ??= this.start());
      // The thread keeps the process alive while it has work, and only then.
      thread.ref();
      const id = ++this.lastId;
      file = join(dir, `body-${id}.ndjson`);
      await spoolBody(body, file);
      const result = new Promise<ImportResult>((resolve, reject) => this.chunks.set(id, { resolve, reject, loads: Promise.resolve() }));
      this.post(thread, { t: 'chunk', id, session, file, firstLine });
      // The thread works through a session's chunks in the order they reach it: the next may be handed over now.
      handedOver();
      return await result;
    } finally {
      if (file) await rm(file, { force: true });
      if (--this.active === 0) {
        void this.running?.then(({ thread }) => this.active === 0 && thread.unref(), () => undefined);
        this.idleTimer = setTimeout(() => void this.stopIdle(), this.idleMs).unref();
      }
    }
  }

  /**
   * Ends the import thread once no import has used it for as long as an import's state lives there: its memory
   * (hundreds of MB after a large import, which V8 keeps while the thread is idle) goes back to the system. The
   * next import starts it again.
   */
  private async stopIdle(): Promise<void> {
    const running = this.running;
    if (this.active > 0 || !running) return;
    this.running = undefined;
    const { thread, dir } = await running.catch(() => ({ thread: undefined, dir: undefined }));
    await thread?.terminate();
    if (dir) await rm(dir, { recursive: true, force: true });
  }

  /** Whether the import thread is there (started, or starting). */
  get threadRunning(): boolean {
    return this.running !== undefined;
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    if (!this.running) return;
    const { thread, dir } = await this.running.catch(() => ({ thread: undefined, dir: undefined }));
    await thread?.terminate();
    if (dir) await rm(dir, { recursive: true, force: true });
    this.fail(new Error('Plumb is stopping'));
  }

  private async start(): Promise<Running> {
    const dir = await mkdtemp(join(tmpdir(), 'plumb-import-'));
    const config: ImportThreadConfig = { excludedHosts: this.deps.excludedHosts, dir, loadHits: this.deps.loadHits, visitRows: this.deps.visitRows };
    // A bounded heap makes V8 collect sooner and keep the heap near what is live (its default bound, a share of the
    // machine's memory, let the heap grow to about four times that); an import holds a few hundred MB at most.
    const thread = startWorker(import.meta.url, 'import-thread', config, { maxOldGenerationSizeMb: IMPORT_HEAP_MB, maxYoungGenerationSizeMb: IMPORT_YOUNG_MB });
    // Set by the caller (`this.running ??= this.start()`) before the first await above returned.
    const running = this.running;
    thread.on('error', (err) => this.fail(err));
    thread.on('exit', () => {
      if (this.running === running) this.running = undefined;
      this.fail(new Error('the import thread stopped'));
    });
    await new Promise<void>((resolve, reject) => {
      const ready = (message: FromImportThread) => {
        if (message.t !== 'ready') return;
        thread.off('message', ready);
        resolve();
      };
      thread.on('message', ready);
      thread.once('error', reject);
    });
    thread.on('message', (message: FromImportThread) => void this.receive(thread, message));
    // An idle import thread does not keep the process alive.
    thread.unref();
    return { thread, dir };
  }

  private post(thread: Worker, message: ToImportThread): void {
    thread.postMessage(message);
  }

  private async receive(thread: Worker, message: FromImportThread): Promise<void> {
    try {
      switch (message.t) {
        case 'sites':
          this.post(thread, { t: 'sites', id: message.id, sites: [...(await this.lookups.sites(message.ids))] });
          return;
        case 'goals':
          this.post(thread, { t: 'goals', id: message.id, goals: await this.lookups.goals(message.names) });
          return;
        case 'rows':
          this.load(thread, message.ids, message.rows);
          return;
        case 'done': {
          const chunk = this.chunks.get(message.id);
          await chunk?.loads;
          if (chunk?.failure) throw chunk.failure;
          addCounts(this.deps.metrics, message.counters);
          this.settle(message.id, message.result);
          return;
        }
        case 'failed':
          this.settle(message.id, new Error(message.error));
          return;
        default:
          return;
      }
    } catch (err) {
      if (message.t === 'sites' || message.t === 'goals') this.post(thread, { t: 'failed', id: message.id, error: (err as Error)?.message ?? String(err) });
      else if (message.t === 'done' || message.t === 'failed') this.settle(message.id, err as Error);
    }
  }

  /**
   * Loads rows of `ids` after every load sent before (a chunk's answer waits for the last load holding its rows),
   * deletes their files, and tells the thread it may send more. A load of a chunk that has failed is not made: its
   * other chunks fail with it.
   */
  private load(thread: Worker, ids: readonly number[], rows: CsvRows): void {
    const chunks = ids.map((id) => this.chunks.get(id)).filter((c) => c !== undefined);
    const load = async () => {
      try {
        const failed = chunks.find((c) => c.failure)?.failure;
        if (failed) for (const c of chunks) c.failure ??= failed;
        else if (chunks.length > 0) await this.deps.load(rows);
      } catch (err) {
        for (const c of chunks) c.failure ??= err as Error;
      } finally {
        await removeCsvFiles(rows);
        this.post(thread, { t: 'loaded' });
      }
    };
    const loading = (this.loading = this.loading.then(load));
    for (const c of chunks) c.loads = loading;
  }

  private settle(id: number, outcome: ImportResult | Error): void {
    const chunk = this.chunks.get(id);
    this.chunks.delete(id);
    if (outcome instanceof Error) chunk?.reject(outcome);
    else chunk?.resolve(outcome);
  }

  private fail(err: Error): void {
    for (const chunk of this.chunks.values()) chunk.reject(err);
    this.chunks.clear();
  }
}
