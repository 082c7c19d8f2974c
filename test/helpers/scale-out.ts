// Which configuration the behaviour suite runs on: the embedded store (default) or, with
// PLUMB_TEST_STORE=scale-out, PostgreSQL + ClickHouse + Redis, each test app on a fresh schema, database and
// key prefix of its own that are removed when it closes.

import { randomBytes } from 'node:crypto';
import type { ScaleOutOptions } from '../../src/assemble.js';
import { freshSchema, DATABASE_URL } from './postgres.js';
import { REDIS_URL } from './redis.js';
import { Redis } from 'ioredis';

export const TEST_STORE: 'embedded' | 'scale-out' = process.env.PLUMB_TEST_STORE === 'scale-out' ? 'scale-out' : 'embedded';

/** The ClickHouse started by scripts/clickhouse/start.sh unless PLUMB_TEST_CLICKHOUSE_URL says otherwise. */
export const CLICKHOUSE_URL = process.env.PLUMB_TEST_CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';

export interface ScaleOutFixture {
  options: ScaleOutOptions;
  redisPrefix: string;
  /** Drops the schema, the database and the keys. */
  drop(): Promise<void>;
}

/** Runs one statement on the test ClickHouse over HTTP (test setup only; Plumb's own client is under test). */
export async function clickhouseStatement(sql: string): Promise<void> {
  const res = await fetch(`${CLICKHOUSE_URL}/`, { method: 'POST', body: sql });
  if (!res.ok) throw new Error(`ClickHouse refused "${sql}": ${await res.text()}`);
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
      redisUrl: REDIS_URL,
      ...(dataDir ? { dataDir } : {}),
    },
    redisPrefix,
    async drop() {
      await dropSchema();
      await clickhouseStatement(`DROP DATABASE IF EXISTS ${database}`);
      const redis = new Redis(REDIS_URL);
      try {
        const keys = await redis.keys(`${redisPrefix}*`);
        if (keys.length > 0) await redis.del(...keys);
      } finally {
        await redis.quit();
      }
    },
  };
}
