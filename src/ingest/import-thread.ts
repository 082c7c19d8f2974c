// The import thread: set-based NDJSON imports (src/ingest/batch-import.ts) off the event loop that serves HTTP and
// off the ingest thread that serves live hits. Each chunk arrives as a file of the request's body, parsed by the
// reader thread (src/ingest/chunk-reader.ts) while this one works on the chunk before, and comes back as CSV files of
// its rows, which the main thread has its store load in one statement each.

import { parentPort, workerData } from 'node:worker_threads';
import { BatchImport, type ImportLookups, type RowsSink } from './batch-import.js';
import { ChunkReader } from './chunk-reader.js';
import { CsvLoad, StoredVisits } from './csv-load.js';
import { GeoLookup } from './enrich/geo.js';
import type { ImportResult } from './import.js';
import { IMPORT_SESSION_MS, type FromImportThread, type ImportThreadConfig, type ToImportThread } from './import-protocol.js';
import { EphemeralSalts } from './salts.js';
import type { CounterDeltas } from './thread-protocol.js';
import { ROW_GROUP_ROWS } from '../store/duckdb/row-group-checkpoints.js';

const port = parentPort!;
const config = workerData as ImportThreadConfig;
const send = (message: FromImportThread) => port.postMessage(message);
const geo = await GeoLookup.open();
const reader = new ChunkReader();

/** A chunk worked out whose answer waits for its last rows to be sent (they are in its import's open load). */
interface Held {
  id: number;
  result: ImportResult;
  counters: CounterDeltas;
}

/** One import's state: chunks with the same session key continue each other's visits and loads. */
interface Session {
  batch: BatchImport;
  stored: StoredVisits;
  at: number;
  /** The import's chunks, one after another. */
  queue: Promise<void>;
  /** Chunks handed over and not yet started: a chunk's last rows wait for the next one's only when it is here. */
  waiting: number;
  /** The load being filled, the chunks with rows in it, and the chunks done whose answers wait for it. */
  load: CsvLoad | undefined;
  loadChunks: Set<number>;
  held: Held[];
}

const sessions = new Map<string, Session>();

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
  const fresh = (): Session => ({
    batch: new BatchImport({ geo, salts: new EphemeralSalts(), excludedHosts: config.excludedHosts }),
    stored: new StoredVisits(),
    at: now,
    queue: Promise.resolve(),
    waiting: 0,
    load: undefined,
    loadChunks: new Set(),
    held: [],
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
 * Hits per load: one DuckDB row group. DuckDB writes the full row groups of an insert straight to the table's file,
 * and the rest through its write-ahead log and again at a checkpoint, for about 3 times the cost a hit.
 */
const LOAD_HITS = config.loadHits ?? ROW_GROUP_ROWS;

/** Sends a load's files once there is room, for the main thread to load in order. */
async function sendLoad(ids: number[], load: CsvLoad): Promise<void> {
  while (ahead >= MAX_AHEAD) await new Promise<void>((resolve) => waitingForRoom.push(resolve));
  const rows = await load.finish();
  ahead++;
  send({ t: 'rows', ids, rows });
}

/** Sends the import's open load, then the answers that waited for it, in order (failures, if it cannot be sent). */
async function release(state: Session): Promise<void> {
  const { load } = state;
  const ids = [...state.loadChunks];
  const held = state.held.splice(0);
  state.load = undefined;
  state.loadChunks.clear();
  try {
    if (load) await sendLoad(ids, load);
  } catch (err) {
    await load?.abandon();
    for (const { id } of held) send({ t: 'failed', id, error: (err as Error)?.message ?? String(err) });
    throw err;
  }
  for (const answer of held) send({ t: 'done', ...answer });
}

/**
 * Imports a chunk (NDJSON in `file`, parsed by the reader thread at once) once the import's earlier chunks are done.
 * Its rows go out in loads of exactly LOAD_HITS hits: a load that the chunk's rows do not fill waits for the
 * import's next chunk if it is already here (the CLI sends the next while this one is worked on), and so does the
 * chunk's answer; otherwise it goes as it is. A chunk that fails after some of its rows went into the open load
 * takes the chunks held for that load with it: their rows are not stored either.
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
  const sink: RowsSink = async (hits, visits) => {
    state.load ??= new CsvLoad(config.dir, String(++loads), state.stored);
    state.loadChunks.add(id);
    await state.load.add(hits, visits);
    if (state.load.size >= LOAD_HITS) await release(state);
  };
  // Slices end where loads do.
  const nextSlice = () => Math.min(SLICE_HITS, LOAD_HITS - (state.load?.size ?? 0));
  state.waiting++;
  state.queue = state.queue.then(async () => {
    state.waiting--;
    try {
      const { result, counts } = await state.batch.chunk(await read, firstLine, lookups, sink, nextSlice);
      state.held.push({ id, result, counters: counts });
      if (state.waiting === 0) await release(state);
    } catch (err) {
      const error = (err as Error)?.message ?? String(err);
      // The open load holds rows of this chunk: they go with it, and so do the held chunks' rows in it.
      if (state.load && state.loadChunks.has(id)) {
        await state.load.abandon();
        state.load = undefined;
        state.loadChunks.clear();
        for (const held of state.held.splice(0)) send({ t: 'failed', id: held.id, error });
      } else {
        await release(state).catch(() => undefined);
      }
      send({ t: 'failed', id, error });
    }
  });
}

send({ t: 'ready' });
