// Puts one Plumb process together: stores, ingest, reports, limits and the HTTP app, and takes it apart again
// in the right order. The server (main.ts) and the tests use the same wiring.

import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { TokenAuthenticator } from './auth/token-authenticator.js';
import { buildApp } from './http/app.js';
import { buildTrackerScript, type TrackerScript } from './http/tracker-script.js';
import { Ingest } from './ingest/live.js';
import type { WriteBufferOptions } from './ingest/write-buffer.js';
import { Limiter } from './limits/limiter.js';
import { UsageMeter } from './limits/usage-meter.js';
import { Metrics } from './metrics.js';
import { ReportCompiler } from './report/compiler.js';
import { SqlDialect } from './report/dialect.js';
import { ReportEngine } from './report/engine.js';
import { QueryGate, type QueryGateOptions } from './report/query-gate.js';
import { DuckDatabase } from './store/duckdb/database.js';
import { DuckEventStore } from './store/duckdb/event-store.js';
import { SqlMetaStore } from './store/sql-meta-store.js';
import { migrate } from './store/duckdb/migrations.js';
import { MemoryLimitStore } from './store/memory/limit-store.js';
import { RedisLimitStore } from './store/redis/limit-store.js';
import type { LimitStore } from './store/types.js';

export interface AssembleOptions {
  /** The DuckDB file, or `:memory:`. */
  dbPath: string;
  adminToken: string | undefined;
  rateLimits: boolean;
  /** Shared limit state; a given `limitStore` wins, then Redis, then process memory. */
  redisUrl?: string | undefined;
  redisPrefix?: string;
  limitStore?: LimitStore;
  excludedHosts?: readonly string[];
  trustProxy?: boolean | number | string;
  logger?: FastifyServerOptions['logger'];
  /** Prometheus process metrics (off in tests: they register global collectors). */
  processMetrics?: boolean;
  // Knobs for tests: token cache, clocks, buffer and query-gate sizes.
  authCacheMs?: number;
  limiterNow?: () => number;
  reportsNow?: () => Date;
  buffer?: WriteBufferOptions;
  gate?: QueryGateOptions;
  trackerScript?: TrackerScript;
  requestTimeoutMs?: number;
}

export interface Plumb {
  app: FastifyInstance;
  meta: SqlMetaStore;
  events: DuckEventStore;
  ingest: Ingest;
  reports: ReportEngine;
  metrics: Metrics;
  auth: TokenAuthenticator;
  usage: UsageMeter;
  /** Stops taking requests, finishes those in flight, writes everything buffered, closes the stores. */
  close(): Promise<void>;
}

export async function assemble(o: AssembleOptions): Promise<Plumb> {
  const db = await DuckDatabase.open(o.dbPath);
  await migrate(db);
  const meta = new SqlMetaStore(db);
  const gate = new QueryGate(o.gate);
  const events = await DuckEventStore.open(db, gate.maxConcurrent);
  const reports = new ReportEngine(events, new ReportCompiler(new SqlDialect()), gate, o.reportsNow);
  const metrics = new Metrics({ processMetrics: o.processMetrics ?? false });
  // Ingest starts before the app (it resumes recent visits); its errors reach the app's logger once that exists.
  let logError = (err: unknown, message: string) => console.error(message, err);
  const ingest = await Ingest.start(meta, events, metrics, {
    // The hit log sits beside the database file; an in-memory database has nothing to recover into.
    ...(o.dbPath === ':memory:' ? {} : { logDir: join(dirname(o.dbPath), 'hit-log') }),
    excludedHosts: o.excludedHosts,
    buffer: o.buffer,
    log: (err, message) => logError(err, message),
  });
  const auth = new TokenAuthenticator(meta, o.authCacheMs === undefined ? {} : { cacheMs: o.authCacheMs });
  const limits: LimitStore = o.limitStore ?? (o.redisUrl ? new RedisLimitStore(o.redisUrl, o.redisPrefix) : new MemoryLimitStore());
  const limiter = new Limiter(limits, { enabled: o.rateLimits, ...(o.limiterNow ? { now: o.limiterNow } : {}) });
  const usage = new UsageMeter(meta);
  const app = await buildApp({
    meta,
    events,
    ingest,
    reports,
    metrics,
    auth,
    limiter,
    usage,
    trackerScript: o.trackerScript ?? (await buildTrackerScript()),
    adminToken: o.adminToken,
    trustProxy: o.trustProxy,
    logger: o.logger,
    ...(o.requestTimeoutMs ? { requestTimeoutMs: o.requestTimeoutMs } : {}),
  });
  logError = (err, message) => app.log.error({ err }, message);

  return {
    app, meta, events, ingest, reports, metrics, auth, usage,
    async close() {
      await app.close();
      await ingest.close();
      await auth.close();
      await usage.close();
      await limits.close();
      await events.close();
      await meta.close();
    },
  };
}
