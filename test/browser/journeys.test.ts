// The report's journeys panel in real Chromium against a real Plumb server: the boxes the tree shows are the top
// paths GET /v1/sites/{id}/journeys answers for the page's range (first pages, then each box's continuations, with
// visits and the share that ended there), the entry page and depth controls ask again, a clicked page becomes the
// entry page, a custom property filter narrows it to the visits with the property (the report page's own route),
// and the panel reads in dark mode on a 390 px screen without scrolling sideways.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import type { DemoHit } from '../../src/cli/demo-traffic.js';
import { hashPassword } from '../../src/domain/secrets.js';
import { formatTimestamp } from '../../src/domain/time.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, launchBrowser, logInThroughForm, openPage, sidewaysOverflow, eventuallyEqual as eventually } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'journeys@example.test';
const PASSWORD = 'a long journeys password';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const DAY = 86_400_000;

/** Visits (one visitor each) and their pages in order; a page twice in a row is a reload. */
const VISITS: string[][] = [
  ...Array.from({ length: 6 }, () => ['/', '/pricing', '/signup']),
  ...Array.from({ length: 4 }, () => ['/', '/pricing', '/pricing', '/docs']),
  ...Array.from({ length: 3 }, () => ['/', '/blog']),
  ...Array.from({ length: 3 }, () => ['/', '/about']),
  ...Array.from({ length: 2 }, () => ['/', '/careers']),
  ['/', '/press'],
  ...Array.from({ length: 5 }, () => ['/blog', '/blog/post-1', '/pricing']),
  ...Array.from({ length: 2 }, () => ['/blog']),
  ...Array.from({ length: 3 }, () => ['/docs', '/docs/api']),
  ['/about'], ['/careers'], ['/press', '/'], ['/jobs'], ['/legal'],
];

type Shown = [string, string, string][];

interface Answer {
  steps: number;
  total_visits: string;
  paths: { pages: string[]; visits: string; ended: string }[];
}

const fmtInt = (v: number) => new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }).format(v);
const pct = (rate: number) => `${new Intl.NumberFormat('en-US', { minimumFractionDigits: 1, maximumFractionDigits: 1 }).format(Math.round(rate * 1000) / 10)}%`;

/**
 * The boxes the panel must show for an answer, in reading order: the first `roots` first pages, and under each box
 * its three most visited continuations, down to the answer's depth.
 */
function expectedBoxes(answer: Answer, roots: number): Shown {
  const out: Shown = [];
  const childrenOf = (pages: string[]) =>
    answer.paths.filter((p) => p.pages.length === pages.length + 1 && pages.every((page, i) => p.pages[i] === page));
  const visit = (p: Answer['paths'][number]) => {
    const visits = Number(p.visits);
    out.push([JSON.stringify(p.pages), `${fmtInt(visits)} visit${visits === 1 ? '' : 's'}`, `${pct(Number(p.ended) / visits)} ended`]);
    if (p.pages.length < answer.steps) childrenOf(p.pages).slice(0, 3).forEach(visit);
  };
  answer.paths.filter((p) => p.pages.length === 1).slice(0, roots).forEach(visit);
  return out;
}

