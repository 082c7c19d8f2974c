// The dashboard's look, as a viewer meets it (issue 45, points 1 and 6), in real Chromium against a real server
// with generated traffic: Inter served by Plumb and used, no request leaving the server's host, text contrast of at
// least 4.5:1 in light and dark, nothing wrapping at 1280 px, a chart at least 260 px tall whose first and last bars
// are whole, the date range and three metric cards on a 390x844 first screen, the date-range picker by keyboard,
// the live count opening the realtime view with /v1/current_visitors' numbers, and the JS+CSS weight.
// Screenshots: test-artifacts/screenshots/visual-*.png.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { hashPassword } from '../../src/domain/secrets.js';
import { formatTimestamp } from '../../src/domain/time.js';
import { demoTraffic } from '../../src/cli/demo-traffic.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, launchBrowser, logInThroughForm, openPage, sidewaysOverflow } from './browser.js';
import { lowContrast } from './contrast.js';
import { openRealtime } from './report-toolbar.js';

// The functions given to page.evaluate run in Chromium; this project compiles without the DOM library, so these
// module-local declarations stand for the page's globals (they declare nothing outside this file).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any;
declare const getComputedStyle: (el: any) => any;
declare const innerHeight: number;
declare const innerWidth: number;
type El = any;

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'looks@example.test';
const PASSWORD = 'a long password for looks';
const DAY = 86_400_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const fmtInt = (v: string | number) => new Intl.NumberFormat('en-US').format(Number(v) || 0);
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** Text elements a viewer reads on the report, by what they are. */
const READ = [
  ['heading', 'h1'], ['link', '.report-head a'], ['metric label', '.metric-label'], ['metric value', '.metric-value'],
  ['change', '.change'], ['toolbar button', '.date-range-button .range-name'], ['range dates', '.range-dates'],
  ['compare menu', '[data-menu="compare"] .menu-text'], ['live count', '[data-live] [role="status"]'], ['export', '.export-all .label'],
  ['tab', '[role="tab"]'], ['selected tab', '[role="tab"][aria-selected="true"]'], ['table cell', 'td'], ['column heading', 'th'],
  ['muted text', '.muted'], ['card heading', 'h2'], ['secondary button', 'button.secondary'], ['chart legend', '.chart-legend'],
] as const;

