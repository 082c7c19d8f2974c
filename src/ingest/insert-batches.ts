// On the ingest thread, for stores that take batches as statement text (EventStore.insertNode: ClickHouse): each
// hit's VALUES row built as it is logged, gathered with the newest state of each visit into batches of 5,000 hits or
// one second, and handed to the main thread as INSERT statements. The rows then never cross threads as objects,
// and the event loop does not build their text.

import type { StoredHit, VisitRecord } from '../domain/hits.js';
import { hitRowStart, hitsInsert, visitsInserts } from '../store/clickhouse/insert-text.js';
import type { InsertStatements } from '../store/types.js';
import type { LoadBatchOptions } from './load-batches.js';
import { keepNewest } from './visits.js';

/** A cut batch: its statements, how many hits it holds, and its highest hit-log sequence number (0: none logged). */
export type InsertBatch = { inserts: InsertStatements; hits: number; seq: number };

export class InsertBatches {
  private rows: string[] = [];
  private visits = new Map<bigint, VisitRecord>();
  private maxSeq = 0;
  private timer: NodeJS.Timeout | undefined;
  private readonly maxRecords: number;
  private readonly maxWaitMs: number;

  constructor(
    private readonly node: string,
    private readonly announce: (batch: InsertBatch) => void,
    options: LoadBatchOptions = {},
  ) {
    this.maxRecords = options.maxRecords ?? 5000;
    this.maxWaitMs = options.maxWaitMs ?? 1000;
  }

  /** Hits gathered, not yet handed to the main thread. */
  get waiting(): number {
    return this.rows.length;
  }

  add(hit: StoredHit, visit: VisitRecord, seq: number): void {
    this.rows.push(hitRowStart(hit));
    // Hits of one visit can be logged out of order (shared visit state is asynchronous): keep the newest.
    keepNewest(this.visits, visit);
    if (seq > this.maxSeq) this.maxSeq = seq;
    if (this.rows.length >= this.maxRecords) this.cut();
    else this.timer ??= setTimeout(() => this.cut(), this.maxWaitMs);
  }

  /** Hands over what waits as one batch, its hits tagged with its highest sequence number (as the write buffer's batches). */
  cut(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.rows.length === 0) return;
    const inserts = { visits: visitsInserts([...this.visits.values()]), hits: hitsInsert(this.rows, this.node, this.maxSeq) };
    const batch = { inserts, hits: this.rows.length, seq: this.maxSeq };
    this.rows = [];
    this.visits = new Map();
    this.maxSeq = 0;
    this.announce(batch);
  }
}
