// An NDJSON file for `plumb import`, read twice instead of held: first indexed (each non-blank line's place,
// length, file line number and timestamp, as numbers), then read back chunk by chunk in the order they are sent.
// A file's text as one string cannot exceed V8's limit (about 512 MiB); an index is 24 bytes a line.

import { open, type FileHandle } from 'node:fs/promises';

const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;
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

export class NdjsonFile {
  private constructor(
    private readonly file: FileHandle,
    /** Byte offset, byte length (without the line break) and file line number of each non-blank line. */
    private readonly offsets: Float64Array,
    private readonly lengths: Uint32Array,
    private readonly numbers: Uint32Array,
    /** When each non-blank line says it happened (timestampOf). */
    readonly timestamps: Float64Array,
  ) {}

  /**
   * Opens and indexes `path`; `timestampOf` reads a line's time from its text. `quickTimestamp`, if given, reads it
   * without the line's text where it can (line-time.ts, flatTimestampAt): from the line's place in its block decoded
   * as latin1, where byte and character offsets are the same; lines it leaves (undefined) are decoded as UTF-8 and
   * read with `timestampOf`. Rejects when the file cannot be read.
   */
  static async open(
    path: string,
    timestampOf: (line: string) => number,
    quickTimestamp?: (block: string, start: number, end: number) => number | undefined,
  ): Promise<NdjsonFile> {
    const file = await open(path, 'r');
    try {
      const offsets = new Column(floats(1024), floats);
      const lengths = new Column(uints(1024), uints);
      const numbers = new Column(uints(1024), uints);
      const timestamps = new Column(floats(1024), floats);
      let lineNumber = 0;
      const line = (bytes: Buffer, block: string, start: number, end: number, offset: number) => {
        lineNumber++;
        // A line that starts with `{` is not blank, and its time may be read without its text.
        const quick = block.charCodeAt(start) === OPEN_BRACE ? quickTimestamp?.(block, start, end) : undefined;
        if (quick === undefined) {
          const text = bytes.toString('utf8', start, end);
          if (isBlankLine(text)) return;
          timestamps.push(timestampOf(text));
        } else timestamps.push(quick);
        offsets.push(offset);
        lengths.push(end - start);
        numbers.push(lineNumber);
      };
      // Lines are found in the file's blocks as they are read; a line cut by a block's end is carried over. Each
      // block is decoded as latin1 once (a copy of its bytes), and lines are found in that text: a search of a
      // string costs far less than a native call on the bytes a line.
      let carry: Buffer = Buffer.alloc(0);
      let carryOffset = 0;
      for await (const read of file.createReadStream({ autoClose: false, start: 0, highWaterMark: 1 << 20 }) as AsyncIterable<Buffer>) {
        const bytes = carry.length > 0 ? Buffer.concat([carry, read]) : read;
        const block = bytes.toString('latin1');
        let start = 0;
        for (let nl = block.indexOf('\n'); nl !== -1; nl = block.indexOf('\n', start)) {
          line(bytes, block, start, nl, carryOffset + start);
          start = nl + 1;
        }
        carryOffset += start;
        carry = bytes.subarray(start);
      }
      line(carry, carry.toString('latin1'), 0, carry.length, carryOffset);
      return new NdjsonFile(
        file,
        offsets.values.subarray(0, offsets.length),
        lengths.values.subarray(0, lengths.length),
        numbers.values.subarray(0, numbers.length),
        timestamps.values.subarray(0, timestamps.length),
      );
    } catch (err) {
      await file.close();
      throw err;
    }
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
    let size = indexes.length > 0 ? -1 : 0;
    for (const i of indexes) size += this.lengths[i]! + 1;
    const body = Buffer.allocUnsafe(size);
    let at = 0;
    // Lines in file order and close together (a file sorted already) are read in one go, else each where it is
    // (lines in file order but far apart, as interleaved months are, would make that one read the whole file).
    const first = indexes[0];
    const last = indexes[indexes.length - 1];
    const ascending = first !== undefined && last !== undefined && indexes.every((i, k) => k === 0 || i > indexes[k - 1]!);
    const spanBytes = ascending ? this.offsets[last]! + this.lengths[last]! - this.offsets[first]! : Infinity;
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

  async close(): Promise<void> {
    await this.file.close();
  }

  private async readFully(into: Buffer, position: number): Promise<void> {
    for (let done = 0; done < into.length; ) {
      const { bytesRead } = await this.file.read(into, done, into.length - done, position + done);
      if (bytesRead === 0) throw new Error('the file changed while it was imported');
      done += bytesRead;
    }
  }
}
