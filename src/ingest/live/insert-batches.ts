// On the ingest thread, for stores that take batches as statement text (EventStore.insertNode: ClickHouse): each
// hit's VALUES row built as it is logged, gathered (gatherer.ts) with the newest state of each visit into batches of
// 5,000 hits or one second, and handed to the main thread as INSERT statements. The rows then never cross threads as
// objects, and the event loop does not build their text.

import type { StoredHit, VisitRecord } from '../../domain/hits.js';
import { hitRowStart, hitsInsert, visitsInserts } from '../../store/clickhouse/insert-text.js';
import type { InsertStatements } from '../../store/types.js';
import { Gatherer, type GatherOptions } from './gatherer.js';
import { keepNewest } from '../visits.js';

/** A cut batch: its statements, how many hits it holds, and its highest hit-log sequence number (0: none logged). */
export type InsertBatch = { inserts: InsertStatements; hits: number; seq: number };

export class InsertBatches {
  private readonly rows: Gatherer<string>;
  private visits = new Map<bigint, VisitRecord>();

  constructor(
    private readonly node: string,
    private readonly announce: (batch: InsertBatch) => void,
    options: GatherOptions = {},
  ) {
    this.rows = new Gatherer(() => this.cut(), options);
  }

  /** Hits gathered, not yet handed to the main thread. */
  get waiting(): number {
    return this.rows.size;
  }

  add(hit: StoredHit, visit: VisitRecord, seq: number): void {
    // Hits of one visit can be logged out of order (shared visit state is asynchronous): keep the newest.
    keepNewest(this.visits, visit);
    this.rows.add(hitRowStart(hit), seq);
  }

  /** Hands over what waits as one batch, its hits tagged with its highest sequence number (as the write buffer's batches). */
  cut(): void {
    const taken = this.rows.take();
    if (!taken) return;
    const inserts = { visits: visitsInserts([...this.visits.values()]), hits: hitsInsert(taken.rows, this.node, taken.seq) };
    this.visits = new Map();
    this.announce({ inserts, hits: taken.rows.length, seq: taken.seq });
  }
}