describe('journeys panel in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Page & { errors: string[] };
  let site = '';
  const day = new Date(Date.now() - 2 * DAY).toISOString().slice(0, 10);
  const today = new Date().toISOString().slice(0, 10);
  const sixDaysAgo = new Date(Date.now() - 6 * DAY).toISOString().slice(0, 10);
  const failedCalls: string[] = [];

  /** What /v1 answers the page's own session for the report's range (the last 7 days of a UTC site). */
  const answer = (params: Record<string, string>): Promise<Answer> =>
    page.evaluate(`(async () => {
      const csrf = document.querySelector('meta[name="plumb-csrf"]').getAttribute('content');
      const res = await fetch('/v1/sites/${site}/journeys?${new URLSearchParams({ date_from: `${sixDaysAgo} 00:00:00`, date_to: `${today} 23:59:59`, limit: '100', ...params })}', { headers: { 'x-plumb-csrf': csrf } });
      return res.json();
    })()`) as Promise<Answer>;

  const shownBoxes = (): Promise<Shown> =>
    page.locator('.journeys .journey-node:not(.journey-other)').evaluateAll((nodes) =>
      nodes.map((n) => [
        n.getAttribute('data-pages') ?? '',
        (n.querySelector(':scope > .journey-box [data-column="visits"]')?.textContent ?? '').trim(),
        (n.querySelector(':scope > .journey-box [data-column="ended"]')?.textContent ?? '').trim(),
      ] as [string, string, string]));

  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Journeys shop', timezone: 'UTC' })).body.id;
    const lines: DemoHit[] = [];
    VISITS.forEach((pages, i) => {
      const start = Date.parse(`${day}T10:00:00Z`) + i * 60_000;
      pages.forEach((path, n) =>
        lines.push({ type: 'pageview', site_id: site, timestamp: formatTimestamp(new Date(start + n * 120_000)), url: `https://shop.example${path}`,
          referrer: '', user_agent: UA, ip: `198.51.100.${i + 1}` }));
      // The visits that end on /pricing after the blog sign up on the pro plan: an event with a property.
      if (pages.join(' ') === '/blog /blog/post-1 /pricing') {
        lines.push({ type: 'event', site_id: site, timestamp: formatTimestamp(new Date(start + pages.length * 120_000)), url: 'https://shop.example/pricing',
          name: 'Signup', props: { plan: 'pro' }, referrer: '', user_agent: UA, ip: `198.51.100.${i + 1}` } as DemoHit);
      }
    });
    lines.sort((a, b) => a.timestamp.localeCompare(b.timestamp));
    const imported = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n') });
    assert.equal(imported.statusCode, 200, imported.body);
    await t.flushHits();
    browser = await launchBrowser();
    page = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US' });
    page.on('response', (r) => {
      if (r.url().includes('/journeys') && r.status() >= 400) failedCalls.push(`${r.status()} ${r.url()}`);
    });
    await logInThroughForm(page, base, EMAIL, PASSWORD);
  });

  after(async () => {
    if (page) await closePage(page).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('shows the top paths the API answers: first pages, their continuations, visits and the share that ended', async () => {
    await page.goto(`/sites/${site}?range=7d`);
    await page.getByRole('heading', { name: 'Journeys', exact: true }).waitFor();
    const api = await answer({ steps: '3' });
    assert.equal(api.total_visits, String(VISITS.length));
    const expected = expectedBoxes(api, 5);
    // The data decides the shape: "/" first with 19 visits, its continuations cut at three, a reload not a step.
    assert.deepEqual(expected.slice(0, 3), [
      ['["/"]', '19 visits', '0.0% ended'],
      ['["/","/pricing"]', '10 visits', '0.0% ended'],
      ['["/","/pricing","/signup"]', '6 visits', '100.0% ended'],
    ]);
    assert.ok(expected.some(([pages]) => pages === '["/","/pricing","/docs"]'));
    await eventually(shownBoxes, expected, 'the journey boxes');
    await mkdir(SHOTS, { recursive: true });
    await page.locator('.journeys').screenshot({ path: join(SHOTS, 'journeys-wide.png') });
    // Visits of "/" that went on beyond its three continuations shown: 19 - 0 ended - (10 + 3 + 3).
    assert.equal((await page.locator('.journeys .journey-other').first().textContent())?.trim(), '3 went on elsewhere');
    assert.deepEqual(failedCalls, []);
    assert.deepEqual(page.errors, []);
  });

  it('asks again for another depth and for a chosen entry page, and a clicked page becomes the entry page', async () => {
    await page.getByLabel('Steps').selectOption('2');
    await eventually(shownBoxes, expectedBoxes(await answer({ steps: '2' }), 5), 'two steps');
    assert.equal(await page.locator('.journeys [data-pages="[\\"/\\",\\"/pricing\\",\\"/signup\\"]"]').count(), 0);

    await page.getByLabel('Steps').selectOption('4');
    // The entry pages offered are the top first pages of journeys with any entry page.
    const firsts = (await answer({ steps: '2', limit: '20' })).paths.filter((p) => p.pages.length === 1).map((p) => p.pages[0]);
    assert.deepEqual(await page.locator('select[name="entry_page"] option').allTextContents(), ['Any page', ...firsts]);
    await page.getByLabel('Entry page').selectOption('/blog');
    await eventually(shownBoxes, expectedBoxes(await answer({ steps: '4', entry_page: '/blog' }), 1), 'journeys from /blog');
    assert.deepEqual((await shownBoxes()).map(([pages]) => pages), ['["/blog"]', '["/blog","/blog/post-1"]', '["/blog","/blog/post-1","/pricing"]']);

    await page.getByRole('button', { name: 'Step 3: /pricing. Start journeys here' }).click();
    assert.equal(await page.locator('select[name="entry_page"]').inputValue(), '/pricing');
    await eventually(shownBoxes, expectedBoxes(await answer({ steps: '4', entry_page: '/pricing' }), 1), 'journeys from /pricing');
    assert.deepEqual(failedCalls, []);
  });

  it('narrows to the visits with a custom property when the report is filtered by one', async () => {
    const props = [{ key: 'plan', operator: 'is', value: 'pro' }];
    await page.goto(`/sites/${site}?range=7d&filters=${encodeURIComponent(JSON.stringify([{ property: 'prop', ...props[0] }]))}`);
    await page.getByRole('heading', { name: 'Journeys', exact: true }).waitFor();
    const filtered = (await page.evaluate(`(async () => {
      const csrf = document.querySelector('meta[name="plumb-csrf"]').getAttribute('content');
      const res = await fetch('/dashboard/api/report/journeys?${new URLSearchParams({ entity: 'pageview', entity_id: site, date_from: `${sixDaysAgo} 00:00:00`, date_to: `${today} 23:59:59`, props: JSON.stringify(props), steps: '3', limit: '100' })}', { headers: { 'x-plumb-csrf': csrf } });
      return res.json();
    })()`)) as Answer;
    // Only the five visits that signed up on the pro plan, whose journeys all start on the blog.
    assert.equal(filtered.total_visits, '5');
    const expected = expectedBoxes(filtered, 5);
    assert.deepEqual(expected, [
      ['["/blog"]', '5 visits', '0.0% ended'],
      ['["/blog","/blog/post-1"]', '5 visits', '0.0% ended'],
      ['["/blog","/blog/post-1","/pricing"]', '5 visits', '100.0% ended'],
    ]);
    await eventually(shownBoxes, expected, 'the journeys of the visits with the property');
    assert.equal(await page.locator('.journeys').getByText('do not apply').count(), 0);
    assert.deepEqual(failedCalls, []);
    assert.deepEqual(page.errors, []);
  });

  it('reads in dark mode on a 390 px screen without scrolling sideways', async () => {
    const narrow = await openPage(browser, { baseURL: base, viewport: { width: 390, height: 844 }, locale: 'en-US', colorScheme: 'dark' });
    try {
      await logInThroughForm(narrow, base, EMAIL, PASSWORD);
      await narrow.goto(`/sites/${site}?range=7d`);
      const panel = narrow.locator('.journeys');
      await panel.locator('.journey-node').first().waitFor();
      await panel.scrollIntoViewIfNeeded();
      assert.ok((await sidewaysOverflow(narrow)) <= 0, 'the page scrolls sideways');
      // The boxes fit the card: a continuation sits under its parent, not beside it.
      const width = await panel.evaluate((el) => el.getBoundingClientRect().width);
      const widest = await panel.locator('.journey-box').evaluateAll((boxes) => Math.max(...boxes.map((b) => b.getBoundingClientRect().right)));
      const left = await panel.evaluate((el) => el.getBoundingClientRect().left);
      assert.ok(widest <= left + width + 0.5, `a box reaches ${widest}px, past the card's ${left + width}px`);
      const background = await narrow.evaluate(`getComputedStyle(document.querySelector('.journey-box')).backgroundColor`);
      assert.notEqual(background, 'rgb(255, 255, 255)', 'dark boxes');
      await mkdir(SHOTS, { recursive: true });
      await panel.screenshot({ path: join(SHOTS, 'journeys-390-dark.png') });
      assert.deepEqual(narrow.errors, []);
    } finally {
      await closePage(narrow);
    }
  });
});
