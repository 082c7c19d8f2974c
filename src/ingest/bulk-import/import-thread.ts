// The import thread: set-based NDJSON imports (src/ingest/bulk-import/batch-import.ts) off the event loop that serves
// HTTP and off the ingest thread that serves live hits. Each chunk arrives as a file of the request's body, parsed by
// the reader thread (src/ingest/bulk-import/chunk-reader.ts) while this one works on the chunk before, and comes back
// as CSV files of its rows, which the main thread has its store load in one statement each.

import { parentPort, workerData } from 'node:worker_threads';
import { BatchImport, type ImportLookups, type RowsSink } from './batch-import.js';
import { ChunkReader } from './chunk-reader.js';
import { CsvLoad, PendingVisits } from './csv-load.js';
import { GeoLookup } from '../enrich/geo.js';
import type { ImportResult } from '../line-import.js';
import { IMPORT_SESSION_MS, type FromImportThread, type ImportThreadConfig, type ToImportThread } from './import-protocol.js';
import { EphemeralSalts } from '../salts.js';
import type { CounterDeltas } from '../pipeline.js';
import { ROW_GROUP_ROWS } from '../../store/duckdb/row-group-checkpoints.js';
import { nameThread } from '../../thread-name.js';

nameThread('plumb-import');

const port = parentPort!;
const config = workerData as ImportThreadConfig;
const send = (message: FromImportThread) => port.postMessage(message);
const geo = await GeoLookup.open();
const reader = new ChunkReader();

/** A chunk worked out whose answer waits for its last rows to be sent (its last hits or its visits are still here). */
interface Held {
  id: number;
  result: ImportResult;
  counters: CounterDeltas;
}

/** One import's state: chunks with the same session key continue each other's visits and loads. */
interface Session {
  batch: BatchImport;
  at: number;
  /** The import's chunks, one after another. */
  queue: Promise<void>;
  /** Chunks handed over and not yet started: a chunk's last rows wait for the next one's only when it is here. */
  waiting: number;
  /** The load being filled and the chunks with hits in it. */
  load: CsvLoad | undefined;
  loadChunks: Set<number>;
  /** The visits the import's hits touched since its visits were last sent, and the chunks of those hits. */
  visits: PendingVisits;
  visitChunks: Set<number>;
  /** Chunks done whose answers wait for their rows to be sent: with the import's pending visits, the last to go. */
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
    at: now,
    queue: Promise.resolve(),
    waiting: 0,
    load: undefined,
    loadChunks: new Set(),
    visits: new PendingVisits(),
    visitChunks: new Set(),
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

/**
 * Visits a load stores, at least (but at the import's end): they wait across loads of hits until there are a row
 * group's worth. A load of 122,880 hits touches about 45,000 visits, which DuckDB stored through its write-ahead log
 * and again at the checkpoint after the load: for 1M hits the checkpoints took 1.37-1.55 s of CPU, against 0.32-0.33 s
 * with the visits in three loads (docs/benchmarks.md, "Import: measurements behind the code"). Reports see an import's
 * hits up to two loads before their visits; a chunk is answered only once its visits are stored too.
 */
const VISIT_LOAD_ROWS = config.visitRows ?? ROW_GROUP_ROWS;

/** Sends a load's files (with the pending visits, if given) once there is room, for the main thread to load in order. */
async function sendLoad(ids: number[], load: CsvLoad, visits: PendingVisits | undefined): Promise<void> {
  while (ahead >= MAX_AHEAD) await new Promise<void>((resolve) => waitingForRoom.push(resolve));
  const rows = await load.finish(visits);
  ahead++;
  send({ t: 'rows', ids, rows });
}

/**
 * Sends the import's open load: with the import's pending visits at the end (`last`: no next chunk is here) or
 * once they fill a load of their own, and then the answers that waited for them, in order (failures, if the load
 * cannot be sent).
 */
async function release(state: Session, last: boolean): Promise<void> {
  const withVisits = last || state.visits.size >= VISIT_LOAD_ROWS;
  const load = state.load ?? (withVisits && state.visits.size > 0 ? new CsvLoad(config.dir, String(++loads)) : undefined);
  const ids = new Set(state.loadChunks);
  state.load = undefined;
  state.loadChunks.clear();
  const held = withVisits ? state.held.splice(0) : [];
  if (withVisits) {
    for (const id of state.visitChunks) ids.add(id);
    state.visitChunks.clear();
  }
  try {
    if (load) await sendLoad([...ids], load, withVisits ? state.visits : undefined);
  } catch (err) {
    await load?.abandon();
    for (const { id } of held) send({ t: 'failed', id, error: (err as Error)?.message ?? String(err) });
    throw err;
  }
  for (const answer of held) send({ t: 'done', ...answer });
}

/**
 * Imports a chunk (NDJSON in `file`, parsed by the reader thread at once) once the import's earlier chunks are done.
 * Its hits go out in loads of exactly LOAD_HITS hits, and the visits they touched with the first load after them
 * that makes VISIT_LOAD_ROWS visits: a load that the chunk's rows do not fill waits for the import's next chunk if
 * it is already here (the CLI sends the next while this one is worked on), and so does the chunk's answer, which
 * also waits for its visits; with no next chunk here, the open load and every pending visit go as they are. A chunk
 * that fails after it touched any visit takes every chunk waiting for its answer with it (their pending visits are
 * in the states its hits left): the open load and the pending visits are not stored.
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
    state.load ??= new CsvLoad(config.dir, String(++loads));
    state.loadChunks.add(id);
    state.visitChunks.add(id);
    await state.load.add(hits);
    state.visits.add(visits);
    // With no next chunk here the import may be ending: its visits go now, beside the thread's last work, rather
    // than all in its last load, after it.
    if (state.load.size >= LOAD_HITS) await release(state, state.waiting === 0);
  };
  // Slices end where loads do.
  const nextSlice = () => Math.min(SLICE_HITS, LOAD_HITS - (state.load?.size ?? 0));
  state.waiting++;
  state.queue = state.queue.then(async () => {
    state.waiting--;
    try {
      const { result, counts } = await state.batch.chunk(await read, firstLine, lookups, sink, nextSlice);
      state.held.push({ id, result, counters: counts });
      if (state.waiting === 0) await release(state, true);
    } catch (err) {
      const error = (err as Error)?.message ?? String(err);
      // This chunk's hits are in the open load or its visits are pending: they go, and so do the held chunks' rows.
      if (state.visitChunks.has(id)) {
        await state.load?.abandon();
        state.load = undefined;
        state.loadChunks.clear();
        state.visits.drop();
        state.visitChunks.clear();
        for (const held of state.held.splice(0)) send({ t: 'failed', id: held.id, error });
      } else {
        await release(state, true).catch(() => undefined);
      }
      send({ t: 'failed', id, error });
    }
  });
}

send({ t: 'ready' });
