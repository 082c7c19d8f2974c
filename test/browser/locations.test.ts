// Where visitors are, and the breakdown rows, in real headless Chromium against a real Plumb server with a week of
// generated traffic in named cities of many countries: the world map shades the countries /v1 counts and filters
// by the one clicked, flags come from Plumb (an allow-list of codes) and nothing from another host, a city shows
// its country, details rows filter and the details view has an address of its own, rows without a value come
// last, and a long referrer never breaks inside a word. Screenshots: test-artifacts/screenshots/locations-*.png.

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
import { browserSkipReason, closePage, launchBrowser, openPage, eventuallyEqual as eventually } from './browser.js';
import { chooseTab } from './breakdown-tabs.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'places@example.test';
const PASSWORD = 'a long places password';
const DAY = 86_400_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
// Long enough to be cut in any card, the kind of name that used to break as "news.ycombinator.c/om".
const LONG_HOST = 'the-longest-referring-hostname-anyone-has-ever-seen.discussions.news.ycombinator.com';

type Row = Record<string, string>;
type Watched = Page & { errors: string[] };

const fmtInt = (v: string | number) => new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }).format(Number(v) || 0);
const names = new Intl.DisplayNames(['en'], { type: 'region' });
const TODAY = new Date().toISOString().slice(0, 10);
const WEEK = { from: new Date(Date.now() - 6 * DAY).toISOString().slice(0, 10), to: TODAY };
/** Rows as the page lists them: those without a value (not a referrer's "Direct / none") after the rest. */
const noValueLast = (rows: Row[], field: string) => {
  const none = (r: Row) => !r[field] && !field.startsWith('referrer_');
  return [...rows.filter((r) => !none(r)), ...rows.filter(none)];
};

