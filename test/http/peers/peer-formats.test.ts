// Plausible's Events API (POST /api/event) and Umami's collection endpoint (POST /api/send) with the exact bodies
// their scripts and documented server-side senders send, recorded as Plumb hits and counted in reports; their
// script paths; and every malformed body answered in the format's own error shape, never a 500.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../../helpers/app.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_4 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.4 Mobile/15E148 Safari/604.1';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const UMAMI_ID = '94db1cb1-74f4-4a40-ad6c-962362670409';

describe('Plausible and Umami formats', () => {
  let t: TestApp;
  let shop: string;
  let blog: string;
  let other: string;

  const plausible = (body: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/event',
      // Plausible's script sends JSON as text/plain (no CORS preflight).
      headers: { 'user-agent': CHROME, 'content-type': 'text/plain', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const umami = (body: unknown, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/api/send',
      headers: { 'user-agent': CHROME, 'content-type': 'application/json', ...headers },
      payload: typeof body === 'string' ? body : JSON.stringify(body),
    });
  const stored = async (site: string) => {
    await t.flushHits();
    return t.events.listHits(site);
  };
  const count = async (site: string, aggregates = 'pageviews,visits') => {
    await t.flushHits();
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=${aggregates}&date_from=2000-01-01`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body[0];
  };
  const metric = async (pattern: RegExp) => {
    const text = (await t.app.inject({ method: 'GET', url: '/metrics' })).body;
    const line = text.split('\n').find((l) => pattern.test(l));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  before(async () => {
    t = await startTestApp();
    const create = async (body: object) => {
      const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', body);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.id as string;
    };
    shop = await create({ name: 'Shop', domain: 'shop.example' });
    blog = await create({ name: 'Blog', domain: 'blog.example', umami_website_id: UMAMI_ID });
    other = await create({ name: 'Other', domain: 'other.example,www.other.example' });
  });
  after(() => t.close());

  describe('POST /api/event (Plausible)', () => {
    it("records the script's pageview (short keys, text/plain) and answers 202 ok", async () => {
      const res = await plausible({
        n: 'pageview',
        v: 25,
        u: 'https://shop.example/pricing/?utm_source=hn&utm_medium=social&utm_campaign=launch',
        d: 'shop.example',
        r: 'https://news.ycombinator.com/item?id=1',
        w: 1440,
      });
      assert.equal(res.statusCode, 202);
      assert.equal(res.body, 'ok');
      assert.equal(res.headers['access-control-allow-origin'], '*');
      const [h] = await stored(shop);
      assert.deepEqual(
        [h?.type, h?.hostname, h?.pathname, h?.referrerHostname, h?.referrerSource, h?.utmSource, h?.utmMedium, h?.utmCampaign, h?.browser, h?.deviceType],
        ['pageview', 'https://shop.example', '/pricing', 'https://news.ycombinator.com', 'Hacker News', 'hn', 'social', 'launch', 'Chrome', 'Desktop'],
      );
    });

    it('records custom events with props, revenue in cents, and continues the visit of the same visitor', async () => {
      assert.equal((await plausible({ n: 'Signup', u: 'https://shop.example/signup', d: 'shop.example', r: null, p: { plan: 'pro' } })).statusCode, 202);
      const purchase = { n: 'Purchase', u: 'https://shop.example/checkout', d: 'shop.example', r: null, $: { amount: '12.99', currency: 'EUR' } };
      assert.equal((await plausible(purchase)).statusCode, 202);
      // A Fathom-format event from the same browser joins the same visit: one pipeline for every format.
      await t.app.inject({ method: 'POST', url: `/?sid=${shop}&h=https%3A%2F%2Fshop.example&p=%2Fthanks&name=Thanks`, headers: { 'user-agent': CHROME } });
      const hits = await stored(shop);
      assert.deepEqual(hits.map((h) => [h.type, h.pathname, h.eventName, h.value]), [
        ['pageview', '/pricing', '', 0],
        ['event', '/signup', 'Signup', 0],
        ['event', '/checkout', 'Purchase', 1299],
        ['event', '/thanks', 'Thanks', 0],
      ]);
      assert.equal(new Set(hits.map((h) => h.visitId)).size, 1);
      // Attribution is the visit's: the later events carry the first pageview's campaign.
      assert.deepEqual([...new Set(hits.map((h) => h.utmSource))], ['hn']);
      const goals = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${shop}/events`)).body.data.map((g: { name: string }) => g.name);
      assert.deepEqual(goals.sort(), ['Purchase', 'Signup', 'Thanks']);
    });

    it('takes the documented server-side body (long keys, application/json) with revenue as a number', async () => {
      const res = await plausible(
        { name: 'pageview', url: 'https://shop.example/from-server', domain: 'shop.example', referrer: 'https://duckduckgo.com/' },
        { 'content-type': 'application/json', 'user-agent': IPHONE },
      );
      assert.equal(res.statusCode, 202);
      const order = { name: 'Order', url: 'https://shop.example/order', domain: 'shop.example', revenue: { amount: 1322.22, currency: 'USD' } };
      assert.equal((await plausible(order, { 'content-type': 'application/json', 'user-agent': IPHONE })).statusCode, 202);
      const hits = (await stored(shop)).filter((h) => h.deviceType === 'Mobile');
      assert.deepEqual(hits.map((h) => [h.type, h.pathname, h.referrerSource, h.eventName, h.value]), [
        ['pageview', '/from-server', 'DuckDuckGo', '', 0],
        ['event', '/order', 'DuckDuckGo', 'Order', 132222],
      ]);
    });

    it('is counted in reports like any pageview', async () => {
      assert.deepEqual(await count(shop), { pageviews: '2', visits: '2' });
    });

    it('keeps the hash route in hash mode (h: 1) only', async () => {
      const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'SPA', domain: 'spa.example' })).body.id;
      await plausible({ n: 'pageview', u: 'https://spa.example/#/settings', d: 'spa.example', r: null, h: 1 });
      await plausible({ n: 'pageview', u: 'https://spa.example/app#/profile', d: 'spa.example', r: null });
      assert.deepEqual((await stored(site)).map((h) => h.pathname), ['/#/settings', '/app']);
    });

    it('sends one hit to every site of a comma-separated domain, once per site, with or without www.', async () => {
      const res = await plausible({ n: 'pageview', u: 'https://www.other.example/rollup', d: 'other.example,www.other.example,blog.example', r: null });
      assert.equal(res.statusCode, 202);
      assert.deepEqual((await stored(other)).map((h) => h.pathname), ['/rollup']);
      assert.deepEqual((await stored(blog)).map((h) => h.pathname), ['/rollup']);
      // www. on one side only still finds the site.
      await plausible({ n: 'pageview', u: 'https://www.shop.example/www', d: 'www.shop.example', r: null });
      assert.ok((await stored(shop)).some((h) => h.pathname === '/www'));
      // Without a domain, the page's host names the site (as Plausible does).
      await plausible({ n: 'pageview', u: 'https://other.example/no-domain', r: null });
      assert.ok((await stored(other)).some((h) => h.pathname === '/no-domain'));
    });

    it('answers unknown domains and bots like recorded ones, storing nothing', async () => {
      const dropsBefore = await metric(/plumb_hits_dropped_total\{reason="unknown-site"\}/);
      const before = (await stored(shop)).length;
      for (const [body, ua] of [
        [{ n: 'pageview', u: 'https://nobody.example/', d: 'nobody.example', r: null }, CHROME],
        [{ n: 'pageview', u: 'https://shop.example/bot', d: 'shop.example', r: null }, GOOGLEBOT],
      ] as const) {
        const res = await plausible(body, { 'user-agent': ua });
        assert.equal(res.statusCode, 202);
        assert.equal(res.body, 'ok');
        assert.equal(res.headers['x-plausible-dropped'], undefined);
      }
      assert.equal((await stored(shop)).length, before);
      assert.equal(await metric(/plumb_hits_dropped_total\{reason="unknown-site"\}/), dropsBefore + 1);
    });

    it('stores an engagement event as the engagement of its visit, never as a pageview', async () => {
      const before = await count(shop);
      const res = await plausible({ n: 'engagement', u: 'https://shop.example/pricing', d: 'shop.example', r: null, sd: 40, e: 1200 }, { 'user-agent': CHROME });
      assert.equal(res.statusCode, 202);
      const engaged = (await stored(shop)).filter((h) => h.type === 'engagement');
      assert.deepEqual(engaged.map((h) => [h.pathname, h.scrollDepth, h.engagedMs]), [['/pricing', 40, 1200]]);
      assert.deepEqual(await count(shop), before);
    });

    it('answers CORS preflights', async () => {
      const res = await t.app.inject({ method: 'OPTIONS', url: '/api/event', headers: { origin: 'https://shop.example', 'access-control-request-method': 'POST' } });
      assert.equal(res.statusCode, 204);
      assert.equal(res.headers['access-control-allow-origin'], '*');
    });

    const bad: [string, string, string][] = [
      ['a body that is not JSON', '{"n":', 'request'],
      ['a JSON array', '[]', 'request'],
      ['an empty body', '', 'request'],
      ['no event name', JSON.stringify({ u: 'https://shop.example/', d: 'shop.example' }), 'event_name'],
      ['an event name over 255 characters', JSON.stringify({ n: 'x'.repeat(256), u: 'https://shop.example/', d: 'shop.example' }), 'event_name'],
      ['no url', JSON.stringify({ n: 'pageview', d: 'shop.example' }), 'url'],
      ['a relative url', JSON.stringify({ n: 'pageview', u: '/pricing', d: 'shop.example' }), 'url'],
      ['a data: url', JSON.stringify({ n: 'pageview', u: 'data:text/html,hi', d: 'shop.example' }), 'url'],
      ['a url that is a number', JSON.stringify({ n: 'pageview', u: 5, d: 'shop.example' }), 'url'],
      ['an empty domain', JSON.stringify({ n: 'pageview', u: 'https://shop.example/', d: ' ' }), 'domain'],
      ['a domain that is an object', JSON.stringify({ n: 'pageview', u: 'https://shop.example/', d: { a: 1 } }), 'domain'],
      ['too many domains', JSON.stringify({ n: 'pageview', u: 'https://shop.example/', d: Array.from({ length: 21 }, (_, i) => `d${i}.example`).join(',') }), 'domain'],
      ['a referrer that is a list', JSON.stringify({ n: 'pageview', u: 'https://shop.example/', d: 'shop.example', r: ['x'] }), 'referrer'],
      ['prototype keys only', '{"__proto__":{"n":"pageview"},"constructor":{"u":"https://shop.example/"}}', 'event_name'],
    ];
    for (const [what, body, field] of bad) {
      it(`refuses ${what}: 400 {errors: {${field}: [...]}}`, async () => {
        const before = (await stored(shop)).length;
        const res = await plausible(body);
        assert.equal(res.statusCode, 400, res.body);
        assert.ok(Array.isArray(res.json().errors?.[field]), res.body);
        assert.equal((await stored(shop)).length, before);
      });
    }

    it('refuses a body over 64 KiB with 413 in the error shape', async () => {
      const res = await plausible({ n: 'pageview', u: 'https://shop.example/', d: 'shop.example', p: { big: 'x'.repeat(70_000) } });
      assert.equal(res.statusCode, 413);
      assert.equal(typeof res.json().error, 'string');
    });
  });

  describe('POST /api/send (Umami)', () => {
    const payload = (extra: object = {}) => ({
      website: UMAMI_ID,
      screen: '1920x1080',
      language: 'en-GB',
      title: 'A post',
      hostname: 'blog.example',
      url: 'https://blog.example/posts/1?utm_source=mastodon&utm_campaign=spring',
      referrer: 'https://t.co/abc',
      tag: 'variant-b',
      ...extra,
    });

    it("records the script's pageview and event and answers 200 JSON", async () => {
      const res = await umami({ type: 'event', payload: payload() }, { 'user-agent': IPHONE });
      assert.equal(res.statusCode, 200);
      assert.deepEqual(res.json(), {});
      assert.equal(res.headers['access-control-allow-origin'], '*');
      const event = await umami({ type: 'event', payload: payload({ name: 'Subscribe', data: { revenue: 5.5, currency: 'EUR', plan: 'yearly' } }) }, { 'user-agent': IPHONE });
      assert.equal(event.statusCode, 200);
      const hits = (await stored(blog)).filter((h) => h.pathname === '/posts/1');
      assert.deepEqual(hits.map((h) => [h.type, h.hostname, h.eventName, h.value, h.utmSource, h.utmCampaign, h.referrerSource, h.deviceType]), [
        ['pageview', 'https://blog.example', '', 0, 'mastodon', 'spring', 'Twitter', 'Mobile'],
        ['event', 'https://blog.example', 'Subscribe', 550, 'mastodon', 'spring', 'Twitter', 'Mobile'],
      ]);
      assert.equal(new Set(hits.map((h) => h.visitId)).size, 1);
    });

    it("takes older scripts' path-only url with hostname, the website id in any case, and a Plumb site id", async () => {
      await umami({ type: 'event', payload: payload({ website: UMAMI_ID.toUpperCase(), url: '/about?x=1', referrer: '' }) });
      await umami({ type: 'event', payload: payload({ website: blog, url: '/contact', referrer: '' }) });
      const paths = (await stored(blog)).map((h) => [h.hostname, h.pathname]);
      assert.deepEqual(paths.slice(-2), [['https://blog.example', '/about'], ['https://blog.example', '/contact']]);
    });

    it('is counted in reports', async () => {
      assert.deepEqual(await count(blog, 'pageviews'), { pageviews: '4' });
    });

    it("accepts identify and unknown websites without recording, and answers preflights allowing Umami's headers", async () => {
      const before = (await stored(blog)).length;
      assert.equal((await umami({ type: 'identify', payload: payload({ id: 'user-1', data: { plan: 'pro' } }) })).statusCode, 200);
      const unknown = await umami({ type: 'event', payload: payload({ website: '00000000-0000-4000-8000-000000000000' }) });
      assert.deepEqual([unknown.statusCode, unknown.json()], [200, {}]);
      assert.equal((await stored(blog)).length, before);
      const pre = await t.app.inject({ method: 'OPTIONS', url: '/api/send', headers: { origin: 'https://blog.example', 'access-control-request-method': 'POST' } });
      assert.equal(pre.statusCode, 204);
      const allowed = String(pre.headers['access-control-allow-headers']).toLowerCase().split(/,\s*/);
      for (const header of ['content-type', 'x-umami-website-id', 'x-umami-hostname', 'x-umami-cache']) assert.ok(allowed.includes(header), header);
    });

    const bad: [string, string][] = [
      ['a body that is not JSON', 'nope'],
      ['no type', JSON.stringify({ payload: payload() })],
      ['an unknown type', JSON.stringify({ type: 'pageview', payload: payload() })],
      ['no payload', JSON.stringify({ type: 'event' })],
      ['a payload that is a list', JSON.stringify({ type: 'event', payload: [] })],
      ['no website', JSON.stringify({ type: 'event', payload: payload({ website: undefined }) })],
      ['a protocol-relative url without hostname', JSON.stringify({ type: 'event', payload: payload({ url: '//elsewhere.example/x', hostname: undefined }) })],
      ['a javascript: url', JSON.stringify({ type: 'event', payload: payload({ url: 'javascript:alert(1)' }) })],
      ['an event name over 255 characters', JSON.stringify({ type: 'event', payload: payload({ name: 'n'.repeat(256) }) })],
      ['a url that is a number', JSON.stringify({ type: 'event', payload: payload({ url: 7 }) })],
    ];
    for (const [what, body] of bad) {
      it(`refuses ${what}: 400 {error}`, async () => {
        const res = await umami(body);
        assert.equal(res.statusCode, 400, res.body);
        assert.equal(typeof res.json().error, 'string');
      });
    }
  });

  describe('custom properties', () => {
    let site: string;
    const PROPS_UMAMI = '0c1d2e3f-4a5b-4c6d-8e7f-9a0b1c2d3e4f';
    before(async () => {
      const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Props', domain: 'props.example', umami_website_id: PROPS_UMAMI });
      site = res.body.id as string;
    });
    /** The stored properties of the newest hit of the site (the write buffer flushed first). */
    const lastProps = async () => (await stored(site)).at(-1)?.props ?? [];
    const event = (extra: object) => ({ n: 'Signup', u: 'https://props.example/signup', d: 'props.example', ...extra });

    it("reads Plausible's p, props, m and meta (the first given), as an object or a JSON text, on events and pageviews", async () => {
      for (const [body, expected] of [
        [event({ p: { plan: 'pro', seats: 3, trial: true } }), [['plan', 'pro'], ['seats', '3'], ['trial', 'true']]],
        [event({ props: '{"plan":"team"}' }), [['plan', 'team']]],
        [event({ m: { from: 'm' }, p: { from: 'p' } }), [['from', 'm']]],
        [event({ meta: { from: 'meta' } }), [['from', 'meta']]],
        // The pageview-props script: properties of a pageview.
        [{ n: 'pageview', u: 'https://props.example/post', d: 'props.example', p: { author: 'Jo' } }, [['author', 'Jo']]],
      ] as const) {
        assert.equal((await plausible(body)).statusCode, 202);
        assert.deepEqual(await lastProps(), expected, JSON.stringify(body));
      }
    });

    it('drops unusable and over-limit properties, never the event: nested values, blanks, long keys and values, past 30', async () => {
      const p: Record<string, unknown> = { nested: { a: 1 }, list: [1], nul: null, blank: '', [' '.repeat(3)]: 'x', ['k'.repeat(301)]: 'v', long: 'v'.repeat(2001), ok: 'yes' };
      for (let i = 0; i < 40; i++) p[`p${i}`] = `v${i}`;
      const res = await plausible(event({ p }));
      assert.equal(res.statusCode, 202);
      const props = await lastProps();
      assert.equal(props.length, 30);
      assert.deepEqual(props.slice(0, 2), [['ok', 'yes'], ['p0', 'v0']]);
      // Unreadable props (not an object, broken JSON) are no props; the event is still recorded.
      for (const bad of [[1, 2], 'not json', 42]) {
        const before = (await stored(site)).length;
        assert.equal((await plausible(event({ p: bad }))).statusCode, 202);
        const hits = await stored(site);
        assert.equal(hits.length, before + 1);
        assert.equal(hits.at(-1)?.props, undefined);
      }
    });

    it('keeps hostile keys and values as plain text: prototype names, SQL and regex metacharacters, unicode', async () => {
      const sql = "'); DROP TABLE hits; --";
      const p = { constructor: 'c', [sql]: '.*+?()[]{}|^$\\', 'ü 😀': '\u0000\n' };
      // `__proto__` written into the JSON text: an object literal here would set the prototype instead.
      const body = JSON.stringify(event({ p })).replace('"p":{', '"p":{"__proto__":"p",');
      assert.equal((await plausible(body)).statusCode, 202);
      assert.deepEqual(await lastProps(), [['__proto__', 'p'], ...Object.entries(p)]);
      assert.equal(({} as Record<string, unknown>).p, undefined);
    });

    it("reads Umami's data without its revenue keys, flattening nested objects, on events and pageviews", async () => {
      const payload = { website: PROPS_UMAMI, hostname: 'props.example', url: 'https://props.example/u' };
      const res = await umami({ type: 'event', payload: { ...payload, name: 'Buy', data: { revenue: 9, currency: 'EUR', plan: 'pro', cart: { items: 2 }, tags: ['a'] } } });
      assert.equal(res.statusCode, 200);
      const [last] = (await stored(site)).slice(-1);
      assert.deepEqual([last?.eventName, last?.value, last?.props], ['Buy', 900, [['plan', 'pro'], ['cart.items', '2'], ['tags', '["a"]']]]);
      assert.equal((await umami({ type: 'event', payload: { ...payload, data: { author: 'Jo' } } })).statusCode, 200);
      assert.deepEqual(await lastProps(), [['author', 'Jo']]);
    });

    it("reads the collector's event payload: _value is the value, other keys are properties", async () => {
      const send = (payload: string) =>
        t.app.inject({ method: 'POST', url: `/?sid=${site}&h=https%3A%2F%2Fprops.example&p=%2Ff&name=Signup&payload=${encodeURIComponent(payload)}`, headers: { 'user-agent': CHROME } });
      assert.equal((await send('{"_value":1299,"plan":"pro","n":2,"nested":{"a":1}}')).statusCode, 204);
      const [last] = (await stored(site)).slice(-1);
      assert.deepEqual([last?.value, last?.props], [1299, [['plan', 'pro'], ['n', '2']]]);
      assert.equal((await send('{"__proto__":{"x":1},"url":"https://example.org/"}')).statusCode, 204);
      assert.deepEqual(await lastProps(), [['url', 'https://example.org/']]);
      assert.equal((await send('[1]')).statusCode, 400, 'a payload must still be a JSON object');
    });
  });

  describe('script paths', () => {
    it("serves the Plausible-compatible tracker at Plausible's paths, one build per set of extensions", async () => {
      const plain = await t.app.inject({ method: 'GET', url: '/js/script.js' });
      assert.equal(plain.statusCode, 200);
      assert.match(String(plain.headers['content-type']), /javascript/);
      assert.match(plain.body, /api\/event/);
      assert.doesNotMatch(plain.body, /hashchange/);
      const combined = await t.app.inject({ method: 'GET', url: '/js/script.outbound-links.hash.file-downloads.js' });
      assert.equal(combined.statusCode, 200);
      assert.match(combined.body, /hashchange/);
      assert.match(combined.body, /Outbound Link: Click/);
      assert.match(combined.body, /File Download/);
      const sameSet = await t.app.inject({ method: 'GET', url: '/js/script.hash.file-downloads.outbound-links.js' });
      assert.equal(sameSet.headers.etag, combined.headers.etag);
      for (const url of ['/js/plausible.js', '/js/script.tagged-events.revenue.manual.local.exclusions.compat.pageview-props.js']) {
        assert.equal((await t.app.inject({ method: 'GET', url })).statusCode, 200, url);
      }
      const gz = await t.app.inject({ method: 'GET', url: '/js/script.js', headers: { 'accept-encoding': 'gzip' } });
      assert.equal(gz.headers['content-encoding'], 'gzip');
      assert.equal((await t.app.inject({ method: 'GET', url: '/js/script.js', headers: { 'if-none-match': String(plain.headers.etag) } })).statusCode, 304);
    });

    it('serves the Umami-compatible tracker, and answers 404 JSON for unknown scripts', async () => {
      const res = await t.app.inject({ method: 'GET', url: '/js/umami.js' });
      assert.equal(res.statusCode, 200);
      assert.match(res.body, /api\/send/);
      for (const url of ['/js/script.nope.js', '/js/other.js', '/js/script..js', `/js/script${'.hash'.repeat(20)}.js`]) {
        const miss = await t.app.inject({ method: 'GET', url });
        assert.equal(miss.statusCode, 404, url);
        assert.equal(typeof miss.json().error, 'string');
      }
    });
  });
});
