// One bulk load's CSV files written as its rows are worked out: hits appended a slice at a time (the import thread
// holds one slice of rows, not the whole load), the newest state of each visit written once the load is complete.

import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredHit, VisitRecord } from '../domain/hits.js';
import { hitCsvLine, visitCsvLine, type CsvRows } from '../store/event-csv.js';
import { keepNewest } from './visits.js';

export class CsvLoad {
  private hitsFile: FileHandle | undefined;
  private hits = 0;
  private readonly visits = new Map<bigint, VisitRecord>();
  readonly rows: CsvRows;

  constructor(dir: string, name: string) {
    this.rows = { hitsFile: join(dir, `${name}-hits.csv`), visitsFile: join(dir, `${name}-visits.csv`), hits: 0, visits: 0 };
  }

  /** Hits stored so far. */
  get size(): number {
    return this.hits;
  }

  /** Appends a slice of hits and keeps the newest state of each visit they touched. */
  async add(hits: readonly StoredHit[], visits: readonly VisitRecord[]): Promise<void> {
    if (hits.length > 0) {
      this.hitsFile ??= await open(this.rows.hitsFile, 'w');
      await this.hitsFile.write(`${this.hits > 0 ? '\n' : ''}${hits.map(hitCsvLine).join('\n')}`);
      this.hits += hits.length;
    }
    for (const visit of visits) keepNewest(this.visits, visit);
  }

  /** Closes the hits file and writes the visits: the files to load. */
  async finish(): Promise<CsvRows> {
    await this.hitsFile?.close();
    this.hitsFile = undefined;
    const visits = [...this.visits.values()];
    const visitsFile = await open(this.rows.visitsFile, 'w');
    try {
      await visitsFile.write(visits.map(visitCsvLine).join('\n'));
    } finally {
      await visitsFile.close();
    }
    return { ...this.rows, hits: this.hits, visits: visits.length };
  }

  /** Closes and deletes what was written, after a failure. */
  async abandon(): Promise<void> {
    await this.hitsFile?.close().catch(() => undefined);
    this.hitsFile = undefined;
    await rm(this.rows.hitsFile, { force: true });
  }
}
