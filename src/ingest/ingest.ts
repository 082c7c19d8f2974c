// The ingest side as the rest of Plumb sees it (class Ingest): live hits and /admin/import. The live pipeline runs
// on the ingest thread (src/ingest/live/ingest-thread.ts), so the event loop that serves HTTP only parses requests
// and answers them; this side hands hits over in batches, answers the thread's MetaStore calls, and writes the rows
// it sends back through the write buffer (the embedded DuckDB file belongs to this thread). /admin/import runs
// set-based on the import thread where the event store loads rows in bulk (src/ingest/bulk-import/), else line by
// line on the ingest thread too (line-import.ts); importPipeline() gives in-process tools and tests a pipeline here.
// Visit state is the thread's memory (embedded) or a store every process shares (scale-out).

import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import type { Worker } from 'node:worker_threads';
import type { IncomingHit, LiveVisit } from '../domain/hits.js';
import type { Metrics } from '../metrics.js';
import type { EventStore, MetaStore } from '../store/types.js';
import { BulkImporter, addCounts } from './bulk-import/bulk-importer.js';
import { ChunkOrder } from './bulk-import/chunk-order.js';
import { Enricher, GeoLookup } from './enrich/index.js';
import { HitLog, type LogRecord } from './live/hit-log.js';
import type { ImportResult } from './line-import.js';
import { IMPORT_SESSION_MS } from './bulk-import/import-protocol.js';
import { bodyText } from './bulk-import/import-body.js';
import { HitPipeline, InvalidHit, metricsCounters, type Outcome } from './pipeline.js';
import { EphemeralSalts } from './salts.js';
import { SiteDirectory } from './site-directory.js';
import { startWorker } from '../start-worker.js';
import { INGEST_META_METHODS, type FromThread, type IngestMeta, type IngestMetaMethod, type ThreadConfig, type ToThread } from './live/thread-protocol.js';
import { keepNewest, VISIT_TIMEOUT_MS, VisitTracker } from './visits.js';
import { WriteBuffer, type WriteBufferOptions } from './live/write-buffer.js';

export interface IngestOptions {
  /**
   * Where the hit log lives (DESIGN: an accepted hit is never lost). Without it, accepted hits wait only in
   * memory until the next write (tests on in-memory databases).
   */
  logDir?: string;
  excludedHosts?: readonly string[];
  /** Shared visit state in Redis (scale-out); without it, visits live in the ingest thread's memory. */
  sharedVisits?: { url: string; prefix?: string };
  buffer?: WriteBufferOptions;
  log?: (err: unknown, message: string) => void;
}

/** Imported hits waiting to be written beyond which an import pauses. */
const ROOM_HITS = 20_000;

/** The answer of every recorded hit (the thread sends only their ids). */
const RECORDED: Outcome = Object.freeze({ recorded: true });

interface Waiting {
  resolve: (outcome: Outcome) => void;
  reject: (err: Error) => void;
}

export class Ingest {
  readonly buffer: WriteBuffer;
  /** Sites and goals for this thread's needs: legacy goal codes in the collector, imports. */
  readonly sites: SiteDirectory;
  private readonly waiting = new Map<number, Waiting>();
  private readonly importing = new Map<number, { resolve: (r: ImportResult) => void; reject: (err: Error) => void }>();
  private readonly cuts = new Map<number, () => void>();
  private readonly lives = new Map<number, (visits: LiveVisit[] | null) => void>();
  private readonly chunkOrder = new ChunkOrder(IMPORT_SESSION_MS);
  private lastId = 0;
  /** Accepted hits the thread is gathering into a record file (see ThreadConfig.loadDir). */
  private gathered = 0;
  private outbox: [number, IncomingHit][] = [];
  private enricher: Promise<Enricher> | undefined;
  private closed: Promise<void> | undefined;
  private readonly logError: (err: unknown, message: string) => void;
  /** Set-based imports, for event stores that load rows in bulk (src/ingest/bulk-import/bulk-importer.ts). */
  private readonly bulk: BulkImporter | undefined;

