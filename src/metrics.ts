// Process metrics in the Prometheus text format (served at /metrics): what was received, kept, dropped, queued.

import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** Why a hit was not recorded; `no-visit`: an engagement hit whose visitor has no visit in progress. */
export type DropReason = 'bot' | 'unknown-site' | 'excluded-host' | 'goal-limit' | 'unknown-goal' | 'no-visit';

export class Metrics {
  readonly registry = new Registry();

  readonly requests = new Counter({
    name: 'plumb_http_requests_total',
    help: 'HTTP requests answered, by method, route pattern and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [this.registry],
  });
  readonly requestSeconds = new Histogram({
    name: 'plumb_http_request_duration_seconds',
    help: 'Time to answer HTTP requests, by method and route pattern',
    labelNames: ['method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [this.registry],
  });
  readonly reportsQueued = new Gauge({
    name: 'plumb_report_queries_waiting',
    help: 'Report queries waiting for a turn in the query gate',
    registers: [this.registry],
  });
  readonly reportsRunning = new Gauge({
    name: 'plumb_report_queries_running',
    help: 'Report queries running',
    registers: [this.registry],
  });
  readonly hitsReceived = new Counter({
    name: 'plumb_hits_received_total',
    help: 'Collector and import hits received, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly hitsRecorded = new Counter({
    name: 'plumb_hits_recorded_total',
    help: 'Hits accepted into the write buffer, by type',
    labelNames: ['type'] as const,
    registers: [this.registry],
  });
  readonly hitsDropped = new Counter({
    name: 'plumb_hits_dropped_total',
    help: 'Hits dropped on purpose (answered as success), by reason',
    labelNames: ['reason'] as const,
    registers: [this.registry],
  });
  readonly hitsFastLane = new Counter({
    name: 'plumb_collector_fast_lane_hits_total',
    help: 'GET hits the collector took in its fast lane, before Fastify (the rest go through the route: a proxy that adds a body to GETs keeps every hit out of it)',
    registers: [this.registry],
  });
  readonly hitsInvalid = new Counter({
    name: 'plumb_hits_invalid_total',
    help: 'Malformed hits answered with 400',
    registers: [this.registry],
  });
  readonly hitsRefused = new Counter({
    name: 'plumb_hits_refused_total',
    help: 'Hits refused with 503 because the write buffer was full',
    registers: [this.registry],
  });
  readonly bufferPending = new Gauge({
    name: 'plumb_write_buffer_pending',
    help: 'Hits accepted and waiting to be written',
    registers: [this.registry],
  });
  readonly hitsWritten = new Counter({
    name: 'plumb_hits_written_total',
    help: 'Hits written to the event store',
    registers: [this.registry],
  });
  readonly hitsReplayed = new Counter({
    name: 'plumb_hits_replayed_total',
    help: 'Logged hits written from the hit log at start (acknowledged before a crash, not yet stored)',
    registers: [this.registry],
  });
  readonly writeFailures = new Counter({
    name: 'plumb_write_failures_total',
    help: 'Batches the event store refused (kept and retried)',
    registers: [this.registry],
  });

  constructor(options: { processMetrics?: boolean } = {}) {
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry, prefix: 'plumb_' });
  }

  drop(reason: DropReason): void {
    this.hitsDropped.inc({ reason });
  }

  /** An HTTP answer, by its route pattern: Fastify's onResponse hook and the collector's fast lane count here. */
  answered(method: string, route: string, status: number, seconds: number): void {
    this.requests.inc({ method, route, status: String(status) });
    this.requestSeconds.observe({ method, route }, seconds);
  }
}
