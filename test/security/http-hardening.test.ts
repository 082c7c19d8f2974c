// HTTP hardening: security headers everywhere (a beacon's few on the collectors' answers), CORS only on the
// collector and the script, metrics that count requests, oversized headers and regular-expression bombs bounded,
// and no token in any log line.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { connect } from 'node:net';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-shapes.js';
import { startServer } from '../helpers/process.js';

describe('HTTP hardening', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await startTestApp();
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  after(() => t.close());

  it('sends the full set of security headers on pages, API and error answers, the server\'s root among them', async () => {
    for (const url of ['/v1/token', '/v1/nope', '/openapi.json', '/script.js', '/']) {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` }, redirect: 'manual' });
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', url);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/, url);
      assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, url);
      assert.equal(res.headers.get('x-frame-options'), 'SAMEORIGIN', url);
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin', url);
      assert.ok(res.headers.get('strict-transport-security'), url);
    }
    const page = await fetch(`http://127.0.0.1:${port}/`, { headers: { accept: 'text/html' }, redirect: 'manual' });
    assert.equal(page.status, 302);
    assert.ok(page.headers.get('strict-transport-security'), 'the root\'s redirect to the dashboard');
  });

  it('answers beacons (hits, their preflights and refusals) with the security headers that apply to them only', async () => {
    const beacons: [string, RequestInit][] = [
      ['/?sid=ABCDEFGH&h=https%3A%2F%2Fex.test&p=%2F', {}],
      ['/?sid=ABCDEFGH&h=https%3A%2F%2Fex.test&p=nope', {}],
      ['/?sid=ABCDEFGH&h=https%3A%2F%2Fex.test&p=%2F&name=signup', { method: 'POST' }],
      ['/', { method: 'OPTIONS', headers: { origin: 'https://site.example', 'access-control-request-method': 'POST' } }],
      ['/api/event', { method: 'POST', body: JSON.stringify({ name: 'pageview', url: 'https://ex.test/', domain: 'ex.test' }) }],
      ['/api/send', { method: 'POST', body: '{}' }],
      ['/api/event', { method: 'OPTIONS', headers: { origin: 'https://site.example', 'access-control-request-method': 'POST' } }],
      ['/api/send', { method: 'OPTIONS', headers: { origin: 'https://site.example', 'access-control-request-method': 'POST' } }],
    ];
    for (const [url, init] of beacons) {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, init);
      const what = `${init.method ?? 'GET'} ${url} (${res.status})`;
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', what);
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin', what);
      assert.equal(res.headers.get('access-control-allow-origin'), '*', what);
      for (const document of ['content-security-policy', 'strict-transport-security', 'x-frame-options', 'referrer-policy']) {
        assert.equal(res.headers.get(document), null, `${what}: ${document}`);
      }
      // The rest of CORS is the preflight's: a hit's answer needs only to be readable.
      const preflight = init.method === 'OPTIONS';
      assert.equal(res.headers.get('access-control-allow-methods') !== null, preflight, `${what}: allow-methods`);
      assert.equal(res.headers.get('access-control-max-age') !== null, preflight, `${what}: max-age`);
    }
  });

  it('allows cross-origin reads only where browsers need them', async () => {
    const api = await fetch(`http://127.0.0.1:${port}/v1/token`, { headers: { origin: 'https://evil.example', authorization: `Bearer ${OWNER_TOKEN}` } });
    assert.equal(api.headers.get('access-control-allow-origin'), null, 'the API is not readable cross-origin from browsers');
    const admin = await fetch(`http://127.0.0.1:${port}/admin/accounts`, { headers: { origin: 'https://evil.example' } });
    assert.equal(admin.headers.get('access-control-allow-origin'), null);
    for (const url of ['/script.js', '/?sid=ABCDEFGH&h=https%3A%2F%2Fex.test&p=%2F']) {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers: { origin: 'https://site.example' } });
      assert.equal(res.headers.get('access-control-allow-origin'), '*', url);
    }
  });

  it('counts requests by route pattern on /metrics, never by raw URL', async () => {
    await fetch(`http://127.0.0.1:${port}/v1/sites/ABCDEFGH`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } });
    await fetch(`http://127.0.0.1:${port}/random-${Date.now()}`);
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(text, /plumb_http_requests_total\{method="GET",route="\/v1\/sites\/:site_id",status="404"\} 1/);
    assert.match(text, /plumb_http_requests_total\{method="GET",route="unknown",status="404"\} [1-9]/);
    assert.doesNotMatch(text, /random-/);
    assert.match(text, /plumb_http_request_duration_seconds_bucket/);
    assert.match(text, /plumb_report_queries_waiting 0/);
    assert.match(text, /plumb_write_buffer_pending \d+/);
  });

  it('refuses oversized headers without falling over', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest({ host: '127.0.0.1', port, path: '/v1/token', headers: { 'x-junk': 'x'.repeat(64 * 1024), authorization: `Bearer ${OWNER_TOKEN}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    assert.equal(status, 431);
    assert.equal((await fetch(`http://127.0.0.1:${port}/v1/token`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } })).status, 200);
  });

  describe('requests the HTTP parser refuses answer in the {error} shape (raw sockets)', () => {
    /** Sends bytes as they are and reads the whole answer until the server closes the connection. */
    const raw = (bytes: string) =>
      new Promise<{ status: number; headers: string; body: string }>((resolve, reject) => {
        const socket = connect(port, '127.0.0.1');
        let received = '';
        socket.setEncoding('latin1');
        socket.on('data', (d: string) => (received += d));
        socket.on('error', () => undefined); // the server may reset after answering
        socket.on('close', () => {
          const split = received.indexOf('\r\n\r\n');
          const m = /^HTTP\/1\.1 (\d{3}) /.exec(received);
          if (!m || split < 0) return reject(new Error(`no HTTP answer: ${JSON.stringify(received.slice(0, 200))}`));
          resolve({ status: Number(m[1]), headers: received.slice(0, split), body: received.slice(split + 4) });
        });
        socket.write(bytes);
        setTimeout(() => socket.end(), 2000).unref();
      });

    const cases: [string, string, number][] = [
      ['headers over the limit (431)', `GET /v1/token HTTP/1.1\r\nHost: x\r\nX-Junk: ${'x'.repeat(70 * 1024)}\r\n\r\n`, 431],
      ['one header line over the limit, to the collector (431)', `GET /?sid=ABCDEFGH HTTP/1.1\r\nHost: x\r\nCookie: ${'c=1; '.repeat(20_000)}\r\n\r\n`, 431],
      ['a request line that is not HTTP', 'GARBAGE\r\n\r\n', 400],
      ['an unknown method', 'BREW /healthz HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['an unknown HTTP version', 'GET /healthz HTTP/9.9\r\nHost: x\r\n\r\n', 400],
      ['a space inside the path', 'GET /hea lthz HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['a control character in the path', 'GET /health\x01z HTTP/1.1\r\nHost: x\r\n\r\n', 400],
      ['a malformed header line', 'GET /healthz HTTP/1.1\r\nHost x\r\n\r\n', 400],
      ['a header name with a space', 'GET /healthz HTTP/1.1\r\nHost: x\r\nBad Name: 1\r\n\r\n', 400],
      ['a Content-Length that is not a number', 'POST /v1/sites HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n', 400],
      ['two different Content-Lengths', 'POST /v1/sites HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nab', 400],
      ['Content-Length with Transfer-Encoding (smuggling)', 'POST /v1/sites HTTP/1.1\r\nHost: x\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n', 400],
      ['a chunk size that is not hexadecimal', 'POST /v1/sites HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nZZ\r\n', 400],
      ['a bare LF line ending in the request line', 'GET /healthz HTTP/1.1\nHost: x\r\n\r\n', 400],
    ];
    for (const [name, bytes, status] of cases) {
      it(`${status}: ${name}`, async () => {
        const res = await raw(bytes);
        assert.equal(res.status, status, `${res.headers}\n\n${res.body}`);
        assert.match(res.headers, /\r\ncontent-type: application\/json; charset=utf-8\r\n/i);
        assert.match(res.headers, /\r\nconnection: close/i);
        const body = JSON.parse(res.body) as unknown;
        assertError({ status: res.status, body, headers: {} }, status);
        assert.doesNotMatch(res.body, /statusCode|message/);
      });
    }

    it('a malformed percent-encoding in the URL answers 400 {error} and the server keeps serving', async () => {
      const res = await raw('GET /v1/%zz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n');
      assertError({ status: res.status, body: JSON.parse(res.body), headers: {} }, 400);
      assert.equal((await fetch(`http://127.0.0.1:${port}/healthz`)).status, 200);
    });
  });

  it('runs regular-expression bombs in linear time (RE2)', async () => {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Bomb' })).body.id;
    const long = `/${'a'.repeat(1500)}!`;
    await t.app.inject({ method: 'GET', url: `/?sid=${site}&h=https%3A%2F%2Fex.test&p=${encodeURIComponent(long)}`, headers: { 'user-agent': 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0' } });
    await t.flushHits();
    const filters = encodeURIComponent(JSON.stringify([{ property: 'pathname', operator: 'matching', value: '^/(a+)+$' }]));
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&filters=${filters}`);
    assert.equal(res.status, 200);
    assert.equal(res.body[0].pageviews, '0', 'the bomb does not match and returns at once (a backtracking engine would not return)');
  });
});

describe('slow clients', () => {
  it('are cut off when a request takes longer than the request timeout, and others are still served', async () => {
    const t = await startTestApp({ requestTimeoutMs: 400 });
    const port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
    const socket = connect(port, '127.0.0.1');
    let received = '';
    socket.on('data', (d) => (received += d.toString()));
    const closed = new Promise<void>((resolve) => socket.on('close', () => resolve()));
    // Headers trickle in and never finish: a slowloris.
    socket.write('GET /v1/token HTTP/1.1\r\nHost: x\r\n');
    const drip = setInterval(() => socket.writable && socket.write('X-Slow: 1\r\n'), 100);
    await closed;
    clearInterval(drip);
    assert.match(received, /^HTTP\/1\.1 408/);
    assert.deepEqual(Object.keys(JSON.parse(received.slice(received.indexOf('\r\n\r\n') + 4)) as object), ['error']);
    assert.equal((await fetch(`http://127.0.0.1:${port}/v1/token`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } })).status, 200);
    await t.close();
  });
});

describe('logs', () => {
  it('never contain an API token or the admin token', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-logs-'));
    const bootstrap = 'log-check-bootstrap-token-0123456789';
    const admin = 'log-check-admin-token-0123456789abc';
    const server = await startServer({ PLUMB_DATA_DIR: dir, PLUMB_BOOTSTRAP_TOKEN: bootstrap, PLUMB_ADMIN_TOKEN: admin, PLUMB_LOG_LEVEL: 'trace' });
    const created = await (await fetch(`${server.url}/admin/accounts/1/tokens`, {
      method: 'POST',
      headers: { authorization: `Bearer ${admin}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'x', abilities: ['*'] }),
    })).json() as { token: string };
    await fetch(`${server.url}/v1/token`, { headers: { authorization: `Bearer ${created.token}` } });
    await fetch(`${server.url}/v1/token`, { headers: { authorization: `Bearer wrong-${created.token}` } });
    await fetch(`${server.url}/v1/sites?x=1`, { headers: { authorization: `Bearer ${bootstrap}` } });
    await fetch(`${server.url}/?sid=ABCDEFGH&h=https%3A%2F%2Fex.test&p=%2Fquiet`);
    await server.stop();
    const output = server.stdout();
    assert.match(output, /"url":"\/v1\/sites\?x=1"/, 'API requests are logged');
    assert.doesNotMatch(output, /\/quiet/, 'collector hits are not logged one by one');
    assert.match(output, /"level":10|"level":20|"level":30/, 'logs were written');
    for (const secret of [bootstrap, admin, created.token]) assert.ok(!output.includes(secret), 'a secret reached the logs');
    rmSync(dir, { recursive: true, force: true });
  });
});
