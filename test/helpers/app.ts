// A Plumb app (the server's own wiring, src/assemble.ts) for tests, with helpers to make accounts, tokens and
// requests: on a fresh in-memory DuckDB, or with PLUMB_TEST_STORE=scale-out on fresh PostgreSQL, ClickHouse and
// Redis namespaces (test/helpers/scale-out.ts), so one set of test definitions covers both modes.

import type { InjectOptions } from 'fastify';
import { assemble, type Plumb } from '../../src/assemble.js';
import { bootstrap } from '../../src/bootstrap.js';
import { newTokenSecret } from '../../src/domain/ids.js';
import { hashToken } from '../../src/domain/secrets.js';
import { buildTrackerScript, type TrackerScript } from '../../src/http/tracker-script.js';
import type { ImportTiming } from '../../src/ingest/peer-imports/import-owner.js';
import type { WriteBufferOptions } from '../../src/ingest/live/write-buffer.js';
import type { LocalAdminKey } from '../../src/local-admin-key.js';
import type { QueryGateOptions } from '../../src/report/query-gate.js';
import type { LimitStore } from '../../src/store/types.js';
import { freshScaleOut, TEST_STORE } from './scale-out.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789abcdef';
export const OWNER_TOKEN = 'test-owner-token-0123456789abcdef';

/** The assembled process (src/assemble.ts), with helpers for tests. */
export interface TestApp extends Omit<Plumb, 'exclusive' | 'close'> {
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
  /** Grouped visitors counted in this many slices whatever the store's size (on DuckDB; ClickHouse never slices). */
  visitorSlices?: number;
  /** Pageviews one pass may read to count the visitors of a report's top groups (plans/top-visitors.ts). */
  topGroupRows?: number;
  requestTimeoutMs?: number;
  /** DuckDB's memory_limit for the embedded store (benchmarks). */
  duckdbMemoryLimit?: string;
  /** The local admin key the server would write for the CLI (src/local-admin-key.ts). */
  localAdminKey?: LocalAdminKey;
  /** Outgoing mail to a test SMTP server (test/helpers/mail.ts), with PLUMB_PUBLIC_URL. */
  mail?: { smtpUrl: string; publicUrl: string };
  /** Heartbeat, lease and sweep intervals of imports (src/ingest/peer-imports/import-owner.ts). */
  importTiming?: Partial<ImportTiming>;
}

let trackerScript: Promise<TrackerScript> | undefined;

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  trackerScript ??= buildTrackerScript();
  const scaleOut = TEST_STORE === 'scale-out' ? await freshScaleOut() : undefined;
  const plumb = await assemble({
    dbPath: options.dbPath ?? ':memory:',
    ...(options.duckdbMemoryLimit ? { duckdbMemoryLimit: options.duckdbMemoryLimit } : {}),
    ...(scaleOut ? { scaleOut: scaleOut.options, redisPrefix: scaleOut.redisPrefix } : {}),
    adminToken: ADMIN_TOKEN,
    rateLimits: options.limits !== undefined,
    ...(options.limits?.store ? { limitStore: options.limits.store } : {}),
    ...(options.limits?.now ? { limiterNow: options.limits.now } : {}),
    ...(options.now ? { reportsNow: options.now } : {}),
    ...(options.visitorSlices !== undefined ? { visitorSlices: options.visitorSlices } : {}),
    ...(options.topGroupRows !== undefined ? { topGroupRows: options.topGroupRows } : {}),
    excludedHosts: options.excludedHosts ?? [],
    trustProxy: options.trustProxy ?? false,
    authCacheMs: options.cacheMs ?? 0,
    ...(options.buffer ? { buffer: options.buffer } : {}),
    ...(options.gate ? { gate: options.gate } : {}),
    trackerScript: await trackerScript,
    ...(options.requestTimeoutMs ? { requestTimeoutMs: options.requestTimeoutMs } : {}),
    ...(options.localAdminKey ? { localAdminKey: options.localAdminKey } : {}),
    ...(options.mail ? { mail: { smtpUrl: options.mail.smtpUrl, from: 'Plumb <plumb@example.test>' }, publicUrl: options.mail.publicUrl } : {}),
    reportEmailTimer: false,
    dayRollupTimer: false,
    ...(options.importTiming ? { importTiming: options.importTiming } : {}),
  });
  const { app, meta } = plumb;
  await bootstrap(meta, OWNER_TOKEN);
  await app.ready();
  return {
    ...plumb,
    flushHits: () => plumb.ingest.flush(),
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
      await plumb.close();
      await scaleOut?.drop();
    },
  };
}
