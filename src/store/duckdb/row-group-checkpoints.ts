// Checkpoints taken each time a row group of hits has been appended. DuckDB's own, every 16 MB of write-ahead log
// (about 45,000 collector hits), wrote the newest rows as a partly filled row group, then merged it with the next
// ones and wrote it again at the next checkpoint, and again: a hit was compressed and written several times over.
// Taken once a row group's worth has been appended, the new rows go out as full row groups, and DuckDB merges the
// few partly filled ones left now and then (docs/benchmarks.md, "Collector: measurements behind the code").

import type { Querier } from './database.js';

/** Rows in a DuckDB row group (its default row_group_size, which Plumb's databases keep). */
export const ROW_GROUP_ROWS = 122_880;

/**
 * The write-ahead log at which DuckDB still checkpoints by itself: above what a row group of hits and their visits
 * write to it (40-47 MB measured), so that the checkpoints here come first, and a bound for writes they do not
 * follow (visits alone, a checkpoint that failed).
 */
export const CHECKPOINT_THRESHOLD = '128MB';

export class RowGroupCheckpoints {
  /** Hits appended since the last checkpoint taken here (one DuckDB took by itself makes this an overestimate). */
  private appendedSince = 0;

  /** Checkpoints taken (for tests and benchmarks). */
  taken = 0;

  /**
   * After a committed write that appended `rows` hits (outside its transaction, on the writer's connection):
   * checkpoints once a row group's worth has been appended since the last one.
   */
  async appended(q: Querier, rows: number): Promise<void> {
    this.appendedSince += rows;
    if (this.appendedSince < ROW_GROUP_ROWS) return;
    try {
      await q.exec('CHECKPOINT');
      this.taken++;
      this.appendedSince = 0;
    } catch {
      // The rows are committed and in the write-ahead log either way: the next write tries again, and DuckDB's own
      // threshold still bounds the log.
    }
  }
}
