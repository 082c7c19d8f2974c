// The browser tracker (src/tracker/tracker.js) in real headless Chromium: the wire format it sends, its tag
// attributes, the window.fathom API, SPA modes, opt-outs, the fathom-client npm package driving it, and its
// extensions (src/tracker/extensions.js: outbound links, file downloads, 404s), loaded only by the tags asking.
//
// A small node:http server plays both the website (pages on http://a.localhost:PORT and http://b.localhost:PORT;
// Chromium resolves *.localhost to loopback) and the collector (http://127.0.0.1:PORT/script.js, /script.ext.js
// and GET/POST http://127.0.0.1:PORT/?...), recording every collector request it receives.

import assert from 'node:assert/strict';
import { createServer, get as httpGet, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { gunzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import { buildScript, buildTrackerScript } from '../../src/http/tracker-script.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, desktopChromeUserAgent, launchBrowser, openPage } from './browser.js';
import { ROOT } from '../helpers/root.js';

const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');
const EXTERNAL_REFERRER = 'https://www.google.com/';

/** Fathom's promise, and Plumb's: the default tag under 2 KB gzipped. */
const TWO_KB = 2048;

/** An answer's status, headers and body bytes exactly as they came over the socket (fetch would decompress them). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ status: number; headers: IncomingMessage['headers']; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    }).on('error', reject);
  });
}

/** fathom-client bundled for the browser: loads the tracker from window.SCRIPT_URL and calls it at once. */
async function fathomClientBundle(): Promise<string> {
  const result = await build({
    stdin: {
      contents: `
        import * as Fathom from 'fathom-client';
        Fathom.load(window.SITE_ID, { url: window.SCRIPT_URL, spa: 'auto' });
        Fathom.trackPageview();
        Fathom.trackEvent('Signup', { _value: 1299 });
        Fathom.trackGoal('ABCDEFGH', 500);
        window.Fathom = Fathom;
      `,
      resolveDir: ROOT,
      loader: 'js',
    },
    bundle: true,
    format: 'iife',
    write: false,
  });
  return result.outputFiles[0]!.text;
}

interface Hit {
  method: string;
  /** Host header the collector saw. */
  host: string;
  params: Record<string, string>;
  /** Parameter names, sorted. */
  keys: string[];
}

/** The website and the collector in one node:http server. */
class TestSite {
  server!: Server;
  port = 0;
  hits: Hit[] = [];
  /** HTML by pathname, whatever the host. */
  pages = new Map<string, string>();
  /** A Content-Security-Policy header by pathname, for the pages that have one. */
  policies = new Map<string, string>();
  /** Held until this settles before /script.js answers, so that calls happen before the tracker has loaded. */
  scriptGate: Promise<void> | undefined;
  tracker = '';
  extensions = '';
  client = '';

  async start(): Promise<void> {
    // The scripts as the server builds them (src/http/tracker-script.ts).
    const [tracker, extensions, client] = await Promise.all([buildTrackerScript(), buildScript('extensions.js'), fathomClientBundle()]);
    [this.tracker, this.extensions, this.client] = [tracker.source, extensions.source, client];
    this.server = createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
  }

  stop(): Promise<void> {
    this.server.closeAllConnections();
    return new Promise((resolve) => this.server.close(() => resolve()));
  }

  get scriptUrl(): string {
    return `http://127.0.0.1:${this.port}/script.js`;
  }

  url(host: 'a' | 'b', pathAndQuery: string): string {
    return `http://${host}.localhost:${this.port}${pathAndQuery}`;
  }

  origin(host: 'a' | 'b'): string {
    return `http://${host}.localhost:${this.port}`;
  }

  hitsFor(sid: string): Hit[] {
    return this.hits.filter((h) => h.params.sid === sid);
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://x');
    // Drain any body (beacons have none, but be safe).
    for await (const _ of req);
    if (url.pathname === '/' && url.search !== '') {
      const params = Object.fromEntries(url.searchParams);
      this.hits.push({ method: req.method ?? '', host: req.headers.host ?? '', params, keys: Object.keys(params).sort() });
      if (req.method === 'GET') res.writeHead(200, { 'content-type': 'image/gif', 'cache-control': 'no-store' }).end(GIF);
      else res.writeHead(204).end();
      return;
    }
    if (url.pathname === '/script.js') {
      await this.scriptGate;
      res.writeHead(200, { 'content-type': 'application/javascript' }).end(this.tracker);
      return;
    }
    if (url.pathname === '/script.ext.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' }).end(this.extensions);
      return;
    }
    if (url.pathname === '/client.js') {
      res.writeHead(200, { 'content-type': 'application/javascript' }).end(this.client);
      return;
    }
    const html = this.pages.get(url.pathname);
    if (html === undefined) {
      res.writeHead(404).end();
      return;
    }
    const policy = this.policies.get(url.pathname);
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', ...(policy ? { 'content-security-policy': policy } : {}) }).end(html);
  }
}

let siteCounter = 0;
/** A fresh site id per test, so hits of different tests never mix. */
function newSiteId(): string {
  siteCounter += 1;
  let n = siteCounter;
  let id = '';
  for (let i = 0; i < 8; i++) {
    id = String.fromCharCode(65 + (n % 26)) + id;
    n = Math.floor(n / 26);
  }
  return id;
}

function attrs(values: Record<string, string>): string {
  return Object.entries(values)
    .map(([k, v]) => `${k}="${v.replace(/&/g, '&amp;').replace(/"/g, '&quot;')}"`)
    .join(' ');
}

function pageHtml(scriptUrl: string, scriptAttrs: Record<string, string>, head = '', body = ''): string {
  return `<!doctype html><html><head><meta charset="utf-8"><title>t</title>${head}` +
    `<script src="${scriptUrl}" ${attrs(scriptAttrs)}></script></head><body><h1>test</h1>${body}</body></html>`;
}

