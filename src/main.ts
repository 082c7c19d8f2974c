// Starts Plumb: configuration, the embedded store, first-start bootstrap, the HTTP server, clean shutdown.

import { join } from 'node:path';
import { TokenAuthenticator } from './auth/token-authenticator.js';
import { bootstrap } from './bootstrap.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { buildApp } from './http/app.js';
import { buildTrackerScript } from './http/tracker-script.js';
import { Ingest } from './ingest/live.js';
import { Limiter } from './limits/limiter.js';
import { UsageMeter } from './limits/usage-meter.js';
import { Metrics } from './metrics.js';
import { ReportCompiler } from './report/compiler.js';
import { SqlDialect } from './report/dialect.js';
import { ReportEngine } from './report/engine.js';
import { QueryGate } from './report/query-gate.js';
import { DuckDatabase } from './store/duckdb/database.js';
import { DuckEventStore } from './store/duckdb/event-store.js';
import { DuckMetaStore } from './store/duckdb/meta-store.js';
import { migrate } from './store/duckdb/migrations.js';
import { MemoryLimitStore } from './store/memory/limit-store.js';
import { RedisLimitStore } from './store/redis/limit-store.js';
import type { LimitStore } from './store/types.js';

function configOrExit(): Config {
  try {
    return loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  const db = await DuckDatabase.open(join(config.dataDir, 'plumb.duckdb'));
  await migrate(db);
  const meta = new DuckMetaStore(db);
  const gate = new QueryGate({ maxConcurrent: 2 });
  const events = await DuckEventStore.open(db, gate.maxConcurrent);
  const reports = new ReportEngine(events, new ReportCompiler(new SqlDialect()), gate);
  const metrics = new Metrics({ processMetrics: true });
  const auth = new TokenAuthenticator(meta);
  const limits: LimitStore = config.redisUrl ? new RedisLimitStore(config.redisUrl, config.redisPrefix) : new MemoryLimitStore();
  const limiter = new Limiter(limits, { enabled: config.rateLimits });
  const usage = new UsageMeter(meta);
  // Ingest starts before the app (it resumes recent visits); its errors reach the app's logger once that exists.
  let logError = (err: unknown, message: string) => console.error(message, err);
  const ingest = await Ingest.start(meta, events, metrics, {
    excludedHosts: config.excludedHosts,
    log: (err, message) => logError(err, message),
  });

  const app = await buildApp({
    meta,
    events,
    ingest,
    reports,
    metrics,
    auth,
    limiter,
    usage,
    trackerScript: await buildTrackerScript(),
    adminToken: config.adminToken,
    trustProxy: config.trustProxy,
    logger: { level: config.logLevel },
  });
  logError = (err, message) => app.log.error({ err }, message);

  const created = await bootstrap(meta, config.bootstrapToken);
  const address = await app.listen({ port: config.port, host: config.host });
  const shown = address.replace('://0.0.0.0', '://127.0.0.1');
  if (created) {
    const tokenLine = created.shownToken
      ? `  Owner API token (shown once, store it now): ${created.shownToken}`
      : '  Owner API token: the value of PLUMB_BOOTSTRAP_TOKEN';
    console.log(
      `\nPlumb created the first account ("${created.account.name}", id ${created.account.id}).\n${tokenLine}\n` +
        `  Dashboard and API: ${shown}\n  Tracking script: <script src="${shown}/script.js" data-site="SITE_ID" defer></script>\n`,
    );
  }
  // Always printed, whatever the log level: operators and scripts wait for this line.
  console.log(`Plumb listening on ${shown}`);
  app.log.info(
    {
      dataDir: config.dataDir,
      admin: Boolean(config.adminToken),
      rateLimits: config.rateLimits ? (config.redisUrl ? 'redis' : 'memory') : 'off',
    },
    'started',
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    // Stop taking requests and finish those in flight, then write everything still buffered, then close stores.
    await app.close();
    await ingest.close();
    await auth.close();
    await usage.close();
    await limits.close();
    await events.close();
    await meta.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

await main();
