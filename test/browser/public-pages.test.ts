// The pages a person meets before logging in, in real Chromium: the login, first-run setup and forgotten-password
// pages and a public share page, each in light and dark at 1280 px and on a 390 px phone, read at 4.5:1 or more and
// without sideways scrolling. Screenshots go to test-artifacts/screenshots/public-<page>-<look>.png.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser } from 'playwright-core';
import { formatTimestamp } from '../../src/domain/time.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, launchBrowser, openPage, sidewaysOverflow } from './browser.js';
import { lowContrast } from './contrast.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** Text a visitor reads on these pages, by what it is. */
const READ = [['heading', 'h1'], ['label', 'label'], ['button', 'button'], ['paragraph', 'p']] as const;
const LOOKS = [
  { name: 'light', options: { colorScheme: 'light' as const, viewport: { width: 1280, height: 900 } } },
  { name: 'dark', options: { colorScheme: 'dark' as const, viewport: { width: 1280, height: 900 } } },
  { name: 'phone-light', options: { colorScheme: 'light' as const, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } },
  { name: 'phone-dark', options: { colorScheme: 'dark' as const, viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true } },
];

describe('the pages before logging in, in Chromium', { skip }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let siteId = '';

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Open shop', timezone: 'UTC', sharing: 'public' })).body.id;
    const line = { type: 'pageview', site_id: siteId, timestamp: formatTimestamp(new Date(Date.now() - 3_600_000)), url: 'https://open.example/', referrer: '', user_agent: UA, ip: '3.1.2.3' };
    const imported = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' }, payload: JSON.stringify(line) });
    assert.equal(imported.statusCode, 200, imported.body);
    await t.flushHits();
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await t?.close();
  });

  const PAGES = [
    { name: 'login', path: () => '/login', ready: ['form button[type=submit]'] },
    { name: 'setup', path: () => '/setup', ready: ['form button[type=submit]'] },
    { name: 'forgot', path: () => '/forgot', ready: ['h1'] },
    { name: 'share', path: () => `/share/${siteId}`, ready: ['[data-table="pathname"] tbody tr', '.chart canvas', '[data-table="country_code"] tbody tr'] },
  ];

  for (const look of LOOKS) {
    it(`reads at 4.5:1 or more and fits the screen: ${look.name}`, async () => {
      const page = await openPage(browser, { baseURL: base, locale: 'en-US', ...look.options });
      try {
        for (const p of PAGES) {
          await page.goto(p.path());
          for (const selector of p.ready) await page.locator(selector).first().waitFor();
          await page.evaluate(() => (globalThis as unknown as { document: { fonts: { ready: Promise<unknown> } } }).document.fonts.ready);
          const low = (await lowContrast(page, READ)).filter((m) => !m.endsWith('not on the page'));
          assert.deepEqual(low, [], `${p.name} (${look.name}): text under 4.5:1`);
          assert.ok((await sidewaysOverflow(page)) <= 0, `${p.name} (${look.name}) scrolls sideways`);
          await page.screenshot({ path: join(SHOTS, `public-${p.name}-${look.name}.png`), fullPage: true });
        }
        assert.deepEqual(page.errors, []);
      } finally {
        await closePage(page);
      }
    });
  }
});
