// A throwaway PostgreSQL schema on the server this machine runs (PLUMB_TEST_DATABASE_URL to point elsewhere).

import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const DATABASE_URL = process.env.PLUMB_TEST_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Creates a schema of its own; returns its name and how to drop it. */
export async function freshSchema(): Promise<{ schema: string; drop: () => Promise<void> }> {
  const schema = `plumb_test_${randomBytes(6).toString('hex')}`;
  const client = new pg.Client({ connectionString: DATABASE_URL });
  await client.connect();
  await client.query(`CREATE SCHEMA ${schema}`);
  await client.end();
  return {
    schema,
    drop: async () => {
      const c = new pg.Client({ connectionString: DATABASE_URL });
      await c.connect();
      await c.query(`DROP SCHEMA ${schema} CASCADE`);
      await c.end();
    },
  };
}
