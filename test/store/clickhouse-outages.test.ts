// ClickHouse's own errors for an overloaded or partly unreachable server are outages (503 with Retry-After), its
// errors for a bad statement are not: produced by the engine under test (18.16 over HTTP, 26.x in process).

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { isServiceOutage } from '../../src/http/service-outage.js';
import { testConnection } from '../helpers/clickhouse.js';

describe('ClickHouse errors as outages', () => {
  const conn = testConnection();
  after(() => conn.close());

  const failure = (sql: string) =>
    conn.rows(sql).then(
      () => assert.fail(`expected ${sql} to fail`),
      (e: unknown) => e,
    );

  it('is a statement that ran out of time (TIMEOUT_EXCEEDED, as an ON CLUSTER statement outwaiting its Keeper)', async () => {
    const err = await failure('SELECT count() FROM numbers(100000000000) SETTINGS max_execution_time = 1');
    assert.equal(isServiceOutage(err), true, String(err));
  });

  it('is a shard that cannot be reached (ALL_CONNECTION_TRIES_FAILED, NETWORK_ERROR)', async () => {
    const err = await failure("SELECT * FROM remote('127.0.0.1:1', system.one)");
    assert.equal(isServiceOutage(err), true, String(err));
  });

  it('is not a bad statement or an unknown table', async () => {
    for (const sql of ['SELEC 1', 'SELECT * FROM no_such_table_here']) {
      const err = await failure(sql);
      assert.equal(isServiceOutage(err), false, `${sql}: ${String(err)}`);
    }
  });
});
