// Starts Plumb: configuration, the embedded store, first-start bootstrap, the HTTP server, clean shutdown.

import { join } from 'node:path';
import { TokenAuthenticator } from './auth/token-authenticator.js';
import { bootstrap } from './bootstrap.js';
import { ConfigError, loadConfig } from './config.js';
import { buildApp } from './http/app.js';
import { Limiter } from './limits/limiter.js';
import { UsageMeter } from './limits/usage-meter.js';
import { DuckDatabase } from './store/duckdb/database.js';
import { DuckMetaStore } from './store/duckdb/meta-store.js';
import { migrate } from './store/duckdb/migrations.js';
import { MemoryLimitStore } from './store/memory/limit-store.js';
import { RedisLimitStore } from './store/redis/limit-store.js';
import type { LimitStore } from './store/types.js';

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }

  const db = await DuckDatabase.open(join(config.dataDir, 'plumb.duckdb'));
  await migrate(db);
  const meta = new DuckMetaStore(db);
  const auth = new TokenAuthenticator(meta);
  const limits: LimitStore = config.redisUrl ? new RedisLimitStore(config.redisUrl, config.redisPrefix) : new MemoryLimitStore();
  const limiter = new Limiter(limits, { enabled: config.rateLimits });
  const usage = new UsageMeter(meta);
  const app = await buildApp({ meta, auth, limiter, usage, adminToken: config.adminToken, logger: { level: config.logLevel } });

  const created = await bootstrap(meta, config.bootstrapToken);
  const address = await app.listen({ port: config.port, host: config.host });
  const shown = address.replace('://0.0.0.0', '://127.0.0.1');
  if (created) {
    const tokenLine = created.shownToken
      ? `  Owner API token (shown once, store it now): ${created.shownToken}`
      : '  Owner API token: the value of PLUMB_BOOTSTRAP_TOKEN';
    console.log(`\nPlumb created the first account ("${created.account.name}", id ${created.account.id}).\n${tokenLine}\n  Dashboard and API: ${shown}\n`);
  }
  app.log.info(
    { dataDir: config.dataDir, admin: Boolean(config.adminToken), rateLimits: config.rateLimits ? (config.redisUrl ? 'redis' : 'memory') : 'off' },
    `Plumb listening on ${shown}`,
  );

  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    await app.close();
    await auth.close();
    await usage.close();
    await limits.close();
    await meta.close();
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));
}

await main();
