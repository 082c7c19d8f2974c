// One bulk load's CSV files written as its rows are worked out: hits appended a slice at a time (the import thread
// holds one slice of rows, not the whole load) and, when the load is the one that stores them, the newest state of
// the import's pending visits, apart for visits an earlier load of the import stored (their rows are replaced) and
// new ones (appended).

import { open, type FileHandle } from 'node:fs/promises';
import type { LiveVisit } from '../visits.js';
import { EncodedLines } from './encoded-lines.js';
import { csvFiles, removeCsvFiles, visitCsvLine, type CsvRows } from '../../store/event-csv.js';

/**
 * One import's visits touched by hits since its visits were last stored, and the visits a load has stored. A
 * visit's state is one object that its later hits change (VisitTracker.recordLive), so visits are known by that
 * object: once the import's tracker forgets a visit, no later state of it can come, and its mark goes with the
 * object. Visits wait here across loads of hits so that they go out in loads of a DuckDB row group of their own
 * (import-thread.ts, VISIT_LOAD_ROWS).
 */
export class PendingVisits {
  private readonly stored = new WeakSet<LiveVisit>();
  private pending = new Set<LiveVisit>();

  /** Visits waiting to be stored. */
  get size(): number {
    return this.pending.size;
  }

  add(visits: readonly LiveVisit[]): void {
    for (const visit of visits) this.pending.add(visit);
  }

  /** Takes the waiting visits, split into those an earlier load stored and new ones, and notes them all as stored. */
  take(): { stored: LiveVisit[]; fresh: LiveVisit[] } {
    const stored: LiveVisit[] = [];
    const fresh: LiveVisit[] = [];
    for (const visit of this.pending) {
      if (this.stored.has(visit)) stored.push(visit);
      else {
        fresh.push(visit);
        this.stored.add(visit);
      }
    }
    this.pending = new Set();
    return { stored, fresh };
  }

  /** Forgets the waiting visits: the chunks whose hits touched them failed. */
  drop(): void {
    this.pending = new Set();
  }
}

const LINE_BREAK = Buffer.from('\n');

export class CsvLoad {
  private hitsFile: FileHandle | undefined;
  private hits = 0;
  readonly rows: CsvRows;

  constructor(dir: string, name: string) {
    this.rows = csvFiles(dir, name);
  }

  /** Hits stored so far. */
  get size(): number {
    return this.hits;
  }

  /** Appends a slice of hits (CSV lines, HIT_CSV_COLUMNS). */
  async add(hits: EncodedLines): Promise<void> {
    if (hits.length === 0) return;
    this.hitsFile ??= await open(this.rows.hitsFile, 'w');
    if (this.hits > 0) await this.hitsFile.write(LINE_BREAK);
    await this.hitsFile.write(hits.bytes());
    this.hits += hits.length;
  }

  /**
   * Closes the hits file and, with `visits`, writes the visits waiting there: the files to load. Those visits
   * count as stored from here on (a load that then fails only makes a later load look for rows that are not there).
   */
  async finish(visits?: PendingVisits): Promise<CsvRows> {
    await this.hitsFile?.close();
    this.hitsFile = undefined;
    const { stored, fresh } = visits?.take() ?? { stored: [], fresh: [] };
    const lines = new EncodedLines();
    await writeVisits(this.rows.visitsFile, stored, lines);
    await writeVisits(this.rows.newVisitsFile, fresh, lines);
    return { ...this.rows, hits: this.hits, visits: stored.length, newVisits: fresh.length };
  }

  /** Closes and deletes what was written, after a failure (also one while finish() wrote the visits). */
  async abandon(): Promise<void> {
    await this.hitsFile?.close().catch(() => undefined);
    this.hitsFile = undefined;
    await removeCsvFiles(this.rows);
  }
}

/** Writes `visits` as the lines of the file at `path` (VISIT_CSV_COLUMNS), encoded through `lines` (cleared first). */
async function writeVisits(path: string, visits: readonly LiveVisit[], lines: EncodedLines): Promise<void> {
  lines.clear();
  // The attribution as the hits' lines had it, made once with the visit (BatchImport.stored).
  for (const visit of visits) lines.push(visitCsvLine(visit, visit.memo));
  const file = await open(path, 'w');
  try {
    await file.write(lines.bytes());
  } finally {
    await file.close();
  }
}
