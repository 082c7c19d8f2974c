// Puts one Plumb process together: stores, ingest, reports, limits and the HTTP app, and takes it apart again
// in the right order. The server (main.ts) and the tests use the same wiring. The two modes of DESIGN.md section
// 2 differ only in the stores chosen here: the embedded DuckDB file, or PostgreSQL + ClickHouse + Redis.

import { randomBytes } from 'node:crypto';
import { dirname, join } from 'node:path';
import type { FastifyInstance, FastifyServerOptions } from 'fastify';
import { TokenAuthenticator } from './auth/token-authenticator.js';
import { NO_MAILER, SmtpMailer, type Mailer } from './mail/mailer.js';
import { ReportScheduler } from './mail/report-scheduler.js';
import { buildApp } from './http/app.js';
import { ImportService } from './http/peers/import-service.js';
import { buildTrackerScript, type TrackerScript } from './http/tracker-script.js';
import { IMPORT_TIMING, ImportOwner, type ImportTiming } from './ingest/peer-imports/import-owner.js';
import { ImportSpool } from './ingest/peer-imports/import-spool.js';
import { ImportSweeper } from './ingest/peer-imports/import-sweeper.js';
import { Ingest } from './ingest/ingest.js';
import type { WriteBufferOptions } from './ingest/live/write-buffer.js';
import { Limiter } from './limits/limiter.js';
import { UsageMeter } from './limits/usage-meter.js';
import type { LocalAdminKey } from './local-admin-key.js';
import { Metrics } from './metrics.js';
import { ReportCompiler } from './report/compiler.js';
import { ClickHouseDialect } from './report/clickhouse-dialect.js';
import { SqlDialect } from './report/dialect.js';
import { DoneImports } from './report/done-imports.js';
import { MAX_CURRENT_ROWS, ReportEngine, runCompiled } from './report/engine.js';
import { DayRollupBuilder } from './report/day-rollups/builder.js';
import { QueryGate, type QueryGateOptions } from './report/query-gate.js';
import { claimDataDir } from './data-dir.js';
import { untilReachable } from './store/until-reachable.js';
import type { OpenTransport } from './store/clickhouse/transport.js';
import { DuckDatabase } from './store/duckdb/database.js';
import { DuckEventStore } from './store/duckdb/event-store.js';
import { SqlMetaStore } from './store/sql-meta-store.js';
import { SqlTeamStore } from './store/sql-team-store.js';
import { migrate } from './store/duckdb/migrations.js';
import { MemoryLimitStore } from './store/memory/limit-store.js';
import type { ReadinessChecks } from './http/readiness.js';
import type { EventStore, LimitStore } from './store/types.js';

/** Scale-out mode: every store shared, so any number of identical processes can serve any request. */
export interface ScaleOutOptions {
  databaseUrl: string;
  /** A PostgreSQL schema to use (tests); by default the connection's search_path. */
  databaseSchema?: string;
  clickhouseUrl: string;
  /** Overrides the database named in the URL (tests). */
  clickhouseDatabase?: string;
  /** Another engine behind the ClickHouse store's transport seam (tests and benchmarks: ClickHouse 26 in process). */
  clickhouseTransport?: OpenTransport;
  redisUrl: string;
  /** This process's own directory, for its hit log; without it, accepted hits wait only in memory (tests). */
  dataDir?: string;
}

export interface AssembleOptions {
  /** Embedded mode: the DuckDB file, or `:memory:`. Ignored in scale-out mode. */
  dbPath: string;
  /** Embedded mode: DuckDB's memory_limit (`512MB`); DuckDB's own default when unset. */
  duckdbMemoryLimit?: string | undefined;
  scaleOut?: ScaleOutOptions;
  adminToken: string | undefined;
  /** The local admin key of this start (the CLI on the same machine), besides or instead of adminToken. */
  localAdminKey?: LocalAdminKey | undefined;
  rateLimits: boolean;
  /** Shared limit state; a given `limitStore` wins, then Redis (always, in scale-out), then process memory. */
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
  /** Grouped visitors counted in this many slices whatever the store's size (ReportEngine; tests). */
  visitorSlices?: number;
  /** Pageviews one pass may read to count the visitors of a report's top groups (ReportCompiler; tests). */
  topGroupRows?: number;
  buffer?: WriteBufferOptions;
  gate?: QueryGateOptions;
  trackerScript?: TrackerScript;
  requestTimeoutMs?: number;
  /** Outgoing mail (PLUMB_SMTP_URL, PLUMB_MAIL_FROM); without it, features that need mail say so. */
  mail?: { smtpUrl: string; from: string } | undefined;
  /** PLUMB_PUBLIC_URL: where links in emails point. */
  publicUrl?: string | undefined;
  /** Whether email reports go out on a timer (tests run them with `reportEmails.runOnce(now)` instead). */
  reportEmailTimer?: boolean;
  /** Whether day rollups are built on a timer where the store keeps them (tests build them with `dayRollups.runOnce()`). */
  dayRollupTimer?: boolean;
  /** Heartbeat, lease and sweep intervals of imports (src/ingest/peer-imports/import-owner.ts); tests shorten them. */
  importTiming?: Partial<ImportTiming>;
  /** The process's id as the owner of imports (tests of several processes in one); by default as described in assemble. */
  importOwner?: string;
}

