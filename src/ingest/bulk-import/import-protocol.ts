// The messages between the main thread and the import thread (src/ingest/bulk-import/import-thread.ts), which runs the
// set-based NDJSON import. Everything here crosses threads by structured clone.

import type { CsvRows } from '../../store/event-csv.js';
import type { Site } from '../../store/types.js';
import type { ImportResult } from '../line-import.js';
import type { CounterDeltas } from '../pipeline.js';

/** An import's state (visits, salts) lives on the thread this long after its last chunk arrived. */
export const IMPORT_SESSION_MS = 10 * 60 * 1000;

export interface ImportThreadConfig {
  excludedHosts: readonly string[];
  /** Where request bodies are spooled and the thread writes each chunk's CSV files (the main thread deletes both). */
  dir: string;
  /** Hits per load (default LOAD_HITS, a DuckDB row group; smaller in tests). */
  loadHits?: number;
  /** Pending visits that make a load of their own (default VISIT_LOAD_ROWS, a DuckDB row group; smaller in tests). */
  visitRows?: number;
}

export type ToImportThread =
  /**
   * NDJSON lines of one import, in a file (the request's body, which the main thread deletes once the chunk is
   * answered); chunks with the same `session` continue each other's visits.
   */
  | { t: 'chunk'; id: number; session: string | undefined; file: string; firstLine: number }
  | { t: 'sites'; id: number; sites: [string, Site | undefined][] }
  | { t: 'goals'; id: number; goals: (string | undefined)[] }
  | { t: 'failed'; id: number; error: string }
  /** A load of rows is stored (or failed to be): the thread may send another. */
  | { t: 'loaded' }
  | { t: 'close' };

export type FromImportThread =
  | { t: 'ready' }
  /** The chunk `id` asks for sites, or goal names (ImportLookups). */
  | { t: 'sites'; id: number; ids: readonly string[] }
  | { t: 'goals'; id: number; names: readonly [string, string][] }
  /**
   * Rows of the chunks `ids` (of one import, in order: the last one's first rows after the others' last), in files
   * to load, in the order sent, before those chunks are answered.
   */
  | { t: 'rows'; ids: number[]; rows: CsvRows }
  /** The chunk is worked out: its result and counts (its last rows were sent before). */
  | { t: 'done'; id: number; result: ImportResult; counters: CounterDeltas }
  | { t: 'failed'; id: number; error: string };
