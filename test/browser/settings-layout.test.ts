// The settings pages in one layout (issue 45, points 9 and 1), in real Chromium against a real server: site
// settings, your account, members and API tokens each have a side menu of their sections (and of the pages beside
// them) that scrolls to a section, marks it and puts it in the address; on a 390 px phone the menu is a select and
// nothing scrolls sideways; text is at 4.5:1 in light and dark. The report's breakdown tabs collapse into a "More"
// menu instead of scrolling: at 1280 px every Sources tab is a tab or in that menu, and one picked there shows its
// table. Screenshots: test-artifacts/screenshots/settings-*.png.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Locator, Page } from 'playwright-core';
import { demoTraffic } from '../../src/cli/demo-traffic.js';
import { hashPassword } from '../../src/domain/secrets.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, eventuallyEqual as eventually, launchBrowser, logInThroughForm, openPage, sidewaysOverflow } from './browser.js';
import { lowContrast } from './contrast.js';

// The functions given to page.evaluate run in Chromium; this project compiles without the DOM library.
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const innerHeight: number;
declare const document: any;
declare const scrollTo: (x: number, y: number) => void;
declare const scrollY: number;

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'layout@example.test';
const PASSWORD = 'a long password for the layout';
const DAY = 86_400_000;
const iso = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface SettingsPage {
  name: string;
  path: () => string;
  /** Something shown once the page has loaded what it shows. */
  ready: string;
  /** The menu's entries: [text, href], this page's sections as #key. */
  menu: () => [string, string][];
}

const SOURCES = ['Referrers', 'Sources', 'UTM source', 'UTM medium', 'UTM campaign', 'UTM content', 'UTM term'];

/** Text the settings pages show, by what it is. */
const READ = [
  ['page heading', 'h1'], ['menu group', '.section-nav-title'], ['menu link', '.section-nav-list a:not([aria-current])'],
  ['current menu link', '.section-nav-list a[aria-current]'], ['card heading', 'h2'], ['label', 'label'], ['muted text', '.muted'],
  ['button', 'button[type="submit"]:not(.danger):not(.secondary):not(:disabled)'],
] as const;

