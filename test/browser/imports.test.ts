// Imported history in real headless Chromium: an owner uploads Umami's export from the site settings page, sees
// the import listed with its days and rows, reads a report whose period includes it (marked as imported, its
// pageviews equal to /v1's), a stranger reads the shared report marked too (told only product and days), and the
// owner deletes it; an import its server stopped during is listed as failed, saying why. Screenshots in light and
// dark go to test-artifacts/screenshots/.

import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { projectRoot } from '../../src/project-root.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { generateUmamiExport } from '../helpers/umami-export.js';
import { EMAIL, givePassword, PASSWORD } from '../dashboard/helpers.js';
import { browserSkipReason, launchBrowser, openPage, sidewaysOverflow } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const START = Date.UTC(2026, 2, 1); // 2026-03-01
const DAYS = 10;

describe('imported history in Chromium', { skip }, () => {
  let t: TestApp;
  let browser: Browser;
  let owner: Page & { errors: string[] };
  let dir = '';
  let csvPath = '';
  let siteId = '';

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Moved from Umami', domain: 'moved.example', timezone: 'UTC' })).body.id;
    dir = await mkdtemp(join(tmpdir(), 'plumb-imports-'));
    csvPath = join(dir, 'umami-events.csv');
    await writeFile(csvPath, generateUmamiExport({ websiteId: '6f1d0c1e-1111-4a4a-8b8b-123456789abc', hostname: 'moved.example', start: START, days: DAYS, visitsPerDay: 20 }).csv);
    await givePassword(t.meta, 1, EMAIL, PASSWORD);
    browser = await launchBrowser();
    owner = await openPage(browser, { baseURL: base, viewport: { width: 1200, height: 900 } });
    await owner.goto('/login');
    await owner.getByLabel('Email').fill(EMAIL);
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Log in' }).click();
    await owner.waitForURL(`${base}/sites`);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const pageviews = async () => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${siteId}&aggregates=pageviews&date_from=2026-03-01&date_to=2026-03-10`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return Number(res.body[0]?.pageviews ?? 0);
  };

  it("uploads Umami's export from the site settings and lists it", async () => {
    await owner.goto(`/sites/${siteId}/settings`);
    const form = owner.getByRole('form', { name: 'Import an export' });
    await form.getByLabel('What it is').selectOption('umami');
    await form.getByLabel('Export file').setInputFiles(csvPath);
    await form.getByRole('button', { name: 'Import' }).click();
    await owner.getByText(/^Imported [\d,]+ rows from umami-events\.csv/).waitFor();
    const row = owner.locator('[data-imports] tbody tr');
    await row.first().waitFor();
    assert.equal(await row.count(), 1);
    const cells = await row.first().locator('td').allTextContents();
    assert.deepEqual(cells.slice(0, 3), ['umami-events.csv', 'Umami', '2026-03-01 to 2026-03-10']);
    assert.ok((await pageviews()) > 0, 'the imported hits are in /v1');
    await owner.locator('#imports-h').scrollIntoViewIfNeeded();
    for (const scheme of ['light', 'dark'] as const) {
      await owner.emulateMedia({ colorScheme: scheme });
      await owner.screenshot({ path: join(SHOTS, `site-settings-imports-${scheme}.png`), fullPage: true });
    }
    await owner.emulateMedia({ colorScheme: 'light' });
    // At phone width the list is one block per import, and nothing scrolls sideways.
    await owner.setViewportSize({ width: 360, height: 800 });
    assert.ok((await sidewaysOverflow(owner)) <= 0, 'no sideways scrolling at 360 px');
    await owner.locator('[data-imports]').scrollIntoViewIfNeeded();
    await owner.screenshot({ path: join(SHOTS, 'site-settings-imports-phone.png') });
    await owner.setViewportSize({ width: 1200, height: 900 });
  });

  it('marks a report whose period includes the import, with the numbers of /v1', async () => {
    await owner.goto(`/sites/${siteId}?range=custom&from=2026-03-01&to=2026-03-10`);
    const notice = owner.locator('[data-imported-notice]');
    await notice.waitFor();
    assert.match(await notice.innerText(), /imported history: Umami \(2026-03-01 to 2026-03-10\)/);
    // The headline fills in once its query answers: read it until it shows /v1's number (or 20 s pass).
    const expected = await pageviews();
    let shown = NaN;
    for (let waited = 0; shown !== expected && waited < 20_000; waited += 100) {
      shown = Number((await owner.locator('[data-metric="pageviews"] [data-value]').innerText()).replace(/[^\d]/g, ''));
      if (shown !== expected) await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(shown, expected);
    await owner.screenshot({ path: join(SHOTS, 'report-imported.png') });
    // A period without imported days has no mark.
    await owner.goto(`/sites/${siteId}?range=custom&from=2026-04-01&to=2026-04-10`);
    await owner.locator('[data-metric="pageviews"]').waitFor();
    assert.equal(await owner.locator('[data-imported-notice]').count(), 0);
  });

  it('marks the shared report too, telling anyone with the link only the product and the days', async () => {
    const shared = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}`, { sharing: 'public' });
    assert.equal(shared.status, 200, JSON.stringify(shared.body));
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const stranger = await openPage(browser, { baseURL: base, viewport: { width: 1200, height: 900 } });
    const answers: unknown[] = [];
    stranger.on('response', (res) => {
      if (res.url().includes('/imported_days')) void res.json().then((body) => answers.push(body), () => {});
    });
    try {
      await stranger.goto(`/share/${siteId}?range=custom&from=2026-03-01&to=2026-03-10`);
      const notice = stranger.locator('[data-imported-notice]');
      await notice.waitFor();
      assert.match(await notice.innerText(), /imported history: Umami \(2026-03-01 to 2026-03-10\)/);
      // What the page was told: kinds and days, no import id, file name or row counts.
      assert.deepEqual(answers, [{ object: 'list', data: [{ kind: 'umami', first_day: '2026-03-01', last_day: '2026-03-10' }] }]);
      assert.equal(await stranger.getByText('umami-events.csv').count(), 0);
      assert.deepEqual(stranger.errors, []);
    } finally {
      await stranger.context().close();
      await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}`, { sharing: 'none' });
    }
  });

  it('deletes the import, and with it the imported hits', async () => {
    await owner.goto(`/sites/${siteId}/settings`);
    const row = owner.locator('[data-imports] tbody tr').first();
    await row.getByRole('button', { name: 'Delete umami-events.csv' }).click();
    await row.getByRole('button', { name: 'Confirm: delete umami-events.csv' }).click();
    await owner.locator('[data-imports="none"]').waitFor();
    assert.equal(await pageviews(), 0);
    assert.deepEqual(owner.errors, []);
  });

  it('shows an import its server stopped during as failed, saying so', async () => {
    // What a server killed mid-import leaves (a running import of an owner that is gone), undone as a start does.
    const left = await t.meta.createImport({ siteId, kind: 'fathom', fileName: 'fathom-export.zip', visitIdBase: 0n, owner: 'an-earlier-run' });
    assert.deepEqual(await t.importSweeper.sweep(), [left.id]);
    await owner.goto(`/sites/${siteId}/settings`);
    const status = owner.locator(`[data-import="${left.id}"] [data-status]`);
    await status.waitFor();
    assert.equal(await status.getAttribute('data-status'), 'failed');
    assert.match(await status.innerText(), /^failed: interrupted: the server stopped during the import/);
    await owner.locator('#imports-h').scrollIntoViewIfNeeded();
    await owner.screenshot({ path: join(SHOTS, 'site-settings-import-interrupted.png'), fullPage: true });
    assert.deepEqual(owner.errors, []);
  });
});
