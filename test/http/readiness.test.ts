// GET /readyz on a working server: every service the mode depends on asked and answering (the embedded DuckDB
// file; PostgreSQL and ClickHouse in scale-out), 200, never cached. Outages: test/scale-out/service-outages.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/scale-out.js';

describe('/readyz', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it("answers ready with each of the mode's services, asked now", async () => {
    const res = await t.app.inject({ method: 'GET', url: '/readyz' });
    assert.equal(res.statusCode, 200, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json();
    assert.equal(body.status, 'ready');
    const expected = TEST_STORE === 'scale-out' ? ['clickhouse', 'postgresql'] : ['duckdb'];
    assert.deepEqual(Object.keys(body.services).filter((k) => k !== 'redis').sort(), expected);
    assert.ok(Object.values(body.services).every((v) => v === 'ok'));
    // Liveness stays the plain answer it was.
    assert.deepEqual((await t.app.inject({ method: 'GET', url: '/healthz' })).json(), { status: 'ok' });
  });
});