  private constructor(
    private readonly meta: MetaStore,
    private readonly metrics: Metrics,
    private readonly options: IngestOptions,
    events: EventStore,
    private readonly thread: Worker,
    /** Where the thread writes record files for the store to load (stores with loadRecords), and whether it is ours to delete. */
    private readonly loads: { dir: string; temporary: boolean } | undefined,
    /** Resolves once the thread has started (its modules loaded, visits seeded) and takes hits; see launch(). */
    readonly ready: Promise<void>,
  ) {
    this.logError = options.log ?? (() => undefined);
    this.sites = new SiteDirectory(meta);
    const writeCsv = events.writeCsv?.bind(events);
    this.bulk = writeCsv && new BulkImporter({ sites: this.sites, load: writeCsv, metrics, excludedHosts: options.excludedHosts ?? [] });
    this.buffer = new WriteBuffer(events, {
      ...options.buffer,
      onError: (err) => {
        metrics.writeFailures.inc();
        this.logError(err, 'writing hits failed; the batch is kept and retried');
      },
      onWritten: (n) => metrics.hitsWritten.inc(n),
      onConfirmed: (seq) => this.post({ t: 'confirm', seq }),
    });
    thread.on('message', (message: FromThread) => this.receive(message));
    thread.on('error', (err) => this.failAll(err));
    thread.on('exit', (code) => {
      if (!this.closed) this.failAll(new Error(`the ingest thread stopped (exit code ${code})`));
    });
  }

  /**
   * Writes what the hit log holds beyond the store's watermark (hits acknowledged before a crash), then starts
   * the ingest thread with the visits of the last 30 minutes, and waits until it is ready.
   */
  static async start(meta: MetaStore, events: EventStore, metrics: Metrics, options: IngestOptions = {}): Promise<Ingest> {
    const ingest = await Ingest.launch(meta, events, metrics, options);
    await ingest.ready;
    return ingest;
  }

  /**
   * start() without waiting for the thread: the hit log is replayed and the thread started, but it may still be
   * loading its modules (half a second; README, start to ready). The server builds its app meanwhile, on the other
   * core, and awaits `ready` before it listens, so no hit arrives before the thread can make it durable.
   */
  static async launch(meta: MetaStore, events: EventStore, metrics: Metrics, options: IngestOptions = {}): Promise<Ingest> {
    if (options.logDir) {
      const opened = await HitLog.open(options.logDir, await events.logWatermark());
      await replay(events, opened.unconfirmed);
      if (opened.unconfirmed.length > 0) await opened.log.confirm(opened.unconfirmed.at(-1)!.seq);
      await opened.log.close();
      metrics.hitsReplayed.inc(opened.unconfirmed.length);
    }
    const loads = events.loadRecords ? await loadDirFor(options.logDir) : undefined;
    const config: ThreadConfig = {
      ...(options.logDir ? { logDir: options.logDir } : {}),
      ...(loads ? { loadDir: loads.dir } : {}),
      // Without record files, a store that takes statement text gets each batch's INSERTs built on the thread.
      ...(!loads && events.insertNode !== undefined && events.writeInserts ? { insertNode: events.insertNode } : {}),
      loadBatch: { maxRecords: options.buffer?.batchSize, maxWaitMs: options.buffer?.flushIntervalMs },
      watermark: await events.logWatermark(),
      seed: options.sharedVisits ? [] : await events.visitsSeenSince(new Date(Date.now() - VISIT_TIMEOUT_MS)),
      ...(options.sharedVisits ? { sharedVisits: options.sharedVisits } : {}),
      excludedHosts: options.excludedHosts ?? [],
    };
    // One copy of the geo databases for the ingest thread, the import thread and this one.
    await GeoLookup.share();
    const thread = startWorker(import.meta.url, 'live/ingest-thread', config);
    const ready = new Promise<void>((resolve, reject) => {
      const started = (message: FromThread) => {
        if (message.t !== 'ready') return;
        thread.off('message', started);
        resolve();
      };
      thread.on('message', started);
      thread.once('error', reject);
      thread.once('exit', (code) => reject(new Error(`the ingest thread stopped while starting (exit code ${code})`)));
    });
    ready.catch(() => undefined); // awaited later by the caller: not an unhandled rejection meanwhile
    return new Ingest(meta, metrics, options, events, thread, loads, ready);
  }

  /**
   * A live hit through the pipeline: resolves once it is durable and on its way to the store (or dropped);
   * rejects with InvalidHit for a hit that cannot be understood.
   */
  collect(hit: IncomingHit): Promise<Outcome> {
    if (this.closed) return Promise.reject(new Error('Plumb is stopping'));
    const id = ++this.lastId;
    const outcome = new Promise<Outcome>((resolve, reject) => this.waiting.set(id, { resolve, reject }));
    // Hits of one turn of the event loop travel together: one message, not one per request.
    if (this.outbox.length === 0) setImmediate(() => this.sendHits());
    this.outbox.push([id, hit]);
    return outcome;
  }