describe('the dashboard\'s visual language', { skip }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let siteId = '';
  const pages: Page[] = [];
  const requests: string[] = [];

  async function newPage(options: Parameters<typeof openPage>[1] = {}) {
    // tsx compiles the functions given to evaluate with esbuild's keepNames, which calls a __name helper the page lacks.
    const p = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US', initScript: 'globalThis.__name = (f) => f;', ...options });
    p.on('request', (r) => requests.push(r.url()));
    if (pages[0]) await p.context().addCookies(await pages[0].context().cookies());
    pages.push(p);
    return p;
  }
  const shot = (p: Page, name: string, fullPage = true) => p.screenshot({ path: join(SHOTS, `visual-${name}.png`), fullPage });
  const loaded = async (p: Page) => {
    await p.locator('[data-metric="visitors"] [data-value]').filter({ hasText: /\d/ }).waitFor();
    await p.locator('[data-table] tbody tr').first().waitFor();
    await p.locator('.chart canvas').first().waitFor();
    await p.locator('[data-live][data-total]').waitFor();
  };
  async function v1Visitors(from: string, to: string) {
    const q = new URLSearchParams({ entity: 'pageview', entity_id: siteId, aggregates: 'visitors', date_from: `${from} 00:00:00`, date_to: `${to} 23:59:59` });
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${q}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return fmtInt((res.body as Record<string, string>[])[0]!.visitors!);
  }

  async function importLines(lines: object[]): Promise<void> {
    const imported = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n') });
    assert.equal(imported.statusCode, 200, imported.body);
    await t.flushHits();
  }

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Looks shop', timezone: 'UTC' });
    siteId = res.body.id;
    const now = Date.now();
    const lines: object[] = [];
    for (const hit of demoTraffic({ siteId, start: new Date(now - 40 * DAY), days: 41, visitsPerDay: 20, seed: 3, hostname: 'https://looks.example' })) {
      if (Date.parse(`${hit.timestamp.replace(' ', 'T')}Z`) <= now - 10 * 60_000) lines.push(hit);
    }
    await importLines(lines);
    browser = await launchBrowser();
    const login = await newPage();
    await logInThroughForm(login, base, EMAIL, PASSWORD);
  });

  after(async () => {
    for (const p of pages) await closePage(p).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('weighs under 250 KB of JS and CSS gzipped, and serves its font itself', async () => {
    let total = 0;
    for (const path of ['/dashboard/app.js', '/dashboard/app.css']) {
      const res = await t.app.inject({ method: 'GET', url: path, headers: { 'accept-encoding': 'gzip' } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['content-encoding'], 'gzip');
      total += res.rawPayload.length;
    }
    assert.ok(total < 250_000, `JS+CSS gzipped: ${total} bytes`);
    const css = (await t.app.inject({ method: 'GET', url: '/dashboard/app.css' })).body;
    const fonts = [...css.matchAll(/url\("?([^")]+\.woff2)"?\)/g)].map((m) => m[1]!);
    assert.ok(fonts.length >= 1 && fonts.every((f) => f.startsWith('/dashboard/fonts/')), fonts.join());
    const font = await t.app.inject({ method: 'GET', url: fonts[0]! });
    assert.equal(font.statusCode, 200);
    assert.equal(font.headers['content-type'], 'font/woff2');
    assert.equal(font.rawPayload.subarray(0, 4).toString('latin1'), 'wOF2');
    assert.equal((await t.app.inject({ method: 'GET', url: '/dashboard/fonts/nothing.woff2' })).statusCode, 404);
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`reads well in ${scheme}: Inter, contrast of 4.5:1, one line per tab row and label, a tall chart, nothing from elsewhere`, async () => {
      requests.length = 0;
      const page = await newPage({ colorScheme: scheme });
      await page.goto(`/sites/${siteId}?range=30d`);
      await loaded(page);
      await page.evaluate(() => document.fonts.ready);
      assert.match(await page.evaluate(() => getComputedStyle(document.body).fontFamily), /^"Inter Variable"/);
      assert.ok(await page.evaluate(() => [...document.fonts].some((f: El) => f.family.replace(/"/g, '') === 'Inter Variable' && f.status === 'loaded')), 'Inter loaded');
      assert.ok(await page.evaluate(() => document.fonts.check('16px "Inter Variable"')));
      const elsewhere = requests.filter((u) => !u.startsWith(base) && !u.startsWith('data:') && !u.startsWith('blob:'));
      assert.deepEqual(elsewhere, []);
      assert.ok(requests.some((u) => u.startsWith(`${base}/dashboard/fonts/`)), 'the font came from the server');

      const low = await lowContrast(page, READ);
      assert.deepEqual(low, [], `${scheme}: text under 4.5:1`);

      // One line: every tab of a row at the same height, every metric label a single line.
      const wrapped = await page.evaluate(() => [
        ...[...document.querySelectorAll('[role=tablist]')].filter((row: El) => new Set([...row.querySelectorAll('[role=tab]')].map((tab: El) => Math.round(tab.getBoundingClientRect().top))).size > 1)
          .map((row: El) => `tabs ${row.getAttribute('aria-label')}`),
        ...[...document.querySelectorAll('.metric-label')].filter((l: El) => l.getBoundingClientRect().height > 1.6 * parseFloat(getComputedStyle(l).lineHeight)).map((l: El) => l.textContent),
        ...[...document.querySelectorAll('.report-toolbar > :not(.visually-hidden):not(:empty)')].map((e: El) => Math.round(e.getBoundingClientRect().top + e.getBoundingClientRect().height / 2))
          .filter((mid: number, _i: number, all: number[]) => Math.abs(mid - all[0]!) > 4).map(() => 'toolbar'),
      ]);
      assert.deepEqual(wrapped, [], 'wraps at 1280 px');
      const height = await page.locator('.chart canvas').first().evaluate((c) => c.getBoundingClientRect().height);
      assert.ok(height >= 260, `chart ${height}px tall`);
      assert.ok((await sidewaysOverflow(page)) <= 0);
      await shot(page, `report-${scheme}`);
      assert.deepEqual(page.errors, []);
    });
  }

  it('draws the first and last bars whole', async () => {
    const page = await newPage();
    await page.goto(`/sites/${siteId}?range=custom&from=${iso(Date.now() - 15 * DAY)}&to=${iso(Date.now() - 2 * DAY)}&chart=bar&compare=off`);
    await loaded(page);
    // Runs of columns in the bars' colour across the plot: one per day, the first and last as wide as the others.
    const runs = await page.locator('.chart canvas').first().evaluate((canvas: El) => {
      const colour = getComputedStyle(document.documentElement).getPropertyValue('--chart-line').trim();
      const probe = document.createElement('canvas').getContext('2d');
      probe.fillStyle = colour;
      probe.fillRect(0, 0, 1, 1);
      const [r, g, b]: number[] = probe.getImageData(0, 0, 1, 1).data;
      const { width, height } = canvas;
      const data: number[] = canvas.getContext('2d').getImageData(0, 0, width, height).data;
      const hit = (x: number) => {
        for (let y = 0; y < height; y++) {
          const i = (y * width + x) * 4;
          if (Math.abs(data[i]! - r!) < 8 && Math.abs(data[i + 1]! - g!) < 8 && Math.abs(data[i + 2]! - b!) < 8 && data[i + 3]! > 200) return true;
        }
        return false;
      };
      const found: number[] = [];
      let run = 0;
      for (let x = 0; x < width; x++) {
        if (hit(x)) run++;
        else if (run) found.push(run), (run = 0);
      }
      if (run) found.push(run);
      return found;
    });
    assert.equal(runs.length, 14, `bars: ${runs.join()}`);
    const middle = [...runs].sort((a, b) => a - b)[7]!;
    assert.ok(runs[0]! >= 0.8 * middle && runs.at(-1)! >= 0.8 * middle, `bar widths ${runs.join()}`);
    await shot(page, 'bars', false);
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`shows the date range and three metric cards on a 390x844 first screen (${scheme})`, async () => {
      const phone = await newPage({ viewport: { width: 390, height: 844 }, colorScheme: scheme, isMobile: true, hasTouch: true });
      await phone.goto(`/sites/${siteId}`);
      await loaded(phone);
      const inView = (selector: string) => phone.locator(selector).evaluateAll((els) =>
        els.filter((e: El) => { const r = e.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight && r.right <= innerWidth; }).length);
      assert.equal(await inView('.date-range-button'), 1, 'the date range on the first screen');
      assert.ok((await inView('button.metric')) >= 3, `${await inView('button.metric')} metric cards on the first screen`);
      assert.ok((await sidewaysOverflow(phone)) <= 0);
      await shot(phone, `phone-${scheme}`, false);
      await phone.locator('.date-range-button').click();
      await shot(phone, `phone-range-${scheme}`, false);
    });
  }

  it('changes the range from the keyboard, with ISO dates', async () => {
    const page = await newPage();
    await page.goto(`/sites/${siteId}`);
    await loaded(page);
    await page.locator('.date-range-button').focus();
    await page.keyboard.press('Enter');
    const chosen = page.locator('[data-range-option][aria-pressed="true"]');
    assert.equal(await chosen.getAttribute('data-range-option'), '7d');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('data-range-option')), '7d');
    await page.keyboard.press('ArrowDown'); // Last 30 days
    await page.keyboard.press('Enter');
    await page.waitForURL(/range=30d/);
    assert.equal(await page.evaluate(() => document.activeElement?.classList.contains('date-range-button')), true, 'focus back on the button');
    const today = iso(Date.now());
    await page.locator('.range-dates').filter({ hasText: `${iso(Date.now() - 29 * DAY)} – ${today}` }).waitFor();
    await page.locator('[data-metric="visitors"] [data-value]').filter({ hasText: await v1Visitors(iso(Date.now() - 29 * DAY), today) }).waitFor();

    // A custom range typed and stepped with the arrow keys: From 10 days ago, one day earlier by ArrowDown.
    await page.keyboard.press('ArrowDown');
    await page.locator('[data-range-option="custom"]').focus();
    await page.keyboard.press('Enter');
    assert.equal(await page.evaluate(() => document.activeElement?.getAttribute('name')), 'from');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type(iso(Date.now() - 10 * DAY));
    await page.keyboard.press('ArrowDown');
    await page.keyboard.press('Tab');
    await page.keyboard.press('ControlOrMeta+a');
    await page.keyboard.type('2026-02-30');
    await page.keyboard.press('Enter');
    await page.getByRole('alert').filter({ hasText: 'YYYY-MM-DD' }).waitFor();
    await page.keyboard.press('ControlOrMeta+a');
    const to = iso(Date.now() - 3 * DAY);
    await page.keyboard.type(to);
    await page.keyboard.press('Enter');
    const from = iso(Date.now() - 11 * DAY);
    await page.waitForURL((u) => u.searchParams.get('from') === from && u.searchParams.get('to') === to);
    await page.locator('.range-dates').filter({ hasText: `${from} – ${to}` }).waitFor();
    await page.locator('[data-metric="visitors"] [data-value]').filter({ hasText: await v1Visitors(from, to) }).waitFor();
    // Escape closes the panel without changing anything.
    await page.keyboard.press('Enter');
    await page.locator('.date-range-panel').waitFor();
    await page.keyboard.press('Escape');
    await page.locator('.date-range-panel').waitFor({ state: 'hidden' });
    assert.deepEqual(page.errors, []);
  });

  it('opens the realtime view from the live count, with /v1/current_visitors\' numbers', async () => {
    // Someone on the site as this test starts (made in the setup, they could leave the five minutes first).
    await importLines([{ type: 'pageview', site_id: siteId, timestamp: formatTimestamp(new Date()), url: 'https://looks.example/now', referrer: 'https://news.ycombinator.com/', user_agent: UA, ip: '3.9.0.1' }]);
    const page = await newPage();
    await page.goto(`/sites/${siteId}`);
    await loaded(page);
    const current = (await t.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?site_id=${siteId}&detailed=true`)).body;
    assert.ok(current.total >= 1);
    assert.equal((await page.locator('[data-live]').textContent())?.trim(), `${fmtInt(current.total)} online`);
    assert.match((await page.locator('[data-live] .pulse').getAttribute('class'))!, /\bactive\b/);
    // It pulses three times for the count shown, then rests (an endless pulse kept a fifth of a core busy per page).
    const pulse = await page.locator('[data-live] .pulse').evaluate((e) => [getComputedStyle(e).animationName, getComputedStyle(e).animationIterationCount]);
    assert.deepEqual(pulse, ['pulse', '3']);
    const view = await openRealtime(page);
    assert.equal(await view.locator('[data-realtime-total]').getAttribute('data-realtime-total'), String(current.total));
    assert.deepEqual(await view.locator('[data-live-pages] [data-live-item]').evaluateAll((els) => els.map((e: El) => e.getAttribute('data-live-item'))),
      current.content.slice(0, 10).map((c: { hostname: string; pathname: string }) => `${c.hostname}${c.pathname}`));
    await shot(page, 'realtime', false);
    await page.keyboard.press('Escape');
    await view.waitFor({ state: 'hidden' });

    // A site nobody is on now (one visit three days ago): "0 online", and the dot stays still.
    const quiet = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Quiet', timezone: 'UTC' })).body.id;
    const hit = { type: 'pageview', site_id: quiet, timestamp: formatTimestamp(new Date(Date.now() - 3 * DAY)), url: 'https://quiet.example/', referrer: '', user_agent: UA, ip: '3.9.0.2' };
    const res = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' }, payload: JSON.stringify(hit) });
    assert.equal(res.statusCode, 200, res.body);
    await t.flushHits();
    await page.goto(`/sites/${quiet}`);
    await page.locator('[data-live][data-total="0"]').waitFor();
    assert.equal((await page.locator('[data-live]').textContent())?.trim(), '0 online');
    assert.equal(await page.locator('[data-live] .pulse').getAttribute('class'), 'pulse');
    assert.equal(await page.locator('[data-live] .pulse').evaluate((e) => getComputedStyle(e).animationName), 'none');
  });
});
