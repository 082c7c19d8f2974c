// Pageview goals in real Chromium: an owner adds one with a pattern on the goals page and sees its visits of the
// last 30 days; the report's goals panel lists it after the event goals with numbers equal to /v1 (pageviews and
// visits with the goal's path as a pathname filter, rate over the visitors); a click filters the report to its
// pages (the chip in words, the address, the headline equal to /v1), a second click removes it. Screenshots go to
// test-artifacts/screenshots/page-goals-*.png.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { hashPassword } from '../../src/domain/secrets.js';
import { formatTimestamp } from '../../src/domain/time.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, eventuallyEqual, launchBrowser, logInThroughForm, openPage } from './browser.js';

// The functions given to page.evaluate run in Chromium; this project compiles without the DOM library.
declare const location: { href: string };

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'goals@example.test';
const PASSWORD = 'a long password for goals';
const DAY = 86_400_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const fmtInt = (v: string | number) => new Intl.NumberFormat('en-US').format(Number(v) || 0);
const fmtPercent = (v: number) => new Intl.NumberFormat('en-US', { style: 'percent', minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(v);

describe('pageview goals in Chromium', { skip }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let page: Page & { errors: string[] };
  let siteId = '';

  const v1 = async (params: Record<string, string>) => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${new URLSearchParams({ entity: 'pageview', entity_id: siteId, ...params })}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return (res.body as Record<string, string>[])[0]!;
  };
  const text = async (selector: string) => (await page.locator(selector).first().textContent())?.trim();

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Goal shop', timezone: 'UTC' })).body.id;
    await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/events`, { name: 'Purchase', currency: 'euro' });
    // Twelve days of visits: some read one or two blog posts (one post twice), some sign up, others only look around.
    const lines: object[] = [];
    const paths = [['/', '/blog/first'], ['/blog/second', '/blog/first', '/blog/first'], ['/pricing', '/signup'], ['/'], ['/blog/2026/deep', '/signup']];
    for (let i = 0; i < 120; i++) {
      const start = Date.now() - (1 + (i % 12)) * DAY + (i % 7) * 3_600_000;
      const ip = `81.2.${60 + (i % 9)}.${i + 1}`;
      paths[i % paths.length]!.forEach((path, n) => lines.push({ type: 'pageview', site_id: siteId, timestamp: formatTimestamp(new Date(start + n * 60_000)), url: `https://goal.example${path}`, referrer: '', user_agent: UA, ip }));
      if (i % 10 === 0) lines.push({ type: 'event', site_id: siteId, timestamp: formatTimestamp(new Date(start + 5 * 60_000)), url: 'https://goal.example/signup', name: 'Purchase', value: 2500, user_agent: UA, ip });
    }
    lines.sort((a, b) => String((a as { timestamp: string }).timestamp).localeCompare((b as { timestamp: string }).timestamp));
    const imported = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n') });
    assert.equal(imported.statusCode, 200, imported.body);
    await t.flushHits();
    browser = await launchBrowser();
    page = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    await logInThroughForm(page, base, EMAIL, PASSWORD);
  });

  after(async () => {
    if (page) await closePage(page).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('adds a pageview goal on the goals page and shows its visits of the last 30 days', async () => {
    await page.goto(`/sites/${siteId}/goals`);
    const form = page.getByRole('form', { name: 'Add a pageview goal' });
    await form.getByLabel('Goal name').fill('Read the blog');
    await form.getByLabel('Page path').fill('blog/*');
    await form.getByRole('button', { name: 'Add pageview goal' }).click();
    await page.getByText('The page path must start with /').waitFor();
    await form.getByLabel('Page path').fill('/blog/*');
    await form.getByRole('button', { name: 'Add pageview goal' }).click();
    await page.getByText('Added goal Read the blog').waitFor();
    await form.getByLabel('Goal name').fill('Signed up');
    await form.getByLabel('Page path').fill('/signup');
    await form.getByRole('button', { name: 'Add pageview goal' }).click();
    await page.getByText('Added goal Signed up').waitFor();

    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 29 * DAY).toISOString().slice(0, 10);
    const month = { date_from: `${from} 00:00:00`, date_to: `${today} 23:59:59`, aggregates: 'pageviews,visits' };
    const blog = await v1({ ...month, filters: JSON.stringify([{ property: 'pathname', operator: 'matching', value: '^/blog/.*$' }]) });
    const row = page.locator('tr[data-page-goal]').filter({ hasText: 'Read the blog' });
    await eventuallyEqual(() => row.locator('[data-visits]').evaluate((e) => e.firstChild?.textContent ?? ''), fmtInt(blog.visits!), 'visits of the blog goal');
    assert.equal(await row.locator('[data-pageviews]').textContent(), `${fmtInt(blog.pageviews!)} pageviews`);
    assert.ok(Number(blog.pageviews) > Number(blog.visits), 'a post read twice in a visit is one visit');
    assert.equal(await row.locator('[data-path]').textContent(), '/blog/*');
    await page.screenshot({ path: join(SHOTS, 'page-goals-settings.png'), fullPage: true });
    assert.deepEqual(page.errors, []);
  });

  it('lists pageview goals in the report with /v1 numbers, and filters the report to a goal\'s pages on a click', async () => {
    await page.goto(`/sites/${siteId}?range=30d`);
    const range = await page.evaluate(() => new URL(location.href).searchParams.get('range'));
    assert.equal(range, '30d');
    const row = page.locator('tr[data-page-goal]').filter({ hasText: 'Read the blog' });
    await row.waitFor();
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.now() - 29 * DAY).toISOString().slice(0, 10);
    const dates = { date_from: `${from} 00:00:00`, date_to: `${today} 23:59:59` };
    const blogFilter = [{ property: 'pathname', operator: 'matching', value: '^/blog/.*$' }];
    const blog = await v1({ ...dates, aggregates: 'pageviews,visits', filters: JSON.stringify(blogFilter) });
    const visitors = Number((await v1({ ...dates, aggregates: 'visitors' })).visitors);
    const cell = (column: string) => row.locator(`[data-column="${column}"]`).textContent();
    await eventuallyEqual(() => cell('unique_conversions'), fmtInt(blog.visits!), 'unique conversions are visits');
    assert.equal(await cell('conversions'), fmtInt(blog.pageviews!));
    assert.equal(await cell('conversion_rate'), fmtPercent(Number(blog.visits) / visitors));
    assert.equal(await cell('value'), '—');
    // After the event goals, in name order.
    assert.deepEqual(await page.locator('table.goals tbody tr').evaluateAll((trs) => trs.map((tr) => tr.querySelector('button')?.textContent)),
      ['Purchase', 'Read the blog', 'Signed up']);
    await page.locator('.goals-panel').screenshot({ path: join(SHOTS, 'page-goals-report.png') });

    await page.getByRole('button', { name: 'Filter by pageview goal: Read the blog' }).click();
    await page.locator('[data-filter="pathname"]').filter({ hasText: 'Page matches /blog/*' }).waitFor();
    const filters = await page.evaluate(() => new URL(location.href).searchParams.get('filters'));
    assert.deepEqual(JSON.parse(filters!), blogFilter, 'the filter is in the address');
    const filtered = await v1({ ...dates, aggregates: 'visitors', filters: JSON.stringify(blogFilter) });
    await eventuallyEqual(() => text('[data-metric="visitors"] [data-value]'), fmtInt(filtered.visitors!), 'the headline counts the goal\'s visitors');
    // The exact-path goal is not counted under a page filter rather than shown wrong.
    await eventuallyEqual(() => page.locator('tr[data-page-goal]').filter({ hasText: 'Signed up' }).locator('[data-column="conversions"]').textContent(), '—', 'not counted');
    await page.getByRole('button', { name: 'Remove the filter of pageview goal Read the blog' }).click();
    await page.locator('[data-filter="pathname"]').waitFor({ state: 'detached' });
    assert.equal(await page.evaluate(() => new URL(location.href).searchParams.get('filters')), null);
    assert.deepEqual(page.errors, []);
  });
});