  /**
   * Imports an NDJSON body off the event loop; chunks sent with the same `session` continue each other's visits.
   * Set-based on the import thread where the event store loads rows in bulk (the body streamed to a file it reads;
   * resolves once the rows are stored); else through the live pipeline on the ingest thread (resolves once every
   * imported hit is in the write buffer). Rejects with a 413 for a body over MAX_IMPORT_BODY_BYTES. Chunks
   * numbered by `seq` (1, 2, ...) are taken in that order however their requests arrive (ChunkOrder).
   */
  async importChunk(session: string | undefined, body: Readable, firstLine: number, seq?: number): Promise<ImportResult> {
    if (this.closed) throw new Error('Plumb is stopping');
    if (session === undefined || seq === undefined) return this.importInTurn(session, body, firstLine, () => undefined);
    // A client may send an import's next chunks before the last is answered: each goes in its number's turn.
    await this.chunkOrder.turn(session, seq);
    const handOver = () => this.chunkOrder.handedOver(session, seq);
    try {
      return await this.importInTurn(session, body, firstLine, handOver);
    } finally {
      handOver();
    }
  }

  /**
   * importChunk once the chunk's predecessors are handed over; `handOver` is called once its successor may go:
   * the import thread takes a session's chunks in the order they are handed to it, so as soon as this one is;
   * the ingest thread's live pipeline runs chunks side by side, so only when this one is done.
   */
  private async importInTurn(session: string | undefined, body: Readable, firstLine: number, handOver: () => void): Promise<ImportResult> {
    if (this.bulk) return this.bulk.importChunk(session, body, firstLine, handOver);
    const ndjson = await bodyText(body);
    const id = ++this.lastId;
    const result = new Promise<ImportResult>((resolve, reject) => this.importing.set(id, { resolve, reject }));
    this.post({ t: 'import', id, session, ndjson, firstLine });
    return result;
  }

  /**
   * A pipeline for one import in this thread (in-process tools and tests; /admin/import uses importChunk), once
   * the geo databases are loaded here (on first use: the server itself never needs them on this thread): historical hits get throwaway salts and visit state of their own. */
  async importPipeline(): Promise<HitPipeline> {
    return new HitPipeline({
      enricher: await (this.enricher ??= Enricher.create()),
      sites: this.sites,
      salts: new EphemeralSalts(),
      visits: new VisitTracker(),
      sink: this.buffer,
      counters: metricsCounters(this.metrics),
      excludedHosts: this.options.excludedHosts,
    });
  }

  /** Hits accepted and not yet stored: the write buffer's, and those the thread gathers for it. */
  get pending(): number {
    return this.buffer.pending + this.gathered;
  }

  /** True while new hits must be refused (503): too many accepted hits wait for the store. */
  get isFull(): boolean {
    return this.pending >= this.buffer.maxPending;
  }

  /**
   * Stores every hit accepted so far (answered requests' hits included), whichever way rows travel: the thread
   * first hands over the record file or batch it is gathering.
   */
  async flush(): Promise<void> {
    if (!this.closed) {
      const id = ++this.lastId;
      await new Promise<void>((resolve) => {
        this.cuts.set(id, resolve);
        this.post({ t: 'cut', id });
      });
    }
    await this.buffer.flush();
  }

  /**
   * The site's visits in progress with a hit at `sinceMs` or later, as the thread's memory holds them before their
   * rows are written (embedded mode); null where the visit state is shared in Redis, or once closing.
   */
  liveVisits(siteId: string, sinceMs: number): Promise<LiveVisit[] | null> {
    if (this.closed) return Promise.resolve(null);
    const id = ++this.lastId;
    return new Promise((resolve) => {
      this.lives.set(id, resolve);
      this.post({ t: 'live', id, siteId, sinceMs });
    });
  }

  /** Forgets cached site facts (after a site is changed or deleted through this process), here and on the thread. */
  forgetSite(siteId: string): void {
    this.sites.forget(siteId);
    this.post({ t: 'forget', siteId });
  }

  /** Stops the thread once every hit handed over is answered, then writes everything it sent. */
  close(): Promise<void> {
    this.closed ??= (async () => {
      this.sendHits();
      const closed = new Promise<void>((resolve) => {
        const done = (message: FromThread) => message.t === 'closed' && resolve();
        this.thread.on('message', done);
        this.thread.once('exit', () => resolve());
      });
      this.post({ t: 'close' });
      await closed;
      await this.buffer.close();
      await this.thread.terminate();
      for (const live of this.lives.values()) live(null);
      this.lives.clear();
      await this.bulk?.close();
      if (this.loads?.temporary) await rm(this.loads.dir, { recursive: true, force: true });
    })();
    return this.closed;
  }

