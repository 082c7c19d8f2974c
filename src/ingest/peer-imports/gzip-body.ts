// An upload that may come gzip-compressed (Umami Cloud's data export is a `.csv.gz`): recognised by its first two
// bytes whatever its Content-Type, inflated as it streams, and stopped when it inflates further than an export can.

import { once } from 'node:events';
import { Transform, type Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';

/** A compressed upload that cannot be read: not valid gzip, cut short, or inflating like a bomb. */
export class CompressedBodyError extends Error {}

/**
 * Inflated bytes allowed whatever the ratio: a small export is never refused for compressing well. Small, because
 * reading rows is the slow part (about 15,000 a second): work stays bounded by the upload's own size.
 */
export const FREE_INFLATED_BYTES = 1024 * 1024;
/**
 * Inflated bytes allowed per compressed byte beyond that. Rows of an analytics export carry random ids (Umami's
 * event, session and visit UUIDs) and compress 3-10 times; gzip's most is about 1,000 (zeros), a bomb's mark.
 */
export const MAX_INFLATE_RATIO = 100;

/** The first `n` bytes of `source` (fewer if it ends first), put back so the stream reads from its start. */
async function peek(source: Readable, n: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let length = 0;
  while (length < n && !source.readableEnded) {
    const chunk = source.read() as Buffer | null;
    if (chunk === null) {
      // More to read, ended, or errored (once rejects): whichever comes first; the others' waits are cancelled.
      const cancel = new AbortController();
      const waits = ['readable', 'end', 'close'].map((event) => once(source, event, { signal: cancel.signal }));
      for (const wait of waits) wait.catch(() => undefined);
      try {
        await Promise.race(waits);
      } finally {
        cancel.abort();
      }
      if (source.destroyed && !source.readableEnded) break;
      continue;
    }
    chunks.push(chunk);
    length += chunk.length;
  }
  const head = Buffer.concat(chunks);
  if (head.length > 0) source.unshift(head);
  return head;
}

/**
 * `source` as the bytes it carries: itself when it is not gzip, else its inflated bytes. An error of the
 * compressed stream (invalid data, a cut, the inflation bound) reaches the returned stream as a
 * CompressedBodyError; the rest of the upload is then read and discarded, so the client can read the answer.
 */
export async function inflatedIfGzipped(source: Readable): Promise<{ body: Readable; gzipped: boolean }> {
  const head = await peek(source, 2);
  if (head.length < 2 || head[0] !== 0x1f || head[1] !== 0x8b) return { body: source, gzipped: false };

  let compressed = 0;
  let inflated = 0;
  const counted = (chunk: Buffer) => {
    compressed += chunk.length;
  };
  source.on('data', counted);
  const gunzip = createGunzip();
  const bounded = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      inflated += chunk.length;
      if (inflated > FREE_INFLATED_BYTES && inflated > compressed * MAX_INFLATE_RATIO) {
        fail(new CompressedBodyError(
          `the gzip file inflates to more than ${MAX_INFLATE_RATIO} times its size (${inflated} bytes from ${compressed}): not an export; nothing was imported`,
        ));
        done();
        return;
      }
      done(null, chunk);
    },
  });
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    source.unpipe(gunzip);
    source.off('data', counted);
    // Read the rest of the upload and drop it: a client still sending would otherwise never see the answer.
    source.resume();
    gunzip.destroy();
    bounded.destroy(err instanceof CompressedBodyError ? err : new CompressedBodyError(`not a readable gzip file (${err.message}); nothing was imported`));
  };
  gunzip.on('error', fail);
  // The reader sees errors through its own listener; this one only keeps one that comes first from being unhandled.
  bounded.on('error', () => undefined);
  source.on('error', (err) => bounded.destroy(err));
  source.pipe(gunzip).pipe(bounded);
  return { body: bounded, gzipped: true };
}
