// The filter menu's value suggestions and the segments panel in real headless Chromium, against a real Plumb
// server with two weeks of generated traffic: suggestions are the values /v1 answers for the period with their
// visitors, chosen with the keyboard (a combobox and its listbox), countries found by name ("Germany" is DE);
// segments saved, shared, applied, renamed and deleted by the owner, used by a viewer who cannot change them, and
// absent from share pages. Screenshots: test-artifacts/screenshots/filter-suggestions-*.png and segments-*.png.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { demoTraffic } from '../../src/cli/demo-traffic.js';
import { hashPassword } from '../../src/domain/secrets.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, launchBrowser, openPage, eventuallyEqual as eventually } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'suggestions@example.test';
const VIEWER = 'viewer.suggestions@example.test';
const PASSWORD = 'a long suggestion password';
const ZONE = 'Europe/Berlin';
const DAY = 86_400_000;

type Row = Record<string, string>;
type Watched = Page & { errors: string[] };

const fmtInt = (v: string | number) => new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }).format(Number(v) || 0);
const todayIn = (zone: string) =>
  new Intl.DateTimeFormat('en-CA', { timeZone: zone, year: 'numeric', month: '2-digit', day: '2-digit' }).format(new Date());
const addDays = (date: string, n: number) => new Date(Date.parse(`${date}T00:00:00Z`) + n * DAY).toISOString().slice(0, 10);
const TODAY = todayIn(ZONE);
const WEEK = { from: addDays(TODAY, -6), to: TODAY };

