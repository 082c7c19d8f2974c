// An NDJSON file for `plumb import`, read twice instead of held: first indexed (each non-blank line's place,
// length, file line number and timestamp, as numbers; a large file in parts on several threads), then read back
// chunk by chunk in the order they are sent. A file's text as one string cannot exceed V8's limit (about 512 MiB);
// an index is 24 bytes a line.

import { open, type FileHandle } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { MAX_IMPORT_LINE_CHARS } from '../domain/hits.js';
import { startWorker } from '../start-worker.js';
import { flatTimestampsIn, timestampOf, type LineTimes } from './line-time.js';

const NEWLINE = 0x0a;
/** Bytes of a file read at once while it is indexed, and the room kept before them for the line the last block cut. */
const BLOCK_BYTES = 1 << 20;
const CARRY_ROOM = 64 * 1024;
const OPEN_BRACE = 0x7b;
/**
 * Bytes past which a line is certainly longer than MAX_IMPORT_LINE_CHARS (a character is at most 4 bytes of UTF-8):
 * such a line is passed over as it is read, never held (a file of one 3 GB line was carried whole, block after
 * block, copied again at each), and reported as refused without being sent.
 */
const TOO_LONG_BYTES = 4 * MAX_IMPORT_LINE_CHARS;
const NOT_BLANK = /\S/;

/** Whether an import line holds anything but white space (blank lines are skipped, and still counted). */
export const isBlankLine = (line: string) => !NOT_BLANK.test(line);

/** A Float64Array or Uint32Array that grows as values are pushed. */
class Column<T extends Float64Array | Uint32Array> {
  length = 0;
  constructor(
    public values: T,
    private readonly make: (size: number) => T,
  ) {}
  push(value: number): void {
    if (this.length === this.values.length) {
      const bigger = this.make(this.values.length * 2);
      bigger.set(this.values);
      this.values = bigger;
    }
    this.values[this.length++] = value;
  }
}

const floats = (n: number) => new Float64Array(n);
const uints = (n: number) => new Uint32Array(n);

/** The index of a file's lines, or of a part of them (indexPart). */
export interface LineIndex {
  /** Byte offset, byte length (without the line break) and line number (from 1) of each non-blank line. */
  offsets: Float64Array;
  lengths: Uint32Array;
  numbers: Uint32Array;
  /** When each non-blank line says it happened. */
  timestamps: Float64Array;
  /** Lines counted, blank ones included. */
  lines: number;
  /** Line numbers of the lines over TOO_LONG_BYTES: not indexed (nor sent), refused as the server would. */
  tooLong: Uint32Array;
}

/** Reads a line's time from its text (line-time.ts, timestampOf). */
export type TextTime = (line: string) => number;
/**
 * Reads the times of a block's lines (the block decoded as latin1) from their places in it, or leaves them
 * (line-time.ts, flatTimestampsIn).
 */
export type BlockTime = (block: string) => LineTimes;

/**
 * Indexes the lines that start in bytes [start, end) of the file at `path`: `end` is the file's size, or the
 * place just after a line break (a line cut there belongs to the next part). Line numbers count from 1 at `start`.
 * `quickTimestamp`, if given, reads a line's time without its text where it can: from the line's place in its block
 * decoded as latin1, where byte and character offsets are the same (a block's lines asked for in order); lines it
 * leaves (undefined) are decoded as UTF-8 and read with `timestampOf`. `onRead` is told the bytes of the part read
 * so far, after each block and at the end. Rejects when the file cannot be read.
 */
