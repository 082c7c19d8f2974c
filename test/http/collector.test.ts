// The collector over HTTP: pageviews, events and legacy goals stored with their fields; drops answered like
// successes; every malformed hit a 400 that stores nothing; CORS, client IPs, back-pressure and /script.js.

import assert from 'node:assert/strict';
import { gunzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

function query(params: Record<string, string>): string {
  return new URLSearchParams(params).toString();
}

describe('collector', () => {
  let t: TestApp;
  let site: string;
  const hit = (method: 'GET' | 'POST', params: Record<string, string> | string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method,
      url: `/?${typeof params === 'string' ? params : query(params)}`,
      headers: { 'user-agent': CHROME, ...headers },
    });
  const stored = async () => {
    await t.flushHits();
    return t.events.listHits(site);
  };

  before(async () => {
    t = await startTestApp({ excludedHosts: ['*.internal.test'] });
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Collected' })).body.id;
  });
  after(() => t.close());

  it('records a pageview from the wire format and answers with a GIF', async () => {
    const res = await hit('GET', {
      sid: site,
      h: 'https://www.example.com',
      p: '/pricing/',
      r: 'https://news.ycombinator.com/item?id=1',
      qs: JSON.stringify({ utm_source: 'hn', utm_medium: 'social', utm_campaign: 'launch', ref: 'friend', keyword: 'analytics' }),
      cid: '12345',
    });
    assert.equal(res.statusCode, 200);
    assert.equal(res.headers['content-type'], 'image/gif');
    assert.equal(res.headers['access-control-allow-origin'], '*');
    assert.equal(res.headers['cache-control'], 'no-store');
    assert.equal(res.rawPayload.subarray(0, 6).toString(), 'GIF89a');
    const [h] = await stored();
    assert.ok(h);
    assert.deepEqual(
      {
        type: h.type, hostname: h.hostname, pathname: h.pathname, referrerHostname: h.referrerHostname,
        referrerPathname: h.referrerPathname, referrerSource: h.referrerSource, utmSource: h.utmSource,
        utmMedium: h.utmMedium, utmCampaign: h.utmCampaign, ref: h.ref, keyword: h.keyword, browser: h.browser,
        operatingSystem: h.operatingSystem, deviceType: h.deviceType, eventName: h.eventName, value: h.value,
      },
      {
        type: 'pageview', hostname: 'https://www.example.com', pathname: '/pricing', referrerHostname: 'https://news.ycombinator.com',
        referrerPathname: '/item', referrerSource: 'Hacker News', utmSource: 'hn', utmMedium: 'social', utmCampaign: 'launch',
        ref: 'friend', keyword: 'analytics', browser: 'Chrome', operatingSystem: 'Windows', deviceType: 'Desktop', eventName: '', value: 0,
      },
    );
    assert.ok(Math.abs(h.timestamp.getTime() - Date.now()) < 60_000);
  });

  it('records events with values (creating the goal on first use) and legacy goal codes', async () => {
    const res = await hit('POST', { sid: site, name: 'Purchase', payload: JSON.stringify({ _value: 1299 }), h: 'https://www.example.com', p: '/checkout' });
    assert.equal(res.statusCode, 204);
    const goals = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events`)).body.data;
    const purchase = goals.find((g: { name: string }) => g.name === 'Purchase');
    assert.ok(purchase, 'the event exists after its first hit');
    assert.equal((await hit('POST', { sid: site, gcode: purchase.id, gval: '500', h: 'https://www.example.com', p: '/legacy' })).statusCode, 204);
    assert.equal((await hit('POST', { sid: site, name: 'Signup', h: 'https://www.example.com', p: '/' })).statusCode, 204);
    const events = (await stored()).filter((h) => h.type === 'event');
    assert.deepEqual(events.map((e) => [e.eventName, e.value, e.pathname]), [['Purchase', 1299, '/checkout'], ['Purchase', 500, '/legacy'], ['Signup', 0, '/']]);
    // Events belong to the visit of the pageview before them (same IP and agent).
    assert.equal(new Set((await stored()).map((h) => h.visitId)).size, 1);
  });

  it('accepts parameters in a form-encoded or text beacon body', async () => {
    const before = (await stored()).length;
    const res = await t.app.inject({
      method: 'POST',
      url: '/',
      headers: { 'user-agent': CHROME, 'content-type': 'text/plain;charset=UTF-8' },
      payload: query({ sid: site, name: 'Beacon', h: 'https://www.example.com', p: '/b' }),
    });
    assert.equal(res.statusCode, 204);
    assert.equal((await stored()).length, before + 1);
  });

  it('drops bots, unknown sites, unknown goal codes and excluded hosts silently, counting them', async () => {
    const before = (await stored()).length;
    const drops: [Record<string, string>, Record<string, string>][] = [
      [{ sid: site, h: 'https://www.example.com', p: '/' }, { 'user-agent': GOOGLEBOT }],
      [{ sid: site, h: 'https://www.example.com', p: '/' }, { 'user-agent': '' }],
      [{ sid: 'NOSUCHID', h: 'https://www.example.com', p: '/' }, {}],
      [{ sid: 'lowercase-and-long', h: 'https://www.example.com', p: '/' }, {}],
      [{ sid: site, gcode: 'ZZZZZZZZ', gval: '1', h: 'https://www.example.com', p: '/' }, {}],
      [{ sid: site, h: 'https://staging.internal.test', p: '/' }, {}],
    ];
    for (const [params, headers] of drops) {
      const res = await hit('GET', params, headers);
      assert.equal(res.statusCode, 200, JSON.stringify(params));
    }
    assert.equal((await stored()).length, before);
    const dropped = await t.metrics.registry.getSingleMetricAsString('plumb_hits_dropped_total');
    for (const reason of ['bot', 'unknown-site', 'unknown-goal', 'excluded-host']) assert.match(dropped, new RegExp(`reason="${reason}"`));
  });

  const malformed: [string, string][] = [
    ['no site id', query({ h: 'https://www.example.com', p: '/' })],
    ['no origin', query({ sid: 'ABCDEFGH', p: '/' })],
    ['an origin that is not a URL', query({ sid: 'ABCDEFGH', h: 'not a url', p: '/' })],
    ['a javascript: origin', query({ sid: 'ABCDEFGH', h: 'javascript:alert(1)', p: '/' })],
    ['a path without a leading slash', query({ sid: 'ABCDEFGH', h: 'https://www.example.com', p: 'pricing' })],
    ['qs that is not JSON', query({ sid: 'ABCDEFGH', h: 'https://www.example.com', p: '/', qs: '{"utm_source":' })],
    ['qs that is a JSON array', query({ sid: 'ABCDEFGH', h: 'https://www.example.com', p: '/', qs: '["a"]' })],
    ['a payload that is not JSON', query({ sid: 'ABCDEFGH', name: 'x', payload: '{', h: 'https://www.example.com', p: '/' })],
    ['a negative value', query({ sid: 'ABCDEFGH', name: 'x', payload: '{"_value":-5}', h: 'https://www.example.com', p: '/' })],
    ['a fractional value', query({ sid: 'ABCDEFGH', name: 'x', payload: '{"_value":12.5}', h: 'https://www.example.com', p: '/' })],
    ['a value that is not a number', query({ sid: 'ABCDEFGH', name: 'x', payload: '{"_value":"lots"}', h: 'https://www.example.com', p: '/' })],
    ['a goal value that is not a number', query({ sid: 'ABCDEFGH', gcode: 'ABCDEFGH', gval: 'ten', h: 'https://www.example.com', p: '/' })],
    ['an empty event name', query({ sid: 'ABCDEFGH', name: '', h: 'https://www.example.com', p: '/' })],
    ['an event name over 255 characters', query({ sid: 'ABCDEFGH', name: 'n'.repeat(256), h: 'https://www.example.com', p: '/' })],
    ['a repeated parameter', 'sid=ABCDEFGH&sid=BCDEFGHI&h=https%3A%2F%2Fwww.example.com&p=%2F'],
    ['an over-long path', query({ sid: 'ABCDEFGH', h: 'https://www.example.com', p: `/${'x'.repeat(5000)}` })],
  ];
  for (const [what, q] of malformed) {
    it(`answers 400 {error} to a hit with ${what}, storing nothing`, async () => {
      const before = (await stored()).length;
      for (const method of ['GET', 'POST'] as const) {
        const res = await hit(method, q.replace('ABCDEFGH', site));
        assert.equal(res.statusCode, 400, `${method}: ${res.body}`);
        assert.equal(typeof JSON.parse(res.body).error, 'string');
        assert.equal(res.headers['access-control-allow-origin'], '*', 'the browser may read the error');
      }
      assert.equal((await stored()).length, before);
    });
  }

  it('answers CORS preflights and describes itself at GET / without parameters', async () => {
    const pre = await t.app.inject({ method: 'OPTIONS', url: '/', headers: { origin: 'https://www.example.com', 'access-control-request-method': 'POST' } });
    assert.equal(pre.statusCode, 204);
    assert.equal(pre.headers['access-control-allow-origin'], '*');
    assert.match(String(pre.headers['access-control-allow-methods']), /POST/);
    const root = await t.app.inject({ method: 'GET', url: '/' });
    assert.equal(root.statusCode, 200);
    assert.equal(JSON.parse(root.body).script, '/script.js');
  });

  it('serves /script.js minified, gzipped when asked, with a working ETag', async () => {
    const plain = await t.app.inject({ method: 'GET', url: '/script.js' });
    assert.equal(plain.statusCode, 200);
    assert.match(String(plain.headers['content-type']), /javascript/);
    assert.match(plain.body, /fathom/);
    assert.ok(!plain.body.includes('\n  '), 'minified');
    const gz = await t.app.inject({ method: 'GET', url: '/script.js', headers: { 'accept-encoding': 'gzip, br' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    // Fathom's promise, and Plumb's: the default tag under 2 KB gzipped (the extensions are /script.ext.js).
    assert.ok(gz.rawPayload.length < 2048, `gzipped size ${gz.rawPayload.length}`);
    assert.equal(gunzipSync(gz.rawPayload).toString(), plain.body);
    const cached = await t.app.inject({ method: 'GET', url: '/script.js', headers: { 'if-none-match': String(plain.headers.etag) } });
    assert.equal(cached.statusCode, 304);
  });

  it('serves /script.ext.js, the outbound-link, file-download and 404 extensions, the same way', async () => {
    const plain = await t.app.inject({ method: 'GET', url: '/script.ext.js' });
    assert.equal(plain.statusCode, 200);
    assert.match(String(plain.headers['content-type']), /javascript/);
    assert.equal(plain.headers['access-control-allow-origin'], '*');
    assert.match(plain.body, /Outbound Link: Click/);
    assert.ok(!plain.body.includes('\n  '), 'minified');
    const gz = await t.app.inject({ method: 'GET', url: '/script.ext.js', headers: { 'accept-encoding': 'gzip' } });
    assert.equal(gz.headers['content-encoding'], 'gzip');
    assert.equal(gunzipSync(gz.rawPayload).toString(), plain.body);
    const cached = await t.app.inject({ method: 'GET', url: '/script.ext.js', headers: { 'if-none-match': String(plain.headers.etag) } });
    assert.equal(cached.statusCode, 304);
  });
});

describe('collector client addresses', () => {
  // The client is 81.2.69.142 (GB) behind a proxy at 10.1.2.3, which the server sees as 127.0.0.1.
  for (const [trustProxy, expected] of [
    [false, ''],
    [true, 'GB'],
    [2, 'GB'],
    [1, ''],
    ['127.0.0.1,10.0.0.0/8', 'GB'],
    ['127.0.0.1', ''],
  ] as const) {
    it(`reads the client from X-Forwarded-For ${expected ? 'as' : 'not past what'} PLUMB_TRUST_PROXY=${trustProxy} says, in the route and the fast lane`, async () => {
      const t = await startTestApp({ trustProxy });
      const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Proxy' })).body.id;
      const url = `/?${query({ sid: site, h: 'https://www.example.com', p: '/' })}`;
      const headers = { 'user-agent': CHROME, 'x-forwarded-for': '81.2.69.142, 10.1.2.3' };
      await t.app.inject({ method: 'GET', url, headers });
      // Over a socket, the same hit takes the collector's fast lane (test/http/collector-lane.test.ts).
      const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
      assert.equal((await fetch(base + url, { headers })).status, 200);
      await t.flushHits();
      assert.deepEqual((await t.events.listHits(site)).map((h) => h.countryCode), [expected, expected]);
      await t.close();
    });
  }
});

describe('collector back-pressure', () => {
  it('answers 503 with Retry-After while the write buffer is full, and accepts again once written', async () => {
    const t = await startTestApp({ buffer: { maxPending: 3, batchSize: 1000, flushIntervalMs: 3_600_000 } });
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Busy' })).body.id;
    const send = () => t.app.inject({ method: 'GET', url: `/?${query({ sid: site, h: 'https://www.example.com', p: '/' })}`, headers: { 'user-agent': CHROME } });
    for (let i = 0; i < 3; i++) assert.equal((await send()).statusCode, 200);
    const busy = await send();
    assert.equal(busy.statusCode, 503);
    assert.equal(busy.headers['retry-after'], '1');
    await t.flushHits();
    assert.equal((await send()).statusCode, 200);
    await t.flushHits();
    assert.equal((await t.events.listHits(site)).length, 4, 'every accepted hit was kept, the refused one was not');
    await t.close();
  });
});
