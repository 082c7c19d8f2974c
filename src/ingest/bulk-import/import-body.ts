// An /admin/import request body as it arrives: streamed to a file for the import thread to read (the event loop
// never holds or decodes it), or read into text for the ingest thread; either way refused past its size limit.

import { isAscii } from 'node:buffer';
import { createReadStream, createWriteStream } from 'node:fs';
import { finished, Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { StringDecoder } from 'node:string_decoder';
import { GeneralError } from '../../domain/errors.js';

/** NDJSON taken per request (the CLI sends files in chunks well below it). */
export const MAX_IMPORT_BODY_BYTES = 64 * 1024 * 1024;

/** Passes a body through and fails it with a 413 once it is longer than `max` bytes. */
function upTo(max: number): Transform {
  let bytes = 0;
  return new Transform({
    transform: (chunk: Buffer, _encoding, done) => {
      bytes += chunk.length;
      if (bytes > max) return done(new GeneralError(413, `Request body is too large: an import request takes up to ${max.toLocaleString('en')} bytes (send larger files in chunks, as plumb import does)`));
      done(null, chunk);
    },
  });
}

/**
 * `body` through upTo(max). Piped rather than made part of a pipeline: a pipeline destroys its source on error,
 * and destroying a request closes its connection before the 413 can be answered. A body that ends early (the
 * client went away) fails the returned stream.
 */
function limited(body: Readable, max: number): Transform {
  const limit = upTo(max);
  const stop = finished(body, (err) => {
    if (err) limit.destroy(err);
  });
  limit.once('close', () => {
    stop();
    body.unpipe(limit);
  });
  body.pipe(limit);
  return limit;
}

/** Writes `body` to `file`, byte for byte; rejects (413) a body over `max` bytes. */
export async function spoolBody(body: Readable, file: string, max = MAX_IMPORT_BODY_BYTES): Promise<void> {
  await pipeline(limited(body, max), createWriteStream(file));
}

/** `body` as UTF-8 text; rejects (413) a body over `max` bytes. */
export async function bodyText(body: Readable, max = MAX_IMPORT_BODY_BYTES): Promise<string> {
  const parts: Buffer[] = [];
  await pipeline(limited(body, max), async function* (chunks: AsyncIterable<Buffer>) {
    for await (const chunk of chunks) parts.push(chunk);
  });
  return Buffer.concat(parts).toString('utf8');
}

/**
 * `pieces` of UTF-8 as text. A piece that is all ASCII (as most import files are) is read as Latin-1, which is the same
 * text for ASCII and costs a copy, where UTF-8 decoding cost about 3 ns a byte (2.6 µs a line, the import reader's
 * largest item: docs/benchmarks.md, "Import: measurements behind the code"). Other pieces go through one StringDecoder,
 * which carries a character split across pieces; an ASCII piece cannot continue one, so the decoder is ended before it
 * (in well-formed UTF-8 it holds nothing then; after a truncated character it gives the U+FFFD that decoding straight
 * through would give at that point).
 */
async function* decoded(pieces: AsyncIterable<Buffer>): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  for await (const piece of pieces) {
    if (isAscii(piece)) {
      const pending = decoder.end();
      yield pending === '' ? piece.toString('latin1') : pending + piece.toString('latin1');
    } else {
      yield decoder.write(piece);
    }
  }
  yield decoder.end();
}

/**
 * Pieces eachLine reads. Each becomes one string: at a MiB, each was a large object to V8, and the reader thread
 * collected its old generation twice as often (52 against 24 full collections for three million lines; the reader's
 * work 5.3 against 4.7 µs a hit: docs/benchmarks.md, "Import: measurements behind the code").
 */
export const PIECE_BYTES = 64 * 1024;

/**
 * Calls `line` with each line of an NDJSON file, in order, without holding the file: read in pieces, decoded as
 * UTF-8 across piece boundaries, split at line feeds (a carriage return before one stays, as JSON ignores it).
 */
export async function eachLine(file: string, line: (text: string) => void): Promise<void> {
  let rest = '';
  for await (const piece of decoded(createReadStream(file, { highWaterMark: PIECE_BYTES }))) {
    let start = 0;
    for (let end = piece.indexOf('\n'); end !== -1; end = piece.indexOf('\n', start)) {
      line(rest === '' ? piece.slice(start, end) : rest + piece.slice(start, end));
      rest = '';
      start = end + 1;
    }
    rest += piece.slice(start);
  }
  line(rest);
}
