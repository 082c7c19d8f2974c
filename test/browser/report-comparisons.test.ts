// Honest comparisons and a bounded number of requests on the report page, in real Chromium against a real Plumb:
// today against yesterday only up to the same time of day (the page's comparison numbers equal /v1's for that
// part of yesterday), "new" and "no data" shown without the colour of good or bad news, metric labels on one line
// at 1280 px, and a range change answered by as many requests for a site with 8 goals as for one with 1.
// Screenshots: test-artifacts/screenshots/report-comparisons-*.png (1280 px light and dark, 390 px).

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { demoTraffic } from '../../src/cli/demo-traffic.js';
import { hashPassword } from '../../src/domain/secrets.js';
import { formatTimestamp } from '../../src/domain/time.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, launchBrowser, openPage } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'comparisons@example.test';
const PASSWORD = 'a long comparisons password';
const DAY = 86_400_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** The requests that answer the report's numbers (the live count's polling is not one). */
const REPORT_CALL = /\/v1\/aggregations\?|\/dashboard\/api\/report\//;

/** The browser's getComputedStyle, named for this file's types (they have no DOM library). */
type Styles = { getComputedStyle(e: unknown): { color: string; lineHeight: string } };
const utcDay = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);

describe('report comparisons and requests in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  const pages: Page[] = [];
  const sites = { one: '', eight: '', fresh: '' };

  const call = async (method: 'POST', url: string, body: unknown) => {
    const res = await t.call(OWNER_TOKEN, method, url, body);
    assert.ok(res.status < 300, JSON.stringify(res.body));
    return res.body;
  };
  const v1 = async (params: Record<string, string>) => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${new URLSearchParams(params)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  };
  async function importLines(lines: object[]) {
    const res = await t.app.inject({
      method: 'POST', url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    assert.equal(res.statusCode, 200, res.body);
    await t.flushHits();
  }
  async function newPage(options: Parameters<typeof openPage>[1] = {}) {
    const p = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US', ...options });
    pages.push(p);
    await p.goto('/login');
    await p.getByLabel('Email').fill(EMAIL);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Log in' }).click();
    await p.waitForURL(`${base}/sites`);
    return p;
  }
  /** Waits until every panel of the report has its numbers. */
  async function settled(p: Page) {
    await p.locator('.headline[aria-busy="false"] [data-metric="visitors"] [data-value]').waitFor();
    await p.waitForFunction(() => !(globalThis as unknown as { document: { querySelector(s: string): unknown } }).document.querySelector('[aria-busy="true"]'));
    await p.waitForLoadState('networkidle');
  }
  /** Picks a named range with whichever control the toolbar offers (a menu of ranges, or a select). */
  async function pickRange(p: Page, range: string) {
    const button = p.locator('.date-range-button');
    if (await button.count()) {
      await button.click();
      await p.locator(`[data-range-option="${range}"]`).click();
    } else {
      await p.getByLabel('Date range').selectOption(range);
    }
  }

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));

    sites.one = (await call('POST', '/v1/sites', { name: 'One goal', timezone: 'UTC' })).id;
    sites.eight = (await call('POST', '/v1/sites', { name: 'Eight goals', timezone: 'UTC' })).id;
    sites.fresh = (await call('POST', '/v1/sites', { name: 'Opened today', timezone: 'UTC' })).id;
    await call('POST', `/v1/sites/${sites.one}/events`, { name: 'Purchase', currency: 'euro' });
    await call('POST', `/v1/sites/${sites.fresh}/events`, { name: 'Purchase', currency: 'euro' });
    for (const name of ['Purchase', 'Newsletter signup', 'Trial', 'Demo booked', 'Download', 'Contact', 'Invite', 'Upgrade']) {
      await call('POST', `/v1/sites/${sites.eight}/events`, { name });
    }
    const now = Date.now();
    const lines: object[] = [];
    for (const [siteId, seed] of [[sites.one, 3], [sites.eight, 4]] as const) {
      for (const hit of demoTraffic({ siteId, start: new Date(now - 20 * DAY), days: 21, visitsPerDay: 30, seed, hostname: 'https://shop.example' })) {
        // An event names its goal into being: the one-goal site gets only the goal it has.
        const otherGoal = siteId === sites.one && hit.type === 'event' && (hit as { name?: string }).name !== 'Purchase';
        if (Date.parse(`${hit.timestamp.replace(' ', 'T')}Z`) <= now - 10 * 60_000 && !otherGoal) lines.push(hit);
      }
    }
    // A visit in yesterday's last minute: part of yesterday, not of yesterday up to now's time of day.
    lines.push({ type: 'pageview', site_id: sites.one, timestamp: `${utcDay(1)} 23:59:30`, url: 'https://shop.example/late', referrer: '', user_agent: UA, ip: '3.14.0.1' });
    // The fresh site: one visit a minute ago, nothing before.
    lines.push({ type: 'pageview', site_id: sites.fresh, timestamp: formatTimestamp(new Date(now - 60_000)), url: 'https://fresh.example/', referrer: '', user_agent: UA, ip: '3.14.0.2' });
    await importLines(lines);
    browser = await launchBrowser();
  });

  after(async () => {
    for (const p of pages) await closePage(p).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('compares today with yesterday up to the same time of day, with the numbers /v1 gives for that part', async () => {
    const page = await newPage();
    await page.goto(`/sites/${sites.one}?range=today&compare=previous`);
    await settled(page);
    const note = page.locator('.headline [data-compared-to]');
    const [from, to] = [await note.getAttribute('data-compared-from'), await note.getAttribute('data-compared-to')];
    assert.equal(from, utcDay(1), 'yesterday');
    const clock = to!.slice(11);
    assert.equal(to!.slice(0, 10), utcDay(1));
    const nowTime = new Date().toISOString().slice(11, 19);
    const seconds = (hms: string) => hms.split(':').reduce((s, x) => s * 60 + Number(x), 0);
    assert.ok(Math.abs(seconds(nowTime) - seconds(clock)) < 180 || seconds(nowTime) < 180, `${clock} is about now (${nowTime})`);
    assert.match((await note.textContent())!, new RegExp(`until ${clock.slice(0, 5)}`));

    const params = { entity: 'pageview', entity_id: sites.one, date_from: `${from} 00:00:00`, aggregates: 'visitors,visits,pageviews' };
    const [part] = await v1({ ...params, date_to: to! });
    const [whole] = await v1({ ...params, date_to: `${from} 23:59:59` });
    for (const key of ['visitors', 'visits', 'pageviews']) {
      assert.equal(await page.locator(`[data-metric="${key}"] [data-change]`).getAttribute('data-previous'), String(Number(part![key])), key);
    }
    if (clock < '23:59:00') assert.ok(Number(whole!.visitors) > Number(part!.visitors), 'the rest of yesterday is left out');

    // This month is compared with last month up to the same day and time, too (unless last month was shorter).
    await pickRange(page, 'month');
    await settled(page);
    const monthTo = await note.getAttribute('data-compared-to');
    const today = utcDay(0);
    if (Number(today.slice(8)) <= 28) assert.equal(monthTo!.slice(8, 10), today.slice(8), 'the same day of last month');
    assert.match(monthTo!, /\d\d:\d\d:\d\d$/);
  });

  it('shows "new" and "no data" neutrally, not as good or bad news', async () => {
    const page = await newPage();
    await page.goto(`/sites/${sites.fresh}?range=today&compare=previous`);
    await settled(page);
    const visitors = page.locator('[data-metric="visitors"] [data-change]');
    assert.equal((await visitors.locator('[data-change-text]').textContent())?.trim(), 'new');
    const bounce = page.locator('[data-metric="bounce_rate"] [data-change]');
    assert.equal((await bounce.locator('[data-change-text]').textContent())?.trim(), 'no data');
    assert.equal(await bounce.getAttribute('data-change'), 'none');
    // An average over visits, with no visits before, is unknown too, not "0s" nor "new".
    assert.equal((await page.locator('[data-metric="avg_duration"] [data-change-text]').textContent())?.trim(), 'no data');
    for (const change of [visitors, bounce]) {
      const cls = (await change.getAttribute('class'))!;
      assert.match(cls, /\bneutral\b/);
      assert.doesNotMatch(cls, /\b(good|bad)\b/);
    }
    // Neutral in colour: the muted text colour, not the green or red of a change.
    const colour = (selector: string) => page.locator(selector).first().evaluate((e) => (globalThis as unknown as Styles).getComputedStyle(e).color);
    assert.equal(await colour('[data-metric="visitors"] [data-change]'), await colour('.metric-label'));
    await page.locator('.headline').screenshot({ path: join(SHOTS, 'report-comparisons-new.png') });
  });

  it('keeps every metric label on one line at 1280 px, says what Visitors and Visits count, and reads at 390 px and in dark', async () => {
    const page = await newPage();
    await page.goto(`/sites/${sites.eight}?range=7d`);
    await settled(page);
    const labels = await page.locator('.metric-label').evaluateAll((els) =>
      els.map((e) => ({ text: e.textContent, lines: Math.round(e.getBoundingClientRect().height / parseFloat((globalThis as unknown as Styles).getComputedStyle(e).lineHeight) || 20), cut: e.scrollWidth > e.clientWidth })));
    assert.ok(labels.length >= 7, JSON.stringify(labels));
    for (const l of labels) assert.deepEqual([l.text, l.lines <= 1, l.cut], [l.text, true, false], `${l.text} on one line, whole`);
    assert.match((await page.locator('[data-metric="visitors"]').getAttribute('title'))!, /people per day/);
    assert.match((await page.locator('[data-metric="visits"]').getAttribute('title'))!, /sessions/);
    await page.screenshot({ path: join(SHOTS, 'report-comparisons-light.png') });

    const dark = await newPage({ colorScheme: 'dark' });
    await dark.goto(`/sites/${sites.eight}?range=today`);
    await settled(dark);
    await dark.screenshot({ path: join(SHOTS, 'report-comparisons-dark.png') });

    const phone = await newPage({ viewport: { width: 390, height: 844 } });
    await phone.goto(`/sites/${sites.one}?range=today`);
    await settled(phone);
    await phone.screenshot({ path: join(SHOTS, 'report-comparisons-390.png'), fullPage: true });
    // The headline and the goals panel (the rest of the page is other panels' to test) fit the phone.
    const wide = await phone.locator('.headline, .headline *, .goals-panel').evaluateAll((els) => els
      .filter((e) => e.getBoundingClientRect().right > 390)
      .map((e) => `${e.tagName}.${e.className} ${Math.round(e.getBoundingClientRect().right)}`));
    assert.deepEqual(wide, [], 'nothing of the headline wider than the phone');
  });

  it('answers a range change with as many requests for 8 goals as for 1', async () => {
    const page = await newPage();
    const countRangeChange = async (siteId: string) => {
      await page.goto(`/sites/${siteId}?range=7d&compare=previous`);
      await settled(page);
      const goalRows = await page.locator('.goals-panel tbody tr').count();
      const seen: string[] = [];
      const watch = (r: { url(): string }) => REPORT_CALL.test(r.url()) && seen.push(r.url());
      page.on('request', watch);
      await pickRange(page, '30d');
      await page.locator('.headline[aria-busy="true"]').waitFor({ timeout: 2000 }).catch(() => {});
      await settled(page);
      page.off('request', watch);
      return { seen, goalRows };
    };
    const { seen: one, goalRows: oneGoal } = await countRangeChange(sites.one);
    const { seen: eight, goalRows: eightGoals } = await countRangeChange(sites.eight);
    assert.deepEqual([oneGoal, eightGoals], [1, 8], 'the sites have 1 and 8 goals');
    assert.ok(one.length > 0, 'the change asked for numbers');
    assert.equal(eight.length, one.length, `1 goal:\n${one.join('\n')}\n8 goals:\n${eight.join('\n')}`);
    assert.ok(eight.some((u) => u.includes('/goal-aggregations?')), 'the goals come in one combined request');
    // The goals panel's numbers are still /v1's, goal by goal.
    const rows = await page.locator('.goals-panel tbody tr').evaluateAll((trs) => trs.map((tr) => [
      tr.querySelector('.row-filter')?.textContent?.trim(), tr.querySelector('[data-column="conversions"]')?.textContent?.trim()]));
    assert.equal(rows.length, 8);
    const fmt = new Intl.NumberFormat('en-US');
    for (const [name, shown] of rows) {
      const [r] = await v1({ entity: 'event', site_id: sites.eight, entity_name: name!, date_from: `${utcDay(29)} 00:00:00`, date_to: `${utcDay(0)} 23:59:59`, aggregates: 'conversions' });
      assert.equal(shown, fmt.format(Number(r!.conversions)), name);
    }
  });
});
