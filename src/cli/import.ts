// `plumb import FILE` and the import half of `plumb demo`: NDJSON sent to /admin/import in chunks that share
// one import id (so visits continue across chunks), numbered, oldest hits first, four at a time, with a progress bar.

import { randomUUID } from 'node:crypto';
import { Presets, SingleBar } from 'cli-progress';
import { TOO_LONG_LINE } from '../domain/hits.js';
import { AdminClientError, type AdminClient } from './admin-client.js';
import { timestampOf } from './line-time.js';
import { isBlankLine, NdjsonFile } from './ndjson-file.js';

export interface ImportSummary {
  imported: number;
  rejected: number;
  errors: { line: number; message: string }[];
}

/**
 * Lines per request, and at most about this many bytes (the server takes 64 MiB): large chunks because the server
 * stores each in one go, and one large write costs far less than many small ones.
 */
const CHUNK_LINES = 100_000;
const CHUNK_BYTES = 40 * 1024 * 1024;

/**
 * The first chunk is this share of the others. The server reads a chunk whole before it works on any of its lines,
 * and until then only that reading runs: a small first chunk gets the import's other stages going sooner (the server
 * at 1.8 of the two cores about 0.5 s after the first chunk went, instead of 1.5 s). One small chunk only: the chunks
 * in flight (CHUNKS_IN_FLIGHT) must hold enough lines to keep the server busy until the first is answered.
 */
const FIRST_CHUNK_SHARE = 1 / 4;

/**
 * Chunks sent before the oldest is answered. A chunk's answer waits for the load that holds its last rows, which the
 * next chunk's first rows fill, and for the load that stores its visits (the server gathers three loads' visits into
 * one, src/ingest/bulk-import/import-thread.ts), so answers trail the import thread by about four chunks, plus the
 * loads DuckDB has yet to store (up to two). With fewer in flight the thread ran out of chunks and sent loads short of
 * a row group (six: every fourth load, in a logged run). Ten keep it fed; the server takes up to 12 ahead of the one it
 * expects (src/ingest/bulk-import/chunk-order.ts). A chunk of a file in time order is streamed from the file, so the
 * chunks the server has not read yet cost little here (for 1M lines the CLI peaked at 225-249 MiB; 428-494 when it held
 * ten chunks whole, 356-462 six).
 */
const CHUNKS_IN_FLIGHT = 10;

/** A one-line progress bar (cli-progress) on a terminal, `unit` after its numbers; silent when output is not a terminal. */
export function progressBar(stream: NodeJS.WriteStream, label: string, unit = '') {
  const bar = new SingleBar(
    {
      stream,
      format: `${label} [{bar}] {percentage}% {value}/{total}${unit}`,
      formatValue: (value, _options, type) => (type === 'value' || type === 'total' ? value.toLocaleString('en') : String(value)),
      hideCursor: true,
      // Without a terminal (scripts, CI logs) it writes nothing: the summary line says it all.
      noTTYOutput: false,
    },
    Presets.shades_classic,
  );
  let started = false;
  return {
    update(done: number, total: number) {
      if (!started) {
        bar.start(total, done);
        started = true;
      } else {
        bar.setTotal(total);
        bar.update(done);
      }
    },
    done() {
      if (started) bar.stop();
      started = false;
    },
  };
}

/** An import's non-blank lines, numbered from 0 in file order, with what sending them needs. */
export interface ImportLines {
  readonly count: number;
  /** When each line says it happened (timestampOf). */
  readonly timestamps: Float64Array;
  /** The file line number (from 1) of line i. */
  lineNumber(i: number): number;
  /** Bytes of line i with its line break. */
  bytes(i: number): number;
  /** Lines `indexes`, in that order, joined by line breaks. */
  read(indexes: Uint32Array): Promise<string | Uint8Array>;
  /** The same, read as they are sent, where the lines allow it (NdjsonFile.stream). */
  stream?(indexes: Uint32Array): { bytes: number; pieces: AsyncIterable<Uint8Array> } | undefined;
}

/** The lines of NDJSON text held in memory (`plumb demo`, tests); only numbers are kept per line. */
function textLines(text: string): ImportLines {
  const all = text.split('\n');
  const kept = new Uint32Array(all.length);
  let count = 0;
  for (let i = 0; i < all.length; i++) if (!isBlankLine(all[i]!)) kept[count++] = i;
  const timestamps = new Float64Array(count);
  for (let i = 0; i < count; i++) timestamps[i] = timestampOf(all[kept[i]!]!);
  return {
    count,
    timestamps,
    lineNumber: (i) => kept[i]! + 1,
    bytes: (i) => Buffer.byteLength(all[kept[i]!]!) + 1,
    read: async (indexes) => Array.from(indexes, (i) => all[kept[i]!]!).join('\n'),
  };
}

/** Sends `text` (NDJSON) as importLines does. */
export function importNdjson(
  client: AdminClient,
  text: string,
  onProgress: (done: number, total: number) => void = () => undefined,
  chunkLines = CHUNK_LINES,
): Promise<ImportSummary> {
  return importLines(client, textLines(text), onProgress, chunkLines);
}