describe('settings pages with a side menu, and tabs that collapse, in Chromium', { skip }, () => {
  let t: TestApp;
  let base = '';
  let browser: Browser;
  let siteId = '';
  const pages: Page[] = [];

  const account: [string, string][] = [['Two-factor', '#two-factor'], ['Email reports', '#email-reports'], ['Password', '#password'],
    ['Email address', '#email'], ['Sessions', '#sessions']];
  const members: [string, string][] = [['Members', '#members'], ['Invite someone', '#invite'], ['Two-factor rule', '#security']];
  const tokens: [string, string][] = [['Tokens', '#tokens'], ['Create a token', '#create-token']];
  const site: [string, string][] = [['General', '#general'], ['Sharing', '#sharing'], ['Embedding', '#embedding'], ['Imports', '#imports'],
    ['Tracking code', '#tracking-code'], ['Danger zone', '#danger-zone']];
  const goals: [string, string][] = [['Event goals', '#goals'], ['Pageview goals', '#page-goals'], ['Milestones', '#milestones']];
  const elsewhere = (path: string, list: [string, string][]) => list.map(([text, hash]): [string, string] => [text, `${path}${hash}`]);
  const PAGES: SettingsPage[] = [
    {
      name: 'site',
      path: () => `/sites/${siteId}/settings`,
      ready: 'form[aria-label="Embedding"] button:enabled',
      menu: () => [...site, ...elsewhere(`/sites/${siteId}/goals`, goals)],
    },
    {
      name: 'goals',
      path: () => `/sites/${siteId}/goals`,
      ready: 'form[aria-label="Add a pageview goal"]',
      menu: () => [...elsewhere(`/sites/${siteId}/settings`, site), ...goals],
    },
    { name: 'account', path: () => '/account', ready: 'tr[data-session]', menu: () => [...account, ...elsewhere('/settings/members', members), ...elsewhere('/settings/api', tokens)] },
    { name: 'members', path: () => '/settings/members', ready: 'tr[data-member]', menu: () => [...elsewhere('/account', account), ...members, ...elsewhere('/settings/api', tokens)] },
    { name: 'tokens', path: () => '/settings/api', ready: 'tr[data-token]', menu: () => [...elsewhere('/account', account), ...elsewhere('/settings/members', members), ...tokens] },
  ];

  async function newPage(options: Parameters<typeof openPage>[1] = {}) {
    const p = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US', ...options });
    if (pages[0]) await p.context().addCookies(await pages[0].context().cookies());
    pages.push(p);
    return p;
  }
  const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `settings-${name}.png`), fullPage: true });
  const open = async (p: Page, page: SettingsPage, hash = '') => {
    await p.goto(`${page.path()}${hash}`);
    await p.locator(page.ready).first().waitFor();
  };
  const menuEntries = (p: Page) => p.locator('.section-nav-list a').evaluateAll((as) => as.map((a) => [a.textContent!.trim(), a.getAttribute('href')!]));
  const currentEntry = (p: Page) => p.locator('.section-nav-list a[aria-current="location"]').evaluateAll((as) => as.map((a) => a.textContent!.trim()));
  /** Where a section is: its top reached the window's top (under what is held there), or all of it is in view. */
  const inView = (p: Page, key: string, under = 0) => p.locator(`#${key}`).evaluate((el, u) => {
    const r = el.getBoundingClientRect();
    return (r.top >= u - 2 && r.top <= u + 40) || (r.top >= u - 2 && r.bottom <= innerHeight + 1);
  }, under);

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Layout shop', timezone: 'UTC' })).body.id;
    const now = Date.now();
    const lines = [...demoTraffic({ siteId, start: new Date(now - 12 * DAY), days: 10, visitsPerDay: 25, seed: 5, hostname: 'https://layout.example' })];
    const imported = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n') });
    assert.equal(imported.statusCode, 200, imported.body);
    await t.flushHits();
    browser = await launchBrowser();
    const login = await newPage();
    await logInThroughForm(login, base, EMAIL, PASSWORD);
    // An API token, so the tokens page has a row (made through the dashboard as a person would).
    await login.goto('/settings/api');
    await login.getByLabel('Token name').fill('Grafana');
    await login.getByRole('button', { name: 'Create token' }).click();
    await login.locator('tr[data-token]').first().waitFor();
  });

  after(async () => {
    for (const p of pages) await closePage(p).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  for (const page of PAGES) {
    it(`${page.name}: the side menu lists the sections, scrolls to one, marks it and puts it in the address`, async () => {
      const p = await newPage();
      await open(p, page);
      const menu = page.menu();
      assert.deepEqual(await menuEntries(p), menu);
      assert.equal(await p.getByLabel('Section', { exact: true }).isVisible(), false, 'the select is for phones');
      const here = menu.filter(([, href]) => href.startsWith('#'));
      for (const [, href] of here) assert.equal(await p.locator(href).count(), 1, `${href} is on the page`);
      assert.deepEqual(await currentEntry(p), [here[0]![0]], 'the first section is marked at the top');
      // The last section (often short, at the bottom of the page), then one in the middle.
      for (const [text, href] of [here.at(-1)!, here[Math.floor(here.length / 2)]!]) {
        await p.locator('.section-nav-list').getByRole('link', { name: text, exact: true }).click();
        await p.waitForURL((u) => u.hash === href);
        await eventually(() => inView(p, href.slice(1)), true, `${text} scrolled into view`);
        await eventually(() => currentEntry(p), [text], `${text} marked in the menu`);
      }
      // The menu stays beside the sections as the page scrolls (held at the window's top once scrolled past it).
      const nav = await p.locator('.section-nav').evaluate((n) => ({ top: n.getBoundingClientRect().top, scrolled: scrollY }));
      assert.ok(nav.top >= 0 && (nav.top < 40 || nav.scrolled < nav.top), `the menu in view (${JSON.stringify(nav)})`);
      // Scrolling by hand marks the section being read.
      const [secondText, secondHref] = here[1]!;
      await p.evaluate((key) => scrollTo(0, document.getElementById(key).getBoundingClientRect().top + scrollY - 10), secondHref.slice(1));
      await eventually(() => currentEntry(p), [secondText], `${secondText} marked after scrolling to it`);
      // A link to a section opens it: the address's section is scrolled to once the page has loaded.
      const [lastText, lastHref] = here.at(-1)!;
      const fresh = await newPage();
      await open(fresh, page, lastHref);
      await eventually(() => inView(fresh, lastHref.slice(1)), true, `${lastText} in view from the address`);
      await eventually(() => currentEntry(fresh), [lastText], `${lastText} marked from the address`);
      assert.deepEqual([...p.errors, ...fresh.errors], []);
    });
  }

  it('goes to a section of another settings page from the menu', async () => {
    const p = await newPage();
    await open(p, PAGES.find((page) => page.name === 'account')!);
    await p.locator('.section-nav-list').getByRole('link', { name: 'Create a token', exact: true }).click();
    await p.waitForURL(`${base}/settings/api#create-token`);
    await p.locator('tr[data-token]').first().waitFor();
    await eventually(() => inView(p, 'create-token'), true, 'the section of the other page in view');
    await eventually(() => currentEntry(p), ['Create a token'], 'marked on the other page');
  });

  for (const scheme of ['light', 'dark'] as const) {
    it(`reads at 4.5:1 or more in ${scheme}, and looks so (screenshots)`, async () => {
      const p = await newPage({ colorScheme: scheme });
      for (const page of PAGES) {
        await open(p, page);
        await p.evaluate(() => document.fonts.ready);
        assert.deepEqual(await lowContrast(p, READ), [], `${page.name} in ${scheme}: text under 4.5:1`);
        await shot(p, `${page.name}-${scheme}`);
      }
      assert.deepEqual(p.errors, []);
    });
  }

  for (const scheme of ['light', 'dark'] as const) {
    it(`on a 390 px phone (${scheme}): the menu is a select held at the top, and nothing scrolls sideways`, async () => {
      const phone = await newPage({ viewport: { width: 390, height: 844 }, colorScheme: scheme, isMobile: true, hasTouch: true });
      for (const page of PAGES) {
        await open(phone, page);
        assert.ok((await sidewaysOverflow(phone)) <= 0, `${page.name}: the page scrolls sideways by ${await sidewaysOverflow(phone)}px`);
        assert.equal(await phone.locator('.section-nav-list').isVisible(), false, 'no side menu on a phone');
        const select = phone.getByLabel('Section', { exact: true });
        assert.ok(await select.isVisible(), 'the sections as a select');
        await shot(phone, `${page.name}-phone-${scheme}`);
        const options = await select.locator('option').evaluateAll((os) => os.map((o) => o.textContent!.trim()));
        assert.deepEqual(options, page.menu().map(([text]) => text));
        const [text, href] = page.menu().filter(([, h]) => h.startsWith('#')).at(-1)!;
        await select.selectOption({ label: text });
        await phone.waitForURL((u) => u.hash === href);
        const nav = await phone.locator('.section-nav').evaluate((n) => n.getBoundingClientRect());
        assert.ok(Math.abs(nav.top) <= 1, `the select stays at the top (${nav.top})`);
        await eventually(() => inView(phone, href.slice(1), Math.floor(nav.bottom)), true, `${text} in view under the select`);
        assert.equal(await select.inputValue(), href.slice(1));
        assert.ok((await sidewaysOverflow(phone)) <= 0);
      }
      assert.deepEqual(phone.errors, []);
    });
  }

  /** The Sources card's tabs: those in the row, then those in its "More" menu. */
  async function sourceTabs(card: Locator): Promise<{ row: string[]; more: string[] }> {
    return {
      row: await card.getByRole('tab').allTextContents(),
      more: (await card.locator('[data-menu="more-tabs"] [role="menuitemradio"]').allTextContents()).map((s) => s.trim()),
    };
  }
  /** Every tab of the row on one line and within the card, none scrolled out of sight. */
  const oneLine = (card: Locator) => card.locator('[role="tablist"]').evaluate((list) => {
    const tabs = [...list.querySelectorAll('[role="tab"]')].map((tab) => tab.getBoundingClientRect());
    const card = list.closest('.card')!.getBoundingClientRect();
    return new Set(tabs.map((r) => Math.round(r.top))).size === 1 && tabs.every((r) => r.right <= card.right && r.left >= card.left) &&
      list.scrollWidth <= list.clientWidth;
  });

  it('collapses the Sources tabs that do not fit at 1280 px into "More"; one picked there shows its table', async () => {
    const p = await newPage();
    await p.goto(`/sites/${siteId}?range=30d`);
    const card = p.locator('.breakdown-card').filter({ has: p.getByRole('heading', { name: 'Sources', exact: true }) });
    await card.locator('[data-table] tbody tr').first().waitFor();
    const before = await sourceTabs(card);
    assert.deepEqual([...before.row, ...before.more], SOURCES, 'every tab, in order, once');
    assert.ok(before.more.length > 0 && before.row.length >= 3, `row ${before.row.join()} / more ${before.more.join()}`);
    assert.ok(await oneLine(card), 'the tabs shown are on one line, inside the card');

    await card.locator('[data-menu="more-tabs"] button.menu-button').click();
    await card.getByRole('menuitemradio', { name: 'UTM term', exact: true }).click();
    const q = new URLSearchParams({ entity: 'pageview', entity_id: siteId, aggregates: 'visitors,pageviews', field_grouping: 'utm_term', sort_by: 'visitors:desc',
      limit: '10', date_from: `${iso(Date.now() - 29 * DAY)} 00:00:00`, date_to: `${iso(Date.now())} 23:59:59` });
    const rows = (await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${q}`)).body as Record<string, string>[];
    assert.ok(rows.some((r) => r.utm_term), 'the traffic has UTM terms');
    const values = [...rows.filter((r) => r.utm_term), ...rows.filter((r) => !r.utm_term)].map((r) => r.utm_term);
    await eventually(() => card.locator('[data-table="utm_term"] tbody tr').evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-value'))), values, 'the UTM term table');
    // The chosen tab is now a tab of the row, selected and focused; the one it displaced went into the menu.
    const term = card.getByRole('tab', { name: 'UTM term', exact: true });
    assert.equal(await term.getAttribute('aria-selected'), 'true');
    assert.equal(await p.evaluate(() => document.activeElement?.textContent), 'UTM term');
    assert.equal(await card.getByRole('tabpanel').getAttribute('aria-labelledby'), await term.getAttribute('id'));
    const after = await sourceTabs(card);
    assert.deepEqual([...after.row, ...after.more].sort(), [...SOURCES].sort());
    assert.equal(after.row.at(-1), 'UTM term');
    assert.ok(await oneLine(card));
    // The arrow keys go on from there, through the tabs of the row.
    await p.keyboard.press('ArrowLeft');
    const left = after.row.at(-2)!;
    await eventually(() => card.getByRole('tab', { name: left, exact: true }).getAttribute('aria-selected'), 'true', 'ArrowLeft selects the tab before');
    await card.locator(`[data-table] tbody tr`).first().waitFor();
    assert.deepEqual(p.errors, []);
  });

  it('keeps every Sources tab reachable on a 390 px phone, on one line, without sideways scrolling', async () => {
    const phone = await newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await phone.goto(`/sites/${siteId}?range=30d`);
    const card = phone.locator('.breakdown-card').filter({ has: phone.getByRole('heading', { name: 'Sources', exact: true }) });
    await card.locator('[data-table] tbody tr').first().waitFor();
    const tabs = await sourceTabs(card);
    assert.deepEqual([...tabs.row, ...tabs.more], SOURCES);
    assert.ok(await oneLine(card));
    assert.ok((await sidewaysOverflow(phone)) <= 0);
    await card.locator('[data-menu="more-tabs"] button.menu-button').click();
    assert.ok((await sidewaysOverflow(phone)) <= 0, 'with the menu open too');
    await phone.screenshot({ path: join(SHOTS, 'settings-tabs-more-phone.png') });
    await card.getByRole('menuitemradio', { name: 'UTM content', exact: true }).click();
    await card.locator('[data-table="utm_content"] tbody tr').first().waitFor();
    assert.ok(await oneLine(card));
    assert.deepEqual(phone.errors, []);
  });
});
