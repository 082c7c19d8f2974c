// On the ingest thread, for stores that load record files themselves (EventStore.loadRecords): encoded records
// gathered (gatherer.ts) into files, one per 20,000 records or 4 seconds, each announced to the main thread once
// written, in order. The rows then never cross threads as objects. Logged records arrive as the hit log's synced
// groups (bytes), unlogged ones (no hit log) as lines.

import { mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { Gatherer, type GatherOptions } from './gatherer.js';
import type { LoggedGroup } from './hit-log.js';

/**
 * When a file is cut unless the options say otherwise. Larger than the write buffer's batches (5,000 or a second):
 * DuckDB spends 35-60 ms of CPU on every load whatever its size: at a file a second, about 40 µs of the 250 a hit cost
 * at 1,500 hits/s (docs/benchmarks.md, "Collector: measurements behind the code"). Hits reach reports up to 4 s after
 * their answer.
 */
const FILE_RECORDS = 20_000;
const FILE_WAIT_MS = 4_000;

/** A written file: its path, how many hits it holds, and its highest hit-log sequence number (0: none logged). */
export type LoadFile = { file: string; hits: number; seq: number };

export class LoadBatches {
  private readonly lines: Gatherer<string | Buffer>;
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

  /** A record that was not logged (sequence number 0), as its line. */
  add(line: string, seq: number): void {
    this.lines.add(line, seq);
  }

  /** A group of logged records, as the hit log wrote it. */
  addGroup(group: LoggedGroup): void {
    this.lines.add(group.data, group.seq, group.records);
  }

  /** Writes what waits as a file; resolves once it and every earlier file are written and announced. */
  cut(): Promise<void> {
    const taken = this.lines.take();
    if (!taken) return this.written;
    const { rows, records, seq } = taken;
    const file = join(this.dir, `${String(++this.lastFile).padStart(12, '0')}.ndjson`);
    this.writing += records;
    // Files are written one after another, so they are announced (and loaded) in record order.
    this.written = this.written.then(() => this.write(file, rows, records, seq));
    return this.written;
  }

  private async write(file: string, rows: (string | Buffer)[], records: number, seq: number): Promise<void> {
    // The groups go to the file as they are, in one gathered write: joined first, 20,000 records made a fresh
    // buffer of about 20 MB a file, whose copy and page faults cost the ingest thread about 6% of its time on two
    // cores in a perf profile (docs/benchmarks.md, "Collector: measurements behind the code").
    const parts = rows.map((row) => (typeof row === 'string' ? Buffer.from(row) : row));
    for (let attempt = 1; ; attempt++) {
      try {
        await writeWhole(file, parts);
        this.writing -= records;
        this.announce({ file, hits: records, seq });
        return;
      } catch (err) {
        // Logged records are safe in the hit log, but the store needs them now: keep trying (a full disk frees up).
        this.logError(err, `writing a batch of ${records} records for the store failed (attempt ${attempt}); retrying`);
        await new Promise((resolve) => setTimeout(resolve, Math.min(5000, 100 * attempt)));
      }
    }
  }
}

/** Writes `parts` one after another as the file's whole content (a new file, or one a failed attempt left). */
async function writeWhole(file: string, parts: Buffer[]): Promise<void> {
  const handle = await open(file, 'w');
  try {
    // libuv writes every part, as many calls as it takes; it stops short only on an error, which it reports.
    const { bytesWritten } = await handle.writev(parts);
    const expected = parts.reduce((sum, part) => sum + part.length, 0);
    if (bytesWritten !== expected) throw new Error(`wrote ${bytesWritten} of ${expected} bytes`);
  } finally {
    await handle.close();
  }
}
