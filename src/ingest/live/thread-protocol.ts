// The messages between the main thread and the ingest thread (src/ingest/live/ingest-thread.ts), and what the
// ingest thread is started with. Everything here crosses threads by structured clone (Dates and bigints do).

import type { IncomingHit, LiveVisit, StoredHit, VisitRecord } from '../../domain/hits.js';
import type { ImportResult } from '../line-import.js';
import type { InsertBatch } from './insert-batches.js';
import type { LoadFile } from './load-batches.js';
import type { CounterDeltas, Outcome } from '../pipeline.js';
import type { SiteSource } from '../site-directory.js';
import type { SaltStore } from '../salts.js';

/** The MetaStore calls the ingest thread makes through the main thread (sites, goals, salts; all cached there). */
export type IngestMeta = SiteSource & SaltStore;
/** `room`: an import asks the main thread to let the write buffer catch up (back-pressure). */
export type IngestMetaMethod = keyof IngestMeta | 'room';
export const INGEST_META_METHODS: readonly (keyof IngestMeta)[] = ['getSite', 'listGoals', 'createGoal', 'saltForDay', 'findSalt', 'deleteSaltsBefore'];

export interface ThreadConfig {
  /** The hit log's directory; without it accepted hits wait only in memory (tests on in-memory databases). */
  logDir?: string;
  /** The last hit-log sequence number the event store holds (after the main thread's replay). */
  watermark: number;
  /** Visits seen in the last 30 minutes, resumed by the in-memory visit state (embedded mode). */
  seed: VisitRecord[];
  /** Shared visit state in Redis (scale-out mode) instead of memory. */
  sharedVisits?: { url: string; prefix?: string };
  excludedHosts: readonly string[];
  /**
   * Where to write record files for the store to load itself (stores with EventStore.loadRecords); without it,
   * rows go back to the main thread as objects with the results.
   */
  loadDir?: string;
  /**
   * The node id to tag hits with when the thread builds each batch's INSERT statements (stores with
   * EventStore.insertNode); without it (and without loadDir), rows go back to the main thread as objects.
   */
  insertNode?: string;
  /** When the thread cuts a record file or a batch: after this many records, or this long after the first (WriteBufferOptions). */
  loadBatch?: { maxRecords?: number; maxWaitMs?: number };
}

/** A hit's fate: an outcome, or the pipeline's refusal (`invalid`: a 400) or failure. */
export type Result = Outcome | { failed: 'invalid' | 'error'; message: string };

export type ToThread =
  | { t: 'hits'; batch: [id: number, hit: IncomingHit][] }
  /** NDJSON to import (one string: far cheaper to pass than its lines); chunks with the same `session` continue each other's visits. */
  | { t: 'import'; id: number; session: string | undefined; ndjson: string; firstLine: number }
  | { t: 'reply'; id: number; value?: unknown; error?: string }
  | { t: 'forget'; siteId: string }
  | { t: 'confirm'; seq: number }
  /** Write what waits for the store as a file now; answered with `cut` once every file is announced. */
  | { t: 'cut'; id: number }
  /** The site's visits in progress seen since `sinceMs`, answered with `live`. */
  | { t: 'live'; id: number; siteId: string; sinceMs: number }
  | { t: 'close' };

export type FromThread =
  | { t: 'ready' }
  | {
      t: 'done';
      /** Hits recorded, by id: the usual answer, sent as bare numbers (a result object each cost ten times as much to clone). */
      recorded: number[];
      /** Every other answer (dropped, invalid, failed). */
      results: [id: number, result: Result][];
      imports: [id: number, result: ImportResult | { error: string }][];
      /** Hits to write, in log order, with their hit-log sequence numbers (0: not logged). */
      hits: StoredHit[];
      seqs: number[];
      /** The newest state of every visit those hits changed. */
      visits: VisitRecord[];
      counters: CounterDeltas;
      /** Records gathered for the next record file (loadDir), still to be announced. */
      gathered: number;
    }
  /** A record file for the store to load (ThreadConfig.loadDir), announced in record order. */
  | ({ t: 'load'; gathered: number } & LoadFile)
  /** A batch as INSERT statements (ThreadConfig.insertNode), announced in record order. */
  | ({ t: 'inserts'; gathered: number } & InsertBatch)
  | { t: 'cut'; id: number }
  /** The visits asked for; null where the visit state is not in this thread (shared in Redis, scale-out). */
  | { t: 'live'; id: number; visits: LiveVisit[] | null }
  | { t: 'call'; id: number; method: IngestMetaMethod; args: unknown[] }
  | { t: 'log'; message: string; error: string }
  | { t: 'closed' };
