// A Plumb app on a fresh in-memory DuckDB for tests, with helpers to make accounts, tokens and requests.

import type { FastifyInstance, InjectOptions } from 'fastify';
import { TokenAuthenticator } from '../../src/auth/token-authenticator.js';
import { bootstrap } from '../../src/bootstrap.js';
import { newTokenSecret } from '../../src/domain/ids.js';
import { hashToken } from '../../src/domain/secrets.js';
import { buildApp } from '../../src/http/app.js';
import { buildTrackerScript, type TrackerScript } from '../../src/http/tracker-script.js';
import { Ingest } from '../../src/ingest/live.js';
import type { WriteBufferOptions } from '../../src/ingest/write-buffer.js';
import { Metrics } from '../../src/metrics.js';
import { ReportCompiler } from '../../src/report/compiler.js';
import { SqlDialect } from '../../src/report/dialect.js';
import { ReportEngine } from '../../src/report/engine.js';
import { QueryGate, type QueryGateOptions } from '../../src/report/query-gate.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { Limiter } from '../../src/limits/limiter.js';
import { UsageMeter } from '../../src/limits/usage-meter.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckMetaStore } from '../../src/store/duckdb/meta-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { MemoryLimitStore } from '../../src/store/memory/limit-store.js';
import type { EventStore, LimitStore, MetaStore } from '../../src/store/types.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const OWNER_TOKEN = 'test-owner-token-0123456789abcdef';

export interface TestApp {
  app: FastifyInstance;
  meta: MetaStore;
  events: EventStore;
  ingest: Ingest;
  reports: ReportEngine;
  metrics: Metrics;
  auth: TokenAuthenticator;
  usage: UsageMeter;
  /** Writes every buffered hit, so tests can read them with `events.listHits(siteId)`. */
  flushHits(): Promise<void>;
  /** A new token for `accountId` (default: the owner account 1) with these abilities. */
  token(abilities: string[], options?: { accountId?: number; expiresAt?: Date | null }): Promise<string>;
  /** A request with `Authorization: Bearer <token>`; JSON body when `body` is an object. */
  call(token: string | undefined, method: InjectOptions['method'], url: string, body?: unknown): Promise<Reply>;
  close(): Promise<void>;
}

export interface Reply {
  status: number;
  body: any;
  headers: Record<string, unknown>;
}

export interface TestAppOptions {
  dbPath?: string;
  cacheMs?: number;
  /** Rate limits are off unless a test asks for them, with its own store and clock. */
  limits?: { store?: LimitStore; now?: () => number };
  excludedHosts?: string[];
  trustProxy?: boolean | number | string;
  buffer?: WriteBufferOptions;
  gate?: QueryGateOptions;
  /** The clock reports use for "now" (default: the real one). */
  now?: () => Date;
}

let trackerScript: Promise<TrackerScript> | undefined;

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const db = await DuckDatabase.open(options.dbPath ?? ':memory:');
  await migrate(db);
  const meta = new DuckMetaStore(db);
  const gate = new QueryGate(options.gate);
  const events = await DuckEventStore.open(db, gate.maxConcurrent);
  const reports = new ReportEngine(events, new ReportCompiler(new SqlDialect()), gate, options.now);
  const metrics = new Metrics();
  const ingest = await Ingest.start(meta, events, metrics, { excludedHosts: options.excludedHosts, buffer: options.buffer });
  const auth = new TokenAuthenticator(meta, { cacheMs: options.cacheMs ?? 0 });
  const limitStore = options.limits?.store ?? new MemoryLimitStore();
  const limiter = new Limiter(limitStore, { enabled: options.limits !== undefined, now: options.limits?.now });
  const usage = new UsageMeter(meta);
  await bootstrap(meta, OWNER_TOKEN);
  trackerScript ??= buildTrackerScript();
  const app = await buildApp({
    meta,
    events,
    ingest,
    reports,
    metrics,
    auth,
    limiter,
    usage,
    trackerScript: await trackerScript,
    adminToken: ADMIN_TOKEN,
    trustProxy: options.trustProxy,
  });
  await app.ready();
  return {
    app,
    meta,
    events,
    ingest,
    reports,
    metrics,
    auth,
    usage,
    flushHits: () => ingest.buffer.flush(),
    async token(abilities, { accountId = 1, expiresAt = null } = {}) {
      const secret = newTokenSecret();
      await meta.createToken({ accountId, name: `test ${abilities.join(' ')}`, abilities, hash: hashToken(secret), expiresAt });
      return secret;
    },
    async call(token, method, url, body) {
      const headers: Record<string, string> = {};
      if (token !== undefined) headers.authorization = `Bearer ${token}`;
      const res = await app.inject({ method, url, headers, ...(body === undefined ? {} : { payload: body as object }) });
      let parsed: unknown = res.body;
      try {
        parsed = JSON.parse(res.body);
      } catch {
        // not JSON: leave the text for the assertion to show
      }
      return { status: res.statusCode, body: parsed, headers: res.headers };
    },
    async close() {
      await app.close();
      await ingest.close();
      await auth.close();
      await usage.close();
      await limitStore.close();
      await events.close();
      await meta.close();
    },
  };
}
