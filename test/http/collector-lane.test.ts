// The collector's fast lane (src/http/collector-lane.ts): over a real socket, every `GET /?…` gets exactly the
// answer the Fastify route gives it (status, headers, body), the lane takes only the well-formed hits, and a hit
// through the lane is stored as the route stores it, client address included.

import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { collectorLane } from '../../src/http/collector-lane.js';
import { trustProxyOption } from '../../src/http/trust-proxy.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

/** Headers that differ between any two answers (or that the injected one lacks). */
const PER_ANSWER = new Set(['date', 'connection', 'keep-alive', 'transfer-encoding']);

type Answer = { status: number; headers: Record<string, string>; body: string };

async function overSocket(base: string, path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await fetch(base + path, { headers });
  const kept: Record<string, string> = {};
  res.headers.forEach((value, name) => {
    if (!PER_ANSWER.has(name)) kept[name] = value;
  });
  return { status: res.status, headers: kept, body: Buffer.from(await res.arrayBuffer()).toString('latin1') };
}

async function injected(t: TestApp, path: string, headers: Record<string, string>): Promise<Answer> {
  const res = await t.app.inject({ method: 'GET', url: path, headers });
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(res.headers)) if (!PER_ANSWER.has(name)) kept[name] = String(value);
  return { status: res.statusCode, headers: kept, body: res.rawPayload.toString('latin1') };
}

const listen = (server: Server) =>
  new Promise<string>((resolve) => server.listen(0, '127.0.0.1', () => resolve(`http://127.0.0.1:${(server.address() as AddressInfo).port}`)));

describe('collector fast lane', () => {
  let t: TestApp;
  let site: string;
  let appBase: string;
  /** A server that offers each request to a lane of the app's own parts and tells which ones it declined. */
  let probe: Server;
  let probeBase: string;
  const declined: string[] = [];

  before(async () => {
    t = await startTestApp({ trustProxy: true });
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Lane' })).body.id;
    appBase = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const lane = collectorLane({ ingest: t.ingest, metrics: t.metrics, log: t.app.log, trustProxy: trustProxyOption(true), beaconHeaders: {} });
    probe = createServer((req, res) => {
      if (lane(req, res)) return;
      declined.push(req.url ?? '');
      res.writeHead(299).end();
    });
    probeBase = await listen(probe);
  });
  after(async () => {
    probe.close();
    await t.close();
  });

  const hitPaths = () => {
    const q = (params: Record<string, string>) => `/?${new URLSearchParams(params).toString()}`;
    const page = { sid: site, h: 'https://www.example.com', p: '/pricing' };
    return {
      taken: [
        q(page),
        q({ ...page, r: 'https://news.ycombinator.com/', qs: JSON.stringify({ utm_source: 'hn' }), cid: '7' }),
        q({ ...page, qs: 'ref=friend&keyword=x' }),
        q({ ...page, name: 'Signup', payload: JSON.stringify({ _value: 1250, plan: 'pro' }) }),
        q({ ...page, sid: 'NO-SUCH-SITE' }),
        q({ ...page, h: 'https://sub.internal.test' }),
        q({ ...page, unknown: 'ignored' }),
        `${q(page)}&constructor=x&__proto__=y&hasOwnProperty=z`,
        // Read alone, then refused by the pipeline: the lane gives the route's 400.
        q({ ...page, name: '' }),
      ],
      declined: [
        '/?&',
        '/?x=1',
        q({ h: 'https://www.example.com' }),
        q({ ...page, sid: '' }),
        q({ sid: site }),
        q({ ...page, h: 'not a url' }),
        q({ ...page, p: 'no-slash' }),
        `${q(page)}&sid=${site}`,
        q({ ...page, p: `/${'a'.repeat(5000)}` }),
        q({ ...page, qs: '{"broken' }),
        q({ ...page, qs: '[1,2]' }),
        q({ ...page, name: 'Signup', payload: '{"_value": -5}' }),
        q({ ...page, name: 'Signup', payload: 'not json' }),
        q({ ...page, name: 'x'.repeat(300) }),
        q({ ...page, gcode: 'NOPE' }),
        q({ ...page, gcode: 'NOPE', gval: '12' }),
        '/?sid=%E0%A4%A&h=x',
      ],
    };
  };

  it('answers every GET hit over the socket exactly as the route answers it', async () => {
    const { taken, declined: refused } = hitPaths();
    const before = (await t.metrics.hitsFastLane.get()).values[0]?.value ?? 0;
    for (const agent of [CHROME, GOOGLEBOT]) {
      for (const path of [...taken, ...refused]) {
        const headers = { 'user-agent': agent, 'x-forwarded-for': '81.2.69.142' };
        assert.deepEqual(await overSocket(appBase, path, headers), await injected(t, path, headers), path);
      }
    }
    // The server's requests went through the lane: it took every well-formed one.
    assert.equal(((await t.metrics.hitsFastLane.get()).values[0]?.value ?? 0) - before, 2 * taken.length);
  });

  it('takes the well-formed hits and leaves everything else to the route', async () => {
    const { taken, declined: refused } = hitPaths();
    const others = [...refused, '/', '/healthz', '/script.js', '//?sid=x&h=https://a.example', '/v1/sites?sid=x'];
    declined.length = 0;
    for (const path of [...taken, ...others]) await overSocket(probeBase, path, { 'user-agent': CHROME });
    // A hit that says it has a body (the route reads parameters from it), and methods other than GET.
    const path = `/?sid=${site}&h=https%3A%2F%2Fa.example`;
    for (const [method, headers] of [
      ['GET', { 'content-length': '0' }],
      ['GET', { 'transfer-encoding': 'chunked' }],
      ['POST', { 'content-length': '0' }],
      ['HEAD', {}],
      ['OPTIONS', {}],
    ] as const) {
      await new Promise((resolve, reject) => request(probeBase + path, { method, headers }, (res) => res.resume().on('end', resolve)).on('error', reject).end());
    }
    assert.deepEqual(declined, [...others, ...Array(5).fill(path)]);
  });

  it('stores a hit it took as the route stores the same hit, with the client address it was given', async () => {
    const own = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Both ways' })).body.id;
    const path = (p: string) => `/?${new URLSearchParams({ sid: own, h: 'https://www.example.com', p, r: 'https://www.google.com/' })}`;
    const headers = { 'user-agent': CHROME, 'x-forwarded-for': '81.2.69.142' };
    await overSocket(probeBase, path('/a'), headers);
    await t.app.inject({ method: 'GET', url: path('/b'), headers });
    await t.flushHits();
    const [viaLane, viaRoute] = (await t.events.listHits(own)).map(({ timestamp: _t, pathname, firstView: _f, ...rest }) => ({ pathname, rest }));
    assert.deepEqual([viaLane?.pathname, viaRoute?.pathname], ['/a', '/b']);
    // One visitor, one visit, the address's country: the lane read the address as Fastify does.
    assert.deepEqual(viaLane!.rest, viaRoute!.rest);
    assert.equal(viaLane!.rest.countryCode, 'GB');
  });
});
