// One bulk load's CSV files written as its rows are worked out: hits appended a slice at a time (the import thread
// holds one slice of rows, not the whole load), the newest state of each visit written once the load is complete,
// apart for visits an earlier load of the import stored (their rows are replaced) and new ones (appended).

import { open, type FileHandle } from 'node:fs/promises';
import type { VisitRecord } from '../domain/hits.js';
import type { EncodedLines } from './encoded-lines.js';
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

/**
 * Writes lines to a file through one buffer that grows as needed: joining a slice's 8,192 lines into one string
 * before writing it cost about 1.1 µs a line (the import thread's busiest work after its own), encoding each line
 * into the buffer about 0.15 µs.
 */
export class LineWriter {
  private buffer = Buffer.alloc(0);

  /** Writes `lines` one per line at the file's position, after a line break when `more` (the file has lines). */
  async write(file: FileHandle, lines: readonly string[], more: boolean): Promise<void> {
    let units = lines.length;
    for (const line of lines) units += line.length;
    // UTF-8 needs at most 3 bytes for each UTF-16 unit (a surrogate pair's 4 bytes are 2 units).
    if (this.buffer.length < units * 3) this.buffer = Buffer.allocUnsafe(units * 3);
    const buffer = this.buffer;
    let at = 0;
    for (const line of lines) {
      if (at > 0 || more) buffer[at++] = NEWLINE;
      at += buffer.write(line, at);
    }
    await file.write(buffer, 0, at);
  }
}

const NEWLINE = 0x0a;
const LINE_BREAK = Buffer.from('\n');

export class CsvLoad {
  private hitsFile: FileHandle | undefined;
  private hits = 0;
  /** The visits of the load's hits: the import's objects for them, each its newest state (BatchImport). */
  private readonly visits = new Set<VisitRecord>();
  private readonly lines = new LineWriter();
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
    await this.writeFile(this.rows.visitsFile, stored.map(visitCsvLine));
    await this.writeFile(this.rows.newVisitsFile, fresh.map(visitCsvLine));
    return { ...this.rows, hits: this.hits, visits: stored.length, newVisits: fresh.length };
  }

  private async writeFile(path: string, lines: readonly string[]): Promise<void> {
    const file = await open(path, 'w');
    try {
      await this.lines.write(file, lines, false);
    } finally {
      await file.close();
    }
  }

  /** Closes and deletes what was written, after a failure (also one while finish() wrote the visits). */
  async abandon(): Promise<void> {
    await this.hitsFile?.close().catch(() => undefined);
    this.hitsFile = undefined;
    await removeCsvFiles(this.rows);
  }
}