export async function indexPart(
  path: string,
  start: number,
  end: number,
  timestampOf: TextTime,
  quickTimestamp?: BlockTime,
  onRead?: (bytes: number) => void,
): Promise<LineIndex> {
  const file = await open(path, 'r');
  try {
    const offsets = new Column(floats(1024), floats);
    const lengths = new Column(uints(1024), uints);
    const numbers = new Column(uints(1024), uints);
    const timestamps = new Column(floats(1024), floats);
    const tooLong = new Column(uints(16), uints);
    let lineNumber = 0;
    const line = (bytes: Buffer, block: string, times: LineTimes | undefined, from: number, to: number, offset: number) => {
      lineNumber++;
      if (to - from > TOO_LONG_BYTES) {
        tooLong.push(lineNumber);
        return;
      }
      // A line that starts with `{` is not blank, and its time may be read without its text.
      const quick = block.charCodeAt(from) === OPEN_BRACE ? times?.(from, to) : undefined;
      if (quick === undefined) {
        const text = bytes.toString('utf8', from, to);
        if (isBlankLine(text)) return;
        timestamps.push(timestampOf(text));
      } else timestamps.push(quick);
      offsets.push(offset);
      lengths.push(to - from);
      numbers.push(lineNumber);
    };
    // Lines are found in the file's blocks as they are read, the next block read while this one is indexed. A line
    // cut by a block's end is carried over: copied just before the next block, into room its buffer keeps for it
    // (joining the two instead was a copy of every byte of the file), or joined to it when longer. Each block is
    // decoded as latin1 once (a copy of its bytes), and lines are found in that text: a search of a string costs
    // far less than a native call on the bytes a line.
    const buffers = [Buffer.allocUnsafe(CARRY_ROOM + BLOCK_BYTES), Buffer.allocUnsafe(CARRY_ROOM + BLOCK_BYTES)];
    const readBlock = async (turn: number, at: number) => {
      const { bytesRead } = await file.read(buffers[turn]!, CARRY_ROOM, Math.min(BLOCK_BYTES, end - at), at);
      return buffers[turn]!.subarray(CARRY_ROOM, CARRY_ROOM + bytesRead);
    };
    let carry: Buffer = Buffer.alloc(0);
    let carryOffset = start;
    let at = start;
    // Inside a line longer than TOO_LONG_BYTES: its bytes are passed over until its line break.
    let skipping = false;
    let reading = at < end ? readBlock(0, at) : undefined;
    for (let turn = 0; reading; turn ^= 1) {
      const read = await reading;
      if (read.length === 0) break;
      at += read.length;
      // The other buffer is free once this block's carry has been copied out of it (below, before the next read).
      let bytes: Buffer;
      if (skipping) {
        const nl = read.indexOf(NEWLINE);
        if (nl === -1) {
          carryOffset += read.length;
          reading = at < end ? readBlock(turn ^ 1, at) : undefined;
          onRead?.(carryOffset - start);
          continue;
        }
        lineNumber++;
        tooLong.push(lineNumber);
        skipping = false;
        carryOffset += nl + 1;
        bytes = read.subarray(nl + 1);
      } else if (carry.length === 0) bytes = read;
      else if (carry.length <= CARRY_ROOM) {
        bytes = buffers[turn]!.subarray(CARRY_ROOM - carry.length, CARRY_ROOM + read.length);
        carry.copy(bytes, 0);
      } else bytes = Buffer.concat([carry, read]);
      reading = at < end ? readBlock(turn ^ 1, at) : undefined;
      const block = bytes.toString('latin1');
      const times = quickTimestamp?.(block);
      let from = 0;
      for (let nl = block.indexOf('\n'); nl !== -1; nl = block.indexOf('\n', from)) {
        line(bytes, block, times, from, nl, carryOffset + from);
        from = nl + 1;
      }
      carryOffset += from;
      carry = bytes.subarray(from);
      if (carry.length > TOO_LONG_BYTES) {
        skipping = true;
        carryOffset += carry.length;
        carry = Buffer.alloc(0);
      }
      onRead?.(carryOffset + carry.length - start);
    }
    // The file's last line, with or without a line break after it (a part that ends at a line break has none).
    if (skipping) {
      lineNumber++;
      tooLong.push(lineNumber);
    } else if (carry.length > 0 || end === (await file.stat()).size) {
      const block = carry.toString('latin1');
      line(carry, block, quickTimestamp?.(block), 0, carry.length, carryOffset);
    }
    onRead?.(end - start);
    return {
      offsets: offsets.values.subarray(0, offsets.length),
      lengths: lengths.values.subarray(0, lengths.length),
      numbers: numbers.values.subarray(0, numbers.length),
      timestamps: timestamps.values.subarray(0, timestamps.length),
      lines: lineNumber,
      tooLong: tooLong.values.subarray(0, tooLong.length),
    };
  } finally {
    await file.close();
  }
}

/** The place just after the first line break at or after `from`, or undefined if none comes before `end`. */
async function lineStartAfter(file: FileHandle, from: number, end: number): Promise<number | undefined> {
  const window = Buffer.allocUnsafe(64 * 1024);
  for (let at = from; at < end; at += window.length) {
    const { bytesRead } = await file.read(window, 0, Math.min(window.length, end - at), at);
    const nl = window.subarray(0, bytesRead).indexOf(NEWLINE);
    if (nl !== -1) return at + nl + 1;
    if (bytesRead === 0) return undefined;
  }
  return undefined;
}

