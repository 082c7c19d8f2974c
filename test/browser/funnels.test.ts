// Funnels in real Chromium: an owner defines a funnel in the report's Funnels panel (the dialog refuses a bad step
// first), and the chart's per-step visits, conversion and drop-off equal the API's report for the same range; a
// second funnel is edited and deleted; the public share page shows the chart without the controls that change it.
// Screenshots go to test-artifacts/screenshots/funnels-*.png.

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
import { browserSkipReason, closePage, eventuallyEqual, launchBrowser, logInThroughForm, openPage, sidewaysOverflow } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'funnels@example.test';
const PASSWORD = 'a long password for funnels';
const DAY = 86_400_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const fmtInt = (v: string | number) => new Intl.NumberFormat('en-US').format(Number(v) || 0);
const fmtPercent = (v: number) => new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(Math.round(v * 1000) / 10) + '%';

describe('funnels in Chromium', { skip }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let page: Page & { errors: string[] };
  let siteId = '';

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Funnel shop', timezone: 'UTC' })).body.id;
    await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/events`, { name: 'Purchase', currency: 'euro' });
    // Ten days of visits: some go home, pricing, checkout and buy; some stop on the way; some go the wrong way round.
    const paths = [['/', '/pricing', '/checkout'], ['/', '/pricing'], ['/'], ['/pricing', '/'], ['/', '/blog/a', '/pricing', '/checkout']];
    const lines: { timestamp: string }[] = [];
    for (let i = 0; i < 100; i++) {
      const start = Date.now() - (1 + (i % 10)) * DAY + (i % 5) * 3_600_000;
      const ip = `81.2.${60 + (i % 9)}.${i + 1}`;
      const path = paths[i % paths.length]!;
      path.forEach((p, n) => lines.push({ type: 'pageview', site_id: siteId, timestamp: formatTimestamp(new Date(start + n * 60_000 + i * 1000)), url: `https://funnel.example${p}`, referrer: '', user_agent: UA, ip } as never));
      if (path.includes('/checkout') && i % 3 !== 0) {
        lines.push({ type: 'event', site_id: siteId, timestamp: formatTimestamp(new Date(start + path.length * 60_000 + i * 1000)), url: 'https://funnel.example/checkout', name: 'Purchase', value: 1000, user_agent: UA, ip } as never);
      }
    }
    lines.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
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

  const today = () => new Date().toISOString().slice(0, 10);
  const monthAgo = () => new Date(Date.now() - 29 * DAY).toISOString().slice(0, 10);

  it('defines a funnel in the dialog and shows the API\'s numbers per step', async () => {
    await page.goto(`/sites/${siteId}?range=30d`);
    const panel = page.locator('section.funnels');
    await panel.getByText('No funnels yet.').waitFor();
    await panel.getByRole('button', { name: 'New funnel' }).click();
    const dialog = page.getByRole('dialog', { name: 'New funnel' });
    await dialog.getByLabel('Name').fill('Checkout');
    await dialog.getByLabel('Step 1 page').fill('/');
    await dialog.getByLabel('Step 2 page').fill('pricing');
    await dialog.getByRole('button', { name: 'Add step' }).click();
    await dialog.getByLabel('Step 3 page').fill('/check*');
    await dialog.getByRole('button', { name: 'Add step' }).click();
    await dialog.getByLabel('Step 4 kind').selectOption('event');
    await dialog.getByLabel('Step 4 event name').fill('Purchase');
    await dialog.getByRole('button', { name: 'Create funnel' }).click();
    // The server's word on the bad step, in the dialog.
    await dialog.getByText(/step 2 value must start with \//).waitFor();
    await dialog.getByLabel('Step 2 page').fill('/pricing');
    await dialog.getByRole('button', { name: 'Create funnel' }).click();
    await dialog.waitFor({ state: 'detached' });

    const list = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels`);
    assert.equal(list.body.data.length, 1);
    const funnel = list.body.data[0];
    assert.deepEqual(funnel.steps, [{ type: 'page', value: '/' }, { type: 'page', value: '/pricing' }, { type: 'page', value: '/check*' }, { type: 'event', value: 'Purchase' }]);
    const report = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${funnel.id}/report?date_from=${monthAgo()}&date_to=${today()}`);
    assert.equal(report.status, 200, JSON.stringify(report.body));
    const steps = report.body.steps as Record<string, string>[];
    assert.ok(Number(steps[0]!.visits) > Number(steps[3]!.visits) && Number(steps[3]!.visits) > 0, 'the data drop off along the funnel');
    for (const s of steps) {
      const row = panel.locator(`.funnel-row[data-step="${s.step}"]`);
      await eventuallyEqual(() => row.locator('[data-column="visits"]').textContent(), `${fmtInt(s.visits!)} visits`, `visits of step ${s.step}`);
      assert.match((await row.locator('[data-column="conversion_rate"]').textContent())!, new RegExp(`^${fmtPercent(Number(s.conversion_rate)).replace('.', '\\.')}`));
      if (s.step !== '1') assert.match((await row.locator('[data-column="drop_off"]').textContent())!, new RegExp(`^${fmtInt(s.drop_off!)} dropped`));
    }
    // A step's two filter links stand apart, not as one run of link text.
    const [continued, dropped] = await Promise.all(['continued', 'dropped'].map((o) => panel.locator(`.funnel-row[data-step="2"] [data-outcome="${o}"]`).boundingBox()));
    assert.ok(continued && dropped && dropped.x - (continued.x + continued.width) >= 8, `the filter links touch: ${JSON.stringify([continued, dropped])}`);
    await panel.screenshot({ path: join(SHOTS, 'funnels-panel.png') });
    // A phone's width: the rows stack, nothing scrolls sideways.
    await page.setViewportSize({ width: 390, height: 844 });
    await panel.locator('.funnel-row[data-step="4"]').scrollIntoViewIfNeeded();
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the page scrolls sideways');
    await panel.screenshot({ path: join(SHOTS, 'funnels-panel-narrow.png') });
    await panel.getByRole('button', { name: 'Edit' }).click();
    const edit = page.getByRole('dialog', { name: 'Edit Checkout' });
    assert.ok((await sidewaysOverflow(page)) <= 0, 'the dialog scrolls sideways');
    await edit.screenshot({ path: join(SHOTS, 'funnels-dialog-narrow.png') });
    await edit.getByRole('button', { name: 'Cancel' }).click();
    await edit.waitFor({ state: 'detached' });
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.deepEqual(page.errors, []);
  });

  it('follows the report\'s filters', async () => {
    const filters = [{ property: 'entry_page', operator: 'is', value: '/' }];
    await page.goto(`/sites/${siteId}?range=30d&filters=${encodeURIComponent(JSON.stringify(filters))}`);
    const id = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels`)).body.data[0].id;
    const params = new URLSearchParams({ date_from: monthAgo(), date_to: today(), filters: JSON.stringify(filters) });
    const report = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}/report?${params}`);
    const first = report.body.steps[0];
    await eventuallyEqual(() => page.locator('section.funnels .funnel-row[data-step="1"] [data-column="visits"]').textContent(), `${fmtInt(first.visits)} visits`, 'filtered visits');
    const unfiltered = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}/report?date_from=${monthAgo()}&date_to=${today()}`)).body.steps[0];
    assert.notEqual(first.visits, unfiltered.visits, 'the filter changes the answer');
  });

  it('edits and deletes a funnel', async () => {
    await page.goto(`/sites/${siteId}?range=30d`);
    const panel = page.locator('section.funnels');
    await panel.getByRole('button', { name: 'New funnel' }).click();
    let dialog = page.getByRole('dialog', { name: 'New funnel' });
    await dialog.getByLabel('Name').fill('Backwards');
    await dialog.getByLabel('Step 1 page').fill('/pricing');
    await dialog.getByLabel('Step 2 page').fill('/');
    await dialog.getByRole('button', { name: 'Create funnel' }).click();
    await dialog.waitFor({ state: 'detached' });
    const chosen = () => panel.getByLabel('Funnel', { exact: true }).evaluate((e) => (e as unknown as { selectedOptions: { textContent: string }[] }).selectedOptions[0]?.textContent);
    await eventuallyEqual(chosen, 'Backwards', 'the new funnel is chosen');
    await panel.getByRole('button', { name: 'Edit' }).click();
    dialog = page.getByRole('dialog', { name: 'Edit Backwards' });
    await dialog.getByLabel('Name').fill('Backwards home');
    await dialog.getByRole('button', { name: 'Save funnel' }).click();
    await dialog.waitFor({ state: 'detached' });
    const names = async () => (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels`)).body.data.map((f: { name: string }) => f.name);
    assert.deepEqual(await names(), ['Checkout', 'Backwards home']);
    await panel.getByRole('button', { name: 'Delete funnel Backwards home' }).click();
    await panel.getByRole('button', { name: 'Confirm: delete funnel Backwards home' }).click();
    await eventuallyEqual(async () => JSON.stringify(await names()), JSON.stringify(['Checkout']), 'deleted');
    assert.deepEqual(page.errors, []);
  });

  it('shows funnels read-only on the public share page', async () => {
    assert.equal((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}`, { sharing: 'public' })).status, 200);
    const visitor = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    try {
      await visitor.goto(`/share/${siteId}?range=30d`);
      const panel = visitor.locator('section.funnels');
      const id = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels`)).body.data[0].id;
      const report = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${id}/report?date_from=${monthAgo()}&date_to=${today()}`);
      await eventuallyEqual(() => panel.locator('.funnel-row[data-step="2"] [data-column="visits"]').textContent(), `${fmtInt(report.body.steps[1].visits)} visits`, 'shared numbers');
      assert.equal(await panel.getByRole('button', { name: 'New funnel' }).count(), 0);
      assert.equal(await panel.getByRole('button', { name: 'Edit' }).count(), 0);
      assert.deepEqual(visitor.errors, []);
    } finally {
      await closePage(visitor);
    }
  });
});