export interface Plumb {
  app: FastifyInstance;
  meta: SqlMetaStore;
  /** Users, memberships, invitations, two-factor state, report subscriptions (same database as `meta`). */
  team: SqlTeamStore;
  events: EventStore;
  ingest: Ingest;
  imports: ImportService;
  /** Undoes imports left running by processes that died (ran once before the app was built, then periodically). */
  importSweeper: ImportSweeper;
  /** Each site's done imports as reports remember them (told by the import service when one finishes). */
  doneImports: DoneImports;
  reports: ReportEngine;
  metrics: Metrics;
  auth: TokenAuthenticator;
  usage: UsageMeter;
  mailer: Mailer;
  /** Email reports, when mail is configured. */
  reportEmails: ReportScheduler | undefined;
  /** Builds closed days' rollups where the store keeps them (ClickHouse). */
  dayRollups: DayRollupBuilder | undefined;
  /** Runs `work` while no other process of this installation runs exclusive work (first-start bootstrap). */
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  /** Stops taking requests, finishes those in flight, writes everything buffered, closes the stores. */
  close(): Promise<void>;
}

/** The stores of one mode, and how to release what only that mode holds. */
interface Stores {
  meta: SqlMetaStore;
  team: SqlTeamStore;
  events: EventStore;
  dialect: SqlDialect;
  limitsUrl: string | undefined;
  /** Scale-out: the ingest thread's shared visit state (it opens its own Redis connection). */
  sharedVisits: { url: string; prefix?: string } | undefined;
  logDir: string | undefined;
  /** This process's own directory (embedded: the database's; scale-out: PLUMB_DATA_DIR), if it has one. */
  dataDir: string | undefined;
  /** A stable id of this process (scale-out with a data directory: its node id), kept across restarts. */
  node: string | undefined;
  exclusive<T>(work: () => Promise<T>): Promise<T>;
  release(): Promise<void>;
  /** GET /readyz's questions to this mode's databases (Redis is asked through the limit store). */
  checks: ReadinessChecks;
}

const BOOTSTRAP_LOCK = 0x706c756d; // "plum"

async function embeddedStores(o: AssembleOptions, readers: number): Promise<Stores> {
  const db = await DuckDatabase.open(o.dbPath, o.duckdbMemoryLimit === undefined ? {} : { memoryLimit: o.duckdbMemoryLimit });
  await migrate(db);
  return {
    meta: new SqlMetaStore(db),
    team: new SqlTeamStore(db),
    events: await DuckEventStore.open(db, readers),
    dialect: new SqlDialect(),
    limitsUrl: o.redisUrl,
    sharedVisits: undefined,
    // The hit log sits beside the database file; an in-memory database has nothing to recover into.
    logDir: o.dbPath === ':memory:' ? undefined : join(dirname(o.dbPath), 'hit-log'),
    dataDir: o.dbPath === ':memory:' ? undefined : dirname(o.dbPath),
    node: undefined,
    // DuckDB's file lock already makes this the only process.
    exclusive: (work) => work(),
    release: async () => undefined,
    checks: { duckdb: () => db.serial((q) => q.rows('SELECT 1')) },
  };
}

