// The append-only log that makes an accepted hit durable before the collector answers: records are appended
// with group commit (one write and one fdatasync for everything that arrived meanwhile), replayed on start, and
// deleted once the event store has confirmed them. It holds stored hits and visit states only, never an IP
// address or a user agent.

import { mkdirSync, readdirSync, writeSync } from 'node:fs';
import { open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { StoredHit, VisitRecord } from '../../domain/hits.js';
import { decodeRecord, encodeRecord, type LogRecord } from './hit-record.js';

export type { LogRecord } from './hit-record.js';

/** Start a new segment once the current one holds this many bytes. */
const SEGMENT_BYTES = 32 * 1024 * 1024;
/**
 * A segment is zero-filled this far ahead of its records. A group commit then overwrites bytes the file already
 * has, and its fdatasync flushes data only: appending changed the file's size, so every sync also waited for a
 * journal commit of the file system, which other writers (the DuckDB file, other processes) hold up. Measured on
 * the 2-core machine while the collector benchmark ran: a sync 1.95 ms median appending, 0.22 ms overwriting.
 * Replay stops at a segment's first zero byte (records never hold one: they are JSON).
 */
const ZEROED_AHEAD = 1024 * 1024;
const ZEROES = Buffer.alloc(ZEROED_AHEAD);
const SEGMENT_RE = /^(\d{12})\.log$/;

/**
 * A group commit's records, once synced: their bytes (whole lines, which the store can load as they are), how many
 * and the highest sequence number. Handed on as one buffer rather than kept as strings until the store's next
 * load: thousands of kept lines survived the young generation's collections and cost the ingest thread more to
 * keep than to encode (docs/benchmarks.md, "Collector: measurements behind the code").
 */
export interface LoggedGroup {
  data: Buffer;
  records: number;
  seq: number;
}

interface Segment {
  id: number;
  /** Highest sequence number in the segment (0 while empty). */
  maxSeq: number;
}

export class HitLog {
  private handle!: FileHandle;
  private current!: Segment;
  /** Bytes of records in the current segment: where the next group goes. */
  private bytes = 0;
  /** Bytes the current segment's file holds, records and zeroes after them. */
  private zeroedTo = 0;
  private readonly sealed: Segment[] = [];
  private nextSeq: number;
  private pending: { line: string; seq: number; done: (err?: unknown) => void }[] = [];
  private writing: Promise<void> | undefined;

  private constructor(
    private readonly dir: string,
    lastSeq: number,
    private readonly sync: boolean,
    private readonly segmentBytes: number,
    private readonly synced: ((group: LoggedGroup) => void) | undefined,
  ) {
    this.nextSeq = lastSeq + 1;
  }

  /**
   * Opens the log in `dir` and reads what earlier runs left: records not yet confirmed (after `watermark`, the
   * last sequence number the event store holds) come back for replay, oldest first. A torn last line (the
   * process died while writing it) was never acknowledged and is dropped. `synced` is given each group once it is
   * on disk, before its appends resolve.
   */
  static async open(
    dir: string,
    watermark: number,
    options: { sync?: boolean; segmentBytes?: number; synced?: (group: LoggedGroup) => void } = {},
  ): Promise<{ log: HitLog; unconfirmed: LogRecord[] }> {
    mkdirSync(dir, { recursive: true });
    const ids = readdirSync(dir).map((f) => SEGMENT_RE.exec(f)).filter((m) => m !== null).map((m) => Number(m[1])).sort((a, b) => a - b);
    const unconfirmed: LogRecord[] = [];
    let lastSeq = watermark;
    const old: Segment[] = [];
    for (const id of ids) {
      const text = await readFile(join(dir, segmentName(id)), 'utf8');
      const end = text.indexOf('\0');
      let maxSeq = 0;
      for (const line of (end < 0 ? text : text.slice(0, end)).split('\n')) {
        if (line === '') continue;
        let record: LogRecord;
        try {
          record = decodeRecord(line);
        } catch {
          continue; // torn write at the end of a segment
        }
        maxSeq = Math.max(maxSeq, record.seq);
        if (record.seq > watermark) unconfirmed.push(record);
      }
      lastSeq = Math.max(lastSeq, maxSeq);
      old.push({ id, maxSeq });
    }
    unconfirmed.sort((a, b) => a.seq - b.seq);
    const log = new HitLog(dir, lastSeq, options.sync ?? true, options.segmentBytes ?? SEGMENT_BYTES, options.synced);
    log.sealed.push(...old);
    await log.startSegment((ids.at(-1) ?? 0) + 1);
    return { log, unconfirmed };
  }

  /**
   * Appends a record; resolves with its sequence number once it is on disk (fdatasync), together with everything
   * appended meanwhile.
   */
  append(hit: StoredHit, visit: VisitRecord): Promise<number> {
    const seq = this.nextSeq++;
    const line = encodeRecord(seq, hit, visit);
    return new Promise((resolve, reject) => {
      this.pending.push({ line, seq, done: (err) => (err ? reject(err) : resolve(seq)) });
      // The group starts after this turn of the event loop, so it holds every hit the turn appends (a message's
      // whole batch), not only the first: started at once, the first went alone and the rest waited a whole sync.
      if (!this.writing) this.writing = new Promise<void>((go) => setImmediate(go)).then(() => this.writeLoop());
    });
  }

  /** Deletes every segment whose records the event store has confirmed (sequence numbers up to `seq`). */
  async confirm(seq: number): Promise<void> {
    while (this.sealed.length > 0 && this.sealed[0]!.maxSeq <= seq) {
      const segment = this.sealed.shift()!;
      await rm(join(this.dir, segmentName(segment.id)), { force: true });
    }
  }

  async close(): Promise<void> {
    await this.writing;
    await this.handle.close();
  }

  private async writeLoop(): Promise<void> {
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        const data = Buffer.from(batch.map((b) => b.line).join(''));
        if (this.bytes > 0 && this.bytes + data.length > this.segmentBytes) await this.startSegment(this.current.id + 1);
        this.zeroAhead(this.bytes + data.length);
        // The write only copies into the page cache: done on this thread it saves a hand-off to libuv's pool and
        // back per group (on two cores such wake-ups cost more than the copy). The sync stays off the thread, which
        // meanwhile goes on enriching the next group's hits.
        for (let written = 0; written < data.length; ) {
          written += writeSync(this.handle.fd, data, written, data.length - written, this.bytes + written);
        }
        // Past these bytes whatever happens next: a group that failed to sync is refused, and the next one must not
        // overwrite part of it (its whole lines would come back on replay).
        this.bytes += data.length;
        if (this.sync) await this.handle.datasync();
        this.current.maxSeq = batch.at(-1)!.seq;
        this.synced?.({ data, records: batch.length, seq: this.current.maxSeq });
        for (const b of batch) b.done();
      } catch (err) {
        for (const b of batch) b.done(err);
      }
    }
    this.writing = undefined;
  }

  /** Zero-fills the segment a stretch beyond `needed` bytes, once fewer than a quarter of a stretch are left. */
  private zeroAhead(needed: number): void {
    if (needed + ZEROED_AHEAD / 4 <= this.zeroedTo) return;
    const target = Math.min(Math.max(needed + ZEROED_AHEAD, this.zeroedTo), Math.max(this.segmentBytes, needed));
    while (this.zeroedTo < target) {
      this.zeroedTo += writeSync(this.handle.fd, ZEROES, 0, Math.min(ZEROES.length, target - this.zeroedTo), this.zeroedTo);
    }
  }

  private async startSegment(id: number): Promise<void> {
    // Positioned writes: a file opened for appending would ignore the positions.
    const handle = await open(join(this.dir, segmentName(id)), 'wx');
    if (this.handle) {
      this.sealed.push(this.current);
      await this.handle.close().catch(() => undefined);
    }
    this.handle = handle;
    this.current = { id, maxSeq: 0 };
    this.bytes = 0;
    this.zeroedTo = 0;
  }
}

const segmentName = (id: number) => `${String(id).padStart(12, '0')}.log`;
