// HTTP hardening: security headers everywhere, CORS only on the collector and the script, metrics that count
// requests, oversized headers and regular-expression bombs bounded, and no token in any log line.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { startServer } from '../helpers/process.js';

describe('HTTP hardening', () => {
  let t: TestApp;
  let port: number;
  before(async () => {
    t = await startTestApp();
    port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
  });
  after(() => t.close());

  it('sends security headers on API, error and collector answers', async () => {
    for (const url of ['/v1/token', '/v1/nope', '/openapi.json', '/script.js', '/?sid=ABCDEFGH&h=https%3A%2F%2Fex.test&p=%2F']) {
      const res = await fetch(`http://127.0.0.1:${port}${url}`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } });
      assert.equal(res.headers.get('x-content-type-options'), 'nosniff', url);
      assert.match(res.headers.get('content-security-policy') ?? '', /default-src 'none'/, url);
      assert.match(res.headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/, url);
      assert.equal(res.headers.get('cross-origin-resource-policy'), 'cross-origin', url);
      assert.ok(res.headers.get('strict-transport-security'), url);
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
    const { connect } = await import('node:net');
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