async function scaleOutStores(s: ScaleOutOptions, redisPrefix: string | undefined, log: (err: unknown, message: string) => void): Promise<Stores> {
  // The scale-out stores' modules (pg, @clickhouse/client) load only in this mode: an embedded start never needs
  // them, and loading them was a tenth of a second or more of every start (README, start to ready).
  const [{ PgDatabase }, { migratePostgres }, { ClickHouseEventStore }] = await Promise.all([
    import('./store/postgres/database.js'), import('./store/postgres/migrations.js'), import('./store/clickhouse/event-store.js'),
  ]);
  // The data directory is claimed first: two processes sharing one would replay each other's hit logs.
  const claimed = s.dataDir ? await claimDataDir(s.dataDir) : undefined;
  const pg = new PgDatabase(s.databaseUrl, {
    ...(s.databaseSchema === undefined ? {} : { schema: s.databaseSchema }),
    onIdleError: (err) => log(err, 'an idle PostgreSQL connection ended; the next query connects anew'),
  });
  // Services may start in any order: the first contact with each waits for it (until-reachable.ts).
  const waiting = (message: string) => console.error(message);
  try {
    await untilReachable('PostgreSQL', s.databaseUrl, () => migratePostgres(pg), waiting);
    const events = await untilReachable('ClickHouse', s.clickhouseUrl, () => ClickHouseEventStore.open({
      url: s.clickhouseUrl,
      ...(s.clickhouseDatabase === undefined ? {} : { database: s.clickhouseDatabase }),
      ...(s.clickhouseTransport === undefined ? {} : { transport: s.clickhouseTransport }),
      // Without a data dir there is no hit log, so no watermark to keep apart from other processes'.
      node: claimed?.node ?? 'memory',
    }), waiting);
    return {
      meta: new SqlMetaStore(pg),
      team: new SqlTeamStore(pg),
      events,
      // The SQL the connected release needs or runs best, decided once from its version().
      dialect: new ClickHouseDialect(events.features),
      limitsUrl: s.redisUrl,
      sharedVisits: { url: s.redisUrl, ...(redisPrefix === undefined ? {} : { prefix: redisPrefix }) },
      logDir: s.dataDir ? join(s.dataDir, 'hit-log') : undefined,
      dataDir: s.dataDir,
      node: claimed?.node,
      exclusive: (work) => pg.exclusive(BOOTSTRAP_LOCK, work),
      release: async () => {
        await claimed?.release();
      },
      checks: {
        postgresql: () => pg.serial((q) => q.rows('SELECT 1')),
        clickhouse: () => events.query('SELECT 1', []),
      },
    };
  } catch (err) {
    await pg.close().catch(() => undefined);
    await claimed?.release();
    throw err;
  }
}

