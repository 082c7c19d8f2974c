// On the ingest thread, for stores that load record files themselves (EventStore.loadRecords): encoded records
// gathered (gatherer.ts) into files, one per 20,000 records or 4 seconds, each announced to the main thread once
// written, in order. The rows then never cross threads as objects.

import { mkdirSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Gatherer, type GatherOptions } from './gatherer.js';

/**
 * When a file is cut unless the options say otherwise. Larger than the write buffer's batches (5,000 or a second):
 * DuckDB spends 35-60 ms of CPU on every load whatever its size: at a file a second, about 40 µs of the 250 a hit
 * cost at 1,500 hits/s (docs/benchmarks.md, "Collector in session 8"). Hits reach reports up to 4 s after their answer.
 */
const FILE_RECORDS = 20_000;
const FILE_WAIT_MS = 4_000;

/** A written file: its path, how many hits it holds, and its highest hit-log sequence number (0: none logged). */
export type LoadFile = { file: string; hits: number; seq: number };

export class LoadBatches {
  private readonly lines: Gatherer<string>;
  private written: Promise<void> = Promise.resolve();
  private lastFile = 0;
  /** Records in files being written, not yet announced. */
  private writing = 0;

  constructor(
    private readonly dir: string,
    private readonly announce: (file: LoadFile) => void,
    private readonly logError: (err: unknown, message: string) => void,
    options: GatherOptions = {},
  ) {
    mkdirSync(dir, { recursive: true });
    this.lines = new Gatherer(() => void this.cut(), { maxRecords: options.maxRecords ?? FILE_RECORDS, maxWaitMs: options.maxWaitMs ?? FILE_WAIT_MS });
  }

  /** Records gathered or being written: accepted, not yet handed to the main thread. */
  get waiting(): number {
    return this.lines.size + this.writing;
  }

  add(line: string, seq: number): void {
    this.lines.add(line, seq);
  }

  /** Writes what waits as a file; resolves once it and every earlier file are written and announced. */
  cut(): Promise<void> {
    const taken = this.lines.take();
    if (!taken) return this.written;
    const { rows: lines, seq } = taken;
    const file = join(this.dir, `${String(++this.lastFile).padStart(12, '0')}.ndjson`);
    this.writing += lines.length;
    // Files are written one after another, so they are announced (and loaded) in record order.
    this.written = this.written.then(() => this.write(file, lines, seq));
    return this.written;
  }

  private async write(file: string, lines: string[], seq: number): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        await writeFile(file, lines.join(''));
        this.writing -= lines.length;
        this.announce({ file, hits: lines.length, seq });
        return;
      } catch (err) {
        // Logged records are safe in the hit log, but the store needs them now: keep trying (a full disk frees up).
        this.logError(err, `writing a batch of ${lines.length} records for the store failed (attempt ${attempt}); retrying`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * attempt)));
      }
    }
  }
}
