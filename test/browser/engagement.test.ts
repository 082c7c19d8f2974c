// Engagement in real Chromium against the real Plumb collector: a tag with data-engagement="true" loads the
// extensions, and a page scrolled and then hidden, left, or followed by a single-page app's next pageview is stored
// as engagement rows of the pageview's visit (its deepest scroll and engaged time), one per hide; a tag without
// the attribute, or a visitor who blocked tracking, sends none. The default tag stays under 2 KB gzipped.

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser, Page } from 'playwright-core';
import type { StoredHit } from '../../src/domain/hits.js';
import { buildTrackerScript } from '../../src/http/tracker-script.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, desktopChromeUserAgent, launchBrowser, openPage } from './browser.js';

/** The page's visibility as the browser would switch it for another tab, announced the same way. */
const setVisibility = (state: 'hidden' | 'visible') => `
  Object.defineProperty(document, 'visibilityState', { configurable: true, get: () => '${state}' });
  Object.defineProperty(document, 'hidden', { configurable: true, get: () => ${state === 'hidden'} });
  document.dispatchEvent(new Event('visibilitychange'));`;

/** Where the bottom of the viewport is, in percent of the document's height (what the tracker reports). */
const BOTTOM_PERCENT = `Math.round((scrollY + innerHeight) / Math.max(document.documentElement.scrollHeight, document.body.scrollHeight) * 100)`;

