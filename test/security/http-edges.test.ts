// HTTP at its edges, over real sockets: an answer to HEAD has no body even when Node's parser refuses the request
// (431), a client sending a body larger than allowed reads the 413 instead of a reset connection, the rest of such a
// body is read only up to its bound, and the Plausible and Umami endpoints bound bodies and properties as the
// collector does.

import assert from 'node:assert/strict';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { MAX_DRAIN_MS, MAX_DRAINED_BYTES } from '../../src/http/early-answers.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const MiB = 1024 * 1024;

describe('HTTP edges', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await startTestApp();
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  after(() => t.close());

  /** Every byte the server sends on a raw connection for `head`, until it closes the connection. */
  const rawAnswer = (head: string) =>
    new Promise<string>((resolve, reject) => {
      const socket = connect(port, '127.0.0.1', () => socket.write(head));
      const chunks: Buffer[] = [];
      socket.on('data', (c: Buffer) => chunks.push(c));
      socket.on('error', reject);
      socket.on('close', () => resolve(Buffer.concat(chunks).toString('latin1')));
    });

  it('answers a HEAD request whose request line is over the limit with a 431 and no body; GET still gets the JSON', async () => {
    const path = `/v1/token?x=${'a'.repeat(20 * 1024)}`;
    const head = await rawAnswer(`HEAD ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(head, /^HTTP\/1\.1 431 /);
    assert.ok(head.endsWith('\r\n\r\n'), `nothing after the head: ${JSON.stringify(head.slice(head.indexOf('\r\n\r\n')))}`);
    const get = await rawAnswer(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`);
    assert.match(get, /^HTTP\/1\.1 431 [^]*\r\n\r\n\{"error":"Request headers are too large"\}$/);
    // Node's own client reads the HEAD answer (it failed with HPE_CLOSED_CONNECTION on the body's bytes).
    const status = await new Promise<number | undefined>((resolve, reject) => {
      const req = httpRequest({ port, host: '127.0.0.1', method: 'HEAD', path }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode));
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 431);
  });

  /**
   * POSTs `total` bytes of JSON-ish spaces to `path` at full speed without `Expect: 100-continue`, in 64 KiB writes;
   * resolves with the answer read, or the error the client saw, and the bytes it had sent when the connection closed.
   */
  const postBig = (path: string, total: number, headers: Record<string, string>) =>
    new Promise<{ status?: number; body?: string; error?: string; sentAtClose: number }>((resolve) => {
      const answer: { status?: number; body?: string; error?: string } = {};
      let sent = 0;
      const req = httpRequest({ port, host: '127.0.0.1', method: 'POST', path, headers: { ...headers, 'content-length': String(total) } }, (res) => {
        answer.status = res.statusCode;
        answer.body = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (answer.body += c));
      });
      req.on('error', (e: NodeJS.ErrnoException) => (answer.error = e.code ?? e.message));
      req.on('socket', (s) => s.on('close', () => resolve({ ...answer, sentAtClose: sent })));
      const chunk = Buffer.alloc(64 * 1024, 0x20);
      const write = () => {
        while (sent < total) {
          sent += chunk.length;
          if (!req.write(chunk)) return void req.once('drain', write);
        }
        req.end();
      };
      write();
    });

  it('lets a client sending 10 MB to a route that takes 1 MB read the 413, the rest of its body read and dropped', async () => {
    const headers = { authorization: `Bearer ${OWNER_TOKEN}`, 'content-type': 'application/json', connection: 'close' };
    const res = await postBig('/v1/sites', 10 * MiB, headers);
    assert.equal(res.error, undefined, 'no EPIPE or reset');
    assert.equal(res.status, 413);
    assert.deepEqual(JSON.parse(res.body!), { error: 'Request body is too large' });
    // An upload refused before it is read (no token) is answered the same way.
    const upload = await postBig('/admin/imports/umami?site_id=ABCDEFGH', 10 * MiB, { 'content-type': 'text/csv', connection: 'close' });
    assert.equal(upload.error, undefined, 'no EPIPE or reset');
    assert.equal(upload.status, 401);
  });

  /**
   * Sends a request head declaring `total` bytes of body on a raw connection that stays half-open when the server
   * ends its side (as a client still sending does), then the body: at full speed, or `trickle` bytes every 200 ms.
   * Resolves with what the server answered, the bytes written when the connection broke, and after how long.
   */
  const rawUpload = (total: number, trickle?: number) =>
    new Promise<{ answer: string; sent: number; closedAfterMs: number }>((resolve) => {
      const started = Date.now();
      let answer = '';
      let sent = 0;
      let timer: NodeJS.Timeout | undefined;
      const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true }, () => {
        socket.write(`POST /v1/sites HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${OWNER_TOKEN}\r\nContent-Type: application/json\r\nContent-Length: ${total}\r\n\r\n`);
        const chunk = Buffer.alloc(trickle ?? 256 * 1024, 0x20);
        const write = () => {
          while (sent < total && !socket.destroyed) {
            sent += chunk.length;
            if (trickle !== undefined) return void (timer = setTimeout(() => socket.write(chunk, write), 200));
            if (!socket.write(chunk)) return void socket.once('drain', write);
          }
        };
        write();
      });
      socket.on('data', (c: Buffer) => (answer += c.toString('latin1')));
      socket.on('error', () => undefined);
      socket.on('close', () => {
        clearTimeout(timer);
        resolve({ answer, sent, closedAfterMs: Date.now() - started });
      });
    });

  it(`reads the rest of a refused body up to ${MAX_DRAINED_BYTES / MiB} MiB, then closes the connection`, async () => {
    const res = await rawUpload(4 * MAX_DRAINED_BYTES);
    assert.match(res.answer, /^HTTP\/1\.1 413 /);
    assert.ok(res.sent > MAX_DRAINED_BYTES && res.sent < 2 * MAX_DRAINED_BYTES, `closed after ${res.sent} bytes were written`);
    assert.ok(res.closedAfterMs < MAX_DRAIN_MS, `closed by its bytes, after ${res.closedAfterMs} ms, not by its time`);
  });

  it('closes the connection of a refused body that only trickles in, once its bound of time has passed', async () => {
    const res = await rawUpload(10 * MiB, 1024);
    assert.match(res.answer, /^HTTP\/1\.1 413 [^]*\r\n\r\n\{"error":"Request body is too large"\}$/);
    assert.ok(res.closedAfterMs >= MAX_DRAIN_MS - 500 && res.closedAfterMs < MAX_DRAIN_MS + 3000, `closed after ${res.closedAfterMs} ms`);
  });

  describe("the Plausible and Umami endpoints' bounds", () => {
    let site: string;
    const UMAMI_ID = '5a6b7c8d-9e0f-4a1b-8c2d-3e4f5a6b7c8d';
    before(async () => {
      const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Edges', domain: 'edges.example', umami_website_id: UMAMI_ID });
      assert.equal(res.status, 200, JSON.stringify(res.body));
      site = res.body.id as string;
    });
    const post = (url: string, payload: string) =>
      t.app.inject({ method: 'POST', url, headers: { 'user-agent': CHROME, 'content-type': 'text/plain' }, payload });
    const lastProps = async () => {
      await t.flushHits();
      return (await t.events.listHits(site)).at(-1)?.props ?? [];
    };
    const nested = (depth: number) => '{"a":'.repeat(depth) + '"deep"' + '}'.repeat(depth);
    const event = (props: string) => `{"n":"Signup","u":"https://edges.example/","d":"edges.example","p":${props}}`;
    const send = (data: string) => `{"type":"event","payload":{"website":"${UMAMI_ID}","hostname":"edges.example","url":"/","name":"Signup","data":${data}}}`;

    it('refuses a body over 64 KiB with 413 {error} on both', async () => {
      const big = JSON.stringify({ k: 'v'.repeat(70 * 1024) });
      for (const [url, body] of [['/api/event', event(big)], ['/api/send', send(big)]] as const) {
        const res = await post(url, body);
        assert.equal(res.statusCode, 413, url);
        assert.deepEqual(res.json(), { error: 'Request body is too large' }, url);
      }
    });

    it('answers bodies nested thousands deep at once, keeping no property deeper than the collector keeps', async () => {
      const deepArray = '['.repeat(30_000) + ']'.repeat(30_000);
      for (const [url, status] of [['/api/event', 400], ['/api/send', 400]] as const) {
        const res = await post(url, deepArray);
        assert.equal(res.statusCode, status, `${url}: ${res.body}`);
      }
      const started = Date.now();
      assert.equal((await post('/api/event', event(nested(10_000)))).statusCode, 202);
      assert.deepEqual(await lastProps(), [], 'a nested Plausible property is dropped');
      assert.equal((await post('/api/send', send(nested(10_000)))).statusCode, 200);
      assert.deepEqual(await lastProps(), [], 'deeper than three levels, nothing of it is flattened');
      assert.equal((await post('/api/send', send(nested(3)))).statusCode, 200);
      assert.deepEqual(await lastProps(), [['a.a.a', 'deep']]);
      assert.ok(Date.now() - started < 5000);
    });

    it('keeps at most 30 properties, each key at most 300 and value 2,000 bytes, on both', async () => {
      const many = JSON.stringify(Object.fromEntries([['k'.repeat(301), 'v'], ['long', 'v'.repeat(2001)], ...Array.from({ length: 2000 }, (_, i) => [`p${i}`, 'v'])]));
      for (const [url, body] of [['/api/event', event(many)], ['/api/send', send(many)]] as const) {
        assert.ok((await post(url, body)).statusCode < 300, url);
        const props = await lastProps();
        assert.equal(props.length, 30, url);
        assert.deepEqual(props[0], ['p0', 'v'], url);
      }
    });
  });
});
