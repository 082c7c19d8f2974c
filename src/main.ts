// Starts Plumb: configuration, the stores of its mode, first-start bootstrap, the HTTP server, clean shutdown.

import { join } from 'node:path';
import type { assemble } from './assemble.js';
import { bootstrap, firstStartBanner, openableAddress } from './bootstrap.js';
import { ConfigError, loadConfig, type Config } from './config.js';
import { GeoLookup } from './ingest/enrich/geo.js';
import { NewerSchemaError } from './store/newer-schema.js';
import { ServiceStartError } from './store/until-reachable.js';
import { LOCAL_ADMIN_KEY_FILE, localServerUrl, newLocalAdminKey, removeLocalServerUrl, saveLocalServerUrl } from './local-admin-key.js';

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

/**
 * The assembled process, or an exit with a message an operator can act on when the embedded database file is held
 * by another process (DuckDB locks it; a second `npm start` in the same folder is the usual way to get there).
 */
async function assembleOrExit(config: Config, options: Parameters<typeof assemble>[0]): Promise<Awaited<ReturnType<typeof assemble>>> {
  try {
    // Imported here, not above, so that the geo databases' reading (main) overlaps the second this thread spends
    // loading the rest of Plumb's modules (README, start to ready).
    return await (await import('./assemble.js')).assemble(options);
  } catch (err) {
    if (err instanceof ServiceStartError) {
      console.error(`Plumb cannot start: ${err.message}.`);
      process.exit(1);
    }
    if (err instanceof NewerSchemaError) {
      // The embedded file is named here (its path is the configuration's); the other stores name themselves.
      console.error(`Plumb cannot start: ${err.database ? '' : `${join(config.dataDir, 'plumb.duckdb')}: `}${err.message}.`);
      process.exit(1);
    }
    const lock = /Could not set lock on file .*Conflicting lock is held in .*\(PID (\d+)\)/.exec(String((err as Error)?.message));
    if (!lock) throw err;
    console.error(
      `Plumb cannot start: ${config.dataDir} is in use by another Plumb process (pid ${lock[1]}), which holds its database. ` +
        'Stop that one, or give this one a PLUMB_DATA_DIR of its own.',
    );
    process.exit(1);
  }
}

async function main(): Promise<void> {
  const config = configOrExit();
  // The geo databases (135 MB) are read into memory on libuv's threads from now on, while this thread loads Plumb's
  // modules and opens the store; ingest awaits the same reading before starting its thread, and reports a failure.
  GeoLookup.share().catch(() => undefined);
  // loadConfig has refused any partial mix: the three URLs are all set (scale-out) or the first two are not.
  const { databaseUrl, clickhouseUrl, redisUrl } = config;
  const scaleOut = databaseUrl && clickhouseUrl && redisUrl ? { databaseUrl, clickhouseUrl, redisUrl, dataDir: config.dataDir } : undefined;
  // For the CLI on this machine: `npx plumb ...` works without PLUMB_ADMIN_TOKEN (README, Administration).
  const localAdminKey = config.localAdminKey ? newLocalAdminKey() : undefined;
  const plumb = await assembleOrExit(config, {
    dbPath: join(config.dataDir, 'plumb.duckdb'),
    duckdbMemoryLimit: config.duckdbMemoryLimit,
    ...(scaleOut ? { scaleOut } : {}),
    adminToken: config.adminToken,
    localAdminKey,
    rateLimits: config.rateLimits,
    redisUrl: config.redisUrl,
    redisPrefix: config.redisPrefix,
    excludedHosts: config.excludedHosts,
    trustProxy: config.trustProxy,
    mail: config.mail,
    publicUrl: config.publicUrl,
    logger: { level: config.logLevel },
    processMetrics: true,
  });
  const { app } = plumb;
  await localAdminKey?.save(config.dataDir);
  await removeLocalServerUrl(config.dataDir); // an earlier start's address is not this one's until it listens

  // Signals are handled from here on, before the server listens, so a stop that arrives at any moment is clean.
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, 'shutting down');
    await plumb.close();
    await localAdminKey?.remove();
    await removeLocalServerUrl(config.dataDir);
    process.exit(0);
  };
  process.on('SIGTERM', () => void stop('SIGTERM'));
  process.on('SIGINT', () => void stop('SIGINT'));

  // Several scale-out processes may start at once on an empty database: one bootstraps, the others find it done.
  const created = await plumb.exclusive(() => bootstrap(plumb.meta, config.bootstrapToken));
  const address = await app.listen({ port: config.port, host: config.host });
  const shown = openableAddress(address);
  // For the CLI run from this directory: it finds the server whatever PORT it was given (README, Administration).
  const listening = app.server.address();
  if (listening && typeof listening === 'object') await saveLocalServerUrl(config.dataDir, localServerUrl(listening.address, listening.port));
  if (created) console.log(`\n${firstStartBanner(created, address, config.publicUrl)}\n`);
  // Always printed, whatever the log level: operators and scripts wait for this line.
  console.log(`Plumb listening on ${shown}`);
  app.log.info(
    {
      mode: scaleOut ? 'scale-out' : 'embedded',
      dataDir: config.dataDir,
      admin: Boolean(config.adminToken),
      localAdminKey: localAdminKey ? join(config.dataDir, LOCAL_ADMIN_KEY_FILE) : 'off',
      rateLimits: config.rateLimits ? (config.redisUrl ? 'redis' : 'memory') : 'off',
    },
    'started',
  );
}

await main();
