// Live collection wiring: one enricher, site directory, salt store, visit state and write buffer per process,
// with the timers that sweep idle visits and delete old salts; imports get pipelines of their own.

import type { Metrics } from '../metrics.js';
import type { EventStore, MetaStore } from '../store/types.js';
import { Enricher } from './enrich/index.js';
import { HitPipeline } from './pipeline.js';
import { EphemeralSalts, StoredSalts } from './salts.js';
import { SiteDirectory } from './site-directory.js';
import { VISIT_TIMEOUT_MS, VisitTracker } from './visits.js';
import { WriteBuffer, type WriteBufferOptions } from './write-buffer.js';

export interface IngestOptions {
  excludedHosts?: readonly string[];
  buffer?: WriteBufferOptions;
  log?: (err: unknown, message: string) => void;
}

export class Ingest {
  readonly pipeline: HitPipeline;
  readonly buffer: WriteBuffer;
  readonly sites: SiteDirectory;
  private readonly salts: StoredSalts;
  private readonly visits = new VisitTracker();
  private readonly timer: NodeJS.Timeout;

  private constructor(
    private readonly enricher: Enricher,
    meta: MetaStore,
    events: EventStore,
    private readonly metrics: Metrics,
    private readonly options: IngestOptions,
  ) {
    this.sites = new SiteDirectory(meta);
    this.salts = new StoredSalts(meta);
    const log = options.log ?? (() => undefined);
    this.buffer = new WriteBuffer(events, {
      ...options.buffer,
      onError: (err) => {
        metrics.writeFailures.inc();
        log(err, 'writing hits failed; the batch is kept and retried');
      },
      onWritten: (n) => metrics.hitsWritten.inc(n),
    });
    this.pipeline = this.newPipeline(this.salts, this.visits);
    this.timer = setInterval(() => {
      const now = new Date();
      this.visits.sweep(now);
      this.salts.rotate(now).catch((err) => log(err, 'deleting old salts failed'));
    }, 60_000);
    this.timer.unref();
  }

  /** Opens the enricher (geo database) and resumes the visits of the last 30 minutes from storage. */
  static async start(meta: MetaStore, events: EventStore, metrics: Metrics, options: IngestOptions = {}): Promise<Ingest> {
    const ingest = new Ingest(await Enricher.create(), meta, events, metrics, options);
    ingest.visits.seed(await events.visitsSeenSince(new Date(Date.now() - VISIT_TIMEOUT_MS)));
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
  }

  private newPipeline(salts: StoredSalts | EphemeralSalts, visits: VisitTracker): HitPipeline {
    return new HitPipeline({
      enricher: this.enricher,
      sites: this.sites,
      salts,
      visits,
      sink: this.buffer,
      metrics: this.metrics,
      excludedHosts: this.options.excludedHosts,
    });
  }
}