  private sendHits(): void {
    if (this.outbox.length === 0) return;
    const batch = this.outbox;
    this.outbox = [];
    this.post({ t: 'hits', batch });
  }

  private post(message: ToThread): void {
    this.thread.postMessage(message);
  }

  private receive(message: FromThread): void {
    switch (message.t) {
      case 'done': {
        this.gathered = message.gathered;
        addCounts(this.metrics, message.counters);
        // Rows first: a hit is in the write buffer before its request is answered.
        const visits = new Map(message.visits.map((v) => [v.visitId, v]));
        message.hits.forEach((hit, i) => this.buffer.add(hit, visits.get(hit.visitId)!, message.seqs[i]));
        for (const [id, result] of message.imports) {
          const importing = this.importing.get(id);
          this.importing.delete(id);
          if ('error' in result) importing?.reject(new Error(result.error));
          else importing?.resolve(result);
        }
        for (const id of message.recorded) {
          this.waiting.get(id)?.resolve(RECORDED);
          this.waiting.delete(id);
        }
        for (const [id, result] of message.results) {
          const waiting = this.waiting.get(id);
          this.waiting.delete(id);
          if (!waiting) continue;
          if ('failed' in result) waiting.reject(result.failed === 'invalid' ? new InvalidHit(result.message) : new Error(result.message));
          else waiting.resolve(result);
        }
        return;
      }
      case 'load':
        this.gathered = message.gathered;
        this.buffer.addPrepared({ file: message.file, hits: message.hits, seq: message.seq });
        return;
      case 'inserts':
        this.gathered = message.gathered;
        this.buffer.addPrepared({ inserts: message.inserts, hits: message.hits, seq: message.seq });
        return;
      case 'cut':
        this.cuts.get(message.id)?.();
        this.cuts.delete(message.id);
        return;
      case 'live':
        this.lives.get(message.id)?.(message.visits);
        this.lives.delete(message.id);
        return;
      case 'call':
        void this.answer(message.id, message.method, message.args);
        return;
      case 'log':
        this.logError(new Error(message.error), message.message);
        return;
      default:
        return;
    }
  }

  /** A MetaStore call of the thread, among the few it may make. */
  private async answer(id: number, method: IngestMetaMethod, args: unknown[]): Promise<void> {
    try {
      if (method === 'room') {
        // An import waits while more than a few batches are waiting to be written.
        if (this.buffer.pending >= ROOM_HITS) await this.buffer.flush();
        this.post({ t: 'reply', id });
        return;
      }
      if (!INGEST_META_METHODS.includes(method)) throw new Error(`the ingest thread may not call ${method}`);
      const fn = this.meta[method] as (...a: unknown[]) => Promise<unknown>;
      const value = await fn.apply(this.meta as IngestMeta, args);
      this.post({ t: 'reply', id, value });
    } catch (err) {
      this.post({ t: 'reply', id, error: (err as Error)?.message ?? String(err) });
    }
  }

  private failAll(err: Error): void {
    this.logError(err, 'the ingest thread failed');
    for (const waiting of [...this.waiting.values(), ...this.importing.values()]) waiting.reject(err);
    for (const cut of this.cuts.values()) cut();
    for (const live of this.lives.values()) live(null);
    this.lives.clear();
    this.waiting.clear();
    this.importing.clear();
    this.cuts.clear();
  }
}

/**
 * The folder for record files: beside the hit log, emptied (files left by a stopped process hold logged records,
 * which the log replays, or imports that were never acknowledged); without a log, a temporary one.
 */
async function loadDirFor(logDir: string | undefined): Promise<{ dir: string; temporary: boolean }> {
  if (!logDir) return { dir: await mkdtemp(join(tmpdir(), 'plumb-load-')), temporary: true };
  const dir = join(logDir, 'load');
  await rm(dir, { recursive: true, force: true });
  return { dir, temporary: false };
}

/** Writes logged records the store does not have yet, in log order, with the latest state of each visit. */
async function replay(events: EventStore, records: readonly LogRecord[]): Promise<void> {
  const BATCH = 10_000;
  for (let i = 0; i < records.length; i += BATCH) {
    const batch = records.slice(i, i + BATCH);
    const visits = new Map<bigint, LogRecord['visit']>();
    for (const { visit } of batch) keepNewest(visits, visit);
    await events.write(batch.map((r) => r.hit), [...visits.values()], batch.at(-1)!.seq);
  }
}
