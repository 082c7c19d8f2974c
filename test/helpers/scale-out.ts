// Which configuration the behaviour suite runs on: the embedded store (default) or, with
// PLUMB_TEST_STORE=scale-out, PostgreSQL + ClickHouse + Redis, each test app on a fresh schema, database and
// key prefix of its own that are removed when it closes.

import { randomBytes } from 'node:crypto';
import type { ScaleOutOptions } from '../../src/assemble.js';
import { freshSchema, DATABASE_URL } from './postgres.js';
import { REDIS_URL } from './redis.js';
import { Redis } from 'ioredis';
import { CLICKHOUSE_URL, dropTestDatabase, TEST_TRANSPORT } from './clickhouse.js';

export const TEST_STORE: 'embedded' | 'scale-out' = process.env.PLUMB_TEST_STORE === 'scale-out' ? 'scale-out' : 'embedded';

export { CLICKHOUSE_URL } from './clickhouse.js';

export interface ScaleOutFixture {
  options: ScaleOutOptions;
  redisPrefix: string;
  /** Drops the schema, the database and the keys. */
  drop(): Promise<void>;
}

/** Runs one statement on the test ClickHouse server over HTTP and returns its text output (test setup and checks only). */
export async function clickhouseStatement(sql: string): Promise<string> {
  const res = await fetch(`${CLICKHOUSE_URL}/`, { method: 'POST', body: sql });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse refused "${sql}": ${text}`);
  return text;
}

/** The environment of a real server process (src/main.ts) in scale-out mode on a fixture's namespaces. */
export function scaleOutServerEnv(f: ScaleOutFixture, dataDir: string): Record<string, string> {
  const o = f.options;
  const pg = new URL(o.databaseUrl);
  pg.searchParams.set('options', `-c search_path=${o.databaseSchema}`);
  return {
    DATABASE_URL: pg.toString(),
    CLICKHOUSE_URL: `${o.clickhouseUrl.replace(/\/$/, '')}/${o.clickhouseDatabase}`,
    REDIS_URL: o.redisUrl,
    PLUMB_REDIS_PREFIX: f.redisPrefix,
    PLUMB_DATA_DIR: dataDir,
  };
}

export async function freshScaleOut(dataDir?: string): Promise<ScaleOutFixture> {
  const id = randomBytes(6).toString('hex');
  const { schema, drop: dropSchema } = await freshSchema();
  const database = `plumb_test_${id}`;
  const redisPrefix = `plumb-test-${id}:`;
  return {
    options: {
      databaseUrl: DATABASE_URL,
      databaseSchema: schema,
      clickhouseUrl: CLICKHOUSE_URL,
      clickhouseDatabase: database,
      // ClickHouse 26 in process when the suite runs on it (PLUMB_TEST_CLICKHOUSE=chdb, test/helpers/clickhouse.ts).
      ...(TEST_TRANSPORT ? { clickhouseTransport: TEST_TRANSPORT } : {}),
      redisUrl: REDIS_URL,
      ...(dataDir ? { dataDir } : {}),
    },
    redisPrefix,
    async drop() {
      await dropSchema();
      await dropTestDatabase(database);
      const redis = new Redis(REDIS_URL);
      try {
        const keys = await redis.keys(`${redisPrefix}*`);
        // In slices: a benchmark leaves a key per visit (150,000 and more), too many to spread into one call.
        for (let i = 0; i < keys.length; i += 1000) await redis.del(...keys.slice(i, i + 1000));
      } finally {
        await redis.quit();
      }
    },
  };
}
