// The ingest thread: the live pipeline (enrichment, visitor hashing, visits, the hit log) off the event loop that
// serves HTTP. Hits arrive in batches; each comes back as a result once it is durable (logged); the stored rows go
// to the main thread, which writes them, as record files (DuckDB), INSERT statements (ClickHouse) or objects.

import { parentPort, workerData } from 'node:worker_threads';
import { type HitType, type StoredHit, type VisitRecord } from '../../domain/hits.js';
import type { DropReason } from '../../metrics.js';
import { Enricher } from '../enrich/index.js';
import { HitLog } from './hit-log.js';
import { encodeRecord } from './hit-record.js';
import { importLines, type ImportResult, type ImportRoom } from '../line-import.js';
import { InsertBatches } from './insert-batches.js';
import { LoadBatches } from './load-batches.js';
import { HitPipeline, InvalidHit, newCounterDeltas, type HitCounters, type HitSink } from '../pipeline.js';
import { EphemeralSalts, StoredSalts } from '../salts.js';
import { SiteDirectory } from '../site-directory.js';
import type { FromThread, IngestMeta, IngestMetaMethod, Result, ThreadConfig, ToThread } from './thread-protocol.js';
import { keepNewest, SharedVisitTracker, VisitTracker, type VisitState } from '../visits.js';
import { CompactVisitTracker } from './compact-visits.js';
import { nameThread } from '../../thread-name.js';

nameThread('plumb-ingest');

const port = parentPort!;
const config = workerData as ThreadConfig;
const send = (message: FromThread) => port.postMessage(message);

// MetaStore calls answered by the main thread.
let lastCall = 0;
const calls = new Map<number, { resolve: (value: unknown) => void; reject: (err: Error) => void }>();
const remote =
  (method: IngestMetaMethod) =>
  (...args: unknown[]): Promise<never> =>
    new Promise((resolve, reject) => {
      const id = ++lastCall;
      calls.set(id, { resolve: resolve as (value: unknown) => void, reject });
      send({ t: 'call', id, method, args });
    });
const meta = {
  getSite: remote('getSite'),
  listGoals: remote('listGoals'),
  createGoal: remote('createGoal'),
  saltForDay: remote('saltForDay'),
  findSalt: remote('findSalt'),
  deleteSaltsBefore: remote('deleteSaltsBefore'),
} as IngestMeta;

// Listening from the start: the set-up below already waits for MetaStore answers. Hits and the rest arrive only
// after 'ready'.
port.on('message', (message: ToThread) => {
  switch (message.t) {
    case 'hits':
      for (const [id, hit] of message.batch) accept(id, hit);
      return;
    case 'reply': {
      const call = calls.get(message.id);
      calls.delete(message.id);
      if (message.error !== undefined) call?.reject(new Error(message.error));
      else call?.resolve(message.value);
      return;
    }
    case 'import':
      void runImport(message.id, message.session, message.ndjson.split('\n'), message.firstLine);
      return;
    case 'forget':
      sites.forget(message.siteId);
      return;
    case 'confirm':
      log?.confirm(message.seq).catch((err) => logError(err, 'deleting confirmed hit log segments failed'));
      return;
    case 'cut':
      inserts?.cut();
      void (batches?.cut() ?? Promise.resolve()).then(() => send({ t: 'cut', id: message.id }));
      return;
    case 'live':
      // In memory only in embedded mode; the shared state in Redis is the stores' to read.
      send({ t: 'live', id: message.id, visits: local ? local.liveVisits(message.siteId, message.sinceMs) : null });
      return;
    case 'close':
      void close();
      return;
  }
});

// What goes back with the next message: results, rows and counts gathered since the last one.
const newDeltas = newCounterDeltas;
let recorded: number[] = [];
let results: [number, Result][] = [];
let imports: [number, ImportResult | { error: string }][] = [];
let hits: StoredHit[] = [];
let seqs: number[] = [];
let visits = new Map<bigint, VisitRecord>();
let deltas = newDeltas();
let scheduled = false;

/** Sends what gathered since the last message, and starts gathering anew. */
function sendGathered(): void {
  send({ t: 'done', recorded, results, imports, hits, seqs, visits: [...visits.values()], counters: deltas, gathered: gathered() });
  recorded = [];
  results = [];
  imports = [];
  hits = [];
  seqs = [];
  visits = new Map();
  deltas = newDeltas();
}

/** Sends what gathered once the current turn of the event loop is over: one message for a whole group commit. */
function schedule(): void {
  if (scheduled) return;
  scheduled = true;
  setImmediate(() => {
    scheduled = false;
    sendGathered();
  });
}

const counters: HitCounters = {
  received: (type: HitType) => void deltas.received[type]++,
  recorded: (type: HitType) => void deltas.recorded[type]++,
  dropped: (reason: DropReason) => void (deltas.dropped[reason] = (deltas.dropped[reason] ?? 0) + 1),
};

function row(hit: StoredHit, visit: VisitRecord, seq: number): void {
  hits.push(hit);
  seqs.push(seq);
  keepNewest(visits, visit);
  // Out with the next message: imports send a few hundred at a time, never one large batch.
  schedule();
}

const logError = (err: unknown, message: string) => send({ t: 'log', message, error: String((err as Error)?.stack ?? err) });

// Rows for the store: into record files the store loads itself, into INSERT statements, or back to the main thread
// as objects.
const batches = config.loadDir
  ? new LoadBatches(config.loadDir, (file) => send({ t: 'load', ...file, gathered: gathered() }), logError, config.loadBatch)
  : undefined;
