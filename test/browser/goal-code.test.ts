// The goals page's code for each tracker, run as written in real Chromium on a page tagged for that tracker and
// pointed at a real Plumb: every example sends the goal (with its value where it gives one), so the code a site
// owner copies works, whichever script the site keeps.
//
// A node:http server plays the website on http://a.localhost:PORT (Chromium resolves *.localhost to loopback).

import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Browser } from 'playwright-core';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, desktopChromeUserAgent, launchBrowser, openPage } from './browser.js';
import { rootFileUrl } from '../helpers/root.js';

interface GoalExample {
  tracker: string;
  kind: 'js' | 'html';
  code: string;
}
// The dashboard's modules are plain browser JavaScript: imported by URL, typed here.
const { goalCode } = (await import(rootFileUrl('src/web/pages/goal-code.js'))) as { goalCode: (name: string) => GoalExample[] };

const skip = browserSkipReason();
const UMAMI_ID = '5c0e8a1b-2d3f-4a5b-8c6d-7e8f9a0b1c2d';
const GOAL = 'Sign up "now"';

describe("the goals page's code for every tracker, run in Chromium", { skip }, () => {
  let plumb: TestApp;
  let plumbUrl: string;
  let website: Server;
  let siteOrigin: string;
  let browser: Browser;
  let site: string;
  const pages = new Map<string, string>();

  before(async () => {
    plumb = await startTestApp();
    await plumb.app.listen({ port: 0, host: '127.0.0.1' });
    plumbUrl = `http://127.0.0.1:${(plumb.app.server.address() as AddressInfo).port}`;
    website = createServer((req, res) => {
      const html = pages.get(new URL(req.url ?? '/', 'http://x').pathname);
      res.writeHead(html === undefined ? 404 : 200, { 'content-type': 'text/html; charset=utf-8' }).end(html ?? '<!doctype html><title>404</title>');
    });
    await new Promise<void>((resolve) => website.listen(0, '127.0.0.1', resolve));
    siteOrigin = `http://a.localhost:${(website.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    const res = await plumb.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Goals', domain: 'a.localhost', umami_website_id: UMAMI_ID });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    site = res.body.id;
  });

  after(async () => {
    await browser?.close();
    await plumb?.close();
    website?.closeAllConnections();
    await new Promise((resolve) => website?.close(resolve));
  });

  /** The events named `name` stored so far, after waiting until there are `count` (or 5 s pass). */
  async function goalEvents(name: string, count: number) {
    const deadline = Date.now() + 5_000;
    for (;;) {
      await plumb.flushHits();
      const events = (await plumb.events.listHits(site)).filter((h) => h.type === 'event' && h.eventName === name);
      if (events.length >= count || Date.now() > deadline) return events;
      await sleep(25);
    }
  }

  /** The tag each tracker's example runs under: Plumb's own, Plausible's script path, Umami's attributes. */
  const tagOf = (tracker: string) =>
    tracker.startsWith('Plausible')
      ? `<script defer data-domain="a.localhost" src="${plumbUrl}/js/script.tagged-events.js"></script>`
      : tracker.startsWith('Umami')
        ? `<script defer src="${plumbUrl}/script.js" data-website-id="${UMAMI_ID}"></script>`
        : `<script src="${plumbUrl}/script.js" data-site="${site}" defer></script>`;
  const ready = (tracker: string) =>
    tracker.startsWith('Plausible') ? 'typeof window.plausible === "function"' : tracker.startsWith('Umami') ? 'typeof window.umami === "object"' : 'typeof window.fathom === "function" && typeof window.fathom.trackEvent === "function"';

  /** Runs `example` as a site owner would paste it, on a page with its tracker; the page's script errors, if any. */
  async function run(example: GoalExample, path: string): Promise<string[]> {
    const body = example.kind === 'html' ? example.code.replace('…', 'Go').replace('<button', '<button id="go"') : '<button id="go">Go</button>';
    pages.set(path, `<!doctype html><html><head><meta charset="utf-8"><title>P</title>${tagOf(example.tracker)}</head><body>${body}</body></html>`);
    // Plausible's script (and Plumb's compatible one) sends nothing from automated browsers unless told it is a test.
    const page = await openPage(browser, { userAgent: desktopChromeUserAgent(browser), initScript: 'window.__plausible = true' });
    try {
      await page.goto(`${siteOrigin}${path}`);
      await page.waitForFunction(ready(example.tracker));
      if (example.kind === 'js') await page.evaluate(example.code);
      else await page.click('#go');
      return page.errors;
    } finally {
      await closePage(page);
    }
  }

  it('sends the goal from every example, as shown, with its value where it gives one', async () => {
    const examples = goalCode(GOAL);
    // A quote in the name: no Plausible class can hold it, so that form is left out rather than shown broken.
    assert.deepEqual(examples.map((e) => e.kind), ['js', 'js', 'js', 'js', 'html']);
    for (const [i, example] of examples.entries()) {
      assert.deepEqual(await run(example, `/p${i}`), [], example.code);
      assert.equal((await goalEvents(GOAL, i + 1)).length, i + 1, `${example.tracker}: ${example.code}`);
    }
    assert.deepEqual((await goalEvents(GOAL, examples.length)).map((e) => e.value).sort((a, b) => a - b), [0, 0, 0, 0, 1999]);
  });

  it("gives Plausible's class form for names it can hold, spaces written as +", async () => {
    const examples = goalCode('Sign up');
    const tagged = examples.filter((e) => e.kind === 'html' && e.tracker.startsWith('Plausible'));
    assert.deepEqual(tagged.map((e) => e.code), ['<button class="plausible-event-name=Sign+up">…</button>']);
    assert.deepEqual(await run(tagged[0]!, '/tagged'), []);
    assert.equal((await goalEvents('Sign up', 1)).length, 1);
  });
});
