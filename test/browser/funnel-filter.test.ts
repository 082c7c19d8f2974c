// The funnel filter in real Chromium: clicking "Show visits that dropped" on step 2 of the Funnels panel puts the
// filter in the address and a chip in the filter bar, the headline's visits become the funnel report's drop-off
// after step 2 (its step 3 drop_off) while the panel still shows the whole funnel; a reload keeps the filter and
// removing the chip restores the unfiltered headline. Screenshot: test-artifacts/screenshots/funnel-filter.png.

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

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'funnel-filter@example.test';
const PASSWORD = 'a long password for the funnel filter';
const DAY = 86_400_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const fmtInt = (v: string | number) => new Intl.NumberFormat('en-US').format(Number(v) || 0);

describe('the funnel filter in Chromium', { skip }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let page: Page & { errors: string[] };
  let siteId = '';
  let funnelId = '';
  /** Each generated visit's pages, in order. */
  const visitPaths: string[][] = [];

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Funnel filter shop', timezone: 'UTC' })).body.id;
    // Visits that go home, pricing, checkout; some stop at pricing, some at home, some go the wrong way round.
    const paths = [['/', '/pricing', '/checkout'], ['/', '/pricing'], ['/', '/pricing', '/blog/a'], ['/'], ['/pricing', '/'], ['/', '/blog/a', '/pricing', '/checkout']];
    const lines: { timestamp: string }[] = [];
    for (let i = 0; i < 90; i++) {
      const start = Date.now() - (1 + (i % 10)) * DAY + (i % 5) * 3_600_000;
      const ip = `81.2.${60 + (i % 9)}.${i + 1}`;
      visitPaths.push(paths[i % paths.length]!);
      paths[i % paths.length]!.forEach((p, n) =>
        lines.push({ type: 'pageview', site_id: siteId, timestamp: formatTimestamp(new Date(start + n * 60_000 + i * 1000)), url: `https://shop.example${p}`, referrer: '', user_agent: UA, ip } as never));
    }
    lines.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    const imported = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n') });
    assert.equal(imported.statusCode, 200, imported.body);
    await t.flushHits();
    const created = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${siteId}/funnels`, { name: 'Checkout', steps: [{ type: 'page', value: '/' }, { type: 'page', value: '/pricing' }, { type: 'page', value: '/checkout' }] });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    funnelId = created.body.id;
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
  const headlineVisits = () => page.locator('.headline [data-metric="visits"] [data-value]').textContent();

  it('filters the page to the visits that dropped after step 2, and the chip removes it', async () => {
    const range = `date_from=${monthAgo()}&date_to=${today()}`;
    const report = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/funnels/${funnelId}/report?${range}`);
    assert.equal(report.status, 200, JSON.stringify(report.body));
    const steps = report.body.steps as Record<string, string>[];
    const dropped = steps[2]!.drop_off!;
    const all = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${siteId}&aggregates=visits&${range}`);
    const allVisits = all.body[0].visits as string;
    assert.ok(Number(dropped) > 0 && Number(dropped) < Number(allVisits), 'the data has visits that dropped after step 2, and others');

    await page.goto(`/sites/${siteId}?range=30d`);
    await eventuallyEqual(headlineVisits, fmtInt(allVisits), 'the unfiltered headline');
    const panel = page.locator('section.funnels');
    const step2 = panel.locator('.funnel-row[data-step="2"]');
    await step2.getByRole('button', { name: 'Show visits that dropped' }).click();

    // The address carries the filter, the chip says it in words, the headline counts the visits that dropped.
    await page.waitForURL((url) => url.searchParams.get('funnel') === funnelId && url.searchParams.get('funnel_step') === '2' && url.searchParams.get('funnel_outcome') === 'dropped');
    const chip = page.locator('.filters .chip[data-filter="funnel"]');
    await eventuallyEqual(async () => (await chip.textContent())?.replace('×', '').trim(), 'Funnel Checkout: dropped after step 2 (/pricing)', 'the chip');
    await eventuallyEqual(headlineVisits, fmtInt(dropped), 'the headline visits of the visits that dropped');
    assert.equal(await step2.getByRole('button', { name: 'Show visits that dropped' }).getAttribute('aria-pressed'), 'true');
    // The panel is the funnel's own report: not narrowed by the filter it set.
    await eventuallyEqual(() => panel.locator('.funnel-row[data-step="1"] [data-column="visits"]').textContent(), `${fmtInt(steps[0]!.visits!)} visits`, 'the panel unfiltered');
    // The top pages are those visits' pages: each visit here is one visitor (its own address), so a page's visitors
    // are the visits that dropped after step 2 and viewed it, walked here by hand.
    const reached = (path: string[]) => {
      let at = -1;
      let n = 0;
      for (const step of ['/', '/pricing', '/checkout']) {
        const next = path.indexOf(step, at + 1);
        if (next < 0) break;
        at = next;
        n += 1;
      }
      return n;
    };
    const droppedPaths = visitPaths.filter((p) => reached(p) === 2);
    assert.equal(String(droppedPaths.length), dropped, 'the hand walk agrees with the funnel report');
    const pagesPanel = page.locator('section', { has: page.getByRole('heading', { name: 'Pages', exact: true }) });
    for (const path of ['/', '/pricing', '/blog/a']) {
      const expected = fmtInt(droppedPaths.filter((p) => p.includes(path)).length);
      await eventuallyEqual(() => pagesPanel.locator(`tr[data-value="${path}"] [data-column="visitors"]`).first().textContent(), expected, `visitors of ${path}`);
    }
    assert.equal(await pagesPanel.locator('tr[data-value="/checkout"]').count(), 0, 'no visit that dropped reached /checkout');
    await page.screenshot({ path: join(SHOTS, 'funnel-filter.png') });

    // A reload keeps it.
    await page.reload();
    await eventuallyEqual(headlineVisits, fmtInt(dropped), 'the headline after a reload');
    await chip.waitFor();

    // The last step offers the visits that completed.
    await panel.locator('.funnel-row[data-step="3"]').getByRole('button', { name: 'Show visits that completed' }).click();
    await eventuallyEqual(async () => (await chip.textContent())?.replace('×', '').trim(), 'Funnel Checkout: completed step 3 (/checkout)', 'the chip of completed');
    await eventuallyEqual(headlineVisits, fmtInt(steps[2]!.visits!), 'the headline visits of the visits that completed');

    // Removing the chip restores the unfiltered report and address.
    await page.getByRole('button', { name: 'Remove filter Funnel Checkout: completed step 3 (/checkout)' }).click();
    await chip.waitFor({ state: 'detached' });
    await eventuallyEqual(headlineVisits, fmtInt(allVisits), 'the headline without the filter');
    assert.equal(new URL(page.url()).searchParams.get('funnel'), null);
    assert.deepEqual(page.errors, []);
  });
});
