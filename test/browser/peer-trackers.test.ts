// Switching without re-tagging, in real Chromium against a real Plumb: pages tagged as for Plausible (its script
// path on Plumb's host, data-domain) and as for Umami (Plumb's /script.js with data-website-id) are counted, with
// their events, client-side navigations, outbound links and file downloads; and Plumb's own tracker's
// outbound-link, file-download and 404 options.
//
// A node:http server plays the website on http://a.localhost:PORT (Chromium resolves *.localhost to loopback).

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { build } from 'esbuild';
import type { Browser, Page } from 'playwright-core';
import type { StoredHit } from '../../src/domain/hits.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, desktopChromeUserAgent, launchBrowser, openPage } from './browser.js';

const skip = browserSkipReason();
const UMAMI_ID = '3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5b';

describe('Plausible and Umami tags pointed at Plumb, in Chromium', { skip }, () => {
  let plumb: TestApp;
  let plumbUrl: string;
  let website: Server;
  let siteOrigin: string;
  let browser: Browser;
  const pages = new Map<string, string>();
  const opened: Page[] = [];

  before(async () => {
    plumb = await startTestApp();
    await plumb.app.listen({ port: 0, host: '127.0.0.1' });
    plumbUrl = `http://127.0.0.1:${(plumb.app.server.address() as AddressInfo).port}`;
    website = createServer((req, res) => {
      const html = pages.get(new URL(req.url ?? '/', 'http://x').pathname);
      if (html === undefined) res.writeHead(404, { 'content-type': 'text/html' }).end('<!doctype html><title>404</title>');
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
    await new Promise<void>((resolve) => website.listen(0, '127.0.0.1', resolve));
    siteOrigin = `http://a.localhost:${(website.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });

  after(async () => {
    for (const page of opened) await closePage(page).catch(() => {});
    await browser?.close();
    await plumb?.close();
    website?.closeAllConnections();
    await new Promise((resolve) => website?.close(resolve));
  });

  async function newSite(body: object): Promise<string> {
    const res = await plumb.call(OWNER_TOKEN, 'POST', '/v1/sites', body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  }

  /**
   * Flushes Plumb's write buffer until `site` has `count` stored pageviews and events (or 5 s pass), then once more
   * after a pause; answers those, and with `{ engagement: true }` the engagement rows too. Plausible's scripts send
   * engagement whenever the page is hidden, loses focus or routes on, so tests about other hits leave them out.
   */
  async function storedHits(site: string, count: number, { engagement = false } = {}): Promise<StoredHit[]> {
    const counted = async () => (await plumb.events.listHits(site)).filter((h) => engagement || h.type !== 'engagement');
    const deadline = Date.now() + 5_000;
    for (;;) {
      await plumb.flushHits();
      if ((await counted()).length >= count || Date.now() > deadline) break;
      await sleep(25);
    }
    await sleep(200);
    await plumb.flushHits();
    return counted();
  }

  /** Opens `path` (HTML given) as a desktop Chrome would, from an external referrer. */
  async function browse(path: string, html: string, initScript?: string): Promise<Page & { errors: string[] }> {
    pages.set(path.split('?')[0]!.split('#')[0]!, html);
    const page = await openPage(browser, { userAgent: desktopChromeUserAgent(browser), ...(initScript ? { initScript } : {}) });
    opened.push(page);
    await page.goto(siteOrigin + path, { referer: 'https://news.ycombinator.com/item?id=7' });
    return page;
  }

  /** The page hidden or shown as the browser does for another tab, announced the same way. */
  const visibility = (state: 'hidden' | 'visible') =>
    `Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${state}' });` +
    `document.dispatchEvent(new Event('visibilitychange'))`;
  const hide = visibility('hidden');
  const show = visibility('visible');
  const summary = (hits: StoredHit[]) => hits.map((h) => [h.type, h.pathname, h.eventName, h.value]);
  /** Each hit's name (or type) with its stored custom properties, sorted: what the goal panel breaks down. */
  const propsOf = (hits: StoredHit[]) => hits.map((h) => [h.eventName || h.type, h.props ?? []] as const).sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));

  test('a Plausible tag (script path with extensions, data-domain) is counted with its events, hash routes and link clicks', async () => {
    const site = await newSite({ name: 'Plausible tag', domain: 'a.localhost' });
    const html =
      '<!doctype html><html><head><meta charset="utf-8"><title>P</title>' +
      `<script defer data-domain="a.localhost" src="${plumbUrl}/js/script.hash.outbound-links.file-downloads.revenue.tagged-events.js"></script>` +
      '<script>window.plausible = window.plausible || function () { (window.plausible.q = window.plausible.q || []).push(arguments) }</script>' +
      "<script>plausible('Queued', { props: { early: 'yes' } })</script>" +
      '</head><body><a id="out" href="https://example.org/elsewhere" target="_blank">out</a>' +
      '<a id="file" href="/files/report.pdf" download>pdf</a>' +
      '<button id="tagged" class="plausible-event-name=Clicked+Button">tagged</button></body></html>';
    // Plausible's script (and Plumb's compatible one) sends nothing from automated browsers unless told it is a test.
    const page = await browse('/?utm_source=hn', html, 'window.__plausible = true');
    await page.waitForFunction('typeof window.plausible === "function" && !window.plausible.q');
    await storedHits(site, 2);
    await page.evaluate(`plausible('Purchase', { revenue: { amount: 19.9, currency: 'EUR' }, props: { plan: 'pro' } })`);
    await storedHits(site, 3);
    await page.evaluate(`location.hash = '#/settings'`);
    await storedHits(site, 4);
    await page.click('#tagged');
    await storedHits(site, 5);
    await page.click('#file');
    await storedHits(site, 6);
    await page.click('#out');
    const hits = await storedHits(site, 7);
    assert.deepEqual(page.errors, []);
    // Events after the hash route changed belong to that page.
    assert.deepEqual(summary(hits).sort(), [
      ['event', '/#/settings', 'Clicked Button', 0],
      ['event', '/#/settings', 'File Download', 0],
      ['event', '/#/settings', 'Outbound Link: Click', 0],
      ['event', '/', 'Purchase', 1990],
      ['event', '/', 'Queued', 0],
      ['pageview', '/', '', 0],
      ['pageview', '/#/settings', '', 0],
    ].sort());
    assert.equal(new Set(hits.map((h) => h.visitId)).size, 1, 'one visit');
    assert.deepEqual([...new Set(hits.map((h) => `${h.utmSource} ${h.referrerSource} ${h.browser}`))], ['hn Hacker News Chrome']);
    assert.deepEqual(propsOf(hits), [
      ['Clicked Button', []],
      ['File Download', [['url', `${siteOrigin}/files/report.pdf`]]],
      ['Outbound Link: Click', [['url', 'https://example.org/elsewhere']]],
      ['Purchase', [['plan', 'pro']]],
      ['Queued', [['early', 'yes']]],
      ['pageview', []],
      ['pageview', []],
    ]);
  });

  test("engagement as Plausible's scripts send it: a scrolled page that is hidden, and each page a hash route leaves", async () => {
    const site = await newSite({ name: 'Plausible engagement', domain: 'engaged.example' });
    const html =
      '<!doctype html><html><head><meta charset="utf-8"><title>E</title>' +
      `<script defer data-domain="engaged.example" src="${plumbUrl}/js/script.hash.js"></script>` +
      '</head><body style="margin:0"><div style="height:3000px">top</div><p>bottom</p></body></html>';
    const page = await browse('/engaged', html, 'window.__plausible = true');
    await page.setViewportSize({ width: 800, height: 600 });
    await storedHits(site, 1);
    await page.mouse.move(200, 200);
    await page.mouse.wheel(0, 900);
    await page.waitForFunction('scrollY >= 900');
    const depth = (await page.evaluate('Math.round((scrollY + innerHeight) / document.documentElement.scrollHeight * 100)')) as number;
    await sleep(150);
    await page.evaluate(hide);
    const first = (await storedHits(site, 2, { engagement: true })).filter((h) => h.type === 'engagement');
    assert.equal(first.length, 1, 'one engagement row for the hidden page');
    assert.deepEqual([first[0]!.pathname, first[0]!.scrollDepth], ['/engaged', depth]);
    assert.ok((first[0]!.engagedMs ?? 0) >= 100, `engaged ${first[0]!.engagedMs} ms`);
    // Hidden again without scrolling further and within 3 s: nothing new to say, nothing sent.
    await page.evaluate(show);
    await page.evaluate(hide);
    assert.equal((await storedHits(site, 2, { engagement: true })).length, 2);
    // Shown, scrolled further, and a hash route: the page left gets a last row (its deeper scroll and its time
    // since the first), then the next page's pageview follows.
    await page.evaluate(show);
    await page.mouse.wheel(0, 900);
    await page.waitForFunction('scrollY >= 1800');
    const deeper = (await page.evaluate('Math.round((scrollY + innerHeight) / document.documentElement.scrollHeight * 100)')) as number;
    await page.evaluate(`location.hash = '#/next'`);
    const hits = await storedHits(site, 4, { engagement: true });
    assert.deepEqual(hits.filter((h) => h.type === 'engagement').map((h) => h.scrollDepth), [depth, deeper]);
    assert.deepEqual(hits.map((h) => [h.type, h.pathname]), [
      ['pageview', '/engaged'], ['engagement', '/engaged'], ['engagement', '/engaged'], ['pageview', '/engaged#/next'],
    ]);
    assert.equal(new Set(hits.map((h) => h.visitId)).size, 1, 'one visit');
    const [visit] = await plumb.events.listVisits(site);
    assert.deepEqual([visit?.pageviews, visit?.exitPage], [2, '/engaged#/next'], 'engagement is not a pageview');
    assert.deepEqual(page.errors, []);
  });

  test("no engagement for a pageview Plausible's script did not send (an excluded page)", async () => {
    const site = await newSite({ name: 'Plausible excluded', domain: 'excluded.example' });
    const html =
      '<!doctype html><title>X</title>' +
      `<script defer data-domain="excluded.example" data-exclude="/private/**" src="${plumbUrl}/js/script.exclusions.js"></script>` +
      "<script>window.plausible = window.plausible || function () { (window.plausible.q = window.plausible.q || []).push(arguments) }</script>";
    const page = await browse('/private/page', html, 'window.__plausible = true');
    await page.waitForFunction('typeof window.plausible === "function" && !window.plausible.q');
    await sleep(100);
    await page.evaluate(hide);
    // The control: an event after it is stored, and nothing before it was.
    await page.evaluate(`plausible('After')`);
    assert.deepEqual(summary(await storedHits(site, 1, { engagement: true })), [['event', '/private/page', 'After', 0]]);
  });

  /** Plausible's current snippet, verbatim but for the host and init()'s options. */
  const snippet = (id: string, init = '') =>
    `<script async src="${plumbUrl}/js/pa-${id}.js"></script>` +
    `<script>window.plausible=window.plausible||function(){(plausible.q=plausible.q||[]).push(arguments)},plausible.init=plausible.init||function(i){plausible.o=i||{}};plausible.init(${init})</script>`;

  test("Plausible's current snippet (async /js/pa-<id>.js, plausible.init) records to the site with that script id, with init()'s options", async () => {
    const id = 'gYyxvZhkMzdzXBAtSeSNz';
    // No domain: the per-site script finds its site by the id alone (given here as the snippet's script URL).
    const site = await newSite({ name: 'Plausible snippet', plausible_script_id: `https://plausible.io/js/pa-${id}.js` });
    const init =
      "{hashBasedRouting:true,customProperties:function(name){return {author:'Ann',kind:name==='pageview'?'page':'event'}}," +
      "fileDownloads:{fileExtensions:['xyz']},transformRequest:function(p){return p.n==='Dropped'?null:p}}";
    const html =
      `<!doctype html><html><head><meta charset="utf-8"><title>S</title>${snippet(id, init)}` +
      "<script>plausible('404',{props:{path:location.pathname}})</script></head><body>" +
      '<a id="out" href="https://example.org/away" target="_blank">out</a><a id="xyz" href="/files/data.xyz" download>xyz</a>' +
      '<a id="pdf" href="/files/report.pdf" download>pdf</a>' +
      '<form id="form" onsubmit="return false"><input name="q" value="x" required><button id="send">Send</button></form>' +
      '<form id="invalid" onsubmit="return false"><input name="q" required><button id="send-invalid">Send</button></form>' +
      '<button id="tagged" class="plausible-event-name=Clicked+Button plausible-event-place=top">tagged</button></body></html>';
    const page = await browse('/snippet?utm_source=hn', html, 'window.__plausible = true');
    await page.waitForFunction('typeof window.plausible === "function" && !window.plausible.q');
    await storedHits(site, 2);
    await page.evaluate(`plausible('Dropped'); plausible('Purchase', { revenue: { amount: 5, currency: 'EUR' }, props: { kind: 'own' }, callback: function (r) { window.answer = r.status } })`);
    await page.waitForFunction('window.answer === 202');
    await storedHits(site, 3);
    await page.evaluate(`location.hash = '#/next'`);
    await storedHits(site, 4);
    await page.click('#pdf');
    await page.click('#xyz');
    await storedHits(site, 5);
    await page.click('#out');
    await storedHits(site, 6);
    await page.click('#send-invalid');
    await page.click('#send');
    await storedHits(site, 7);
    await page.click('#tagged');
    const hits = await storedHits(site, 8);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(summary(hits).sort(), [
      ['event', '/snippet', '404', 0],
      ['event', '/snippet', 'Purchase', 500],
      ['event', '/snippet#/next', 'Clicked Button', 0],
      ['event', '/snippet#/next', 'File Download', 0],
      ['event', '/snippet#/next', 'Form: Submission', 0],
      ['event', '/snippet#/next', 'Outbound Link: Click', 0],
      ['pageview', '/snippet', '', 0],
      ['pageview', '/snippet#/next', '', 0],
    ].sort());
    assert.equal(new Set(hits.map((h) => h.visitId)).size, 1, 'one visit');
    assert.deepEqual([...new Set(hits.map((h) => `${h.utmSource} ${h.referrerSource} ${h.browser}`))], ['hn Hacker News Chrome']);
    // customProperties on every event, the event's own props winning.
    assert.deepEqual(propsOf(hits), [
      ['404', [['author', 'Ann'], ['kind', 'event'], ['path', '/snippet']]],
      ['Clicked Button', [['author', 'Ann'], ['kind', 'event'], ['place', 'top']]],
      ['File Download', [['author', 'Ann'], ['kind', 'event'], ['url', `${siteOrigin}/files/data.xyz`]]],
      ['Form: Submission', [['author', 'Ann'], ['kind', 'event']]],
      ['Outbound Link: Click', [['author', 'Ann'], ['kind', 'event'], ['url', 'https://example.org/away']]],
      ['Purchase', [['author', 'Ann'], ['kind', 'own']]],
      ['pageview', [['author', 'Ann'], ['kind', 'page']]],
      ['pageview', [['author', 'Ann'], ['kind', 'page']]],
    ]);
  });

  test('the per-site script loaded before the snippet starts at its init(); autoCapturePageviews false, url and endpoint options', async () => {
    const id = 'Mx_3-kQ9aZ0bYc1dWe2fV';
    const site = await newSite({ name: 'Plausible manual', plausible_script_id: `pa-${id}` });
    // Outbound links and form submissions are on unless init() turns them off, as here.
    const html =
      `<!doctype html><title>M</title><script src="${plumbUrl}/js/pa-${id}.js"></script>` +
      "<script>plausible.init({autoCapturePageviews:false,outboundLinks:false,formSubmissions:false,endpoint:" +
      JSON.stringify(`${plumbUrl}/api/event`) +
      "});plausible('pageview',{url:'https://a.localhost/virtual/page'})</script>" +
      '<a id="out" href="https://example.org/" target="_blank">out</a><form id="f" onsubmit="return false"><button id="go">go</button></form>';
    // Served from another origin than the endpoint's: init()'s endpoint is where events go.
    const page = await browse('/manual', html, 'window.__plausible = true');
    await storedHits(site, 1);
    await page.click('#out');
    await page.click('#go');
    await page.evaluate(`plausible('After')`);
    const hits = await storedHits(site, 2);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(summary(hits), [['pageview', '/virtual/page', '', 0], ['event', '/manual', 'After', 0]]);
  });

  test('a page of a Plausible tag naming two domains counts for both sites', async () => {
    const first = await newSite({ name: 'Rollup A', domain: 'rollup-a.example' });
    const second = await newSite({ name: 'Rollup B', domain: 'rollup-b.example' });
    const html = `<!doctype html><title>R</title><script defer data-domain="rollup-a.example,rollup-b.example" src="${plumbUrl}/js/script.js"></script>`;
    await browse('/rollup', html, 'window.__plausible = true');
    assert.deepEqual(summary(await storedHits(first, 1)), [['pageview', '/rollup', '', 0]]);
    assert.deepEqual(summary(await storedHits(second, 1)), [['pageview', '/rollup', '', 0]]);
  });

  test('without the test flag an automated browser sends nothing, as with Plausible', async () => {
    const site = await newSite({ name: 'Webdriver', domain: 'webdriver.example' });
    const page = await browse('/webdriver', `<!doctype html><title>W</title><script defer data-domain="webdriver.example" src="${plumbUrl}/js/script.js"></script>`);
    await page.waitForFunction('typeof window.plausible === "function"');
    await page.evaluate(`plausible('Before')`);
    // The control: with the flag set, the next event is sent; the pageview and event before it were not.
    await page.evaluate(`window.__plausible = true; plausible('After')`);
    assert.deepEqual(summary(await storedHits(site, 1)), [['event', '/webdriver', 'After', 0]]);
  });

  test("an Umami tag on Plumb's /script.js is counted, with umami.track, SPA navigations and data-umami-event", async () => {
    const site = await newSite({ name: 'Umami tag', umami_website_id: UMAMI_ID });
    const html =
      '<!doctype html><html><head><meta charset="utf-8"><title>U</title>' +
      `<script defer src="${plumbUrl}/script.js" data-website-id="${UMAMI_ID}" data-domains="a.localhost"></script>` +
      '</head><body><button id="signup" data-umami-event="Signup" data-umami-event-plan="pro">Sign up</button></body></html>';
    const page = await browse('/blog?utm_campaign=spring', html);
    await page.waitForFunction('window.umami && typeof window.umami.track === "function"');
    await storedHits(site, 1);
    await page.evaluate(`umami.track('Subscribe', { revenue: 3, currency: 'USD', form: { place: 'footer' } })`);
    await storedHits(site, 2);
    await page.evaluate(`history.pushState({}, '', '/blog/next')`);
    await storedHits(site, 3);
    await page.click('#signup');
    const hits = await storedHits(site, 4);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(summary(hits), [
      ['pageview', '/blog', '', 0],
      ['event', '/blog', 'Subscribe', 300],
      ['pageview', '/blog/next', '', 0],
      ['event', '/blog/next', 'Signup', 0],
    ]);
    assert.equal(new Set(hits.map((h) => h.visitId)).size, 1);
    assert.deepEqual([...new Set(hits.map((h) => h.utmCampaign))], ['spring']);
    // Event data without the revenue keys, nested objects flattened as Umami does.
    assert.deepEqual(propsOf(hits), [['Signup', [['plan', 'pro']]], ['Subscribe', [['form.place', 'footer']]], ['pageview', []], ['pageview', []]]);
    // Reports count it like any pageview.
    const report = await plumb.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews,visits&date_from=2000-01-01`);
    assert.deepEqual(report.body, [{ pageviews: '2', visits: '1' }]);
  });

  test('an Umami tag whose data-domains leave this host out sends nothing', async () => {
    const id = '3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5c';
    const site = await newSite({ name: 'Umami elsewhere', umami_website_id: id });
    const tag = (domains: string) => `<!doctype html><title>E</title><script defer src="${plumbUrl}/script.js" data-website-id="${id}" data-domains="${domains}"></script>`;
    const page = await browse('/umami-elsewhere', tag('example.com'));
    await page.waitForFunction('window.umami && typeof window.umami.track === "function"');
    await page.evaluate(`umami.track('Nope')`);
    // The control: the same site's tag listing this host is counted; nothing came from the first page.
    await browse('/umami-here', tag('example.com,a.localhost'));
    assert.deepEqual(summary(await storedHits(site, 1)), [['pageview', '/umami-here', '', 0]]);
  });

  test("Umami's current script's request (its headers, cross-origin) passes the preflight and is counted", async () => {
    const id = '3f8a2c1e-5b6d-4e7f-8a9b-0c1d2e3f4a5d';
    const site = await newSite({ name: 'Umami headers', umami_website_id: id });
    const page = await browse('/umami-headers', '<!doctype html><title>H</title>');
    // The fetch of `send` in Umami's src/tracker/index.ts, as the script makes it with data-host-url pointing at
    // Plumb: JSON, the website id and hostname headers on every hit, the cache token from the second on.
    const send = (body: object, cache: string | undefined) =>
      page.evaluate(
        async ([endpoint, body, id, cache, hostname]) => {
          try {
            const res = await fetch(endpoint, {
              keepalive: true,
              method: 'POST',
              body: JSON.stringify(body),
              headers: {
                'Content-Type': 'application/json',
                'x-umami-website-id': id,
                'x-umami-hostname': hostname,
                ...(typeof cache !== 'undefined' && { 'x-umami-cache': cache }),
              },
              credentials: 'omit',
            });
            return res.status;
          } catch (err) {
            return String(err);
          }
        },
        [`${plumbUrl}/api/send`, body, id, cache, 'a.localhost'] as const,
      );
    const payload = { website: id, hostname: 'a.localhost', url: `${siteOrigin}/umami-headers`, referrer: '', title: 'H', screen: '1280x720', language: 'en' };
    assert.equal(await send({ type: 'event', payload }, undefined), 200);
    assert.equal(await send({ type: 'event', payload: { ...payload, name: 'Signup' } }, 'a-cache-token'), 200);
    assert.deepEqual(summary(await storedHits(site, 2)), [['pageview', '/umami-headers', '', 0], ['event', '/umami-headers', 'Signup', 0]]);
  });

  test("plausible-tracker (Plausible's npm client) is counted through /api/event, with its props", async () => {
    const site = await newSite({ name: 'plausible-tracker', domain: 'npm.example' });
    const bundle = await build({
      entryPoints: ['node_modules/plausible-tracker/build/module/index.js'],
      bundle: true,
      write: false,
      format: 'iife',
      globalName: 'PlausibleTracker',
    });
    const html =
      `<!doctype html><title>N</title><script>${bundle.outputFiles[0]!.text}</script><script>` +
      `const p = PlausibleTracker.default({ domain: 'npm.example', apiHost: ${JSON.stringify(plumbUrl)} });` +
      "p.trackPageview(); p.trackEvent('Signup', { props: { plan: 'pro', seats: 3 } });" +
      "p.trackPageview({ url: 'https://npm.example/pricing' });</script>";
    const page = await browse('/npm?utm_source=docs', html);
    const hits = await storedHits(site, 3);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(summary(hits).sort(), [
      ['event', '/npm', 'Signup', 0],
      ['pageview', '/npm', '', 0],
      ['pageview', '/pricing', '', 0],
    ].sort());
    assert.deepEqual(propsOf(hits), [['Signup', [['plan', 'pro'], ['seats', '3']]], ['pageview', []], ['pageview', []]]);
  });

  test("Plumb's own tracker: outbound-link, file-download and 404 options send events with the URL or path as a property", async () => {
    const site = await newSite({ name: 'Own options' });
    const html =
      `<!doctype html><html><head><title>Not found</title><script defer src="${plumbUrl}/script.js" data-site="${site}" ` +
      'data-outbound-links="true" data-file-downloads="true" data-track-404="true"></script></head><body>' +
      '<a id="out" href="https://example.org/" target="_blank">out</a><a id="file" href="/price-list.xlsx" download>xlsx</a>' +
      '<a id="same" href="#top">same page</a></body></html>';
    const page = await browse('/missing-page', html);
    await page.waitForFunction('typeof window.fathom === "function"');
    await storedHits(site, 2);
    await page.click('#same');
    await page.click('#file');
    await storedHits(site, 3);
    await page.click('#out');
    await storedHits(site, 4);
    // fathom.trackEvent: _value is the value, other keys are properties (nested values dropped).
    await page.evaluate(`fathom.trackEvent('Signup', { _value: 1299, plan: 'pro', seats: 3, nested: { a: 1 } })`);
    const hits = await storedHits(site, 5);
    assert.deepEqual(page.errors, []);
    assert.deepEqual(summary(hits).sort(), [
      ['event', '/missing-page', '404', 0],
      ['event', '/missing-page', 'File Download', 0],
      ['event', '/missing-page', 'Outbound Link: Click', 0],
      ['event', '/missing-page', 'Signup', 1299],
      ['pageview', '/missing-page', '', 0],
    ].sort());
    assert.deepEqual(propsOf(hits), [
      ['404', [['path', '/missing-page']]],
      ['File Download', [['url', `${siteOrigin}/price-list.xlsx`]]],
      ['Outbound Link: Click', [['url', 'https://example.org/']]],
      ['Signup', [['plan', 'pro'], ['seats', '3']]],
      ['pageview', []],
    ]);
  });
});
