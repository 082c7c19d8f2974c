// The dashboard in real headless Chromium against a real Plumb server: first-run setup, logout and login, a site
// created through the page, imported traffic whose numbers the report shows exactly as /v1 answers them,
// filtering by clicking a row, goals and milestones, sharing, tokens made and revoked, public and private share
// pages, a phone-width screen. Screenshots of the main pages go to test-artifacts/screenshots/.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { formatTimestamp } from '../../src/domain/time.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, launchBrowser, openPage, sidewaysOverflow } from './browser.js';
import { chooseTab } from './breakdown-tabs.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'owner@example.test';
const PASSWORD = 'a long dashboard password';
const SHARE_PASSWORD = 'share password 42';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const UA_PHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1';

/** The little of the page's DOM these tests read inside the browser. */
interface PageGlobals {
  document: {
    querySelector(selector: string): { textContent: string | null } | null;
  };
}

const fmtInt = (text: string) => new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 }).format(Number(text));
const fmtPercent = (rate: string) => `${(Math.round(Number(rate) * 1000) / 10).toFixed(1)}%`;

/** A few visits over the last days, one of them going on right now. */
function traffic(siteId: string): string {
  const now = Date.now();
  const at = (minutesAgo: number) => formatTimestamp(new Date(now - minutesAgo * 60_000));
  const hit = (minutesAgo: number, ip: string, path: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ type: 'pageview', site_id: siteId, timestamp: at(minutesAgo), url: `https://shop.example${path}`, referrer: '', user_agent: UA, ip, ...extra });
  return [
    hit(3 * 1440, '203.0.113.1', '/', { referrer: 'https://www.google.com/search?q=shop' }),
    hit(3 * 1440 - 2, '203.0.113.1', '/pricing'),
    hit(2 * 1440, '203.0.113.2', '/blog/hello', { referrer: 'https://news.ycombinator.com/' }),
    hit(1440, '203.0.113.3', '/pricing?utm_campaign=autumn&utm_source=newsletter'),
    hit(1440 - 1, '203.0.113.3', '/signup'),
    hit(300, '203.0.113.4', '/', { user_agent: UA_PHONE }),
    hit(120, '203.0.113.5', '/pricing', { referrer: 'https://www.google.com/' }),
    hit(2, '203.0.113.6', '/'),
    hit(1, '203.0.113.6', '/pricing'),
  ].join('\n');
}