/** Parts' indexes, in file order, as one: each part's line numbers after the lines of the parts before it. */
function joined(parts: readonly LineIndex[]): LineIndex {
  const count = parts.reduce((n, p) => n + p.lengths.length, 0);
  const all: LineIndex = {
    offsets: floats(count), lengths: uints(count), numbers: uints(count), timestamps: floats(count), lines: 0,
    tooLong: uints(parts.reduce((n, p) => n + p.tooLong.length, 0)),
  };
  let at = 0;
  let long = 0;
  for (const part of parts) {
    for (const n of part.tooLong) all.tooLong[long++] = n + all.lines;
    all.offsets.set(part.offsets, at);
    all.lengths.set(part.lengths, at);
    all.timestamps.set(part.timestamps, at);
    for (let i = 0; i < part.numbers.length; i++) all.numbers[at + i] = part.numbers[i]! + all.lines;
    all.lines += part.lines;
    at += part.lengths.length;
  }
  return all;
}

/** What an index thread (index-thread.ts) says: how far it has read, then its part's index. */
export type FromIndexThread = { t: 'read'; bytes: number } | { t: 'index'; index: LineIndex };

/** A part of a file indexed on a thread of its own (index-thread.ts); `onRead` as indexPart's. */
function indexOnThread(path: string, start: number, end: number, onRead?: (bytes: number) => void): Promise<LineIndex> {
  return new Promise((resolve, reject) => {
    const thread = startWorker(import.meta.url, 'index-thread', { path, start, end });
    thread.on('message', (message: FromIndexThread) => {
      if (message.t === 'read') {
        onRead?.(message.bytes);
        return;
      }
      resolve(message.index);
      void thread.terminate();
    });
    thread.once('error', reject);
    thread.once('exit', (code) => reject(new Error(`the index thread stopped (${code})`)));
  });
}

/**
 * Bytes of a file indexed on one thread, at least. A million lines of an export (314 MB) take one thread 0.6-0.9 s;
 * a thread starts and answers for a one-line part in 36-49 ms.
 */
export const PART_BYTES = 32 * 1024 * 1024;

export class NdjsonFile {
  private constructor(
    private readonly file: FileHandle,
    /** Byte offset, byte length (without the line break) and file line number of each non-blank line. */
    private readonly offsets: Float64Array,
    private readonly lengths: Uint32Array,
    private readonly numbers: Uint32Array,
    /** When each non-blank line says it happened (timestampOf). */
    readonly timestamps: Float64Array,
    /** The parts the file was indexed in (forImport), each on a thread of its own. */
    readonly parts: number,
    /** File line numbers of the lines too long for any hit, in file order: not among the lines (LineIndex.tooLong). */
    readonly tooLong: Uint32Array,
  ) {}

