// Which ClickHouse the ClickHouse suites run on: the server at PLUMB_TEST_CLICKHOUSE_URL over HTTP (default: the
// 18.16 started by scripts/clickhouse/start.sh), or with PLUMB_TEST_CLICKHOUSE=chdb ClickHouse 26 in this process
// (test/helpers/chdb.ts). scripts/run-tests.mjs runs the ClickHouse suites once on each.

import { ClickHouseConnection, parseClickHouseUrl } from '../../src/store/clickhouse/client.js';
import { identifier } from '../../src/store/clickhouse/literal.js';
import type { OpenTransport } from '../../src/store/clickhouse/transport.js';
import { chdbTransport } from './chdb.js';

/** The ClickHouse started by scripts/clickhouse/start.sh unless PLUMB_TEST_CLICKHOUSE_URL says otherwise. */
export const CLICKHOUSE_URL = process.env.PLUMB_TEST_CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';

export const TEST_CLICKHOUSE: 'http' | 'chdb' = process.env.PLUMB_TEST_CLICKHOUSE === 'chdb' ? 'chdb' : 'http';

/** The transport of the engine under test; undefined: the production HTTP transport. */
export const TEST_TRANSPORT: OpenTransport | undefined = TEST_CLICKHOUSE === 'chdb' ? chdbTransport : undefined;

/** The store's options that choose the engine under test. */
export const testEngine = (): { url: string; transport?: OpenTransport } => ({
  url: CLICKHOUSE_URL,
  ...(TEST_TRANSPORT ? { transport: TEST_TRANSPORT } : {}),
});

/** A connection to `database` (or the default database) on the engine under test. */
export function testConnection(database?: string): ClickHouseConnection {
  return ClickHouseConnection.open(parseClickHouseUrl(CLICKHOUSE_URL, database ?? 'default'), {
    useDatabase: database !== undefined,
    ...(TEST_TRANSPORT ? { transport: TEST_TRANSPORT } : {}),
  });
}

/** Drops a test database on the engine under test. */
export async function dropTestDatabase(database: string): Promise<void> {
  const conn = testConnection();
  try {
    await conn.exec(`DROP DATABASE IF EXISTS ${identifier(database)}`);
  } finally {
    await conn.close();
  }
}