describe('engagement from the tracker in Chromium, stored by Plumb', { skip: browserSkipReason() }, () => {
  let plumb: TestApp;
  let plumbUrl: string;
  let browser: Browser;
  let website: Server;
  let websiteUrl: string;
  const pages = new Map<string, string>();
  const opened: Page[] = [];

  before(async () => {
    plumb = await startTestApp();
    await plumb.app.listen({ port: 0, host: '127.0.0.1' });
    plumbUrl = `http://127.0.0.1:${(plumb.app.server.address() as AddressInfo).port}`;
    website = createServer((req, res) => {
      const html = pages.get(new URL(req.url ?? '/', 'http://x').pathname);
      if (html === undefined) res.writeHead(404).end();
      else res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(html);
    });
    await new Promise<void>((resolve) => website.listen(0, '127.0.0.1', resolve));
    websiteUrl = `http://a.localhost:${(website.address() as AddressInfo).port}`;
    browser = await launchBrowser();
  });

  after(async () => {
    for (const page of opened) await closePage(page).catch(() => {});
    await browser?.close();
    await plumb?.close();
    website?.closeAllConnections();
    await new Promise<void>((resolve) => website.close(() => resolve()));
  });

  async function newSite(name: string): Promise<string> {
    const res = await plumb.call(OWNER_TOKEN, 'POST', '/v1/sites', { name });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  }

  /** A page three screens tall, with the tag (and its attributes) in the head. */
  const longPage = (tag: Record<string, string>) =>
    `<!doctype html><html><head><meta charset="utf-8"><title>long</title>` +
    `<script src="${plumbUrl}/script.js" ${Object.entries(tag).map(([k, v]) => `${k}="${v}"`).join(' ')}></script></head>` +
    `<body style="margin:0"><div style="height:3000px">top</div><p>bottom</p></body></html>`;

  /** Opens `path` (served as `html`) as a desktop Chrome; resolves once the page and the tag's scripts loaded. */
  async function browse(path: string, html: string): Promise<Page & { errors: string[] }> {
    pages.set(path, html);
    const page = await openPage(browser, { userAgent: desktopChromeUserAgent(browser), viewport: { width: 800, height: 600 } });
    opened.push(page);
    // The load event waits for /script.ext.js too: the tag adds it while the page loads.
    await page.goto(`${websiteUrl}${path}`);
    await page.waitForFunction('typeof window.fathom === "function" && window.fathom._l !== undefined');
    return page;
  }

  /** Stored hits of `site` once at least `count` are there (or 5 s passed), and a moment later, so extra ones show. */
  async function storedHits(site: string, count: number, settleMs = 300): Promise<StoredHit[]> {
    const deadline = Date.now() + 5_000;
    for (;;) {
      await plumb.flushHits();
      if ((await plumb.events.listHits(site)).length >= count || Date.now() > deadline) break;
      await sleep(25);
    }
    await sleep(settleMs);
    await plumb.flushHits();
    return plumb.events.listHits(site);
  }

  /** Scrolls like a visitor (the wheel over the page) until the page is at `y`, and answers the bottom's percent. */
  async function scrollTo(page: Page, y: number): Promise<number> {
    await page.mouse.move(200, 200);
    await page.mouse.wheel(0, y);
    await page.waitForFunction(`scrollY >= ${y}`);
    return (await page.evaluate(BOTTOM_PERCENT)) as number;
  }

  test('the default tag stays under 2 KB gzipped; engagement is an extension loaded only by the tags asking', async () => {
    const size = (await buildTrackerScript()).gzipped.length;
    assert.ok(size < 2048, `gzipped size ${size} bytes`);
    const res = await fetch(`${plumbUrl}/script.ext.js`);
    assert.match(await res.text(), /visibilitychange/);
  });

  test('a scrolled page that is hidden stores one engagement row of its pageview, with its scroll depth and time', async () => {
    const site = await newSite('Engaged');
    const page = await browse('/long', longPage({ 'data-site': site, 'data-spa': 'history' }).replace('<script ', '<script data-engagement="true" '));
    const depth = await scrollTo(page, 900);
    assert.ok(depth > 40 && depth < 100, `scrolled to ${depth}%`);
    await sleep(200);
    await page.evaluate(setVisibility('hidden'));
    // The page is then left: nothing more was engaged since it was hidden, so nothing more is sent.
    await page.evaluate(`window.dispatchEvent(new Event('pagehide'))`);
    const hits = await storedHits(site, 2);
    const [view, ...rest] = hits;
    assert.equal(view?.type, 'pageview');
    assert.equal(rest.length, 1, JSON.stringify(rest.map((h) => h.type)));
    const engaged = rest[0]!;
    assert.equal(engaged.type, 'engagement');
    assert.equal(engaged.pathname, '/long');
    assert.equal(engaged.visitId, view!.visitId);
    assert.equal(engaged.scrollDepth, depth);
    assert.ok((engaged.engagedMs ?? 0) > 0, `engaged ${engaged.engagedMs} ms`);
    // The visit is the pageview's alone.
    const [visit] = await plumb.events.listVisits(site);
    assert.deepEqual([visit?.pageviews, visit?.events, visit?.exitPage], [1, 0, '/long']);

    // Shown again, scrolled further and navigated (a single-page app's next page): the page it leaves sends the
    // time since its first engagement row and its deepest scroll so far, then the next page's pageview follows.
    await page.evaluate(setVisibility('visible'));
    const deeper = await scrollTo(page, 1800);
    assert.ok(deeper > depth, `${deeper}% after ${depth}%`);
    await sleep(100);
    await page.evaluate(`history.pushState({}, '', '/long/next')`);
    const after = await storedHits(site, 4);
    assert.deepEqual(after.map((h) => [h.type, h.pathname]).sort(), [
      ['engagement', '/long'], ['engagement', '/long'], ['pageview', '/long'], ['pageview', '/long/next'],
    ]);
    const engagements = after.filter((h) => h.type === 'engagement');
    assert.deepEqual(engagements.map((h) => h.scrollDepth).sort(), [depth, deeper].sort());
    assert.ok(engagements.every((h) => (h.engagedMs ?? 0) > 0));
    assert.ok(after.every((h) => h.visitId === view!.visitId));
    // The next page starts from nothing: hidden at once, its row has the next page's path and its own scroll.
    await page.evaluate(setVisibility('hidden'));
    const last = (await storedHits(site, 5)).filter((h) => h.pathname === '/long/next' && h.type === 'engagement');
    assert.equal(last.length, 1);
    assert.deepEqual(page.errors, []);
  });

  test('a tag without data-engagement, and a visitor who blocked tracking, send no engagement', async () => {
    const plain = await newSite('Plain');
    const page = await browse('/plain', longPage({ 'data-site': plain }));
    await scrollTo(page, 600);
    await sleep(100);
    await page.evaluate(setVisibility('hidden'));
    const hits = await storedHits(plain, 1, 500);
    assert.deepEqual(hits.map((h) => h.type), ['pageview']);
    assert.deepEqual(await page.evaluate(`performance.getEntriesByType('resource').map((e) => new URL(e.name).pathname).filter((p) => p.startsWith('/script'))`), ['/script.js']);

    const blocked = await newSite('Blocked');
    const other = await browse('/blocked', longPage({ 'data-site': blocked, 'data-engagement': 'true' }));
    assert.equal((await storedHits(blocked, 1, 0)).length, 1);
    await other.evaluate(`localStorage.setItem('blockFathomTracking', 'true')`);
    await scrollTo(other, 600);
    await sleep(100);
    await other.evaluate(setVisibility('hidden'));
    assert.deepEqual((await storedHits(blocked, 2, 500)).map((h) => h.type), ['pageview']);
  });
});
