// The write buffer in front of the EventStore: hits gathered into batches written by size or by time, or batches
// the ingest thread prepared (record files the store loads itself, EventStore.loadRecords, or INSERT statements,
// EventStore.writeInserts), a bound on what waits (callers are told to back off
// instead of the buffer growing), and a final flush.

import { rm } from 'node:fs/promises';
import type { StoredHit, VisitRecord } from '../../domain/hits.js';
import type { EventStore } from '../../store/types.js';
import type { InsertBatch } from './insert-batches.js';
import type { LoadFile } from './load-batches.js';
import { keepNewest } from '../visits.js';

/** A batch the ingest thread prepared: a record file or INSERT statements, with its hits and highest sequence number. */
export type PreparedBatch = LoadFile | InsertBatch;

export interface WriteBufferOptions {
  /** Write as soon as this many hits wait. */
  batchSize?: number;
  /** Write at least this often while anything waits. */
  flushIntervalMs?: number;
  /** Refuse new hits (back-pressure) while this many wait, e.g. when the store is slow or down. */
  maxPending?: number;
  onError?: (err: unknown) => void;
  onWritten?: (hits: number) => void;
  /** Called after a batch is stored with the highest hit-log sequence number in it. */
  onConfirmed?: (seq: number) => void;
}

export class WriteBuffer {
  private hits: StoredHit[] = [];
  /** Hit-log sequence number of each waiting hit (0 for hits that were not logged, e.g. imports). */
  private seqs: number[] = [];
  /** Latest state of each visit touched since the last write, by visit id. */
  private visits = new Map<bigint, VisitRecord>();
  /** Prepared batches waiting to be stored, in record order, and the hits they hold. */
  private files: PreparedBatch[] = [];
  private fileHits = 0;
  private flushing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;
  private readonly batchSize: number;
  readonly maxPending: number;
  private written = 0;
  private failures = 0;

  constructor(
    private readonly store: EventStore,
    private readonly options: WriteBufferOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 5000;
    this.maxPending = options.maxPending ?? 200_000;
    this.timer = setInterval(() => void this.flush().catch(() => undefined), options.flushIntervalMs ?? 1000);
    this.timer.unref();
  }

  /** Hits accepted but not yet written. */
  get pending(): number {
    return this.hits.length + this.fileHits;
  }

  /** True while new hits must be refused: the caller answers 503 and the client retries later. */
  get isFull(): boolean {
    return this.pending >= this.maxPending;
  }

  get stats() {
    return { pending: this.pending, written: this.written, failures: this.failures };
  }

  add(hit: StoredHit, visit: VisitRecord, seq = 0): void {
    this.hits.push(hit);
    this.seqs.push(seq);
    // Hits of one visit can reach the buffer out of order (shared visit state is asynchronous): keep the newest.
    keepNewest(this.visits, visit);
    if (this.hits.length >= this.batchSize && !this.flushing) void this.flush().catch(() => undefined);
  }

  /** A prepared batch to store (its records are in the hit log already, or are unlogged imports). */
  addPrepared(file: PreparedBatch): void {
    this.files.push(file);
    this.fileHits += file.hits;
    if (!this.flushing) void this.flush().catch(() => undefined);
  }

  /**
   * Writes everything waiting, in batches. One flush runs at a time; a batch the store refuses goes back to
   * the front of the queue, so nothing accepted is dropped, and the error is reported.
   */
  flush(): Promise<void> {
    if (this.flushing) return this.flushing.then(() => (this.pending > 0 ? this.flush() : undefined));
    if (this.pending === 0 && this.visits.size === 0) return Promise.resolve();
    this.flushing = this.drain().finally(() => {
      this.flushing = undefined;
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }

  private async drain(): Promise<void> {
    // Prepared batches first: they hold the logged records, whose sequence numbers confirm the log in order.
    while (this.files.length > 0) {
      const batch = this.files[0]!;
      const seq = batch.seq > 0 ? batch.seq : undefined;
      try {
        if ('file' in batch) await this.store.loadRecords!(batch.file, seq);
        else await this.store.writeInserts!(batch.inserts, seq);
      } catch (err) {
        this.failures++;
        this.options.onError?.(err);
        throw err;
      }
      this.files.shift();
      this.fileHits -= batch.hits;
      this.written += batch.hits;
      this.options.onWritten?.(batch.hits);
      if (batch.seq > 0) this.options.onConfirmed?.(batch.seq);
      if ('file' in batch) void rm(batch.file, { force: true }).catch(() => undefined);
    }
    while (this.hits.length > 0 || this.visits.size > 0) {
      const hits = this.hits.splice(0, this.batchSize);
      const seqs = this.seqs.splice(0, hits.length);
      // Visit states go with the batch in which they were last changed or earlier; taking them all is simplest
      // and keeps each visit row current after every write.
      const visits = this.visits;
      this.visits = new Map();
      // Hits wait in log order, so the batch's highest sequence number confirms everything before it too.
      const confirmed = seqs.reduce((m, s) => Math.max(m, s), 0);
      try {
        await this.store.write(hits, [...visits.values()], confirmed > 0 ? confirmed : undefined);
        this.written += hits.length;
        this.options.onWritten?.(hits.length);
        if (confirmed > 0) this.options.onConfirmed?.(confirmed);
      } catch (err) {
        this.failures++;
        this.hits = hits.concat(this.hits);
        this.seqs = seqs.concat(this.seqs);
        for (const v of this.visits.values()) keepNewest(visits, v);
        this.visits = visits;
        this.options.onError?.(err);
        throw err;
      }
    }
  }
}
