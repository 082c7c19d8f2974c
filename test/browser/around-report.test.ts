// The pages around the report in real headless Chromium against a real Plumb server: share pages embedded in
// another site's iframe (allowed origin: the report with its numbers; any other: refused by CSP).
// Screenshots go to test-artifacts/screenshots/ (light and dark).

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { formatTimestamp } from '../../src/domain/time.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, launchBrowser, openPage } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SCHEMES = ['light', 'dark'] as const;

/** Pageviews of the last days: a few visitors, several pages. */
function traffic(siteId: string): string {
  const now = Date.now();
  const hit = (minutesAgo: number, ip: string, path: string) =>
    JSON.stringify({ type: 'pageview', site_id: siteId, timestamp: formatTimestamp(new Date(now - minutesAgo * 60_000)), url: `https://blog.example${path}`, referrer: '', user_agent: UA, ip });
  return [hit(2000, '203.0.113.1', '/'), hit(1999, '203.0.113.1', '/about'), hit(900, '203.0.113.2', '/'), hit(30, '203.0.113.3', '/posts/1')].join('\n');
}

describe('pages around the report in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  /** Another web site that embeds the share page: served as blog.localhost (allowed) and evil.localhost (not). */
  let blog: Server;
  let blogPort: number;
  let siteId = '';

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Embedded blog', sharing: 'public' })).body.id;
    const imported = await t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: traffic(siteId),
    });
    assert.equal(JSON.parse(imported.body).imported, 4, imported.body);
    await t.flushHits();
    blog = createServer((_req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      res.end(`<!doctype html><title>A blog</title><h1>Our numbers</h1>
<iframe id="stats" src="${base}/share/${siteId}?embed=true" width="1000" height="800" onload="this.dataset.loaded = 'yes'"></iframe>`);
    });
    await new Promise<void>((resolve) => blog.listen(0, '127.0.0.1', resolve));
    blogPort = (blog.address() as AddressInfo).port;
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => blog?.close(resolve));
    await t?.close();
  });

  const setOrigins = async (origins: string[]) => {
    await t.meta.setEmbedOrigins(siteId, origins);
  };

  const shareFrame = (page: Page): Frame | undefined => page.frames().find((f) => f.url().includes(`/share/${siteId}`));

  it('shows the report inside an iframe of an allowed origin, its numbers read from /v1 without cookies', async () => {
    await setOrigins([`http://blog.localhost:${blogPort}`]);
    const [totals] = (await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${siteId}&aggregates=pageviews&date_from=${encodeURIComponent(formatTimestamp(new Date(Date.now() - 6 * 86_400_000)).slice(0, 10) + ' 00:00:00')}`)).body;
    for (const scheme of SCHEMES) {
      const page = await openPage(browser, { viewport: { width: 1100, height: 900 }, colorScheme: scheme });
      const v1: number[] = [];
      page.on('response', (r) => {
        if (r.url().startsWith(`${base}/v1/`)) v1.push(r.status());
      });
      const frameResponse = page.waitForResponse((r) => r.url().startsWith(`${base}/share/${siteId}`));
      const report = page.waitForResponse((r) => r.url().startsWith(`${base}/v1/aggregations`));
      await page.goto(`http://blog.localhost:${blogPort}/`);
      const answer = await frameResponse;
      assert.match(answer.headers()['content-security-policy'] ?? '', new RegExp(`frame-ancestors http://blog\\.localhost:${blogPort}(;|$)`));
      const frame = shareFrame(page);
      assert.ok(frame, 'the share page loaded in the frame');
      await frame.locator('h1').filter({ hasText: 'Embedded blog' }).first().waitFor();
      // The report's own reads succeeded from inside the cross-site frame (no cookie: the page's own session).
      assert.equal((await report).status(), 200);
      await frame.getByText(new Intl.NumberFormat('en-US').format(Number(totals!.pageviews)), { exact: true }).first().waitFor();
      assert.ok(v1.every((s) => s === 200), `the frame's /v1 answers: ${v1.join(', ')}`);
      assert.equal(await frame.locator('nav').count(), 0, 'no top bar in embed mode');
      assert.ok(Number(totals!.pageviews) >= 3);
      await shot(page, `share-embedded-${scheme}`);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    }
  });

  it('refuses to be framed by an origin the site did not allow', async () => {
    await setOrigins([`http://blog.localhost:${blogPort}`]);
    const page = await openPage(browser, { viewport: { width: 1100, height: 900 } });
    const console: string[] = [];
    page.on('console', (m) => console.push(m.text()));
    const frameResponse = page.waitForResponse((r) => r.url().startsWith(`${base}/share/${siteId}`));
    await page.goto(`http://evil.localhost:${blogPort}/`);
    const answer = await frameResponse;
    assert.match(answer.headers()['content-security-policy'] ?? '', new RegExp(`frame-ancestors http://blog\\.localhost:${blogPort}(;|$)`));
    await page.locator('#stats[data-loaded]').waitFor({ state: 'attached' });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame);
    assert.ok(!frame.url().startsWith(base), `the frame shows Chromium's error page, not the report (${frame.url()})`);
    assert.ok(console.some((m) => /frame-ancestors/.test(m)), `Chromium names the refusal: ${console.join(' | ')}`);
    await page.context().close();
  });

  it('is not framable at all while the site allows no origin', async () => {
    await setOrigins([]);
    const page = await openPage(browser, { viewport: { width: 1100, height: 900 } });
    const frameResponse = page.waitForResponse((r) => r.url().startsWith(`${base}/share/${siteId}`));
    await page.goto(`http://blog.localhost:${blogPort}/`);
    assert.match((await frameResponse).headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
    await page.locator('#stats[data-loaded]').waitFor({ state: 'attached' });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame && !frame.url().startsWith(base), 'refused');
    await page.context().close();
  });
});