/** Elements reaching past the right edge of the screen (to name them when a page scrolls sideways). */
export function sticksOut(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const doc = (globalThis as unknown as { document: { documentElement: { clientWidth: number }; querySelectorAll(s: string): Iterable<{ getBoundingClientRect(): { right: number }; tagName: string; className: unknown }> } }).document;
    const width = doc.documentElement.clientWidth;
    return [...doc.querySelectorAll('body *')]
      .filter((el) => el.getBoundingClientRect().right > width + 0.5)
      .slice(0, 12)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className)}`);
  });
}

describe('dashboard in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: Page & { errors: string[] };
  let siteId = '';
  const offOrigin: string[] = [];
  const cspViolations: string[] = [];

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  /** What /v1 answers for the report page's default range (the last 7 days, site time zone UTC). */
  async function aggregation(params: Record<string, string>) {
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.parse(`${today}T00:00:00Z`) - 6 * 86_400_000).toISOString().slice(0, 10);
    const query = new URLSearchParams({ entity: 'pageview', entity_id: siteId, date_from: `${from} 00:00:00`, date_to: `${today} 23:59:59`, ...params });
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${query}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  }

  async function watch(page: Page & { errors: string[] }) {
    page.on('request', (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith('data:')) offOrigin.push(r.url());
    });
    page.on('console', (m) => {
      if (/Content Security Policy/i.test(m.text())) cspViolations.push(m.text());
    });
    return page;
  }

  async function expectText(page: Page, selector: string, expected: string) {
    try {
      // Runs in the page (a function: the page's CSP forbids evaluating strings); no DOM types in this project.
      await page.waitForFunction(
        ([s, e]) => (globalThis as unknown as PageGlobals).document.querySelector(s)?.textContent?.trim() === e,
        [selector, expected] as const,
        { timeout: 10_000 },
      );
    } catch (err) {
      assert.fail(`${String(err).slice(0, 200)}\n${selector}: expected "${expected}", the page shows "${await page.locator(selector).first().textContent().catch(() => '(nothing)')}"`);
    }
  }

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    owner = await watch(await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 } }));
  });

  after(async () => {
    await owner?.context().close().catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('sets up the owner login on first run, logs out and logs in again', async () => {
    await owner.goto('/');
    assert.match(owner.url(), /\/login\?next=%2Fsites$/);
    await owner.getByRole('link', { name: 'Set up the owner login' }).click();
    await owner.getByLabel('Owner API token').fill(OWNER_TOKEN);
    await owner.getByLabel('Email').fill(EMAIL);
    await owner.getByLabel('New password (at least 10 characters)').fill(PASSWORD);
    await owner.getByLabel('New password again').fill(PASSWORD);
    await shot(owner, 'setup');
    // Log out while the page still has a request in flight: its list of sites is held until the logout has ended
    // the session, then answered 401 while the logout's own answer is on its way. The page must not send the browser
    // to log in again "and come back here" (/login?next=...): the person chose to leave.
    let sessionEnded!: () => void;
    const ended = new Promise<void>((resolve) => (sessionEnded = resolve));
    await owner.route('**/v1/sites?*', async (route) => {
      await ended;
      await route.continue();
    });
    await owner.route('**/logout', async (route) => {
      const answer = await route.fetch({ maxRedirects: 0 });
      sessionEnded();
      await new Promise((resolve) => setTimeout(resolve, 1000));
      await route.fulfill({ response: answer });
    });
    const listAsked = owner.waitForRequest((r) => r.url().includes('/v1/sites?'));
    const refused = owner.waitForResponse((r) => r.url().includes('/v1/sites?') && r.status() === 401);
    await owner.getByRole('button', { name: 'Save and log in' }).click();
    await owner.waitForURL(`${base}/sites`);
    await listAsked;
    await owner.getByRole('button', { name: 'Log out' }).click();
    await refused;
    await owner.waitForURL(/\/login$/, { timeout: 10_000 }).catch(() => assert.fail(`logged out to ${owner.url()}, not /login`));
    await owner.unrouteAll();

    await owner.getByLabel('Email').fill(EMAIL);
    await owner.getByLabel('Password').fill('not my password');
    await owner.getByRole('button', { name: 'Log in' }).click();
    await owner.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
    await owner.getByLabel('Password').fill(PASSWORD);
    await shot(owner, 'login');
    await owner.getByRole('button', { name: 'Log in' }).click();
    await owner.waitForURL(`${base}/sites`);
    await owner.getByText('No sites yet').waitFor();
  });

  it('creates a site from the sites page and shows its script tag', async () => {
    await owner.getByLabel('Site name').fill('Shop');
    await owner.getByLabel('Time zone').fill('UTC');
    await owner.getByRole('button', { name: 'Add site' }).click();
    await owner.getByRole('status').filter({ hasText: 'Added Shop.' }).waitFor();
    const card = owner.locator('article.site').filter({ hasText: 'Shop' });
    siteId = (await card.getAttribute('data-site-id'))!;
    assert.match(siteId, /^[A-Z]{8}$/);
    assert.equal((await t.meta.getSite(siteId))?.name, 'Shop', 'the site exists on the server');
    const tag = await card.getByLabel('Script tag for Shop').inputValue();
    assert.equal(tag, `<script src="${base}/script.js" data-site="${siteId}" data-spa="auto" defer></script>`);
    await shot(owner, 'sites');
  });

  it('adds goals and milestones, edits and deletes them', async () => {
    await owner.goto(`/sites/${siteId}/goals`);
    const addGoal = owner.getByRole('form', { name: 'Add a goal' });
    await addGoal.getByLabel('Goal name').fill('Signup');
    await owner.getByRole('button', { name: 'Add goal' }).click();
    await owner.locator('[data-goal]').filter({ hasText: 'Signup' }).waitFor();
    await addGoal.getByLabel('Goal name').fill('Newsletter');
    await owner.getByRole('button', { name: 'Add goal' }).click();
    await owner.locator('[data-goal]').filter({ hasText: 'Newsletter' }).waitFor();
    await owner.getByRole('button', { name: 'Edit goal Newsletter' }).click();
    await owner.locator('[data-goal] input[name=name]').fill('Subscribed');
    await owner.locator('[data-goal]').getByRole('button', { name: 'Save' }).click();
    await owner.locator('[data-goal]').filter({ hasText: 'Subscribed' }).waitFor();
    await owner.getByRole('button', { name: 'Delete goal Signup' }).click();
    await owner.getByRole('button', { name: 'Confirm: delete goal Signup' }).click();
    await owner.getByRole('status').filter({ hasText: 'Deleted goal Signup.' }).waitFor();
    const goals = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/events`)).body.data.map((g: { name: string }) => g.name);
    assert.deepEqual(goals, ['Subscribed']);

    const launch = new Date(Date.now() - 2 * 86_400_000).toISOString().slice(0, 10);
    await owner.getByLabel('Milestone name').fill('Launch');
    await owner.getByLabel('Date').fill(launch);
    await owner.getByRole('button', { name: 'Add milestone' }).click();
    await owner.locator('[data-milestone]').filter({ hasText: 'Launch' }).waitFor();
    await owner.getByRole('button', { name: 'Edit milestone Launch' }).click();
    await owner.locator('[data-milestone] input[name=name]').fill('Big launch');
    await owner.locator('[data-milestone]').getByRole('button', { name: 'Save' }).click();
    await owner.locator('[data-milestone]').filter({ hasText: 'Big launch' }).waitFor();
    const milestones = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}/milestones`)).body.data;
    assert.deepEqual(milestones.map((m: { name: string; milestone_date: string }) => [m.name, m.milestone_date]), [['Big launch', `${launch} 00:00:00`]]);
    await shot(owner, 'goals');
  });

  it('shows the numbers /v1 answers for imported traffic, the chart with its milestone and the live count', async () => {
    const imported = await t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: traffic(siteId),
    });
    assert.equal(JSON.parse(imported.body).imported, 9, imported.body);
    await t.flushHits();

    await owner.goto(`/sites/${siteId}`);
    const [totals] = await aggregation({ aggregates: 'visitors,visits,pageviews,avg_duration,bounce_rate' });
    assert.ok(Number(totals!.visits) >= 5, 'the import is in the range');
    await expectText(owner, '[data-metric="visits"] [data-value]', fmtInt(totals!.visits!));
    await expectText(owner, '[data-metric="pageviews"] [data-value]', fmtInt(totals!.pageviews!));
    await expectText(owner, '[data-metric="visitors"] [data-value]', fmtInt(totals!.visitors!));
    await expectText(owner, '[data-metric="bounce_rate"] [data-value]', fmtPercent(totals!.bounce_rate!));

    const pages = await aggregation({ aggregates: 'visitors,pageviews', field_grouping: 'pathname', sort_by: 'visitors:desc', limit: '10' });
    const pricing = pages.find((r) => r.pathname === '/pricing')!;
    const row = owner.locator('[data-table="pathname"] tr[data-value="/pricing"]');
    await row.waitFor();
    assert.deepEqual(await row.locator('td.num:not(.engagement)').allTextContents(), [fmtInt(pricing.visitors!), fmtInt(pricing.pageviews!)]);
    // Breakdowns sit in tabbed cards (Pages, Sources, Locations, Devices): open each tab to read it.
    await owner.getByRole('tab', { name: 'Referrers' }).click();
    const referrers = await aggregation({ aggregates: 'visits', field_grouping: 'referrer_hostname' });
    for (const r of referrers.filter((x) => x.referrer_hostname)) {
      await owner.locator(`[data-table="referrer_hostname"] tr[data-value="${r.referrer_hostname}"]`).waitFor();
    }
    await chooseTab(owner, 'UTM campaign');
    await owner.locator('[data-table="utm_campaign"] tr[data-value="autumn"]').waitFor();
    await owner.getByRole('tab', { name: 'Devices', exact: true }).click();
    await owner.locator('[data-table="device_type"] tr').filter({ hasText: /phone|mobile/i }).first().waitFor();

    await owner.locator('.chart canvas').first().waitFor();
    await owner.locator('.milestones').filter({ hasText: 'Big launch' }).waitFor();
    const live = (await t.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?site_id=${siteId}`)).body.total;
    await expectText(owner, '[data-live]', `${live} online`);
    await shot(owner, 'report');
  });

  it('filters the report by clicking a row', async () => {
    await owner.getByRole('button', { name: 'Filter by Page: /pricing' }).first().click();
    await owner.locator('[data-filter="pathname"]').filter({ hasText: 'Page is /pricing' }).waitFor();
    const filters = JSON.stringify([{ property: 'pathname', operator: 'is', value: '/pricing' }]);
    const [filtered] = await aggregation({ aggregates: 'visits,pageviews,avg_duration,bounce_rate', filters });
    const [all] = await aggregation({ aggregates: 'pageviews' });
    assert.notEqual(filtered!.pageviews, all!.pageviews, 'the filter changes the numbers');
    await expectText(owner, '[data-metric="pageviews"] [data-value]', fmtInt(filtered!.pageviews!));
    await expectText(owner, '[data-metric="visits"] [data-value]', fmtInt(filtered!.visits!));
    assert.match(owner.url(), /filters=/, 'the filter is in the address');
    await shot(owner, 'report-filtered');
    await owner.getByRole('button', { name: 'Remove filter Page is /pricing' }).click();
    await expectText(owner, '[data-metric="pageviews"] [data-value]', fmtInt(all!.pageviews!));
  });

  it('fits a phone-width screen', async () => {
    const phone = await watch(await openPage(browser, { baseURL: base, viewport: { width: 360, height: 740 } }));
    try {
      await phone.context().addCookies(await owner.context().cookies());
      await phone.goto(`/sites/${siteId}`);
      await phone.locator('[data-table="pathname"] tr[data-value="/pricing"]').waitFor();
      const overflow = await sidewaysOverflow(phone);
      assert.ok(overflow <= 0, `the page scrolls sideways by ${overflow}px: ${(await sticksOut(phone)).join(', ')}`);
      await shot(phone, 'report-phone');
      assert.deepEqual(phone.errors, []);
    } finally {
      await closePage(phone);
    }
  });

  it('edits the site: private sharing with a password', async () => {
    await owner.goto(`/sites/${siteId}/settings`);
    await owner.getByLabel('Sharing').selectOption('private');
    await owner.getByLabel('Share password').fill(SHARE_PASSWORD);
    await owner.getByLabel('Site name', { exact: true }).fill('Shop (EU)');
    await owner.getByRole('button', { name: 'Save settings' }).click();
    await owner.getByRole('status').filter({ hasText: 'Saved.' }).waitFor();
    const site = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${siteId}`)).body;
    assert.deepEqual([site.name, site.sharing], ['Shop (EU)', 'private']);
    await owner.getByRole('link', { name: `${base}/share/${siteId}` }).waitFor();
    await shot(owner, 'site-settings');
  });

  it('creates a read-only token, shows its secret once, lists its use and revokes it', async () => {
    await owner.goto('/settings/api');
    await owner.getByLabel('Token name').fill('Grafana');
    await owner.getByLabel('Read-only on all sites').check();
    await owner.getByRole('button', { name: 'Create token' }).click();
    const secret = await owner.getByLabel('New API token').inputValue();
    assert.match(secret, /^plumb_/);
    await owner.getByText('Copy this token now. It will not be shown again.').waitFor();
    const sites = await t.call(secret, 'GET', '/v1/sites');
    assert.equal(sites.status, 200);
    assert.equal(sites.body.data[0].id, siteId);
    assert.equal((await t.call(secret, 'POST', '/v1/sites', { name: 'nope' })).status, 400, 'read-only as chosen');
    await shot(owner, 'tokens');

    await owner.reload();
    assert.equal(await owner.getByLabel('New API token').count(), 0, 'the secret is not shown again');
    const row = owner.locator('tr[data-token]').filter({ hasText: 'Grafana' });
    assert.notEqual((await row.locator('[data-last-used]').textContent())?.trim(), 'never');
    await row.getByRole('button', { name: 'Revoke token Grafana' }).click();
    await row.getByRole('button', { name: 'Confirm: revoke token Grafana' }).click();
    // Revoked tokens wait behind a switch.
    await owner.getByLabel('Show revoked tokens (1)').check();
    await owner.locator('tr[data-token]').filter({ hasText: 'Grafana' }).locator('[data-status]').filter({ hasText: /^revoked/ }).waitFor();
    assert.equal((await t.call(secret, 'GET', '/v1/sites')).status, 401);
  });

  it('opens the private share page only with its password, and a public one for anyone', async () => {
    const visitor = await watch(await openPage(browser, { baseURL: base }));
    try {
      await visitor.goto(`/share/${siteId}`);
      await visitor.getByLabel('Share password').fill('a wrong guess');
      await visitor.getByRole('button', { name: 'View report' }).click();
      await visitor.getByRole('alert').filter({ hasText: 'Wrong password.' }).waitFor();
      assert.equal(await visitor.locator('[data-metric]').count(), 0);
      await shot(visitor, 'share-private-refused');
      await visitor.getByLabel('Share password').fill(SHARE_PASSWORD);
      await visitor.getByRole('button', { name: 'View report' }).click();
      const [totals] = await aggregation({ aggregates: 'visits,pageviews' });
      await expectText(visitor, '[data-metric="visits"] [data-value]', fmtInt(totals!.visits!));
      await expectText(visitor, '[data-metric="pageviews"] [data-value]', fmtInt(totals!.pageviews!));
      assert.equal(await visitor.getByRole('link', { name: 'Site settings' }).count(), 0, 'read-only: no owner links');
      await shot(visitor, 'share-private');

      const other = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Open blog', sharing: 'public' })).body.id;
      await visitor.goto(`/share/${other}`);
      await visitor.getByText('No data for this range.').first().waitFor();
      await expectText(visitor, '[data-metric="visits"] [data-value]', '0');
      await shot(visitor, 'share-public');
      assert.deepEqual(visitor.errors, []);

      const unshared = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Secret', sharing: 'none' })).body.id;
      const res = await visitor.goto(`/share/${unshared}`);
      assert.equal(res?.status(), 404);
    } finally {
      await closePage(visitor);
    }
  });

  it('deletes a site after its name is typed', async () => {
    const doomed = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Old site' })).body.id;
    await owner.goto(`/sites/${doomed}/settings`);
    const button = owner.getByRole('button', { name: 'Delete this site and all its data' });
    assert.equal(await button.isDisabled(), true);
    await owner.getByLabel('Type the site name (Old site) to confirm').fill('Old site');
    await button.click();
    await owner.waitForURL(`${base}/sites`);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${doomed}`)).status, 404);
  });

  it('loaded nothing from elsewhere, broke no CSP rule and threw no error', () => {
    assert.deepEqual(offOrigin, []);
    assert.deepEqual(cspViolations, []);
    assert.deepEqual(owner.errors, []);
  });
});
