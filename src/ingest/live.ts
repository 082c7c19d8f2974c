// Live collection wiring: one enricher, site directory, salt store, visit state and write buffer per process,
// with the timers that sweep idle visits and delete old salts; imports get pipelines of their own. Visit state is
// this process's memory (embedded) or a store every process shares (scale-out).

import type { Metrics } from '../metrics.js';
import type { EventStore, MetaStore, VisitStateStore } from '../store/types.js';
import { Enricher } from './enrich/index.js';
import { HitLog, type LogRecord } from './hit-log.js';
import { HitPipeline, type HitSink } from './pipeline.js';
import { EphemeralSalts, StoredSalts } from './salts.js';
import { SiteDirectory } from './site-directory.js';
import { keepNewest, SharedVisitTracker, VISIT_TIMEOUT_MS, VisitTracker, type VisitState } from './visits.js';
import { WriteBuffer, type WriteBufferOptions } from './write-buffer.js';

export interface IngestOptions {
  /**
   * Where the hit log lives (DESIGN: an accepted hit is never lost). Without it, accepted hits wait only in
   * memory until the next write (tests on in-memory databases).
   */
  logDir?: string;
  excludedHosts?: readonly string[];
  /** Shared visit state (scale-out); without it, visits live in this process's memory. */
  sharedVisits?: VisitStateStore;
  buffer?: WriteBufferOptions;
  log?: (err: unknown, message: string) => void;
}

export class Ingest {
  readonly pipeline: HitPipeline;
  readonly buffer: WriteBuffer;
  readonly sites: SiteDirectory;
  private readonly salts: StoredSalts;
  /** In-memory visits (embedded mode), swept and resumed after a restart; undefined when visits are shared. */
  private readonly localVisits: VisitTracker | undefined;
  private readonly timer: NodeJS.Timeout;
  /** Live hits: logged (and synced) first, then buffered; the collector answers after both. */
  private readonly liveSink: HitSink;

  private constructor(
    private readonly enricher: Enricher,
    meta: MetaStore,
    events: EventStore,
    private readonly metrics: Metrics,
    private readonly options: IngestOptions,
    private readonly log: HitLog | undefined,
  ) {
    this.sites = new SiteDirectory(meta);
    this.salts = new StoredSalts(meta);
    const logError = options.log ?? (() => undefined);
    this.buffer = new WriteBuffer(events, {
      ...options.buffer,
      onError: (err) => {
        metrics.writeFailures.inc();
        logError(err, 'writing hits failed; the batch is kept and retried');
      },
      onWritten: (n) => metrics.hitsWritten.inc(n),
      onConfirmed: (seq) => void log?.confirm(seq).catch((err) => logError(err, 'deleting confirmed hit log segments failed')),
    });
    const buffer = this.buffer;
    this.liveSink = log
      ? { add: async (hit, visit) => buffer.add(hit, visit, await log.append(hit, visit)) }
      : buffer;
    let visits: VisitState;
    if (options.sharedVisits) visits = new SharedVisitTracker(options.sharedVisits);
    else visits = this.localVisits = new VisitTracker();
    this.pipeline = this.newPipeline(this.salts, visits, this.liveSink);
    this.timer = setInterval(() => {
      const now = new Date();
      this.localVisits?.sweep(now);
      this.salts.rotate(now).catch((err) => logError(err, 'deleting old salts failed'));
    }, 60_000);
    this.timer.unref();
  }

  /**
   * Opens the enricher (geo database) and the hit log, writes what the log holds beyond the store's watermark
   * (hits acknowledged before a crash), then resumes the visits of the last 30 minutes from storage.
   */
  static async start(meta: MetaStore, events: EventStore, metrics: Metrics, options: IngestOptions = {}): Promise<Ingest> {
    let log: HitLog | undefined;
    if (options.logDir) {
      const opened = await HitLog.open(options.logDir, await events.logWatermark());
      log = opened.log;
      await replay(events, opened.unconfirmed);
      if (opened.unconfirmed.length > 0) await log.confirm(opened.unconfirmed.at(-1)!.seq);
      metrics.hitsReplayed.inc(opened.unconfirmed.length);
    }
    const ingest = new Ingest(await Enricher.create(), meta, events, metrics, options, log);
    ingest.localVisits?.seed(await events.visitsSeenSince(new Date(Date.now() - VISIT_TIMEOUT_MS)));
    await ingest.salts.rotate(new Date());
    return ingest;
  }

  /** A pipeline for one import: historical hits get throwaway salts and visit state of their own. */
  importPipeline(): HitPipeline {
    return this.newPipeline(new EphemeralSalts(), new VisitTracker());
  }

  /** Forgets cached site facts (after a site is changed or deleted through this process). */
  forgetSite(siteId: string): void {
    this.sites.forget(siteId);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.buffer.close();
    await this.log?.close();
  }

  private newPipeline(salts: StoredSalts | EphemeralSalts, visits: VisitState, sink: HitSink = this.buffer): HitPipeline {
    return new HitPipeline({
      enricher: this.enricher,
      sites: this.sites,
      salts,
      visits,
      sink,
      metrics: this.metrics,
      excludedHosts: this.options.excludedHosts,
    });
  }
}

/** Writes logged records the store does not have yet, in log order, with the latest state of each visit. */
async function replay(events: EventStore, records: readonly LogRecord[]): Promise<void> {
  const BATCH = 10_000;
  for (let i = 0; i < records.length; i += BATCH) {
    const batch = records.slice(i, i + BATCH);
    const visits = new Map<bigint, LogRecord['visit']>();
    for (const { visit } of batch) keepNewest(visits, visit);
    await events.write(batch.map((r) => r.hit), [...visits.values()], batch.at(-1)!.seq);
  }
}