describe('where visitors are, and breakdown rows, in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let page: Watched;
  let siteId = '';
  const offOrigin: string[] = [];
  const pages: Watched[] = [];

  const shot = (p: Page, name: string, fullPage = false) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage });

  // The page asks for whole days in the site's zone (UTC here).
  async function v1(params: Record<string, string>, filters?: unknown[]): Promise<Row[]> {
    const query = new URLSearchParams({
      date_from: `${WEEK.from} 00:00:00`,
      date_to: `${WEEK.to} 23:59:59`,
      entity: 'pageview',
      entity_id: siteId,
      ...params,
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
    if (page) await p.context().addCookies(await page.context().cookies());
    pages.push(p);
    return p;
  }

  const tableRows = (p: Page, scope: string) => p.locator(`${scope} tbody tr`).evaluateAll((trs) =>
    trs.map((tr) => [tr.getAttribute('data-value') ?? '', ...[...tr.querySelectorAll('td.num:not(.engagement)')].map((td) => (td.textContent ?? '').trim())]));
  const expectedRows = (rows: Row[], field: string) => rows.map((r) => [r[field] ?? '', fmtInt(r.visitors!), fmtInt(r.pageviews!)]);
  const TOP = { aggregates: 'visitors,pageviews', sort_by: 'visitors:desc', limit: '10' };
  const filtersIn = (p: Page) => JSON.parse(new URL(p.url()).searchParams.get('filters') ?? '[]');

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    const created = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Places shop', timezone: 'UTC' });
    assert.ok(created.status < 300, JSON.stringify(created.body));
    siteId = (created.body as { id: string }).id;

    const now = Date.now();
    const lines: object[] = [];
    for (const hit of demoTraffic({ siteId, start: new Date(now - 6 * DAY), days: 7, visitsPerDay: 40, seed: 11, hostname: 'https://shop.example' })) {
      if (Date.parse(`${hit.timestamp.replace(' ', 'T')}Z`) <= now - 10 * 60_000) lines.push(hit);
    }
    // Forty visitors from a referrer with a very long name (Berlin's block, so they are located).
    for (let i = 0; i < 40; i++) {
      lines.push({ type: 'pageview', site_id: siteId, timestamp: formatTimestamp(new Date(now - 3 * 3_600_000 - i * 60_000)), url: 'https://shop.example/',
        referrer: `https://${LONG_HOST}/item?id=${i}`, user_agent: UA, ip: `78.55.${i}.9` });
    }
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    assert.equal(res.statusCode, 200, res.body);
    await t.flushHits();

    browser = await launchBrowser();
    page = await newPage();
    await page.goto('/login');
    await page.getByLabel('Email').fill(EMAIL);
    await page.getByLabel('Password').fill(PASSWORD);
    await page.getByRole('button', { name: 'Log in' }).click();
    await page.waitForURL(`${base}/sites`);
  });

  after(async () => {
    for (const p of pages) await closePage(p).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('shades on the world map the countries /v1 counts, and filters by the country clicked', async () => {
    await page.goto(`/sites/${siteId}`);
    await page.getByRole('tab', { name: 'Countries', exact: true }).click();
    const countries = await v1({ aggregates: 'visitors', field_grouping: 'country_code', sort_by: 'visitors:desc', limit: '1000' });
    const counted = new Map(countries.filter((r) => r.country_code).map((r) => [r.country_code!, r.visitors!]));
    assert.ok(counted.size >= 10, 'visitors from many countries');
    await page.locator('.world-map path[data-country="DE"]').waitFor();
    const onMap = new Set(await page.locator('.world-map path[data-country]').evaluateAll((ps) => ps.map((p) => p.getAttribute('data-country') ?? '')));
    // Every country the map can draw has the number /v1 gives it (0 when it has no visitors); small countries the
    // 1:110m outlines leave out (Singapore) are in the list only.
    const expected = [...onMap].sort().map((code) => [code, counted.get(code) ?? '0']);
    const shaded = () => page.locator('.world-map path[data-country]').evaluateAll((ps) =>
      ps.map((p) => [p.getAttribute('data-country') ?? '', p.getAttribute('data-value') ?? '']).sort((a, b) => a[0]!.localeCompare(b[0]!)));
    await eventually(shaded, expected, 'the map shades what /v1 counts');
    for (const code of ['US', 'DE', 'GB', 'FR', 'BR', 'IN', 'AU', 'JP']) assert.ok(Number(counted.get(code)) > 0 && onMap.has(code), `${code} is counted and drawn`);
    // The most visited country has the darkest shade; a country without visitors the lightest.
    const top = countries.find((r) => r.country_code)!.country_code!;
    assert.match((await page.locator(`.world-map path[data-country="${top}"]`).getAttribute('class'))!, /\bshade-5\b/);
    assert.match((await page.locator('.world-map path[data-country="GL"]').getAttribute('class'))!, /\bshade-0\b/);
    assert.ok(await page.locator('.map-legend .legend-step').count() >= 3, 'a legend');
    await page.locator('.world-map').scrollIntoViewIfNeeded();
    await shot(page, 'locations-map');

    // A click on Germany filters the page by it: the address, and the numbers of every panel.
    await page.locator('.world-map path[data-country="DE"]').click();
    await eventually(() => Promise.resolve(filtersIn(page)), [{ property: 'country_code', operator: 'is', value: 'DE' }], 'Germany in the address');
    const filtered = await v1({ ...TOP, field_grouping: 'pathname' }, [{ property: 'country_code', operator: 'is', value: 'DE' }]);
    await eventually(() => tableRows(page, '[data-table="pathname"]'), expectedRows(filtered, 'pathname'), 'pages of visitors in Germany');
    // Once filtered to a country, the map offers no second one (both at once would match nobody).
    await eventually(() => page.locator('.world-map path.pick').count(), 0, 'no country to pick');

    // The keyboard: a country is a button, Enter picks it.
    await page.goto(`/sites/${siteId}`);
    await page.getByRole('tab', { name: 'Countries', exact: true }).click();
    const us = page.getByRole('button', { name: new RegExp(`^${names.of('US')}: ${fmtInt(counted.get('US')!)} visitors\\. Filter by this country$`) });
    await us.focus();
    await page.keyboard.press('Enter');
    await eventually(() => Promise.resolve(filtersIn(page)), [{ property: 'country_code', operator: 'is', value: 'US' }], 'United States in the address');
    assert.deepEqual(page.errors, []);
  });

  it('shows flags Plumb serves (only for known codes) and asks no other host for anything', async () => {
    await page.goto(`/sites/${siteId}`);
    await page.getByRole('tab', { name: 'Countries', exact: true }).click();
    const rows = await v1({ ...TOP, field_grouping: 'country_code' });
    await eventually(() => tableRows(page, '[data-table="country_code"]'), expectedRows(noValueLast(rows, 'country_code'), 'country_code'), 'countries');
    const table = page.locator('[data-table="country_code"]');
    await table.scrollIntoViewIfNeeded();
    const flags = () => table.locator('tbody tr').evaluateAll((trs) => trs.map((tr) => {
      const img = tr.querySelector('img.flag') as unknown as { getAttribute(n: string): string | null; naturalWidth: number; complete: boolean } | null;
      return [tr.getAttribute('data-value') ?? '', img?.getAttribute('src') ?? '', img?.getAttribute('loading') ?? '', Boolean(img && img.complete && img.naturalWidth > 0)];
    }));
    await eventually(flags, rows.filter((r) => r.country_code).map((r) => [r.country_code!, `/dashboard/flags/${r.country_code!.toLowerCase()}.svg`, 'lazy', true]), 'a loaded flag per country');
    // The country's name is written beside its flag.
    assert.equal((await table.locator(`tr[data-value="${rows[0]!.country_code}"] .bar-label`).textContent())?.trim(), names.of(rows[0]!.country_code!));

    const get = (url: string) => t.app.inject({ method: 'GET', url });
    const flag = await get('/dashboard/flags/de.svg');
    assert.equal(flag.statusCode, 200);
    assert.equal(flag.headers['content-type'], 'image/svg+xml');
    assert.match(flag.body, /^<svg/);
    for (const refused of ['/dashboard/flags/zz.svg', '/dashboard/flags/DE.svg', '/dashboard/flags/de.png', '/dashboard/flags/..%2F..%2Fpackage.json', '/dashboard/flags/%2e%2e.svg']) {
      assert.equal((await get(refused)).statusCode, 404, refused);
    }
    const world = await get('/dashboard/world-110m.json');
    assert.equal(world.statusCode, 200);
    assert.equal(JSON.parse(world.body).type, 'Topology');
    // The flags and the map outlines are files of their own, not part of the script or the stylesheet.
    const script = (await get('/dashboard/app.js')).body;
    const styles = (await get('/dashboard/app.css')).body;
    const arcs = world.body.slice(world.body.indexOf('"arcs"'), world.body.indexOf('"arcs"') + 60);
    const drawing = flag.body.slice(flag.body.indexOf('<path'), flag.body.indexOf('<path') + 60);
    assert.ok(arcs.length === 60 && drawing.length === 60);
    for (const bundle of [script, styles]) assert.ok(!bundle.includes(arcs) && !bundle.includes(drawing), 'nothing inlined');
    assert.deepEqual(offOrigin, [], 'nothing requested from another host');
  });

  it('shows the country of each city and region', async () => {
    await page.goto(`/sites/${siteId}`);
    for (const [field, tab] of [['city', 'Cities'], ['region', 'Regions']] as const) {
      await page.getByRole('tab', { name: tab, exact: true }).click();
      const rows = await v1({ ...TOP, field_grouping: field });
      await eventually(() => tableRows(page, `[data-table="${field}"]`), expectedRows(noValueLast(rows, field), field), field);
      const pairs = await v1({ aggregates: 'visitors', field_grouping: `${field},country_code`, sort_by: 'visitors:desc', limit: '1000' });
      const countriesOf = (place: string) => pairs.filter((p) => p[field] === place && p.country_code).map((p) => names.of(p.country_code!)).join(', ');
      const shown = await page.locator(`[data-table="${field}"] tbody tr`).evaluateAll((trs) =>
        trs.map((tr) => [tr.getAttribute('data-value') ?? '', (tr.querySelector('.place-country')?.textContent ?? '').trim(), tr.querySelectorAll('.place-country img.flag').length]));
      assert.deepEqual(shown, noValueLast(rows, field).map((r) => [r[field]!, r[field] ? countriesOf(r[field]!) : '', r[field] ? countriesOf(r[field]!).split(', ').length : 0]));
      if (field === 'city') {
        const berlin = shown.find(([city]) => city === 'Berlin');
        assert.deepEqual(berlin, ['Berlin', 'Germany', 1], 'Berlin, Germany');
      }
    }
  });

  it('filters by a row of the details view, which has an address of its own', async () => {
    // A copied link opens the details.
    await page.goto(`/sites/${siteId}?range=7d&details=city`);
    const dialog = page.locator('dialog[data-details="city"]');
    await dialog.waitFor();
    assert.equal(await dialog.evaluate((d) => (d as unknown as { open: boolean }).open), true);
    const cities = await v1({ aggregates: 'visitors,pageviews', field_grouping: 'city', sort_by: 'visitors:desc', limit: '1000' });
    await eventually(() => tableRows(page, 'dialog[data-details="city"]'), expectedRows(noValueLast(cities, 'city'), 'city'), 'every city');
    assert.equal(await page.getByRole('tab', { name: 'Cities', exact: true }).getAttribute('aria-selected'), 'true');
    await shot(page, 'locations-details');

    // Opened by its button, it adds an address; Back closes it.
    await page.goto(`/sites/${siteId}`);
    await page.getByRole('button', { name: 'Details: Top pages' }).click();
    await page.locator('dialog[data-details="pathname"]').waitFor();
    assert.equal(new URL(page.url()).searchParams.get('details'), 'pathname');
    await page.goBack();
    await eventually(() => page.locator('dialog[data-details]').count(), 0, 'Back closes the details');
    assert.equal(new URL(page.url()).searchParams.get('details'), null);
    assert.equal(new URL(page.url()).pathname, `/sites/${siteId}`);
    // Forward opens it again; Close leaves the address without it.
    await page.goForward();
    await page.locator('dialog[data-details="pathname"]').waitFor();
    await page.locator('dialog[data-details="pathname"]').getByRole('button', { name: 'Close' }).click();
    await eventually(() => page.locator('dialog[data-details]').count(), 0, 'Close closes the details');
    assert.equal(new URL(page.url()).searchParams.get('details'), null);

    // Any row of the details, not only the top ten, filters the page.
    await page.getByRole('button', { name: 'Details: Top pages' }).click();
    const all = await v1({ aggregates: 'visitors,pageviews', field_grouping: 'pathname', sort_by: 'visitors:desc', limit: '1000' });
    assert.ok(all.length > 12, 'more pages than the panel shows');
    await eventually(() => tableRows(page, 'dialog[data-details="pathname"]'), expectedRows(all, 'pathname'), 'every page');
    const twelfth = all[11]!.pathname!;
    await page.locator('dialog[data-details="pathname"]').getByRole('button', { name: `Filter by Page: ${twelfth}`, exact: true }).click();
    await eventually(() => page.locator('dialog[data-details]').count(), 0, 'the details close on a filter');
    assert.deepEqual(filtersIn(page), [{ property: 'pathname', operator: 'is', value: twelfth }]);
    assert.equal(new URL(page.url()).searchParams.get('details'), null);
    const filtered = await v1({ ...TOP, field_grouping: 'referrer_source' }, [{ property: 'pathname', operator: 'is', value: twelfth }]);
    await page.getByRole('tab', { name: 'Sources', exact: true }).click();
    await eventually(() => tableRows(page, '[data-table="referrer_source"]'), expectedRows(filtered, 'referrer_source'), 'sources of that page');
    assert.deepEqual(page.errors, []);
  });

  it('lists rows without a value after the real ones, with their numbers; "Direct / none" keeps its place', async () => {
    await page.goto(`/sites/${siteId}`);
    await chooseTab(page, 'UTM campaign');
    const campaigns = await v1({ ...TOP, field_grouping: 'utm_campaign' });
    assert.equal(campaigns[0]!.utm_campaign, '', '/v1 has "(no campaign)" first');
    const shown = noValueLast(campaigns, 'utm_campaign');
    await eventually(() => tableRows(page, '[data-table="utm_campaign"]'), expectedRows(shown, 'utm_campaign'), 'campaigns');
    const last = page.locator('[data-table="utm_campaign"] tbody tr').last();
    assert.equal((await last.locator('td.label').textContent())?.trim(), '(no campaign)');
    assert.match((await last.getAttribute('class')) ?? '', /\bno-value\b/);
    // The real campaigns' bars are shares of the largest real campaign, not of "(no campaign)".
    const widths = await page.locator('[data-table="utm_campaign"] tbody tr:not(.no-value) .bar').evaluateAll((bars) =>
      bars.map((b) => Math.round(parseFloat((b as unknown as { style: { width: string } }).style.width))));
    assert.deepEqual(widths, shown.filter((r) => r.utm_campaign).map((r) => Math.round((Number(r.visitors) / Number(shown[0]!.visitors)) * 100)));

    await page.getByRole('tab', { name: 'Sources', exact: true }).click();
    const sources = await v1({ ...TOP, field_grouping: 'referrer_source' });
    await eventually(() => tableRows(page, '[data-table="referrer_source"]'), expectedRows(sources, 'referrer_source'), 'sources in /v1 order');
  });

  it('never breaks a long referrer inside a word, at 1280 and 390 px, light and dark', async () => {
    for (const [width, scheme] of [[390, 'light'], [1280, 'light'], [1280, 'dark'], [390, 'dark']] as const) {
      const p = await newPage({ viewport: { width, height: 900 }, colorScheme: scheme, ...(width < 500 ? { isMobile: true, hasTouch: true } : {}) });
      await p.goto(`/sites/${siteId}`);
      // Referrers is the Sources panel's first tab.
      const label = p.locator(`[data-table="referrer_hostname"] tr[data-value="https://${LONG_HOST}"] .bar-label`);
      await label.waitFor();
      const box = await label.evaluate((el) => {
        const e = el as unknown as { scrollWidth: number; clientWidth: number; getBoundingClientRect(): { height: number }; getAttribute(n: string): string | null };
        const style = (globalThis as unknown as { getComputedStyle(e: unknown): { lineHeight: string; fontSize: string; textOverflow: string } }).getComputedStyle(el);
        return { cut: e.scrollWidth > e.clientWidth, height: e.getBoundingClientRect().height, fontSize: parseFloat(style.fontSize), overflow: style.textOverflow, title: e.getAttribute('title') };
      });
      assert.ok(box.height < box.fontSize * 2, `${width}px ${scheme}: one line (${box.height}px at ${box.fontSize}px)`);
      assert.equal(box.overflow, 'ellipsis');
      assert.ok(box.cut, `${width}px ${scheme}: the name is cut with an ellipsis`);
      assert.equal(box.title, `Show only ${LONG_HOST}`, 'the whole name in its title');
      // However long its labels, the table fits a phone: its narrowest layout (min-content) leaves the page room.
      const narrowest = await p.locator('[data-table="referrer_hostname"] table').evaluate((table) => {
        const t = table as unknown as { style: { width: string }; getBoundingClientRect(): { width: number } };
        t.style.width = 'min-content';
        const w = t.getBoundingClientRect().width;
        t.style.width = '';
        return w;
      });
      assert.ok(narrowest <= 340, `${width}px ${scheme}: the referrers fit in ${narrowest}px`);
      await p.locator('.breakdown-card').filter({ hasText: 'Sources' }).first().screenshot({ path: join(SHOTS, `locations-referrers-${width}-${scheme}.png`) });
      await p.getByRole('tab', { name: 'Countries', exact: true }).click();
      await p.locator('.world-map path[data-country="DE"]').waitFor();
      await p.locator('[data-table="country_code"] img.flag').first().waitFor();
      await p.locator('.breakdown-card').filter({ hasText: 'Locations' }).first().screenshot({ path: join(SHOTS, `locations-${width}-${scheme}.png`) });
      await p.getByRole('tab', { name: 'Cities', exact: true }).click();
      await p.locator('[data-table="city"] .place-country').first().waitFor();
      await p.locator('.breakdown-card').filter({ hasText: 'Locations' }).first().scrollIntoViewIfNeeded();
      await p.locator('.breakdown-card').filter({ hasText: 'Locations' }).first().screenshot({ path: join(SHOTS, `locations-cities-${width}-${scheme}.png`) });
      assert.deepEqual(p.errors, []);
    }
    assert.deepEqual(offOrigin, [], 'nothing requested from another host');
  });
});
