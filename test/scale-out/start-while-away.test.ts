// A scale-out server started while PostgreSQL and ClickHouse cannot be reached (their ports closed, through TCP
// proxies the test opens later) waits for each, saying so, and starts once they answer: services may come up in
// any order. A service that answers with a refusal waiting cannot change (an unknown user) ends the start with one
// line naming the service, not a stack trace. Runs in the scale-out pass (PLUMB_TEST_STORE=scale-out).

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { runServerExpectingExit, startServer, type ServerProcess } from '../helpers/process.js';
import { proxyFor, through, type CuttableProxy } from '../helpers/cuttable-proxy.js';
import { freshScaleOut, scaleOutServerEnv, type ScaleOutFixture } from '../helpers/scale-out.js';
import { eventually } from '../helpers/eventually.js';

const OWNER = 'away-owner-token-0123456789abcdef';
/**
 * On a test cluster (`npm run test:cluster`) ClickHouse's proxy keeps the node's port: without ZooKeeper Plumb reaches
 * the other nodes at CLICKHOUSE_URL's port (README, Running at scale).
 */
const ON_CLUSTER = process.env.CLICKHOUSE_CLUSTER !== undefined;
const AGENT = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
/** A stack trace's frame line: what an operator should not have to read to learn that a service is away. */
const STACK_FRAME = /^\s+at /m;
const escaped = (text: string) => text.replace(/\./g, '\\.');

describe('a scale-out server started while its services are away', () => {
  let fixture: ScaleOutFixture;
  let dir: string;
  let pg: CuttableProxy;
  let clickhouse: CuttableProxy;
  let server: ServerProcess | undefined;
  let env: Record<string, string>;

  before(async () => {
    fixture = await freshScaleOut();
    pg = await proxyFor(fixture.options.databaseUrl, 5432);
    clickhouse = await proxyFor(fixture.options.clickhouseUrl, 8123, { samePort: ON_CLUSTER });
    dir = mkdtempSync(join(tmpdir(), 'plumb-away-'));
    env = { ...scaleOutServerEnv(fixture, dir), PLUMB_BOOTSTRAP_TOKEN: OWNER, PLUMB_LOG_LEVEL: 'warn' };
  });

  after(async () => {
    if (server?.child.exitCode === null) await server.stop();
    for (const p of [pg, clickhouse]) await p?.close();
    await fixture?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('waits for PostgreSQL, then for ClickHouse, then starts and stores hits', async () => {
    await pg.cut();
    await clickhouse.cut();
    let output = '';
    const starting = startServer(
      { ...env, DATABASE_URL: through(env.DATABASE_URL!, pg), CLICKHOUSE_URL: through(env.CLICKHOUSE_URL!, clickhouse) },
      { onOutput: (text) => (output += text) },
    );
    starting.catch(() => undefined); // awaited below; a refusal meanwhile must not go unhandled
    const said = (pattern: RegExp, what: string) => eventually(async () => (pattern.test(output) ? true : undefined), what, 30_000);
    // Twice each: it goes on waiting, with the service's address and what the connection met (no credentials).
    await said(new RegExp(`(waiting for PostgreSQL at postgres://${escaped(pg.host)}:${pg.port} \\(.*ECONNREFUSED.*\\)[^]*){2}`), 'two waits for PostgreSQL');
    await pg.restore();
    await said(new RegExp(`(waiting for ClickHouse at http://${escaped(clickhouse.host)}:${clickhouse.port} \\(.*ECONNREFUSED.*\\)[^]*){2}`), 'two waits for ClickHouse');
    assert.doesNotMatch(output, /Plumb listening/, 'not listening before ClickHouse answers');
    await clickhouse.restore();
    server = await starting;
    assert.doesNotMatch(server.stdout(), STACK_FRAME);

    const ready = await fetch(`${server.url}/readyz`);
    assert.equal(ready.status, 200);
    const created = await fetch(`${server.url}/v1/sites`, {
      method: 'POST',
      headers: { authorization: `Bearer ${OWNER}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Late services' }),
    });
    const site = ((await created.json()) as { id: string }).id;
    const hit = await fetch(`${server.url}/?sid=${site}&h=${encodeURIComponent('https://late.example')}&p=%2F`, { headers: { 'user-agent': AGENT } });
    assert.equal(hit.status, 200);
    const pageviews = `${server.url}/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2020-01-01%2000:00:00`;
    await eventually(async () => {
      const rows = (await (await fetch(pageviews, { headers: { authorization: `Bearer ${OWNER}` } })).json()) as { pageviews?: string }[];
      return rows[0]?.pageviews === '1' ? true : undefined;
    }, 'the hit stored');
  });

  it('refuses to start, in one line naming the service, when ClickHouse refuses its user', async () => {
    const url = new URL(env.CLICKHOUSE_URL!);
    url.username = 'no_such_plumb_user';
    url.password = 'secret-password';
    const { code, output } = await runServerExpectingExit({ ...env, PLUMB_DATA_DIR: mkdtempSync(join(dir, 'ch-')), CLICKHOUSE_URL: url.toString() });
    assert.equal(code, 1, output);
    assert.match(output, new RegExp(`^Plumb cannot start: ClickHouse at http://${escaped(url.host)}: .*no_such_plumb_user`, 'm'));
    assert.doesNotMatch(output, STACK_FRAME);
    assert.doesNotMatch(output, /secret-password/);
  });

  it('refuses to start, in one line naming the service, when PostgreSQL refuses its role', async () => {
    const url = new URL(env.DATABASE_URL!);
    url.username = 'no_such_plumb_role';
    const { code, output } = await runServerExpectingExit({ ...env, PLUMB_DATA_DIR: mkdtempSync(join(dir, 'pg-')), DATABASE_URL: url.toString() });
    assert.equal(code, 1, output);
    assert.match(output, /^Plumb cannot start: PostgreSQL at postgres:\/\/[^ ]+: .*no_such_plumb_role/m);
    assert.doesNotMatch(output, STACK_FRAME);
  });
});