export async function assemble(o: AssembleOptions): Promise<Plumb> {
  const gate = new QueryGate(o.gate);
  // Errors of the stores and of ingest reach the app's logger once that exists.
  let logError = (err: unknown, message: string) => console.error(message, err);
  const stores = o.scaleOut
    ? await scaleOutStores(o.scaleOut, o.redisPrefix, (err, message) => logError(err, message))
    : await embeddedStores(o, gate.maxConcurrent);
  const { meta, team, events } = stores;
  // Imported days count once their import is done: not while it runs, nor after it failed or its process died.
  const doneImports = new DoneImports(meta);
  const compiler = new ReportCompiler(stores.dialect, false, o.topGroupRows);
  const reports = new ReportEngine(events, compiler, gate, o.reportsNow, (siteId) => doneImports.of(siteId), o.visitorSlices === undefined ? undefined : () => o.visitorSlices!);
  const metrics = new Metrics({ processMetrics: o.processMetrics ?? false });
  // Ingest starts before the app (it resumes recent visits); its thread loads while the app is built, and is ready
  // (awaited below) before anything else starts or the server listens.
  let logInfo = (_fields: Record<string, unknown>, _message: string): void => undefined;
  const ingest = await Ingest.launch(meta, events, metrics, {
    ...(stores.logDir ? { logDir: stores.logDir } : {}),
    ...(stores.sharedVisits ? { sharedVisits: stores.sharedVisits } : {}),
    excludedHosts: o.excludedHosts,
    buffer: o.buffer,
    log: (err, message) => logError(err, message),
  });
  // Current visitors count a hit as soon as it is answered: the visits in progress are laid over the stored rows
  // until these are written. Embedded, they come from the ingest thread's memory (until its record file is loaded);
  // scale-out, from Redis, where every process's visits are (until its batch reaches ClickHouse, about a second).
  const liveVisits = stores.sharedVisits
    ? new (await import('./store/redis/live-visits.js')).RedisLiveVisits(stores.sharedVisits.url, stores.sharedVisits.prefix)
    : undefined;
  if (liveVisits) reports.useLiveVisits((siteId, sinceMs) => liveVisits.since(siteId, sinceMs, MAX_CURRENT_ROWS));
  else reports.useLiveVisits((siteId, sinceMs) => ingest.liveVisits(siteId, sinceMs));
  // Imports: this process as an owner (a scale-out node's stable id, so that its next start knows the imports this
  // run leaves as its own; else an id of this start), undoing dead processes' imports before requests are taken.
  const importOwner = new ImportOwner(o.importOwner ?? stores.node ?? randomBytes(8).toString('hex'), { ...IMPORT_TIMING, ...o.importTiming });
  const importSweeper = new ImportSweeper({
    meta, events, owner: importOwner,
    // Embedded: DuckDB's file lock makes this the only process on the database, so every other owner is gone.
    exclusive: !o.scaleOut,
    log: (err, message) => logError(err, message),
    info: (fields, message) => logInfo(fields, message),
  });
  const imports = new ImportService({
    meta, events, ingest, owner: importOwner,
    spool: await ImportSpool.open(stores.dataDir),
    log: (err, message) => logError(err, message),
    changed: (siteId) => doneImports.forget(siteId),
  });
  const auth = new TokenAuthenticator(meta, o.authCacheMs === undefined ? {} : { cacheMs: o.authCacheMs });
  // ioredis, too, loads only when limits are shared through Redis.
  const limits: LimitStore =
    o.limitStore ?? (stores.limitsUrl ? new (await import('./store/redis/limit-store.js')).RedisLimitStore(stores.limitsUrl, o.redisPrefix) : new MemoryLimitStore());
  const limiter = new Limiter(limits, { enabled: o.rateLimits, ...(o.limiterNow ? { now: o.limiterNow } : {}) });
  const usage = new UsageMeter(meta);
  const mailer: Mailer = o.mail ? new SmtpMailer(o.mail.smtpUrl, o.mail.from) : NO_MAILER;
  const app = await buildApp({
    meta,
    team,
    events,
    ingest,
    imports,
    reports,
    metrics,
    auth,
    limiter,
    usage,
    trackerScript: o.trackerScript ?? (await buildTrackerScript()),
    mailer,
    publicUrl: o.publicUrl,
    adminToken: o.adminToken,
    localAdminKey: o.localAdminKey,
    trustProxy: o.trustProxy,
    logger: o.logger,
    ...(o.requestTimeoutMs ? { requestTimeoutMs: o.requestTimeoutMs } : {}),
    readiness: { ...stores.checks, ...(limits.ping ? { redis: () => limits.ping!() } : {}) },
  });
  logError = (err, message) => app.log.error({ err }, message);
  logInfo = (fields, message) => app.log.info(fields, message);
  await ingest.ready;
  // Before any request is taken (the server listens once this returns), and then periodically.
  await importSweeper.sweep().catch((err: unknown) => logError(err, 'looking for imports left running by stopped processes'));
  importSweeper.start();
  const reportEmails =
    o.mail && o.publicUrl ? new ReportScheduler({
          meta, team, engine: reports, mailer, publicUrl: o.publicUrl,
          log: (err, m) => logError(err, m),
          info: (fields, m) => app.log.info(fields, m),
        }) : undefined;
  if (o.reportEmailTimer !== false) reportEmails?.start();
  // Closed days' rollups (ClickHouse), built in the background by every process (builds of one day are alike).
  const dayRollups = events.dayRollups
    ? new DayRollupBuilder({
        rollups: events.dayRollups, compiler,
        run: (c) => gate.run(() => runCompiled(events, c)),
        log: (err, m) => logError(err, m),
        info: (fields, m) => app.log.info(fields, m),
      })
    : undefined;
  if (o.dayRollupTimer !== false) dayRollups?.start();

  return {
    app, meta, team, events, ingest, imports, importSweeper, doneImports, reports, metrics, auth, usage, mailer, reportEmails, dayRollups,
    exclusive: (work) => stores.exclusive(work),
    async close() {
      await reportEmails?.close();
      await dayRollups?.close();
      await importSweeper.close();
      await app.close();
      await ingest.close();
      await auth.close();
      await usage.close();
      await limits.close();
      await liveVisits?.close();
      mailer.close();
      await events.close();
      await meta.close();
      await stores.release();
    },
  };
}
