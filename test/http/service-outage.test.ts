// What counts as a service outage (503 with Retry-After) rather than a bug (500): the errors the real clients raise
// when their service is away or stops answering, produced here by the clients themselves.

import assert from 'node:assert/strict';
import { createServer, type Server, type Socket } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { createClient, parseError } from '@clickhouse/client';
import { isServiceOutage } from '../../src/http/service-outage.js';
import { mutationsStillRunning } from '../../src/store/clickhouse/event-store.js';

describe('isServiceOutage', () => {
  // A server that accepts connections and never answers: a ClickHouse too busy to reply, or one whose ON CLUSTER
  // statement waits on its Keeper.
  let silent: Server;
  const held: Socket[] = [];
  let port = 0;
  before(async () => {
    silent = createServer((socket) => {
      held.push(socket);
      socket.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    port = (silent.address() as { port: number }).port;
  });
  after(async () => {
    for (const s of held) s.destroy();
    await new Promise<void>((resolve) => silent.close(() => resolve()));
  });

  it("is ClickHouse's client timing out on a server that never answers", async () => {
    // The production transport keeps the client's default timeout (30 s); a short one gives the same error sooner.
    const client = createClient({ url: `http://127.0.0.1:${port}`, request_timeout: 300 });
    try {
      const err = await client.command({ query: 'SELECT 1' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.ok(err instanceof Error, 'the request fails');
      assert.equal(isServiceOutage(err), true, `an outage: ${String(err)}`);
    } finally {
      await client.close();
    }
  });

  it("is ClickHouse's client finding nothing at the port", async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const free = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const client = createClient({ url: `http://127.0.0.1:${free}` });
    try {
      const err = await client.command({ query: 'SELECT 1' }).then(
        () => undefined,
        (e: unknown) => e,
      );
      assert.equal(isServiceOutage(err), true, `an outage: ${String(err)}`);
    } finally {
      await client.close();
    }
  });

  it('is a ClickHouse deletion still running when Plumb stops waiting for it', () => {
    assert.equal(isServiceOutage(mutationsStillRunning('deleting site ABC')), true);
  });

  it("is a current ClickHouse server's transient error as its HTTP client parses it (the code apart from the message)", () => {
    // What a 26.x server answers when a shard is away; 18.16's and chdb's errors are checked against the engines
    // themselves (test/store/clickhouse-outages.test.ts).
    const err = parseError('Code: 279. DB::NetException: All connection tries failed. (ALL_CONNECTION_TRIES_FAILED) (version 26.7.2.1)');
    assert.equal((err as { code?: string }).code, '279');
    assert.equal(isServiceOutage(err), true);
    const syntax = parseError('Code: 62. DB::Exception: Syntax error: failed at position 1. (SYNTAX_ERROR) (version 26.7.2.1)');
    assert.equal(isServiceOutage(syntax), false);
    // Out of memory: the server as a whole (transient), or one query too big for its limit (not). 18.16's words.
    const total = 'Code: 241, e.displayText() = DB::Exception: Memory limit (total) exceeded: would use 9.31 GiB, maximum: 9.31 GiB, e.what() = DB::Exception';
    assert.equal(isServiceOutage(new Error(total)), true);
    assert.equal(isServiceOutage(new Error(total.replace('(total)', '(for query)'))), false);
    // A PostgreSQL SQLSTATE is five characters, never read as a ClickHouse code.
    assert.equal(isServiceOutage(Object.assign(new Error('canceling statement due to user request'), { code: '57014' })), false);
  });

  it('is not a bug, a bad statement, or a message that merely mentions a timeout', () => {
    assert.equal(isServiceOutage(new TypeError("Cannot read properties of undefined (reading 'x')")), false);
    assert.equal(isServiceOutage(new Error('Code: 62. DB::Exception: Syntax error')), false);
    assert.equal(isServiceOutage(new Error('Timeout error. in a report name')), false);
    assert.equal(isServiceOutage(undefined), false);
  });
});