function assertPageview(hit: Hit | undefined, expected: { h: string; p: string; r: string; qs: object; sid: string }): void {
  assert.ok(hit, 'expected a pageview');
  assert.equal(hit.method, 'GET');
  assert.deepEqual(hit.keys, ['cid', 'h', 'p', 'qs', 'r', 'sid']);
  assert.match(hit.params.cid!, /^\d+$/);
  assert.deepEqual(
    { h: hit.params.h, p: hit.params.p, r: hit.params.r, qs: JSON.parse(hit.params.qs!), sid: hit.params.sid },
    expected,
  );
}

const skip = browserSkipReason();

describe('tracker (script.js) in Chromium against a recording collector', { skip }, () => {
  const site = new TestSite();
  let browser: Browser;
  const pages: Page[] = [];

  before(async () => {
    await site.start();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await site.stop();
  });

  /** Serves `html` at `path`, opens it on host `a` (or `b`) in a fresh context and waits for the tracker. */
  async function visit(
    path: string,
    html: string,
    options: { host?: 'a' | 'b'; query?: string; hash?: string; referer?: string; initScript?: string; page?: Page } = {},
  ): Promise<Page & { errors: string[] }> {
    site.pages.set(path, html);
    const page = (options.page ?? (await openPage(browser, options.initScript === undefined ? {} : { initScript: options.initScript }))) as Page & {
      errors: string[];
    };
    pages.push(page);
    await page.goto(site.url(options.host ?? 'a', path + (options.query ?? '') + (options.hash ?? '')), {
      referer: options.referer ?? EXTERNAL_REFERRER,
    });
    await page.waitForFunction('typeof window.fathom === "function" && typeof window.fathom.trackPageview === "function"');
    return page;
  }

  /** Waits until `sid` has at least `count` hits, then a little longer so that extra hits would show up. */
  async function hitsFor(sid: string, count: number, settleMs = 400): Promise<Hit[]> {
    const deadline = Date.now() + 5_000;
    while (site.hitsFor(sid).length < count && Date.now() < deadline) await sleep(20);
    await sleep(settleMs);
    return site.hitsFor(sid);
  }

  after(async () => {
    for (const page of pages) await closePage(page).catch(() => {});
  });

  test('the default script, as the server builds it, is under 2 KB gzipped', async () => {
    const size = (await buildTrackerScript()).gzipped.length;
    assert.ok(size < TWO_KB, `gzipped size ${size} bytes`);
  });

  test('automatic pageview: h with scheme, p, external r, qs with only the kept parameters, sid, cid', async () => {
    const sid = newSiteId();
    const page = await visit('/blog/post', pageHtml(site.scriptUrl, { 'data-site': sid, defer: '' }), {
      query: '?utm_source=news&utm_medium=email&utm_campaign=spring%20sale&utm_content=c&utm_term=t&ref=hn&source=s&via=v&keyword=k&kw=w&foo=bar&q=secret',
      referer: 'https://news.ycombinator.com/item?id=1',
    });
    const hits = await hitsFor(sid, 1);
    assert.equal(hits.length, 1);
    assertPageview(hits[0], {
      h: site.origin('a'),
      p: '/blog/post',
      r: 'https://news.ycombinator.com/item?id=1',
      qs: {
        utm_source: 'news',
        utm_medium: 'email',
        utm_campaign: 'spring sale',
        utm_content: 'c',
        utm_term: 't',
        ref: 'hn',
        source: 's',
        via: 'v',
        keyword: 'k',
        kw: 'w',
      },
      sid,
    });
    assert.equal(hits[0]!.host, `127.0.0.1:${site.port}`, 'sent to the script origin');
    assert.deepEqual(page.errors, []);
  });

  test('a referrer from the same host is not sent; no query gives qs {}', async () => {
    const sid = newSiteId();
    await visit('/same-host', pageHtml(site.scriptUrl, { 'data-site': sid }), { referer: site.url('a', '/elsewhere') });
    const hits = await hitsFor(sid, 1);
    assert.equal(hits.length, 1);
    assertPageview(hits[0], { h: site.origin('a'), p: '/same-host', r: '', qs: {}, sid });
  });

  test('the site attribute without data- prefix works too', async () => {
    const sid = newSiteId();
    await visit('/plain-attr', pageHtml(site.scriptUrl, { site: sid }));
    const hits = await hitsFor(sid, 1);
    assert.equal(hits.length, 1);
    assert.equal(hits[0]!.params.p, '/plain-attr');
  });

  test('data-auto="false": no automatic pageview; trackPageview() sends one', async () => {
    const sid = newSiteId();
    const page = await visit('/manual', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-auto': 'false' }));
    assert.equal((await hitsFor(sid, 0)).length, 0);
    await page.evaluate('fathom.trackPageview()');
    const hits = await hitsFor(sid, 1);
    assert.equal(hits.length, 1);
    assertPageview(hits[0], { h: site.origin('a'), p: '/manual', r: EXTERNAL_REFERRER, qs: {}, sid });
  });

  test('trackPageview with url (absolute or path) and referrer overrides', async () => {
    const sid = newSiteId();
    const page = await visit('/overrides', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-auto': 'false' }), {
      query: '?utm_source=page',
    });
    await page.evaluate(`fathom.trackPageview({ url: 'https://shop.example.com/cart/view?utm_campaign=x&other=1', referrer: 'https://ref.example.org/a' })`);
    await hitsFor(sid, 1, 0);
    await page.evaluate(`fathom.trackPageview({ url: '/virtual/path' })`);
    await hitsFor(sid, 2, 0);
    await page.evaluate(`fathom.trackPageview({ referrer: 'https://other.example.net/' })`);
    const hits = await hitsFor(sid, 3);
    assert.equal(hits.length, 3);
    assertPageview(hits[0], {
      h: 'https://shop.example.com',
      p: '/cart/view',
      r: 'https://ref.example.org/a',
      qs: { utm_source: 'page', utm_campaign: 'x' },
      sid,
    });
    // Not the first pageview of the document any more: the external document.referrer is not repeated.
    assertPageview(hits[1], { h: site.origin('a'), p: '/virtual/path', r: '', qs: { utm_source: 'page' }, sid });
    assertPageview(hits[2], { h: site.origin('a'), p: '/overrides', r: 'https://other.example.net/', qs: { utm_source: 'page' }, sid });
  });

  test('data-spa="history": pushState, replaceState and popstate send pageviews, never the same URL twice in a row', async () => {
    const sid = newSiteId();
    const page = await visit('/spa/one', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-spa': 'history' }));
    await hitsFor(sid, 1, 0);
    await page.evaluate(`history.pushState({}, '', '/spa/two')`);
    await hitsFor(sid, 2, 0);
    await page.evaluate(`history.pushState({}, '', '/spa/two')`); // same URL: nothing
    await page.evaluate(`history.pushState({}, '', '/spa/two#section')`); // only the hash: same p, nothing
    await page.evaluate(`history.replaceState({}, '', '/spa/three?utm_source=x')`);
    await hitsFor(sid, 3, 0);
    await page.evaluate(`fathom.trackPageview()`); // same URL as the last pageview: nothing
    await page.evaluate(`history.back()`); // popstate back to /spa/two#section
    await hitsFor(sid, 4, 0);
    await page.evaluate(`history.back()`); // /spa/two: same p as the last one, nothing
    await page.evaluate(`history.back()`); // /spa/one
    const hits = await hitsFor(sid, 5);
    assert.deepEqual(
      hits.map((h) => [h.params.p, h.params.qs, h.params.r]),
      [
        ['/spa/one', '{}', EXTERNAL_REFERRER],
        ['/spa/two', '{}', ''],
        ['/spa/three', '{"utm_source":"x"}', ''],
        ['/spa/two', '{}', ''],
        ['/spa/one', '{}', ''],
      ],
    );
    for (const hit of hits) assert.equal(hit.method, 'GET');
  });

  test('data-spa="auto" uses the History API', async () => {
    const sid = newSiteId();
    const page = await visit('/auto/a', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-spa': 'auto' }));
    await hitsFor(sid, 1, 0);
    await page.evaluate(`history.pushState({}, '', '/auto/b')`);
    await page.evaluate(`location.hash = '#x'`); // not a new page in history mode
    const hits = await hitsFor(sid, 2);
    assert.deepEqual(hits.map((h) => h.params.p), ['/auto/a', '/auto/b']);
  });

  test('data-spa="hash": the hash route is part of p and hashchange sends pageviews', async () => {
    const sid = newSiteId();
    const page = await visit('/app', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-spa': 'hash' }), { hash: '#/home' });
    await hitsFor(sid, 1, 0);
    await page.evaluate(`location.hash = '#/settings'`);
    await hitsFor(sid, 2, 0);
    await page.evaluate(`location.hash = '#/settings'`); // unchanged: no hashchange
    await page.evaluate(`history.pushState({}, '', '/app#/no-event')`); // pushState fires no hashchange
    await page.evaluate(`location.hash = '#/profile'`);
    const hits = await hitsFor(sid, 3);
    assert.deepEqual(hits.map((h) => h.params.p), ['/app#/home', '/app#/settings', '/app#/profile']);
    assertPageview(hits[1], { h: site.origin('a'), p: '/app#/settings', r: '', qs: {}, sid });
  });

  test('no data-spa: client-side navigations are not tracked', async () => {
    const sid = newSiteId();
    const page = await visit('/static', pageHtml(site.scriptUrl, { 'data-site': sid }));
    await hitsFor(sid, 1, 0);
    await page.evaluate(`history.pushState({}, '', '/static/2')`);
    await page.evaluate(`location.hash = '#/x'`);
    assert.equal((await hitsFor(sid, 1)).length, 1);
  });

  test('trackEvent with and without _value, with _site_id; trackGoal', async () => {
    const sid = newSiteId();
    const other = newSiteId();
    const page = await visit('/shop', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-auto': 'false' }), {
      query: '?utm_source=ads&x=1',
    });
    await page.evaluate(`fathom.trackEvent('Signup', { _value: 1299 })`);
    await hitsFor(sid, 1, 0);
    await page.evaluate(`fathom.trackEvent('Newsletter')`);
    await hitsFor(sid, 2, 0);
    await page.evaluate(`fathom.trackGoal('ABCDEFGH', 500)`);
    await hitsFor(sid, 3, 0);
    await page.evaluate(`fathom.trackEvent('Elsewhere', { _site_id: '${other}' })`);
    const hits = await hitsFor(sid, 3);
    assert.equal(hits.length, 3);
    const common = { h: site.origin('a'), p: '/shop', r: EXTERNAL_REFERRER, qs: '{"utm_source":"ads"}', sid };
    const strip = (h: Hit) => {
      assert.equal(h.method, 'POST');
      assert.match(h.params.cid!, /^\d+$/);
      const { cid: _cid, ...rest } = h.params;
      return rest;
    };
    assert.deepEqual(strip(hits[0]!), { name: 'Signup', payload: '{"_value":1299}', ...common });
    assert.deepEqual(strip(hits[1]!), { name: 'Newsletter', ...common });
    assert.deepEqual(strip(hits[2]!), { gcode: 'ABCDEFGH', gval: '500', ...common });
    const otherHits = await hitsFor(other, 1);
    assert.equal(otherHits.length, 1);
    assert.deepEqual(strip(otherHits[0]!), { name: 'Elsewhere', ...common, sid: other });
  });

  test('data-honor-dnt: ignored unless asked; when asked, DNT or GPC stops all hits', async () => {
    const dnt = `Object.defineProperty(Navigator.prototype, 'doNotTrack', { get: () => '1' });`;
    const gpc = `Object.defineProperty(Navigator.prototype, 'globalPrivacyControl', { get: () => true });`;

    const notAsked = newSiteId();
    await visit('/dnt1', pageHtml(site.scriptUrl, { 'data-site': notAsked }), { initScript: dnt });
    assert.equal((await hitsFor(notAsked, 1)).length, 1);

    const asked = newSiteId();
    const page = await visit('/dnt2', pageHtml(site.scriptUrl, { 'data-site': asked, 'data-honor-dnt': 'true' }), { initScript: dnt });
    assert.equal(await page.evaluate('navigator.doNotTrack'), '1');
    await page.evaluate(`fathom.trackEvent('Signup', { _value: 1 }); fathom.trackGoal('ABCDEFGH', 1); fathom.trackPageview({ url: '/x' })`);
    assert.equal((await hitsFor(asked, 0)).length, 0);

    const askedGpc = newSiteId();
    await visit('/dnt3', pageHtml(site.scriptUrl, { 'data-site': askedGpc, 'data-honor-dnt': 'true' }), { initScript: gpc });
    assert.equal((await hitsFor(askedGpc, 0)).length, 0);

    const askedNoDnt = newSiteId();
    await visit('/dnt4', pageHtml(site.scriptUrl, { 'data-site': askedNoDnt, 'data-honor-dnt': 'true' }));
    assert.equal((await hitsFor(askedNoDnt, 1)).length, 1);
  });

  test('data-included-domains, data-allowed-domains and data-excluded-domains', async () => {
    const cases: { attr: string; value: string; a: number; b: number }[] = [
      { attr: 'data-included-domains', value: 'a.localhost, example.com', a: 1, b: 0 },
      { attr: 'data-allowed-domains', value: 'b.localhost', a: 0, b: 1 },
      { attr: 'data-excluded-domains', value: 'example.com,b.localhost', a: 1, b: 0 },
    ];
    for (const c of cases) {
      for (const host of ['a', 'b'] as const) {
        const sid = newSiteId();
        const page = await visit(`/domains-${host}`, pageHtml(site.scriptUrl, { 'data-site': sid, [c.attr]: c.value }), { host });
        await page.evaluate(`fathom.trackEvent('Click')`);
        const expected = host === 'a' ? c.a : c.b;
        assert.equal((await hitsFor(sid, expected * 2)).length, expected * 2, `${c.attr}="${c.value}" on ${host}.localhost`);
      }
    }
  });

  test('a canonical link is the page URL unless data-canonical="false"', async () => {
    const head = `<link rel="canonical" href="https://www.example.com/articles/canonical-slug">`;
    const sid = newSiteId();
    const page = await visit('/articles/123', pageHtml(site.scriptUrl, { 'data-site': sid }, head), { query: '?utm_source=tw' });
    await hitsFor(sid, 1, 0);
    await page.evaluate(`fathom.trackEvent('Read')`);
    const hits = await hitsFor(sid, 2);
    assertPageview(hits[0], { h: 'https://www.example.com', p: '/articles/canonical-slug', r: EXTERNAL_REFERRER, qs: { utm_source: 'tw' }, sid });
    assert.equal(hits[1]!.params.h, 'https://www.example.com');
    assert.equal(hits[1]!.params.p, '/articles/canonical-slug');

    const relative = newSiteId();
    await visit('/articles/456', pageHtml(site.scriptUrl, { 'data-site': relative }, `<link rel="canonical" href="/articles/rel">`));
    assertPageview((await hitsFor(relative, 1))[0], { h: site.origin('a'), p: '/articles/rel', r: EXTERNAL_REFERRER, qs: {}, sid: relative });

    const ignored = newSiteId();
    await visit('/articles/789', pageHtml(site.scriptUrl, { 'data-site': ignored, 'data-canonical': 'false' }, head));
    assertPageview((await hitsFor(ignored, 1))[0], { h: site.origin('a'), p: '/articles/789', r: EXTERNAL_REFERRER, qs: {}, sid: ignored });
  });

  test('blockTrackingForMe stops tracking on this browser until enableTrackingForMe', async () => {
    const sid = newSiteId();
    const html = pageHtml(site.scriptUrl, { 'data-site': sid });
    const page = await visit('/optout', html);
    await hitsFor(sid, 1, 0);
    await page.evaluate('fathom.blockTrackingForMe()');
    assert.equal(await page.evaluate(`localStorage.getItem('blockFathomTracking')`), 'true');
    await page.evaluate(`fathom.trackEvent('Blocked'); fathom.trackPageview({ url: '/blocked' })`);
    await visit('/optout', html, { page }); // reload: no automatic pageview either
    assert.equal((await hitsFor(sid, 1)).length, 1);
    await page.evaluate('fathom.enableTrackingForMe()');
    assert.equal(await page.evaluate(`localStorage.getItem('blockFathomTracking')`), null);
    await visit('/optout', html, { page });
    const hits = await hitsFor(sid, 2);
    assert.deepEqual(hits.map((h) => h.params.p), ['/optout', '/optout']);
  });

  test('while the page is prerendered nothing is sent; hits go out when it becomes visible', async () => {
    const sid = newSiteId();
    const prerender =
      `let vs = 'prerender'; Object.defineProperty(Document.prototype, 'visibilityState', { configurable: true, get: () => vs });` +
      `window.becomeVisible = () => { vs = 'visible'; document.dispatchEvent(new Event('visibilitychange')); };`;
    const page = await visit('/prerendered', pageHtml(site.scriptUrl, { 'data-site': sid }), { initScript: prerender });
    await page.evaluate(`fathom.trackEvent('Early')`);
    assert.equal((await hitsFor(sid, 0)).length, 0);
    await page.evaluate('becomeVisible()');
    const hits = await hitsFor(sid, 2);
    assert.deepEqual(hits.map((h) => [h.method, h.params.p, h.params.name ?? null]).sort(), [
      ['GET', '/prerendered', null],
      ['POST', '/prerendered', 'Early'],
    ]);
  });

  test('calls queued by a snippet-style stub (window.fathom.q) are replayed; fathom("method", ...) works after load', async () => {
    const sid = newSiteId();
    const stub =
      `<script>window.fathom = window.fathom || function () { (window.fathom.q = window.fathom.q || []).push(arguments); };` +
      `fathom('trackPageview', { url: '/queued' }); fathom('trackGoal', 'QGOALXYZ', 100); fathom('trackEvent', 'Queued', { _value: 5 });</script>`;
    const page = await visit('/stub', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-auto': 'false' }, stub));
    await hitsFor(sid, 3, 0);
    await page.evaluate(`fathom('trackEvent', 'AfterLoad')`);
    const hits = await hitsFor(sid, 4);
    // The three replayed calls go out at once, so they may reach the collector in any order.
    const summary = (h: Hit) => JSON.stringify([h.method, h.params.p, h.params.gcode ?? h.params.name ?? null, h.params.gval ?? h.params.payload ?? null]);
    assert.deepEqual(hits.slice(0, 3).map(summary).sort(), [
      ['GET', '/queued', null, null],
      ['POST', '/stub', 'QGOALXYZ', '100'],
      ['POST', '/stub', 'Queued', '{"_value":5}'],
    ].map((x) => JSON.stringify(x)).sort());
    assert.equal(summary(hits[3]!), JSON.stringify(['POST', '/stub', 'AfterLoad', null]));
  });

  /** The paths of the scripts the page loaded, in the order the browser fetched them. */
  function scriptsLoaded(page: Page): Promise<string[]> {
    return page.evaluate(`performance.getEntriesByType('resource').filter((e) => e.initiatorType === 'script').map((e) => new URL(e.name).pathname)`);
  }

  /** A page script that stops links from navigating (the tracker still sees the clicks), except those marked data-go. */
  const STAY = `<script>['click', 'auxclick'].forEach((t) => document.addEventListener(t, (e) => e.target.closest('[data-go]') || e.preventDefault()));</script>`;

  /** The events of `hits` as [name, payload], in the order they arrived. */
  const events = (hits: Hit[]) => hits.filter((h) => h.method === 'POST').map((h) => [h.params.name, h.params.payload ?? null]);

  test('a tag without extension attributes loads /script.js only, and link clicks send nothing', async () => {
    const sid = newSiteId();
    const body = `${STAY}<a id="out" href="${site.url('b', '/elsewhere')}">out</a><a id="file" href="/report.pdf">pdf</a>`;
    const page = await visit('/plain', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-outbound-links': 'false' }, '', body));
    await page.click('#out');
    await page.click('#file');
    assert.deepEqual((await hitsFor(sid, 1)).map((h) => h.method), ['GET']);
    assert.deepEqual(await scriptsLoaded(page), ['/script.js']);
    assert.deepEqual(page.errors, []);
  });

  test('data-outbound-links alone: left and middle clicks on links to other hosts send "Outbound Link: Click" with the url, even when the page goes', async () => {
    const sid = newSiteId();
    const elsewhere = site.url('b', '/elsewhere');
    site.pages.set('/elsewhere', '<!doctype html><title>elsewhere</title>');
    const body =
      `${STAY}<a id="out" href="${elsewhere}?from=a">out</a><a id="file" href="/report.pdf">same-host pdf</a>` +
      `<a id="same" href="/about">same host</a><a id="mail" href="mailto:hi@example.com">mail</a>` +
      `<a id="leave" data-go href="${elsewhere}"><span>leave</span></a>`;
    const page = await visit('/outbound', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-outbound-links': 'true' }, '', body));
    assert.deepEqual(await scriptsLoaded(page), ['/script.js', '/script.ext.js']);
    await page.click('#file');
    await page.click('#same');
    await page.click('#mail');
    await page.click('#out');
    await hitsFor(sid, 2, 0);
    await page.click('#out', { button: 'middle' });
    await hitsFor(sid, 3, 0);
    assert.deepEqual(page.errors, []);
    // A click on the link's content, and the page navigates away at once: the beacon still arrives.
    await Promise.all([page.waitForURL(elsewhere), page.click('#leave span')]);
    const hits = await hitsFor(sid, 4);
    assertPageview(hits[0], { h: site.origin('a'), p: '/outbound', r: EXTERNAL_REFERRER, qs: {}, sid });
    assert.deepEqual(events(hits), [
      ['Outbound Link: Click', JSON.stringify({ url: `${elsewhere}?from=a` })],
      ['Outbound Link: Click', JSON.stringify({ url: `${elsewhere}?from=a` })],
      ['Outbound Link: Click', JSON.stringify({ url: elsewhere })],
    ]);
    assert.ok(hits.slice(1).every((h) => h.params.p === '/outbound' && h.params.sid === sid));
  });

  test('data-file-downloads alone: clicks on links to files, on any host, send "File Download" with the url', async () => {
    const sid = newSiteId();
    const body =
      `${STAY}<a id="pdf" href="/files/report.pdf">pdf</a><a id="zip" href="/files/ARCHIVE.ZIP?v=2">zip</a>` +
      `<a id="cdn" href="${site.url('b', '/dl/setup.dmg')}">dmg elsewhere</a><a id="page" href="/files/index.html">page</a>` +
      `<a id="out" href="${site.url('b', '/elsewhere')}">out</a>`;
    const page = await visit('/downloads', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-file-downloads': 'true' }, '', body));
    assert.deepEqual(await scriptsLoaded(page), ['/script.js', '/script.ext.js']);
    for (const id of ['page', 'out', 'pdf']) await page.click(`#${id}`);
    await hitsFor(sid, 2, 0);
    await page.click('#zip');
    await hitsFor(sid, 3, 0);
    await page.click('#cdn');
    const hits = await hitsFor(sid, 4);
    assert.deepEqual(events(hits), [
      ['File Download', JSON.stringify({ url: site.url('a', '/files/report.pdf') })],
      ['File Download', JSON.stringify({ url: site.url('a', '/files/ARCHIVE.ZIP?v=2') })],
      ['File Download', JSON.stringify({ url: site.url('b', '/dl/setup.dmg') })],
    ]);
    assert.deepEqual(page.errors, []);
  });

  test('data-track-404 alone: the page sends its pageview and the event "404" with its path; link clicks send nothing', async () => {
    const sid = newSiteId();
    const body = `${STAY}<a id="out" href="${site.url('b', '/elsewhere')}">out</a><a id="file" href="/report.pdf">pdf</a>`;
    const page = await visit('/gone/page', pageHtml(site.scriptUrl, { 'data-site': sid, 'data-track-404': 'true' }, '', body), {
      query: '?utm_source=old-link',
    });
    await hitsFor(sid, 2, 0);
    await page.click('#out');
    await page.click('#file');
    const hits = await hitsFor(sid, 2);
    assert.equal(hits.length, 2);
    assertPageview(hits.find((h) => h.method === 'GET'), { h: site.origin('a'), p: '/gone/page', r: EXTERNAL_REFERRER, qs: { utm_source: 'old-link' }, sid });
    const event = hits.find((h) => h.method === 'POST')!;
    assert.deepEqual([event.params.name, event.params.payload, event.params.p, event.params.qs], ['404', '{"path":"/gone/page"}', '/gone/page', '{"utm_source":"old-link"}']);
    assert.deepEqual(page.errors, []);
  });

  test('the extensions follow the tracker: site id from the attribute without data-, Do Not Track, blockTrackingForMe', async () => {
    const sid = newSiteId();
    const body = `${STAY}<a id="out" href="${site.url('b', '/elsewhere')}">out</a>`;
    const page = await visit('/plain-attrs', pageHtml(site.scriptUrl, { site: sid, 'outbound-links': 'true', 'track-404': 'true' }, '', body));
    await hitsFor(sid, 2, 0);
    await page.click('#out');
    assert.deepEqual(events(await hitsFor(sid, 3)).map((e) => e[0]).sort(), ['404', 'Outbound Link: Click']);
    await page.evaluate('fathom.blockTrackingForMe()');
    await page.click('#out');
    assert.equal((await hitsFor(sid, 3)).length, 3);

    const dnt = newSiteId();
    const tag = { 'data-site': dnt, 'data-honor-dnt': 'true', 'data-outbound-links': 'true', 'data-track-404': 'true' };
    const dntPage = await visit('/dnt-ext', pageHtml(site.scriptUrl, tag, '', body), {
      initScript: `Object.defineProperty(Navigator.prototype, 'doNotTrack', { get: () => '1' });`,
    });
    await dntPage.click('#out');
    assert.equal((await hitsFor(dnt, 0)).length, 0);
  });

  test('on a page whose Content Security Policy admits scripts by nonce only, the extensions load and send', async () => {
    const sid = newSiteId();
    site.policies.set('/strict', `script-src 'nonce-c2VjcmV0'`);
    const page = await visit('/strict', pageHtml(site.scriptUrl, { 'data-site': sid, nonce: 'c2VjcmV0', 'data-track-404': 'true' }));
    const hits = await hitsFor(sid, 2);
    assert.deepEqual(events(hits), [['404', '{"path":"/strict"}']]);
    assert.deepEqual(await scriptsLoaded(page), ['/script.js', '/script.ext.js']);
  });

  test('fathom-client: load() with spa auto, and calls made before the script loaded all arrive', async () => {
    const sid = newSiteId();
    // The tracker is held back until the queued calls have been seen (a fixed delay was too short on a busy machine).
    let release = () => {};
    site.scriptGate = new Promise<void>((resolve) => (release = resolve));
    try {
      const html =
        `<!doctype html><html><head><script>window.SITE_ID = '${sid}'; window.SCRIPT_URL = '${site.scriptUrl}';</script>` +
        `<script src="/client.js"></script></head><body><h1>app</h1></body></html>`;
      site.pages.set('/client-app', html);
      const page = await openPage(browser);
      pages.push(page);
      await page.goto(site.url('a', '/client-app?utm_campaign=launch'), { referer: EXTERNAL_REFERRER, waitUntil: 'commit' });
      await page.waitForFunction('!!window.Fathom');
      // fathom-client queued the three calls: the tracker is still on its way.
      assert.equal(await page.evaluate('typeof window.fathom'), 'undefined');
      assert.equal(await page.evaluate('window.__fathomClientQueue.length'), 3);
      const tag = await page.evaluate(
        `(() => { const s = document.getElementById('fathom-script'); return [s.getAttribute('data-site'), s.getAttribute('data-spa'), s.src]; })()`,
      );
      assert.deepEqual(tag, [sid, 'auto', site.scriptUrl]);
      release();
      const queued = await hitsFor(sid, 3);
      assert.equal(queued.length, 3, 'one pageview (the automatic one is a duplicate), one event, one goal');
      // Sent at once, so they may reach the collector in any order.
      assertPageview(queued.find((h) => h.method === 'GET'), { h: site.origin('a'), p: '/client-app', r: EXTERNAL_REFERRER, qs: { utm_campaign: 'launch' }, sid });
      const event = queued.find((h) => h.params.name !== undefined);
      assert.deepEqual([event?.method, event?.params.name, event?.params.payload, event?.params.p], ['POST', 'Signup', '{"_value":1299}', '/client-app']);
      const goal = queued.find((h) => h.params.gcode !== undefined);
      assert.deepEqual([goal?.method, goal?.params.gcode, goal?.params.gval, goal?.params.p], ['POST', 'ABCDEFGH', '500', '/client-app']);

      // After load, fathom-client calls window.fathom directly; spa: 'auto' tracks client-side navigations.
      await page.evaluate(`history.pushState({}, '', '/client-app/next'); Fathom.trackEvent('Later')`);
      const all = await hitsFor(sid, 5);
      assert.deepEqual(all.slice(3).map((h) => [h.method, h.params.p, h.params.name ?? null]).sort(), [
        ['GET', '/client-app/next', null],
        ['POST', '/client-app/next', 'Later'],
      ]);
      assert.deepEqual(await page.evaluate('window.__fathomClientQueue.length'), 0);
      assert.deepEqual((page as Page & { errors: string[] }).errors, []);
    } finally {
      release();
      site.scriptGate = undefined;
    }
  });

  test('fathom-client with auto: false and the blocking helpers', async () => {
    const sid = newSiteId();
    const entry = `
      import * as Fathom from 'fathom-client';
      Fathom.load('${sid}', { url: '${site.scriptUrl}', auto: false, includedDomains: ['a.localhost'] });
      Fathom.trackPageview({ url: '/from-client' });
      window.Fathom = Fathom;`;
    const bundle = (await build({ stdin: { contents: entry, resolveDir: ROOT, loader: 'js' }, bundle: true, format: 'iife', write: false }))
      .outputFiles[0]!.text;
    site.pages.set('/client-manual', `<!doctype html><html><head><script>${bundle}</script></head><body></body></html>`);
    const page = await openPage(browser);
    pages.push(page);
    await page.goto(site.url('a', '/client-manual'), { referer: EXTERNAL_REFERRER });
    const hits = await hitsFor(sid, 1);
    assert.equal(hits.length, 1);
    assertPageview(hits[0], { h: site.origin('a'), p: '/from-client', r: EXTERNAL_REFERRER, qs: {}, sid });
    await page.evaluate('Fathom.blockTrackingForMe()');
    assert.equal(await page.evaluate('Fathom.isTrackingEnabled()'), false);
    await page.evaluate(`Fathom.trackEvent('Nope')`);
    await page.evaluate('Fathom.enableTrackingForMe()');
    assert.equal(await page.evaluate('Fathom.isTrackingEnabled()'), true);
    await page.evaluate(`Fathom.setSite('${sid}'); Fathom.trackEvent('Yes')`);
    const after = await hitsFor(sid, 2);
    assert.deepEqual(after.map((h) => h.params.name ?? null), [null, 'Yes']);
  });
});

describe('tracker against the real Plumb collector: stored hits', { skip }, () => {
  const website = new TestSite();
  let plumb: TestApp;
  let plumbUrl: string;
  let browser: Browser;
  let siteId: string;
  const pages: Page[] = [];

  before(async () => {
    await website.start();
    plumb = await startTestApp();
    await plumb.app.listen({ port: 0, host: '127.0.0.1' });
    plumbUrl = `http://127.0.0.1:${(plumb.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });

  after(async () => {
    for (const page of pages) await closePage(page).catch(() => {});
    await browser?.close();
    await plumb?.close();
    await website.stop();
  });

  async function newSite(name: string): Promise<string> {
    const res = await plumb.call(OWNER_TOKEN, 'POST', '/v1/sites', { name });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  }

  /** Flushes Plumb's write buffer until `site` has at least `count` stored hits (or 5 s pass). */
  async function storedHits(site: string, count: number, settleMs = 300) {
    const deadline = Date.now() + 5_000;
    for (;;) {
      await plumb.flushHits();
      const hits = await plumb.events.listHits(site);
      if (hits.length >= count || Date.now() > deadline) break;
      await sleep(25);
    }
    await sleep(settleMs);
    await plumb.flushHits();
    return plumb.events.listHits(site);
  }

  async function browse(path: string, html: string, query = '', userAgent?: string): Promise<Page & { errors: string[] }> {
    website.pages.set(path, html);
    const page = await openPage(browser, { userAgent: userAgent ?? desktopChromeUserAgent(browser) });
    pages.push(page);
    await page.goto(website.url('a', path + query), { referer: 'https://blog.example.org/posts/1?from=feed' });
    await page.waitForFunction('typeof window.fathom === "function"');
    return page;
  }

  test('/script.js is the tracker, minified and, as served, under 2 KB gzipped; /script.ext.js is served beside it', async (t) => {
    const res = await rawGet(`${plumbUrl}/script.js`, { 'accept-encoding': 'gzip, deflate, br' });
    assert.equal(res.status, 200);
    assert.match(res.headers['content-type'] ?? '', /javascript/);
    assert.equal(res.headers['content-encoding'], 'gzip');
    const body = gunzipSync(res.body).toString();
    assert.match(body, /blockFathomTracking/);
    assert.ok(!body.includes('Outbound Link'), 'the extensions are not in the default script');
    assert.ok(res.body.length < TWO_KB, `/script.js is ${res.body.length} bytes gzipped`);

    const ext = await rawGet(`${plumbUrl}/script.ext.js`, { 'accept-encoding': 'gzip' });
    assert.equal(ext.status, 200);
    assert.match(ext.headers['content-type'] ?? '', /javascript/);
    assert.equal(ext.headers['content-encoding'], 'gzip');
    assert.equal(ext.headers['access-control-allow-origin'], '*');
    assert.match(gunzipSync(ext.body).toString(), /Outbound Link: Click/);
    t.diagnostic(`gzipped as served: /script.js ${res.body.length} bytes (${gunzipSync(res.body).length} minified), /script.ext.js ${ext.body.length} bytes (${gunzipSync(ext.body).length} minified)`);
  });

  test('pageviews, events and legacy goals from the page are stored with the expected fields', async () => {
    siteId = await newSite('Browser test');
    const goal = await plumb.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/events`, { name: 'Purchase' });
    assert.equal(goal.status, 200, JSON.stringify(goal.body));
    const page = await browse(
      '/landing',
      pageHtml(`${plumbUrl}/script.js`, { 'data-site': siteId, 'data-spa': 'history', defer: '' }),
      '?utm_source=newsletter&utm_medium=email&utm_campaign=launch&utm_content=hero&utm_term=analytics&ref=hn&kw=plumb&secret=1',
    );
    assert.equal((await storedHits(siteId, 1, 0)).length, 1);
    await page.evaluate(`fathom.trackEvent('Signup', { _value: 1299 })`);
    await storedHits(siteId, 2, 0);
    await page.evaluate(`fathom.trackGoal('${goal.body.id}', 500)`);
    await storedHits(siteId, 3, 0);
    await page.evaluate(`history.pushState({}, '', '/pricing')`);
    const hits = await storedHits(siteId, 4);
    assert.equal(hits.length, 4);
    assert.deepEqual(page.errors, []);

    const origin = website.origin('a');
    const browserFields = { browser: 'Chrome', operatingSystem: 'Linux', deviceType: 'Desktop' };
    const campaign = {
      utmSource: 'newsletter',
      utmMedium: 'email',
      utmCampaign: 'launch',
      utmContent: 'hero',
      utmTerm: 'analytics',
      ref: 'hn',
      keyword: 'plumb',
    };
    const referrer = { referrerHostname: 'https://blog.example.org', referrerPathname: '/posts/1', referrerSource: 'blog.example.org' };
    const pick = (h: (typeof hits)[number]) => ({
      type: h.type,
      siteId: h.siteId,
      hostname: h.hostname,
      pathname: h.pathname,
      eventName: h.eventName,
      value: h.value,
      referrerHostname: h.referrerHostname,
      referrerPathname: h.referrerPathname,
      referrerSource: h.referrerSource,
      utmSource: h.utmSource,
      utmMedium: h.utmMedium,
      utmCampaign: h.utmCampaign,
      utmContent: h.utmContent,
      utmTerm: h.utmTerm,
      ref: h.ref,
      keyword: h.keyword,
      browser: h.browser,
      operatingSystem: h.operatingSystem,
      deviceType: h.deviceType,
    });
    const base = { siteId, hostname: origin, ...browserFields };
    assert.deepEqual(hits.map(pick), [
      { ...base, type: 'pageview', pathname: '/landing', eventName: '', value: 0, ...referrer, ...campaign },
      { ...base, type: 'event', pathname: '/landing', eventName: 'Signup', value: 1299, ...referrer, ...campaign },
      { ...base, type: 'event', pathname: '/landing', eventName: 'Purchase', value: 500, ...referrer, ...campaign },
      // A client-side navigation sends no campaign parameters and no external referrer, and is stored with its
      // visit's attribution: the first hit's (docs/reports.md, "Attribution belongs to the visit").
      { ...base, type: 'pageview', pathname: '/pricing', eventName: '', value: 0, ...referrer, ...campaign },
    ]);

    // One visitor, one visit.
    assert.equal(new Set(hits.map((h) => h.visitorId)).size, 1);
    assert.equal(new Set(hits.map((h) => h.visitId)).size, 1);
  });

  test('fathom-client against Plumb: calls made before the script loaded are stored', async () => {
    const site = await newSite('fathom-client');
    const html =
      `<!doctype html><html><head><script>window.SITE_ID = '${site}'; window.SCRIPT_URL = '${plumbUrl}/script.js';</script>` +
      `<script src="/client.js"></script></head><body></body></html>`;
    const page = await browse('/client', html, '?utm_campaign=spring');
    const hits = await storedHits(site, 3);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(
      hits.map((h) => [h.type, h.pathname, h.eventName, h.value, h.utmCampaign]).sort(),
      [
        ['event', '/client', 'Signup', 1299, 'spring'],
        ['pageview', '/client', '', 0, 'spring'],
      ],
      'the pageview (the automatic one was a duplicate) and the event; ABCDEFGH is no event code of this site',
    );
  });

  test('headless Chromium is dropped as a bot by the server (the tracker still sends)', async () => {
    const site = await newSite('Headless');
    website.pages.set('/headless', pageHtml(`${plumbUrl}/script.js`, { 'data-site': site }));
    const page = await openPage(browser);
    pages.push(page);
    assert.match(await page.evaluate('navigator.userAgent'), /HeadlessChrome/);
    const sent = page.waitForResponse((r) => r.url().startsWith(`${plumbUrl}/?`));
    await page.goto(website.url('a', '/headless'));
    assert.equal((await sent).status(), 200);
    assert.equal((await storedHits(site, 0)).length, 0);
  });
});
