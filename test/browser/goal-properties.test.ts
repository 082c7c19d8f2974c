// The goal's properties panel and the custom property filter in real Chromium against a real Plumb server: the
// rows the page shows are the dashboard API's answer (and the counts the hits sent make), the key choice and a
// clicked value live in the address, the filter menu takes a custom property, the headline follows the filter,
// and the CSV is what the panel shows.

import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { hashPassword } from '../../src/domain/secrets.js';
import { projectRoot } from '../../src/project-root.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, launchBrowser, openPage, sidewaysOverflow, eventuallyEqual as eventually } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'props@example.test';
const PASSWORD = 'a long properties password';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

type Shown = string[][];

describe('goal properties panel in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page & { errors: string[] };
  let site = '';
  let signup = '';
  const failedCalls: string[] = [];

  /** Signups as the collector receives them from visitor n (its own address); `payload` keys are properties. */
  async function signupFrom(n: number, payload?: object) {
    const q = new URLSearchParams({ sid: site, h: 'https://shop.example', p: '/join', name: 'Signup', ...(payload ? { payload: JSON.stringify(payload) } : {}) });
    const res = await t.app.inject({ method: 'POST', url: `/?${q}`, headers: { 'user-agent': UA }, remoteAddress: `198.51.100.${n}` });
    assert.equal(res.statusCode, 204, res.body);
  }

  /** What the dashboard API answers the page's session for the goal's properties (the page's own question). */
  interface Breakdown {
    keys: string[];
    total: number;
    rows: { value: string; conversions: number; unique_conversions: number }[];
  }
  const answer = (params: Record<string, string>): Promise<Breakdown> =>
    page.evaluate(`(async () => {
      const csrf = document.querySelector('meta[name="plumb-csrf"]').getAttribute('content');
      const res = await fetch('/dashboard/api/report/goal-properties?${new URLSearchParams(params)}', { headers: { 'x-plumb-csrf': csrf } });
      return res.json();
    })()`) as Promise<Breakdown>;

  const panelRows = (): Promise<Shown> =>
    page.locator('.goal-properties tbody tr').evaluateAll((trs) =>
      trs.map((tr) => [tr.getAttribute('data-value') ?? '', ...[...tr.querySelectorAll('td.num')].map((td) => (td.textContent ?? '').trim())]));

  const conversionsShown = () => page.locator('[data-metric="conversions"] [data-value]').first().textContent().then((s) => (s ?? '').trim());
  // Every percentage of the dashboard has one decimal (src/web/format.js).
  const pct = (n: number, total: number) => `${new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(Math.round((n / total) * 1000) / 10)}%`;

  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Props shop', timezone: 'UTC' })).body.id;
    signup = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events`, { name: 'Signup' })).body.id;
    // plan: pro 3 (two visitors), team 2, "a,b" "quoted" 1 (CSV quoting); source on two; one with a long note only.
    await signupFrom(1, { plan: 'pro', source: 'footer' });
    await signupFrom(2, { plan: 'pro' });
    await signupFrom(2, { plan: 'pro', source: 'header' });
    await signupFrom(3, { plan: 'team' });
    await signupFrom(4, { plan: 'team' });
    await signupFrom(5, { plan: '=a,b "quoted"' });
    await signupFrom(6, { note: `long-${'x'.repeat(150)}` });
    await t.flushHits();

    browser = await launchBrowser();
    page = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    page.on('response', (r) => {
      if (r.url().includes('/dashboard/api/report/') && r.status() >= 400) failedCalls.push(`${r.status()} ${r.url()}`);
    });
    await page.goto('/login');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${base}/sites`);
  });

  after(async () => {
    if (page) await closePage(page).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it("shows the chosen goal's completions by its most used property, as the API answers, with shares of all its completions", async () => {
    await page.goto(`/sites/${site}?goal=${signup}`);
    await page.getByRole('heading', { name: 'Properties of Signup' }).waitFor();
    const expected: Shown = [['pro', '3', '2', pct(3, 7)], ['team', '2', '2', pct(2, 7)], ['=a,b "quoted"', '1', '1', pct(1, 7)]];
    await eventually(panelRows, expected, 'plan rows');
    const today = new Date().toISOString().slice(0, 10);
    const api = await answer({ site_id: site, entity_name: 'Signup', date_from: `${today} 00:00:00`, date_to: `${today} 23:59:59` });
    assert.deepEqual(api.keys, ['plan', 'source', 'note']);
    assert.deepEqual(
      api.rows.map((r) => [r.value, String(r.conversions), String(r.unique_conversions), pct(r.conversions, api.total)]),
      expected,
    );
    assert.deepEqual(await page.locator('select[name="prop_key"] option').allTextContents(), ['plan', 'source', 'note']);
    await mkdir(SHOTS, { recursive: true });
    await page.locator('.goal-properties').screenshot({ path: join(SHOTS, 'goal-properties.png') });

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export plan of Signup as CSV' }).click()]);
    const csvText = await readFile(await download.path(), 'utf8');
    assert.equal(
      csvText,
      'value,conversions,unique_conversions,share\r\npro,3,2,0.4286\r\nteam,2,2,0.2857\r\n"\'=a,b ""quoted""",1,1,0.1429\r\n',
      'the rows shown, a formula-looking value defused and quoted',
    );
    assert.match(download.suggestedFilename(), /^Props-shop-Signup-plan-\d{4}-\d{2}-\d{2}-to-\d{4}-\d{2}-\d{2}\.csv$/);

    await page.locator('select[name="prop_key"]').selectOption('source');
    await eventually(panelRows, [['footer', '1', '1', pct(1, 7)], ['header', '1', '1', pct(1, 7)]], 'source rows');
    assert.match(page.url(), /[?&]prop_key=source(&|$)/);

    // A phone: the page filtered to a goal fits without scrolling sideways (the panel with a long value, and the
    // breakdowns' "Unique completions" headings, which wrap), as the report test checks it without a goal.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.locator('select[name="prop_key"]').selectOption('note');
    await eventually(() => panelRows().then((r) => r.length), 1, 'the long note at 390 px');
    assert.equal(await sidewaysOverflow(page), 0);
    await page.locator('.goal-properties').screenshot({ path: join(SHOTS, 'goal-properties-phone.png') });
    // The value reads across the panel, not down a narrow column: as wide as the table, cut after three lines,
    // its start shown, the whole of it in its filter's name; its three numbers labelled on one line under it.
    // (Source text, not a function: the test's compiler would wrap named functions in a helper the page lacks.)
    const seen = (await page.evaluate(`(() => {
      const tr = document.querySelector('.goal-properties tbody tr');
      const box = (e) => e.getBoundingClientRect();
      const label = tr.querySelector('.bar-label');
      const nums = [...tr.querySelectorAll('td.num')];
      return {
        tableWidth: box(tr.closest('table')).width,
        labelWidth: box(tr.querySelector('td.label')).width,
        lines: box(label).height / parseFloat(getComputedStyle(label).lineHeight),
        cut: label.scrollHeight > label.clientHeight,
        text: (label.textContent || '').slice(0, 8),
        name: label.getAttribute('aria-label') || '',
        belowValue: nums.every((n) => box(n).top >= box(label).bottom - 1),
        oneLine: new Set(nums.map((n) => Math.round(box(n).top))).size === 1,
        numbers: nums.map((n) => getComputedStyle(n, '::before').content.replace(/"/g, '') + ' ' + (n.textContent || '').trim()),
      };
    })()`)) as { tableWidth: number; labelWidth: number; lines: number; cut: boolean; text: string; name: string; belowValue: boolean; oneLine: boolean; numbers: string[] };
    assert.ok(seen.labelWidth >= seen.tableWidth * 0.9, `value ${seen.labelWidth} px wide in a ${seen.tableWidth} px table`);
    assert.ok(seen.lines > 2.5 && seen.lines < 3.5 && seen.cut, `the long note shows ${seen.lines} lines, cut: ${seen.cut}`);
    assert.equal(seen.text, 'long-xxx');
    assert.equal(seen.name, `Filter by property note: long-${'x'.repeat(150)}`);
    assert.ok(seen.belowValue && seen.oneLine, JSON.stringify(seen));
    assert.deepEqual(seen.numbers, ['Completions 1', 'Unique 1', `Share ${pct(1, 7)}`]);
    // A short value takes one line.
    await page.locator('select[name="prop_key"]').selectOption('plan');
    await eventually(() => panelRows().then((r) => r.length), 3, 'plan rows at 390 px');
    const lines = (await page.evaluate(`(() => {
      const e = document.querySelector('.goal-properties tbody tr .bar-label');
      return e.getBoundingClientRect().height / parseFloat(getComputedStyle(e).lineHeight);
    })()`)) as number;
    assert.ok(lines < 1.5, `pro takes ${lines} lines`);
    assert.equal(await sidewaysOverflow(page), 0);
    await page.setViewportSize({ width: 1280, height: 900 });
    assert.deepEqual(page.errors, []);
  });

  it('filters the whole page by a clicked value and by the filter menu, in the address like any filter', async () => {
    await page.goto(`/sites/${site}?goal=${signup}&prop_key=plan`);
    await eventually(conversionsShown, '7', 'every signup');
    await page.getByRole('button', { name: 'Filter by property plan: pro' }).click();
    await page.locator('.chip[data-filter="prop"]', { hasText: 'Property plan is pro' }).waitFor();
    await eventually(conversionsShown, '3', 'signups with plan pro');
    await eventually(panelRows, [['pro', '3', '2', pct(3, 3)]], 'the panel under the filter');
    const filters = JSON.parse(new URL(page.url()).searchParams.get('filters') ?? '[]');
    assert.deepEqual(filters, [{ property: 'prop', key: 'plan', operator: 'is', value: 'pro' }]);

    // The address alone gives the same view (a reload or a copied link).
    await page.reload();
    await eventually(conversionsShown, '3', 'after a reload');

    await page.getByRole('button', { name: 'Clear all' }).click();
    await page.getByRole('button', { name: '+ Add filter' }).click();
    const menu = page.getByRole('form', { name: 'Add a filter' });
    await menu.getByLabel('Property', { exact: true }).selectOption('prop');
    await menu.getByLabel('Property name').fill('plan');
    await menu.getByLabel('Operator').selectOption('is not');
    await menu.getByLabel('Value').fill('pro');
    await menu.getByRole('button', { name: 'Apply filter' }).click();
    await page.locator('.chip[data-filter="prop"]', { hasText: 'Property plan is not pro' }).waitFor();
    // The goal filter went with "Clear all": the headline counts pageviews' visits now; back to the goal.
    await page.getByRole('button', { name: 'Filter by goal: Signup' }).click();
    await eventually(conversionsShown, '4', 'signups without plan pro (team, the quoted one, the note)');
    assert.deepEqual(failedCalls, []);
    assert.deepEqual(page.errors, []);
  });
});