/**
 * Sends the NDJSON file at `path` as importLines does, read in chunks (files of any size). Before the first chunk
 * the file is indexed (NdjsonFile.forImport), a second or so for each 300 MB: `onRead` is told how far.
 */
export async function importNdjsonFile(
  client: AdminClient,
  path: string,
  onProgress: (done: number, total: number) => void = () => undefined,
  onRead?: (bytes: number, size: number) => void,
): Promise<ImportSummary> {
  const file = await NdjsonFile.forImport(path, { onRead });
  try {
    const summary = await importLines(client, file, onProgress);
    // Lines too long for any hit were passed over while indexing, never read whole nor sent: refused here as the
    // server refuses them.
    if (file.tooLong.length === 0) return summary;
    summary.rejected += file.tooLong.length;
    for (const line of file.tooLong) summary.errors.push({ line, message: TOO_LONG_LINE });
    summary.errors.sort((a, b) => a.line - b.line);
    return summary;
  } finally {
    await file.close();
  }
}

/**
 * Sends `lines` in chunks of up to `chunkLines` lines (and CHUNK_BYTES). Lines are sorted by timestamp first
 * (stably, so a sorted file is sent as is); errors come back with the line numbers of the original file.
 */
export async function importLines(
  client: AdminClient,
  lines: ImportLines,
  onProgress: (done: number, total: number) => void = () => undefined,
  chunkLines = CHUNK_LINES,
): Promise<ImportSummary> {
  // Per line only numbers in typed arrays, no object: a million lines as objects kept the CLI's garbage collector
  // busy for 40% of its time (the CLI shares the machine with the server it sends to).
  const { count, timestamps: at } = lines;
  let inOrder = true;
  for (let i = 1; i < count && inOrder; i++) if (at[i]! < at[i - 1]!) inOrder = false;
  // Exports are mostly in time order already: sorting is skipped when nothing is out of place. Stable: equal
  // times keep their file order.
  const order = Uint32Array.from({ length: count }, (_, i) => i);
  if (!inOrder) order.sort((a, b) => at[a]! - at[b]! || a - b);
  const id = randomUUID();
  const summary: ImportSummary = { imported: 0, rejected: 0, errors: [] };
  onProgress(0, count);
  // The next chunk goes out while the server works on the last: its upload and the CLI's work overlap the
  // server's (which takes a numbered import's chunks in order); answers are read in order.
  const inFlight: { start: number; end: number; answer: Promise<ImportSummary> }[] = [];
  const settleOldest = async () => {
    const { start, end, answer } = inFlight.shift()!;
    const result = await answer;
    summary.imported += result.imported;
    summary.rejected += result.rejected;
    for (const e of result.errors) {
      const k = start + e.line - 1;
      summary.errors.push({ line: k >= start && k < end ? lines.lineNumber(order[k]!) : e.line, message: e.message });
    }
    onProgress(end, count);
  };
  try {
    for (let i = 0, seq = 1; i < count; seq++) {
      let end = i;
      const most = seq === 1 ? Math.ceil(chunkLines * FIRST_CHUNK_SHARE) : chunkLines;
      for (let bytes = 0; end < count && end - i < most; end++) {
        bytes += lines.bytes(order[end]!);
        if (end > i && bytes > CHUNK_BYTES) break;
      }
      const headers = { 'content-type': 'application/x-ndjson', 'x-plumb-import-id': id, 'x-plumb-import-seq': String(seq), 'x-plumb-first-line': '1' };
      // A chunk the server has not read yet waits in its connection: streamed from the file, the CLI holds a MiB of
      // it, not all of it (ten chunks of a file in time order: 30 MB each).
      const streamed = lines.stream?.(order.subarray(i, end));
      const answer = streamed
        ? client.requestStream<ImportSummary>('/admin/import', asClientError(streamed.pieces), { ...headers, 'content-length': String(streamed.bytes) })
        : client.requestText<ImportSummary>('/admin/import', await lines.read(order.subarray(i, end)), headers);
      // Settled by settleOldest; until then a failure must not go unhandled.
      answer.catch(() => undefined);
      inFlight.push({ start: i, end, answer });
      i = end;
      if (inFlight.length >= CHUNKS_IN_FLIGHT) await settleOldest();
    }
    while (inFlight.length > 0) await settleOldest();
  } finally {
    // After a failure, the chunks already sent are still answered before the error is reported.
    await Promise.allSettled(inFlight.map((f) => f.answer));
  }
  summary.errors.sort((a, b) => a.line - b.line);
  return summary;
}

/** `pieces`, failing as the AdminClient reports a failure of its own (the file, not the server, is at fault). */
async function* asClientError(pieces: AsyncIterable<Uint8Array>): AsyncIterable<Uint8Array> {
  try {
    yield* pieces;
  } catch (err) {
    throw new AdminClientError((err as Error)?.message ?? String(err));
  }
}