const inserts =
  config.insertNode !== undefined && !batches
    ? new InsertBatches(config.insertNode, (batch) => send({ t: 'inserts', ...batch, gathered: gathered() }), config.loadBatch)
    : undefined;
/** Rows accepted and not yet handed to the main thread. */
const gathered = () => (batches?.waiting ?? 0) + (inserts?.waiting ?? 0);
const unlogged = (hit: StoredHit, visit: VisitRecord) => {
  if (batches) batches.add(encodeRecord(0, hit, visit), 0);
  else if (inserts) inserts.add(hit, visit, 0);
  else row(hit, visit, 0);
};

// Record files take the log's synced groups as they were written; the other ways take each logged hit.
const log = config.logDir ? (await HitLog.open(config.logDir, config.watermark, batches ? { synced: (group) => batches.addGroup(group) } : {})).log : undefined;
// Logged (and synced) first, then handed over: a result never leaves before its hit is durable.
const sink: HitSink = log
  ? {
      add: async (hit, visit) => {
        const seq = await log.append(hit, visit);
        if (batches) return;
        if (inserts) inserts.add(hit, visit, seq);
        else row(hit, visit, seq);
      },
    }
  : { add: unlogged };

// ioredis loads only in scale-out mode: the embedded thread never needs it, and it was part of this thread's start.
const shared = config.sharedVisits
  ? new (await import('../../store/redis/visit-state.js')).RedisVisitStateStore(config.sharedVisits.url, config.sharedVisits.prefix)
  : undefined;
let local: CompactVisitTracker | undefined;
let visitState: VisitState;
if (shared) visitState = new SharedVisitTracker(shared);
else {
  // Visits in progress are most of this thread's memory: held as a table, their texts shared (hits reach this thread
  // as copies, structured clones).
  visitState = local = new CompactVisitTracker();
  local.seed(config.seed);
}

const sites = new SiteDirectory(meta);
const salts = new StoredSalts(meta);
const enricher = await Enricher.create();
const pipeline = new HitPipeline({
  enricher,
  sites,
  salts,
  visits: visitState,
  sink,
  counters,
  excludedHosts: config.excludedHosts,
});

// Imports: historical hits get throwaway salts and visit state of their own per import (a chunked import's chunks
// share one), and rows go out unlogged like live ones; every few thousand hits the main thread is asked to let
// the write buffer catch up.
const IMPORT_SESSION_MS = 10 * 60 * 1000;
const HITS_PER_ROOM_CHECK = 5000;
const importSessions = new Map<string, { pipeline: HitPipeline; at: number }>();
const importSink: HitSink = { add: unlogged };
const newImportPipeline = () =>
  new HitPipeline({ enricher, sites, salts: new EphemeralSalts(), visits: new VisitTracker(), sink: importSink, counters, excludedHosts: config.excludedHosts });

function importPipeline(session: string | undefined): HitPipeline {
  const now = Date.now();
  for (const [key, s] of importSessions) if (now - s.at > IMPORT_SESSION_MS) importSessions.delete(key);
  if (session === undefined) return newImportPipeline();
  const known = importSessions.get(session) ?? { pipeline: newImportPipeline(), at: now };
  known.at = now;
  importSessions.set(session, known);
  return known.pipeline;
}

function importRoom(): ImportRoom {
  let sinceCheck = 0;
  return {
    get isFull() {
      return ++sinceCheck % HITS_PER_ROOM_CHECK === 0;
    },
    flush: () => {
      schedule();
      return remote('room')() as Promise<void>;
    },
  };
}

function runImport(id: number, session: string | undefined, lines: string[], firstLine: number): void {
  track(
    importLines(lines, importPipeline(session), importRoom(), firstLine).then(
      // Pushed once settled: `imports` is replaced each time a message goes out.
      (result) => void imports.push([id, result]),
      (err: unknown) => void imports.push([id, { error: (err as Error)?.message ?? String(err) }]),
    ),
  );
}

const timer = setInterval(() => {
  const now = new Date();
  local?.sweep(now);
  salts.rotate(now).catch((err) => logError(err, 'deleting old salts failed'));
}, 60_000);
await salts.rotate(new Date()).catch((err) => logError(err, 'deleting old salts failed'));

// Hits and imports under way: closing waits until there are none.
let inFlight = 0;
let idle: (() => void) | undefined;

/** Counts `work` as under way until it settles, then sends its result with the next message. */
function track(work: Promise<void>): void {
  inFlight++;
  void work.finally(() => {
    schedule();
    if (--inFlight === 0) idle?.();
  });
}

function accept(id: number, hit: Parameters<HitPipeline['process']>[0]): void {
  track(
    pipeline.process(hit).then(
      (outcome) => void (outcome.recorded ? recorded.push(id) : results.push([id, outcome])),
      (err: unknown) => void results.push([id, { failed: err instanceof InvalidHit ? 'invalid' : 'error', message: (err as Error)?.message ?? String(err) }]),
    ),
  );
}

async function close(): Promise<void> {
  if (inFlight > 0) await new Promise<void>((resolve) => (idle = resolve));
  clearInterval(timer);
  await log?.close();
  await batches?.cut();
  inserts?.cut();
  await shared?.close();
  // Whatever gathered since the last message, then the goodbye (messages arrive in order).
  sendGathered();
  send({ t: 'closed' });
  port.close();
}

send({ t: 'ready' });
