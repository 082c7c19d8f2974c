// The import thread: set-based NDJSON imports (src/ingest/batch-import.ts) off the event loop that serves HTTP and
// off the ingest thread that serves live hits. Each chunk arrives as a file of the request's body, parsed by the
// reader thread (src/ingest/chunk-reader.ts) while this one works on the chunk before, and comes back as CSV files of
// its rows, which the main thread has its store load in one statement each.

import { parentPort, workerData } from 'node:worker_threads';
import { BatchImport, type ImportLookups, type RowsSink } from './batch-import.js';
import { ChunkReader } from './chunk-reader.js';
import { CsvLoad, StoredVisits } from './csv-load.js';
import { GeoLookup } from './enrich/geo.js';
import { IMPORT_SESSION_MS, type FromImportThread, type ImportThreadConfig, type ToImportThread } from './import-protocol.js';
import { EphemeralSalts } from './salts.js';

const port = parentPort!;
const config = workerData as ImportThreadConfig;
const send = (message: FromImportThread) => port.postMessage(message);
const geo = await GeoLookup.open();
const reader = new ChunkReader();

const sessions = new Map<string, { batch: BatchImport; stored: StoredVisits; at: number; queue: Promise<void> }>();

/** Lookups a chunk waits for, by chunk id. */
const asked = new Map<number, { resolve: (value: never) => void; reject: (err: Error) => void }>();
const ask = <T>(id: number, message: FromImportThread): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    asked.set(id, { resolve: resolve as (value: never) => void, reject });
    send(message);
  });
function settle(id: number, value: unknown, error?: string): void {
  const waiting = asked.get(id);
  asked.delete(id);
  if (error !== undefined) waiting?.reject(new Error(error));
  else waiting?.resolve(value as never);
}

port.on('message', (message: ToImportThread) => {
  switch (message.t) {
    case 'chunk':
      chunk(message.id, message.session, message.file, message.firstLine);
      return;
    case 'sites':
      settle(message.id, new Map(message.sites));
      return;
    case 'goals':
      settle(message.id, message.goals);
      return;
    case 'failed':
      settle(message.id, undefined, message.error);
      return;
    case 'loaded':
      ahead--;
      waitingForRoom.shift()?.();
      return;
    case 'close':
      port.close();
      return;
  }
});

/** The import's state (a chunk without a session is an import of its own). */
function session(key: string | undefined) {
  const now = Date.now();
  for (const [k, s] of sessions) if (now - s.at > IMPORT_SESSION_MS) sessions.delete(k);
  const fresh = () => ({
    batch: new BatchImport({ geo, salts: new EphemeralSalts(), excludedHosts: config.excludedHosts }),
    stored: new StoredVisits(),
    at: now,
    queue: Promise.resolve(),
  });
  if (key === undefined) return fresh();
  const known = sessions.get(key) ?? fresh();
  known.at = now;
  sessions.set(key, known);
  return known;
}

/** Slices sent and not yet stored beyond which the thread waits: enough to keep the store busy, no more. */
const MAX_AHEAD = 2;
let ahead = 0;
const waitingForRoom: (() => void)[] = [];
let loads = 0;

/**
 * Rows worked out and written to the load's files before they are handed over: few, so the thread holds little
 * (a slice's rows as objects and as CSV text).
 */
const SLICE_HITS = 8_192;

/**
 * Hits per load, at least: DuckDB writes an insert of a row group (122,880 rows) or more straight to the table's
 * file, and smaller ones through its write-ahead log and again at a checkpoint, for about 3 times the cost a hit.
 */
const LOAD_HITS = 122_880;

/** Sends a load's files once there is room, for the main thread to load in order. */
async function sendLoad(id: number, load: CsvLoad): Promise<void> {
  while (ahead >= MAX_AHEAD) await new Promise<void>((resolve) => waitingForRoom.push(resolve));
  const rows = await load.finish();
  ahead++;
  send({ t: 'rows', id, rows });
}

/**
 * Imports a chunk (NDJSON in `file`, parsed by the reader thread at once) once the import's earlier chunks are done,
 * sending its rows as files of at least LOAD_HITS hits (a chunk's last load may be smaller).
 */
function chunk(id: number, key: string | undefined, file: string, firstLine: number): void {
  const state = session(key);
  const lookups: ImportLookups = {
    sites: (ids) => ask(id, { t: 'sites', id, ids }),
    goals: (names) => ask(id, { t: 'goals', id, names }),
  };
  // Read now, beside the work on the import's earlier chunks; a failure is the chunk's, reported in its turn.
  const read = reader.read(file, firstLine);
  read.catch(() => undefined);
  let load = new CsvLoad(config.dir, String(++loads), state.stored);
  const sink: RowsSink = async (hits, visits) => {
    await load.add(hits, visits);
    if (load.size >= LOAD_HITS) {
      await sendLoad(id, load);
      load = new CsvLoad(config.dir, String(++loads), state.stored);
    }
  };
  state.queue = state.queue.then(async () => {
    try {
      const { result, counts } = await state.batch.chunk(await read, firstLine, lookups, sink, SLICE_HITS);
      if (load.size > 0) await sendLoad(id, load);
      send({ t: 'done', id, result, counters: counts });
    } catch (err) {
      await load.abandon();
      send({ t: 'failed', id, error: (err as Error)?.message ?? String(err) });
    }
  });
}

send({ t: 'ready' });