describe('filter value suggestions and segments in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: Watched;
  let siteId = '';
  const pages: Watched[] = [];
  const offOrigin: string[] = [];

  const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  async function v1(params: Record<string, string>, filters?: unknown[]): Promise<Row[]> {
    const query = new URLSearchParams({
      entity: 'pageview', entity_id: siteId, date_from: `${WEEK.from} 00:00:00`, date_to: `${WEEK.to} 23:59:59`, ...params,
      ...(filters && filters.length ? { filters: JSON.stringify(filters) } : {}),
    });
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Row[];
  }

  async function newPage(options: Parameters<typeof openPage>[1] = {}): Promise<Watched> {
    const p = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US', ...options });
    p.on('request', (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith('data:') && !r.url().startsWith('blob:')) offOrigin.push(r.url());
    });
    pages.push(p);
    return p;
  }

  async function logIn(p: Page, email: string) {
    await p.goto('/login');
    await p.getByLabel('Email').fill(email);
    await p.getByLabel('Password').fill(PASSWORD);
    await p.getByRole('button', { name: 'Log in' }).click();
    await p.waitForURL(`${base}/sites`);
  }

  /** The listbox's options as [recorded value, visitors shown]. */
  const options = (p: Page): Promise<[string, string][]> =>
    p.locator('[role="listbox"] [role="option"]').evaluateAll((els) =>
      els.map((el): [string, string] => [el.getAttribute('data-value') ?? '', (el.querySelector('.num')?.textContent ?? '').trim()]));
  const chips = (p: Page) => p.locator('.filters .chip').evaluateAll((els) => els.map((e) => (e.firstChild?.textContent ?? '').trim()));
  const addressFilters = (p: Page) => JSON.parse(new URL(p.url()).searchParams.get('filters') ?? '[]');
  const headlineVisitors = (p: Page) => p.locator('[data-metric="visitors"] [data-value]').first().textContent().then((s) => (s ?? '').trim());

  /**
   * Waits for the suggestions, then checks them against every row /v1 gives (`all`, most visitors first): values
   * with as many visitors may come in any order, so the ones shown must be as many as fit (10), each with its own
   * visitors, most first, and none left out may have more visitors than one shown. Returns the values shown.
   */
  async function checkSuggestions(p: Page, all: Row[], field: string): Promise<string[]> {
    const visitorsOf = new Map(all.map((r) => [r[field]!, Number(r.visitors)]));
    await eventually(() => options(p).then((o) => o.length), Math.min(10, all.length), `${field}: as many suggestions as fit`);
    const shown = await options(p);
    for (const [value, visitors] of shown) assert.equal(visitors, fmtInt(visitorsOf.get(value) ?? -1), `${value}: the visitors /v1 counts`);
    const counts = shown.map(([value]) => visitorsOf.get(value)!);
    assert.deepEqual(counts, [...counts].sort((a, b) => b - a), 'most visitors first');
    const left = all.filter((r) => !shown.some(([value]) => value === r[field])).map((r) => Number(r.visitors));
    assert.ok(left.every((n) => n <= counts.at(-1)!), 'none left out has more visitors than one shown');
    return shown.map(([value]) => value);
  }

  /** Where the element ends on the right, in CSS pixels. */
  const rightEdge = (p: Page, selector: string) => p.locator(selector).first().evaluate((el) => el.getBoundingClientRect().right);

  async function openMenu(p: Page, property: string) {
    await p.getByRole('button', { name: '+ Add filter' }).click();
    await p.getByLabel('Property', { exact: true }).selectOption({ label: property });
  }

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    const viewer = await t.team.createUser(VIEWER, await hashPassword(PASSWORD));
    await t.team.putMembership(1, viewer.id, 'viewer', null);

    const created = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Suggestion shop', timezone: ZONE, sharing: 'public' });
    assert.ok(created.status < 300, JSON.stringify(created.body));
    siteId = created.body.id;
    const now = Date.now();
    const lines: object[] = [];
    for (const hit of demoTraffic({ siteId, start: new Date(now - 13 * DAY), days: 14, visitsPerDay: 30, seed: 11, hostname: 'https://shop.example' })) {
      if (Date.parse(`${hit.timestamp.replace(' ', 'T')}Z`) <= now - 10 * 60_000) lines.push(hit);
    }
    const res = await t.app.inject({
      method: 'POST', url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    assert.equal(res.statusCode, 200, res.body);
    await t.flushHits();

    browser = await launchBrowser();
    owner = await newPage();
    await logIn(owner, EMAIL);
  });

  after(async () => {
    for (const p of pages) await closePage(p).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('suggests countries by name with the visitors /v1 counts, and a country typed by name becomes its code', async () => {
    await owner.goto(`/sites/${siteId}`);
    await openMenu(owner, 'Country');
    const value = owner.getByRole('combobox', { name: 'Value' });
    await value.fill('germ');
    const byCountry = await v1({ aggregates: 'visitors', field_grouping: 'country_code', sort_by: 'visitors:desc', limit: '1000' });
    const germany = byCountry.find((r) => r.country_code === 'DE');
    assert.ok(germany && Number(germany.visitors) > 0, 'the traffic has German visitors');
    await eventually(() => options(owner), [['DE', fmtInt(germany.visitors!)]], 'Germany, and only Germany, with its visitors');
    assert.equal(await owner.locator('[role="listbox"] .suggestion-label').first().textContent(), 'Germany DE', 'the name, then the code');
    assert.equal(await value.getAttribute('aria-expanded'), 'true');
    await shot(owner, 'filter-suggestions-country');

    // The keyboard: down to the suggestion, Enter takes its code.
    await value.press('ArrowDown');
    const active = await value.getAttribute('aria-activedescendant');
    assert.ok(active, 'the field names the chosen option');
    assert.equal(await owner.locator(`#${active}`).getAttribute('aria-selected'), 'true');
    await value.press('Enter');
    assert.equal(await value.inputValue(), 'DE');
    assert.equal(await value.getAttribute('aria-expanded'), 'false');
    await owner.getByRole('button', { name: 'Apply filter' }).click();
    await eventually(() => chips(owner), ['Country is Germany'], 'the chip');
    assert.deepEqual(addressFilters(owner), [{ property: 'country_code', operator: 'is', value: 'DE' }]);
    const [withGermany] = await v1({ aggregates: 'visitors' }, [{ property: 'country_code', operator: 'is', value: 'DE' }]);
    await eventually(() => headlineVisitors(owner), fmtInt(withGermany!.visitors!), 'the headline counts German visitors');

    // Typed in full and applied without choosing: still DE, not a filter nothing matches.
    await owner.getByRole('button', { name: 'Clear all' }).click();
    await openMenu(owner, 'Country');
    await owner.getByRole('combobox', { name: 'Value' }).fill('Germany');
    await owner.getByRole('button', { name: 'Apply filter' }).click();
    await eventually(() => chips(owner), ['Country is Germany'], 'the chip of a name typed in full');
    assert.deepEqual(addressFilters(owner), [{ property: 'country_code', operator: 'is', value: 'DE' }]);
    await eventually(() => headlineVisitors(owner), fmtInt(withGermany!.visitors!), 'the same visitors');
    assert.deepEqual(owner.errors, []);
  });

  it("suggests pages containing the text, searched by the API, most visitors first, with the page's other filters", async () => {
    // With Country is Germany applied, the pages suggested are Germany's.
    await owner.goto(`/sites/${siteId}?range=7d&filters=${encodeURIComponent(JSON.stringify([{ property: 'country_code', operator: 'is', value: 'DE' }]))}`);
    await openMenu(owner, 'Page');
    const value = owner.getByRole('combobox', { name: 'Value' });
    await value.fill('blog');
    const germany = { property: 'country_code', operator: 'is', value: 'DE' };
    const all = await v1({ aggregates: 'visitors', field_grouping: 'pathname', sort_by: 'visitors:desc', limit: '1000' },
      [germany, { property: 'pathname', operator: 'is like', value: 'blog' }]);
    assert.ok(all.length >= 3, 'several blog pages');
    const shown = await checkSuggestions(owner, all, 'pathname');
    assert.ok(shown.every((page) => page.includes('blog')), 'blog pages only');

    // Down twice, up once: the first; Escape closes the list and keeps the menu; a second Escape closes the menu.
    const chosen = () => owner.locator('[role="option"][aria-selected="true"]').getAttribute('data-value', { timeout: 1000 }).catch(() => null);
    await value.press('ArrowDown');
    assert.equal(await chosen(), shown[0]);
    await value.press('ArrowDown');
    assert.equal(await chosen(), shown[1]);
    await value.press('ArrowUp');
    assert.equal(await chosen(), shown[0]);
    await value.press('Escape');
    assert.equal(await value.getAttribute('aria-expanded'), 'false');
    assert.equal(await value.isVisible(), true, 'the menu stays open');
    await value.press('ArrowDown');
    await eventually(() => value.getAttribute('aria-expanded'), 'true', 'arrow down opens the list again');
    await value.press('ArrowDown');
    await value.press('ArrowDown');
    const second = await chosen();
    // Opened again, the list is asked again: pages with as many visitors may come in another order.
    assert.ok(second && all.some((r) => r.pathname === second), `${second} is a blog page of Germany`);
    await value.press('Enter');
    assert.equal(await value.inputValue(), second);
    await owner.getByRole('button', { name: 'Apply filter' }).click();
    await eventually(() => chips(owner), ['Country is Germany', `Page is ${second}`], 'both chips');

    // Browsers cannot be searched by the API ("is" only): the page searches the period's browsers itself.
    const browsers = await v1({ aggregates: 'visitors', field_grouping: 'browser', sort_by: 'visitors:desc', limit: '1000' },
      [germany, { property: 'pathname', operator: 'is', value: second! }]);
    assert.ok(browsers.length > 0, 'the page has visitors');
    // The first letters of one of them, typed in lower case.
    const typed = browsers[0]!.browser!.slice(0, 3).toLowerCase();
    const chrome = browsers.filter((r) => r.browser!.toLowerCase().includes(typed));
    await openMenu(owner, 'Browser');
    const browserField = owner.getByRole('combobox', { name: 'Value' });
    await browserField.fill(typed);
    await checkSuggestions(owner, chrome, 'browser');
    await browserField.press('Escape');
    await browserField.press('Escape');
    assert.equal(await owner.getByRole('combobox', { name: 'Value' }).count(), 0, 'the menu closed');

    // A regular expression is no value: nothing is suggested.
    await openMenu(owner, 'Page');
    await owner.getByLabel('Operator').selectOption({ label: 'matches the regular expression' });
    await owner.getByLabel('Value', { exact: true }).fill('^/blog');
    assert.equal(await owner.getByRole('combobox', { name: 'Value' }).count(), 0, 'a plain field, no list');
    await owner.getByRole('button', { name: 'Cancel' }).click();
    assert.deepEqual(owner.errors, []);
  });

  it('saves the filters as a segment, shares it, applies, renames and deletes it', async () => {
    const filters = [{ property: 'country_code', operator: 'is', value: 'DE' }, { property: 'pathname', operator: 'is like', value: 'blog' }];
    await owner.goto(`/sites/${siteId}?range=7d&filters=${encodeURIComponent(JSON.stringify(filters))}`);
    await owner.getByRole('button', { name: 'Segments' }).click();
    const panel = owner.getByRole('region', { name: 'Segments' });
    await panel.getByText('No saved segments yet.').waitFor();
    await panel.getByLabel('Save these filters as').fill('German blog readers');
    await panel.getByLabel('Share with the account').check();
    await panel.getByRole('button', { name: 'Save segment' }).click();
    await panel.getByRole('button', { name: 'Apply segment German blog readers' }).waitFor();
    assert.match(await panel.locator('[data-segment="German blog readers"]').textContent() ?? '', /shared by you.*applied.*Country is Germany, Page contains blog/);
    await shot(owner, 'segments-panel');

    const stored = await t.meta.listSegments(siteId, 1);
    assert.deepEqual(stored.map((s) => [s.name, s.shared, s.filters]), [['German blog readers', true, filters]]);

    // Cleared, then applied again from the menu: the same filters and the numbers /v1 gives for them.
    await owner.getByRole('button', { name: 'Close' }).click();
    await owner.getByRole('button', { name: 'Clear all' }).click();
    await eventually(() => chips(owner), [], 'no filters');
    await owner.getByRole('button', { name: 'Segments' }).click();
    await panel.getByRole('button', { name: 'Apply segment German blog readers' }).click();
    await eventually(() => chips(owner), ['Country is Germany', 'Page contains blog'], 'the segment applied');
    assert.deepEqual(addressFilters(owner), filters);
    const [shown] = await v1({ aggregates: 'visitors' }, filters);
    await eventually(() => headlineVisitors(owner), fmtInt(shown!.visitors!), 'the headline of the segment');

    // Renamed (deleted in the last test, asked once more).
    await owner.getByRole('button', { name: 'Segments' }).click();
    await panel.getByRole('button', { name: 'Rename German blog readers' }).click();
    await panel.getByLabel('New name').fill('Blog in Germany');
    await panel.getByRole('button', { name: 'Save name' }).click();
    await panel.getByRole('button', { name: 'Apply segment Blog in Germany' }).waitFor();
    assert.equal((await t.meta.listSegments(siteId, 1))[0]?.name, 'Blog in Germany');
    assert.deepEqual(owner.errors, []);
  });

  it('lets a viewer apply a shared segment and save a personal one, but change no one else\'s', async () => {
    const viewer = await newPage();
    await logIn(viewer, VIEWER);
    await viewer.goto(`/sites/${siteId}?range=7d`);
    await viewer.getByRole('button', { name: 'Segments' }).click();
    const panel = viewer.getByRole('region', { name: 'Segments' });
    await panel.getByRole('button', { name: 'Apply segment Blog in Germany' }).waitFor();
    assert.equal(await panel.getByRole('button', { name: /^Rename/ }).count(), 0);
    assert.equal(await panel.getByRole('button', { name: /Delete/ }).count(), 0);
    await panel.getByRole('button', { name: 'Apply segment Blog in Germany' }).click();
    await eventually(() => chips(viewer), ['Country is Germany', 'Page contains blog'], 'the shared segment applied');

    await viewer.getByRole('button', { name: 'Segments' }).click();
    assert.equal(await panel.getByLabel('Share with the account').count(), 0, 'a viewer shares nothing');
    await panel.getByLabel('Save these filters as').fill('My German blog');
    await panel.getByRole('button', { name: 'Save segment' }).click();
    await panel.getByRole('button', { name: 'Apply segment My German blog' }).waitFor();
    assert.equal(await panel.getByRole('button', { name: 'Rename My German blog' }).count(), 1, 'their own they may rename');

    // Phone width, light and dark: the panel and the suggestions fit the screen.
    for (const scheme of ['light', 'dark'] as const) {
      const phone = await newPage({ viewport: { width: 390, height: 800 }, colorScheme: scheme, isMobile: true, hasTouch: true });
      await phone.context().addCookies(await viewer.context().cookies());
      await phone.goto(`/sites/${siteId}?range=7d`);
      await phone.getByRole('button', { name: 'Segments' }).click();
      await phone.getByRole('button', { name: 'Apply segment My German blog' }).waitFor();
      await shot(phone, `segments-390-${scheme}`);
      assert.ok((await rightEdge(phone, '.segment-panel')) <= 390, `the segments fit the screen (${scheme})`);
      await phone.getByRole('button', { name: 'Close' }).click();
      await openMenu(phone, 'Page');
      await phone.getByRole('combobox', { name: 'Value' }).fill('docs');
      await phone.locator('[role="listbox"] [role="option"]').first().waitFor();
      assert.ok((await rightEdge(phone, '[role="listbox"]')) <= 390, `the suggestions fit the screen (${scheme})`);
      await shot(phone, `filter-suggestions-390-${scheme}`);
      assert.deepEqual(phone.errors, []);
    }
    // The owner does not see the viewer's personal segment.
    assert.deepEqual((await t.meta.listSegments(siteId, 1)).map((s) => s.name), ['Blog in Germany']);
    assert.deepEqual(viewer.errors, []);
  });

  it('shows suggestions in dark mode, and no segments on the share page', async () => {
    const dark = await newPage({ colorScheme: 'dark' });
    await dark.context().addCookies(await owner.context().cookies());
    await dark.goto(`/sites/${siteId}?range=7d`);
    await dark.getByRole('button', { name: 'Segments' }).click();
    await dark.getByRole('button', { name: 'Apply segment Blog in Germany' }).waitFor();
    await shot(dark, 'segments-panel-dark');
    await dark.getByRole('button', { name: 'Close' }).click();
    await openMenu(dark, 'Source');
    await dark.getByRole('combobox', { name: 'Value' }).focus();
    await dark.locator('[role="listbox"] [role="option"]').first().waitFor();
    const sources = await v1({ aggregates: 'visitors', field_grouping: 'referrer_source', sort_by: 'visitors:desc', limit: '1000' });
    // Nothing typed: the top values (an empty one, direct visits, cannot be a filter). The page asks for ten rows,
    // the empty one perhaps among them.
    const shownSources = await options(dark);
    assert.ok(shownSources.length >= 9, 'the top sources');
    for (const [value, visitors] of shownSources) assert.equal(visitors, fmtInt(sources.find((r) => r.referrer_source === value)!.visitors!));
    await shot(dark, 'filter-suggestions-dark');

    // Delete the owner's segment, asked once more.
    await dark.getByRole('button', { name: 'Cancel' }).click();
    await dark.getByRole('button', { name: 'Segments' }).click();
    await dark.getByRole('button', { name: 'Delete segment Blog in Germany' }).click();
    await dark.getByRole('button', { name: 'Confirm: delete segment Blog in Germany' }).click();
    await dark.getByText('Deleted Blog in Germany.').waitFor();
    assert.deepEqual(await t.meta.listSegments(siteId, 1), []);

    const visitor = await newPage();
    await visitor.goto(`/share/${siteId}`);
    await visitor.getByRole('button', { name: '+ Add filter' }).waitFor();
    assert.equal(await visitor.getByRole('button', { name: 'Segments' }).count(), 0);
    // Suggestions work on the share page too: they are /v1 questions its session may ask.
    await openMenu(visitor, 'Country');
    await visitor.getByRole('combobox', { name: 'Value' }).fill('germany');
    await eventually(() => options(visitor).then((o) => o.map(([v]) => v)), ['DE'], 'Germany on the share page');
    assert.deepEqual([...dark.errors, ...visitor.errors], []);
    assert.deepEqual(offOrigin, [], 'nothing fetched from another host');
  });
});
