// One bulk load's CSV files written as its rows are worked out: hits appended a slice at a time (the import thread
// holds one slice of rows, not the whole load), the newest state of each visit written once the load is complete,
// apart for visits an earlier load of the import stored (their rows are replaced) and new ones (appended).

import { open, type FileHandle } from 'node:fs/promises';
import type { VisitRecord } from '../domain/hits.js';
import { EncodedLines } from './encoded-lines.js';
import { csvFiles, removeCsvFiles, visitCsvLine, type CsvRows } from '../store/event-csv.js';

/**
 * The visits of one import that a load has stored. A visit's state is one object that its later hits change
 * (VisitTracker.recordLive), so they are known by that object: once the import's tracker forgets a visit, no later
 * state of it can come, and its mark goes with the object.
 */
export class StoredVisits {
  private readonly stored = new WeakSet<VisitRecord>();

  /** Splits a load's visits into those an earlier load stored and new ones, and notes them all as stored. */
  split(visits: Iterable<VisitRecord>): { stored: VisitRecord[]; fresh: VisitRecord[] } {
    const stored: VisitRecord[] = [];
    const fresh: VisitRecord[] = [];
    for (const visit of visits) {
      if (this.stored.has(visit)) stored.push(visit);
      else {
        fresh.push(visit);
        this.stored.add(visit);
      }
    }
    return { stored, fresh };
  }
}

const LINE_BREAK = Buffer.from('\n');

export class CsvLoad {
  private hitsFile: FileHandle | undefined;
  private hits = 0;
  /** The visits of the load's hits: the import's objects for them, each its newest state (BatchImport). */
  private readonly visits = new Set<VisitRecord>();
  readonly rows: CsvRows;

  /** `stored`: the import's visits stored by its earlier loads (shared by the import's loads, in order). */
  constructor(dir: string, name: string, private readonly stored: StoredVisits) {
    this.rows = csvFiles(dir, name);
  }

  /** Hits stored so far. */
  get size(): number {
    return this.hits;
  }

  /** Appends a slice of hits (CSV lines, HIT_CSV_COLUMNS) and the visits they touched. */
  async add(hits: EncodedLines, visits: readonly VisitRecord[]): Promise<void> {
    if (hits.length > 0) {
      this.hitsFile ??= await open(this.rows.hitsFile, 'w');
      if (this.hits > 0) await this.hitsFile.write(LINE_BREAK);
      await this.hitsFile.write(hits.bytes());
      this.hits += hits.length;
    }
    for (const visit of visits) this.visits.add(visit);
  }

  /**
   * Closes the hits file and writes the visits: the files to load. Visits count as stored from here on (a load
   * that then fails only makes a later load look for rows that are not there).
   */
  async finish(): Promise<CsvRows> {
    await this.hitsFile?.close();
    this.hitsFile = undefined;
    const { stored, fresh } = this.stored.split(this.visits);
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
async function writeVisits(path: string, visits: readonly VisitRecord[], lines: EncodedLines): Promise<void> {
  lines.clear();
  for (const visit of visits) lines.push(visitCsvLine(visit));
  const file = await open(path, 'w');
  try {
    await file.write(lines.bytes());
  } finally {
    await file.close();
  }
}