  /** Opens and indexes `path` on this thread (indexPart, the whole file). Rejects when the file cannot be read. */
  static async open(path: string, timestampOf: TextTime, quickTimestamp?: BlockTime): Promise<NdjsonFile> {
    const file = await open(path, 'r');
    try {
      return NdjsonFile.over(file, [await indexPart(path, 0, (await file.stat()).size, timestampOf, quickTimestamp)]);
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  /**
   * Opens and indexes an import's file with its times read as line-time.ts reads them: a file of more than
   * `partBytes` in parts cut at line breaks, up to `most` (one a core, four at most), the first on this thread and
   * the others each on a thread of its own, all at once. `onRead` is told the bytes of the file read so far, all
   * parts together, as they are read (and the file's size once all are). Rejects when the file cannot be read.
   */
  static async forImport(
    path: string,
    { partBytes = PART_BYTES, most = Math.min(4, availableParallelism()), onRead }: { partBytes?: number; most?: number; onRead?: (bytes: number, size: number) => void } = {},
  ): Promise<NdjsonFile> {
    const file = await open(path, 'r');
    try {
      const size = (await file.stat()).size;
      const wanted = Math.max(1, Math.min(most, Math.floor(size / partBytes)));
      const cuts = [0];
      for (let k = 1; k < wanted; k++) {
        const cut = await lineStartAfter(file, Math.max(cuts.at(-1)!, Math.floor((size * k) / wanted)), size);
        if (cut === undefined || cut >= size) break;
        if (cut > cuts.at(-1)!) cuts.push(cut);
      }
      cuts.push(size);
      const read = cuts.slice(0, -1).map(() => 0);
      const partRead = (k: number) => (bytes: number) => {
        read[k] = bytes;
        onRead?.(read.reduce((a, b) => a + b, 0), size);
      };
      const parts = cuts.slice(0, -1).map((start, k) =>
        k === 0 ? indexPart(path, start, cuts[1]!, timestampOf, flatTimestampsIn, partRead(k)) : indexOnThread(path, start, cuts[k + 1]!, partRead(k)),
      );
      // Every part is waited for (a failed one rejects, and no thread is left running).
      const settled = await Promise.allSettled(parts);
      const failed = settled.find((p) => p.status === 'rejected');
      if (failed) throw failed.reason;
      return NdjsonFile.over(file, settled.map((p) => (p as PromiseFulfilledResult<LineIndex>).value));
    } catch (err) {
      await file.close();
      throw err;
    }
  }

  private static over(file: FileHandle, parts: readonly LineIndex[]): NdjsonFile {
    const index = parts.length === 1 ? parts[0]! : joined(parts);
    return new NdjsonFile(file, index.offsets, index.lengths, index.numbers, index.timestamps, parts.length, index.tooLong);
  }

  /** Non-blank lines. */
  get count(): number {
    return this.lengths.length;
  }

  /** The file line number (from 1) of the i-th non-blank line. */
  lineNumber(i: number): number {
    return this.numbers[i]!;
  }

  /** Bytes of the i-th non-blank line with its line break. */
  bytes(i: number): number {
    return this.lengths[i]! + 1;
  }

  /** The lines `indexes` (non-blank line numbers from 0), in that order, joined by line breaks. */
  async read(indexes: Uint32Array): Promise<Buffer> {
    const { size, spanBytes } = this.extent(indexes);
    const body = Buffer.allocUnsafe(size);
    let at = 0;
    // Lines in file order and close together (a file sorted already) are read in one go, else each where it is
    // (lines in file order but far apart, as interleaved months are, would make that one read the whole file).
    const first = indexes[0];
    // Lines that follow one another in the file (a file in time order, sent as it is) are the file's own bytes.
    if (spanBytes === size) {
      await this.readFully(body, this.offsets[first!]!);
      return body;
    }
    if (spanBytes <= 2 * size + (1 << 20)) {
      const from = this.offsets[first!]!;
      const span = Buffer.allocUnsafe(spanBytes);
      await this.readFully(span, from);
      for (const i of indexes) {
        if (at > 0) body[at++] = NEWLINE;
        const start = this.offsets[i]! - from;
        at += span.copy(body, at, start, start + this.lengths[i]!);
      }
      return body;
    }
    for (const i of indexes) {
      if (at > 0) body[at++] = NEWLINE;
      await this.readFully(body.subarray(at, at + this.lengths[i]!), this.offsets[i]!);
      at += this.lengths[i]!;
    }
    return body;
  }

  /**
   * The lines `indexes` as read() gives them, read as they are taken (a MiB at a time) rather than held, when they
   * follow one another in the file (the chunks of a file in time order): their size, and their bytes. Undefined for
   * any other lines. The pieces fail if the file has become shorter since it was indexed.
   */
  stream(indexes: Uint32Array): { bytes: number; pieces: AsyncIterable<Buffer> } | undefined {
    const { size, spanBytes } = this.extent(indexes);
    if (spanBytes !== size || size === 0) return undefined;
    return { bytes: size, pieces: this.pieces(this.offsets[indexes[0]!]!, size) };
  }

  /** `bytes` bytes of the file from `from`, a MiB at a time (readFully's failure if the file is shorter). */
  private async *pieces(from: number, bytes: number): AsyncIterable<Buffer> {
    for (let done = 0; done < bytes; ) {
      const piece = Buffer.allocUnsafe(Math.min(1 << 20, bytes - done));
      await this.readFully(piece, from + done);
      done += piece.length;
      yield piece;
    }
  }

  async close(): Promise<void> {
    await this.file.close();
  }

  /** The bytes of lines `indexes` joined by line breaks, and of the file from the first to the last if ascending. */
  private extent(indexes: Uint32Array): { size: number; spanBytes: number } {
    let size = indexes.length > 0 ? -1 : 0;
    for (const i of indexes) size += this.lengths[i]! + 1;
    const first = indexes[0];
    const last = indexes[indexes.length - 1];
    const ascending = first !== undefined && last !== undefined && indexes.every((i, k) => k === 0 || i > indexes[k - 1]!);
    const spanBytes = ascending ? this.offsets[last]! + this.lengths[last]! - this.offsets[first]! : Infinity;
    return { size, spanBytes };
  }

  private async readFully(into: Buffer, position: number): Promise<void> {
    for (let done = 0; done < into.length; ) {
      const { bytesRead } = await this.file.read(into, done, into.length - done, position + done);
      if (bytesRead === 0) throw new Error('the file changed while it was imported');
      done += bytesRead;
    }
  }
}
