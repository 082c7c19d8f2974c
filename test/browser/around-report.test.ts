// The pages around the report in real headless Chromium against a real Plumb server: the sites page (time zone
// from the browser by its current name, domain, tag with SPA tracking, problems in words), site settings
// (embedding origins), API tokens (read-only by default, site names, revoked ones behind a switch), goals
// (currency, conversions of the last 30 days equal to /v1), and share pages embedded in another site's iframe
// (allowed origin: the report with its numbers; any other: refused by CSP). Screenshots of each page in light and
// dark go to test-artifacts/screenshots/.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Frame, Page } from 'playwright-core';
import { formatTimestamp } from '../../src/domain/time.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { addMember, EMAIL, givePassword, PASSWORD } from '../dashboard/helpers.js';
import { browserSkipReason, launchBrowser, openPage, sidewaysOverflow } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const SCHEMES = ['light', 'dark'] as const;

/** Pageviews of the last days: a few visitors, several pages. */
function traffic(siteId: string): string {
  const now = Date.now();
  const hit = (minutesAgo: number, ip: string, path: string) =>
    JSON.stringify({ type: 'pageview', site_id: siteId, timestamp: formatTimestamp(new Date(now - minutesAgo * 60_000)), url: `https://blog.example${path}`, referrer: '', user_agent: UA, ip });
  return [hit(2000, '203.0.113.1', '/'), hit(1999, '203.0.113.1', '/about'), hit(900, '203.0.113.2', '/'), hit(30, '203.0.113.3', '/posts/1')].join('\n');
}

describe('pages around the report in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  /** Another web site that embeds the share page: served as blog.localhost (allowed) and evil.localhost (not). */
  let blog: Server;
  let blogPort: number;
  let siteId = '';

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Embedded blog', sharing: 'public' })).body.id;
    const imported = await t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: traffic(siteId),
    });
    assert.equal(JSON.parse(imported.body).imported, 4, imported.body);
    await t.flushHits();
    blog = createServer((req, res) => {
      res.setHeader('content-type', 'text/html; charset=utf-8');
      // ?site=ID embeds another site's share page (only letters pass: it goes into the page's markup).
      const asked = new URL(req.url ?? '/', 'http://blog').searchParams.get('site');
      const shown = asked && /^[A-Z]{8}$/.test(asked) ? asked : siteId;
      res.end(`<!doctype html><title>A blog</title><h1>Our numbers</h1>
<iframe id="stats" src="${base}/share/${shown}?embed=true" width="1000" height="800" onload="this.dataset.loaded = 'yes'"></iframe>`);
    });
    await new Promise<void>((resolve) => blog.listen(0, '127.0.0.1', resolve));
    blogPort = (blog.address() as AddressInfo).port;
  });

  after(async () => {
    await browser?.close();
    await new Promise((resolve) => blog?.close(resolve));
    await t?.close();
  });

  /** The owner, logged in, in a browser whose computer says it is in India (by ICU's old name for the zone). */
  let owner: Page & { errors: string[] };
  let shopId = '';

  /** Screenshots of the page as it is, in light and in dark. */
  async function shots(page: Page, name: string) {
    for (const scheme of SCHEMES) {
      await page.emulateMedia({ colorScheme: scheme });
      await shot(page, `${name}-${scheme}`);
    }
    await page.emulateMedia({ colorScheme: 'light' });
  }

  const v1 = async (path: string) => {
    const res = await t.call(OWNER_TOKEN, 'GET', path);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  it('logs in', async () => {
    await givePassword(t.meta, 1, EMAIL, PASSWORD);
    owner = await openPage(browser, { baseURL: base, viewport: { width: 1200, height: 900 }, timezoneId: 'Asia/Calcutta' });
    await owner.goto('/login');
    await owner.getByLabel('Email').fill(EMAIL);
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Log in' }).click();
    await owner.waitForURL(`${base}/sites`);
  });

  it('adds a site in the browser\'s time zone by its current name, with a domain and a tag that tracks SPAs', async () => {
    await owner.getByRole('button', { name: 'Add a site' }).click();
    const zone = owner.getByLabel('Time zone');
    assert.equal(await zone.inputValue(), 'Asia/Kolkata', 'the browser says Asia/Calcutta; the page offers the current name');
    const offered = await owner.locator('datalist option').evaluateAll((options) => options.map((o) => (o as unknown as { value: string }).value));
    assert.ok(offered.includes('Europe/Kyiv') && offered.includes('Asia/Ho_Chi_Minh') && offered.includes('UTC'), 'current names are offered');
    assert.ok(!offered.includes('Europe/Kiev') && !offered.includes('Asia/Calcutta'), 'old names are not');
    assert.ok(offered.length > 300, `${offered.length} zones to search`);

    // A zone that is not in the list is refused in words, before anything is sent.
    await owner.getByLabel('Site name').fill('Shop');
    await zone.fill('Mars/Olympus_Mons');
    await owner.getByRole('button', { name: 'Add site' }).click();
    await owner.getByRole('status').filter({ hasText: 'Choose a time zone from the list.' }).waitFor();
    assert.equal((await v1('/v1/sites')).data.filter((s: { name: string }) => s.name === 'Shop').length, 0);

    await zone.fill('Asia/Kolkata');
    await owner.getByLabel('Domain (optional)').fill('shop.example.test');
    await owner.getByRole('button', { name: 'Add site' }).click();
    await owner.getByRole('status').filter({ hasText: 'Added Shop.' }).waitFor();
    const card = owner.locator('article.site').filter({ hasText: 'Shop' });
    shopId = (await card.getAttribute('data-site-id'))!;
    const site = await v1(`/v1/sites/${shopId}`);
    assert.deepEqual([site.name, site.timezone, site.domain], ['Shop', 'Asia/Kolkata', 'shop.example.test']);
    assert.equal(await card.getByLabel('Script tag for Shop').inputValue(), `<script src="${base}/script.js" data-site="${shopId}" data-spa="auto" defer></script>`);
    await card.getByText('Asia/Kolkata · shop.example.test · not shared').waitFor();

    // The server's refusal, in words: the domain belongs to the Shop now.
    await owner.getByLabel('Site name').fill('Shop copy');
    await owner.getByLabel('Domain (optional)').fill('shop.example.test');
    await owner.getByRole('button', { name: 'Add site' }).click();
    const refusal = owner.getByRole('status').filter({ hasText: /^The domain shop\.example\.test is already used by another site/ });
    await refusal.waitFor();
    await owner.getByLabel('Domain (optional)').fill('');
    await owner.getByLabel('Site name').fill('');
    await shots(owner, 'sites');
    assert.deepEqual(owner.errors, []);
  });

  it('shows a viewer the sites to read, without the form to add one or links to pages they may not open', async () => {
    const { email } = await addMember(t.team, 1, 'viewer');
    const viewer = await openPage(browser, { baseURL: base, viewport: { width: 1200, height: 900 } });
    await viewer.goto('/login');
    await viewer.getByLabel('Email').fill(email);
    await viewer.getByLabel('Password').fill(PASSWORD);
    await viewer.getByRole('button', { name: 'Log in' }).click();
    await viewer.waitForURL(`${base}/sites`);
    await viewer.locator('article.site').filter({ hasText: 'Shop' }).waitFor();
    assert.equal(await viewer.getByRole('form', { name: 'Add a site' }).count(), 0);
    assert.equal(await viewer.getByRole('link', { name: 'Settings' }).count(), 0);
    await viewer.getByText('Adding and changing sites is up to the account\'s owners and admins.').waitFor();
    assert.deepEqual(viewer.errors, []);
    await viewer.context().close();
  });

  it('sets the origins that may embed the report in the site settings', async () => {
    await owner.goto(`/sites/${siteId}/settings`);
    const origins = owner.getByLabel('Sites allowed to embed the report');
    await owner.getByRole('button', { name: 'Save embedding' }).and(owner.locator(':enabled')).waitFor();
    await origins.fill('https://Blog.Example.test/\nhttps://*.example.org');
    await owner.getByRole('button', { name: 'Save embedding' }).click();
    await owner.getByRole('status').filter({ hasText: 'Saved: only these sites may embed the report.' }).waitFor();
    assert.deepEqual(await t.meta.getEmbedOrigins(siteId), ['https://blog.example.test', 'https://*.example.org']);
    assert.equal(await origins.inputValue(), 'https://blog.example.test\nhttps://*.example.org', 'shown as stored');
    const code = await owner.getByLabel('Embed code').inputValue();
    assert.ok(code.startsWith(`<iframe src="${base}/share/${siteId}?embed=true"`), code);
    await origins.fill('https://blog.example.test/path');
    await owner.getByRole('button', { name: 'Save embedding' }).click();
    await owner.getByRole('status').filter({ hasText: /^The address "https:\/\/blog\.example\.test\/path" must be just the site's address/ }).waitFor();
    assert.deepEqual(await t.meta.getEmbedOrigins(siteId), ['https://blog.example.test', 'https://*.example.org'], 'a refusal changes nothing');
    await origins.fill('https://blog.example.test');
    await shots(owner, 'site-settings-embedding');
    assert.deepEqual(owner.errors, []);
  });

  it('makes read-only tokens by default, names their sites, and keeps revoked ones behind a switch', async () => {
    await owner.goto('/settings/api');
    assert.equal(await owner.getByLabel('Read-only on all sites').isChecked(), true, 'least privilege first');
    await owner.getByLabel('Token name').fill('Dashboard TV');
    await owner.getByRole('button', { name: 'Create token' }).click();
    await owner.getByText('Copy this token now. It will not be shown again.').waitFor();
    const secret = await owner.getByLabel('New API token').inputValue();
    assert.equal((await t.call(secret, 'GET', '/v1/sites')).status, 200);
    assert.equal((await t.call(secret, 'POST', '/v1/sites', { name: 'nope' })).status, 400, 'it cannot change anything');

    await owner.getByLabel('Token name').fill('Shop bot');
    await owner.getByLabel('Site-specific: choose per site').check();
    await owner.getByLabel(`Shop (${shopId})`).selectOption('manage');
    await owner.getByRole('button', { name: 'Create token' }).click();
    const shopRow = owner.locator('tr[data-token]').filter({ hasText: 'Shop bot' });
    await shopRow.locator('[data-abilities]').filter({ hasText: `Manage Shop (${shopId})` }).waitFor();
    const listed = (await t.call(ADMIN_TOKEN, 'GET', '/admin/accounts/1/tokens')).body.data.find((x: { name: string }) => x.name === 'Shop bot');
    assert.deepEqual(listed.abilities, [`manage:${shopId}`]);

    const tv = owner.locator('tr[data-token]').filter({ hasText: 'Dashboard TV' });
    await tv.getByRole('button', { name: 'Revoke token Dashboard TV' }).click();
    await tv.getByRole('button', { name: 'Confirm: revoke token Dashboard TV' }).click();
    await owner.getByRole('status').filter({ hasText: 'Revoked Dashboard TV' }).waitFor();
    await tv.waitFor({ state: 'detached' });
    const revokedCount = (await t.call(ADMIN_TOKEN, 'GET', '/admin/accounts/1/tokens')).body.data.filter((x: { revoked_at: string | null }) => x.revoked_at).length;
    const toggle = owner.getByLabel(`Show revoked tokens (${revokedCount})`);
    await shots(owner, 'tokens');
    await toggle.check();
    await tv.locator('[data-status]').filter({ hasText: /^revoked / }).waitFor();
    await toggle.uncheck();
    await tv.waitFor({ state: 'detached' });
    assert.equal((await t.call(secret, 'GET', '/v1/sites')).status, 401);
    assert.deepEqual(owner.errors, []);
  });

  it('shows each goal\'s currency and its conversions of the last 30 days as /v1 counts them', async () => {
    const goals = [['Signup', 'none'], ['Order', 'euro'], ['Tip', 'yen']] as const;
    for (const [name, currency] of goals) assert.equal((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${shopId}/events`, { name, currency })).status, 200);
    const now = Date.now();
    const event = (daysAgo: number, ip: string, name: string, value?: number) =>
      JSON.stringify({ type: 'event', site_id: shopId, timestamp: formatTimestamp(new Date(now - daysAgo * 86_400_000)), url: 'https://shop.example.test/checkout', user_agent: UA, ip, name, ...(value ? { value } : {}) });
    const lines = [
      event(1, '203.0.113.10', 'Signup'), event(2, '203.0.113.11', 'Signup'), event(10, '203.0.113.12', 'Signup'),
      event(3, '203.0.113.13', 'Order', 4599), event(28, '203.0.113.14', 'Order', 1250),
      event(45, '203.0.113.15', 'Order', 99999), // older than 30 days: not counted
      event(5, '203.0.113.16', 'Tip', 300),
    ];
    const imported = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' }, payload: lines.join('\n') });
    assert.equal(JSON.parse(imported.body).imported, lines.length, imported.body);
    await t.flushHits();

    await owner.goto(`/sites/${shopId}/goals`);
    // The last 30 days in the site's zone (Asia/Kolkata), today included.
    const today = new Intl.DateTimeFormat('en-CA', { timeZone: 'Asia/Kolkata' }).format(new Date());
    const from = new Date(Date.parse(`${today}T00:00:00Z`) - 29 * 86_400_000).toISOString().slice(0, 10);
    const words = new Map([['none', 'No value'], ['euro', 'Euro (EUR)'], ['yen', 'Japanese yen (JPY)']]);
    for (const [name, currency] of goals) {
      const [answer] = await v1(`/v1/aggregations?${new URLSearchParams({ entity: 'event', site_id: shopId, entity_name: name, aggregates: 'conversions,value', date_from: `${from} 00:00:00`, date_to: `${today} 23:59:59` })}`);
      const row = owner.locator('tr[data-goal]').filter({ hasText: name });
      await row.locator('[data-currency]').filter({ hasText: words.get(currency)! }).waitFor();
      const shown = (await row.locator('[data-conversions]').evaluate((el) => (el as unknown as { firstChild: { textContent: string } }).firstChild.textContent)).trim();
      const expected = new Intl.NumberFormat('en-US').format(Number(answer.conversions));
      await row.locator('[data-conversions]').filter({ hasText: new RegExp(`^${expected}`) }).waitFor();
      assert.equal((await row.locator('[data-conversions]').evaluate((el) => (el as unknown as { firstChild: { textContent: string } }).firstChild.textContent)).trim(), expected, `${name}: ${shown}`);
      if (currency !== 'none') {
        const money = new Intl.NumberFormat('en-US', { style: 'currency', currency: currency === 'euro' ? 'EUR' : 'JPY', minimumFractionDigits: 0, maximumFractionDigits: 2 }).format(Number(answer.value) / 100);
        assert.equal((await row.locator('[data-value]').textContent())?.trim(), money);
      } else {
        assert.equal(await row.locator('[data-value]').count(), 0, 'no value for a goal without one');
      }
    }
    assert.deepEqual(
      await Promise.all(goals.map(async ([name]) => (await owner.locator('tr[data-goal]').filter({ hasText: name }).locator('[data-conversions]').textContent())?.trim().split(/\D/)[0])),
      ['3', '2', '1'],
      'the order 45 days ago is outside the 30 days',
    );

    // A new goal's currency is shown from its creation, and an edit changes it.
    const addGoal = owner.getByRole('form', { name: 'Add a goal' });
    await addGoal.getByLabel('Goal name').fill('Donation');
    await addGoal.getByLabel('Value currency').selectOption('franc');
    await owner.getByRole('button', { name: 'Add goal' }).click();
    const donation = owner.locator('tr[data-goal]').filter({ hasText: 'Donation' });
    await donation.locator('[data-currency]').filter({ hasText: 'Swiss franc (CHF)' }).waitFor();
    await donation.getByRole('button', { name: 'Edit goal Donation' }).click();
    await owner.locator('tr[data-goal] select[name=currency]').selectOption('pound');
    await owner.locator('tr[data-goal]').getByRole('button', { name: 'Save' }).click();
    await owner.locator('tr[data-goal]').filter({ hasText: 'Donation' }).locator('[data-currency]').filter({ hasText: 'Pound sterling (GBP)' }).waitFor();
    await shots(owner, 'goals');
    assert.deepEqual(owner.errors, []);
  });

  it('fits a phone-width screen on every page around the report', async () => {
    const phone = await openPage(browser, { baseURL: base, viewport: { width: 360, height: 740 } });
    await phone.context().addCookies(await owner.context().cookies());
    for (const [path, ready, name] of [
      ['/sites', 'article.site', 'sites'],
      [`/sites/${shopId}/settings`, 'form[aria-label="Embedding"] button:enabled', 'site-settings'],
      ['/settings/api', 'tr[data-token]', 'tokens'],
      [`/sites/${shopId}/goals`, 'tr[data-goal] [data-conversions]', 'goals'],
    ] as const) {
      await phone.goto(path);
      // Ready: the page's own data is in (the goals' conversions are numbers, not "…").
      await phone.locator(ready).filter({ hasText: name === 'goals' ? /\d/ : /.*/ }).first().waitFor();
      const overflow = await sidewaysOverflow(phone);
      assert.ok(overflow <= 0, `${path} scrolls sideways by ${overflow}px`);
      await shot(phone, `${name}-phone`);
    }
    assert.deepEqual(phone.errors, []);
    await phone.context().close();
  });

  const setOrigins = async (origins: string[]) => {
    await t.meta.setEmbedOrigins(siteId, origins);
  };

  const shareFrame = (page: Page): Frame | undefined => page.frames().find((f) => f.url().includes(`/share/${siteId}`));

  it('shows the report inside an iframe of an allowed origin, its numbers read from /v1 without cookies', async () => {
    await setOrigins([`http://blog.localhost:${blogPort}`]);
    const [totals] = (await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${siteId}&aggregates=pageviews&date_from=${encodeURIComponent(formatTimestamp(new Date(Date.now() - 6 * 86_400_000)).slice(0, 10) + ' 00:00:00')}`)).body;
    for (const scheme of SCHEMES) {
      const page = await openPage(browser, { viewport: { width: 1100, height: 900 }, colorScheme: scheme });
      const v1: number[] = [];
      page.on('response', (r) => {
        if (r.url().startsWith(`${base}/v1/`)) v1.push(r.status());
      });
      const frameResponse = page.waitForResponse((r) => r.url().startsWith(`${base}/share/${siteId}`));
      const report = page.waitForResponse((r) => r.url().startsWith(`${base}/v1/aggregations`));
      await page.goto(`http://blog.localhost:${blogPort}/`);
      const answer = await frameResponse;
      assert.match(answer.headers()['content-security-policy'] ?? '', new RegExp(`frame-ancestors http://blog\\.localhost:${blogPort}(;|$)`));
      const frame = shareFrame(page);
      assert.ok(frame, 'the share page loaded in the frame');
      await frame.locator('h1').filter({ hasText: 'Embedded blog' }).first().waitFor();
      // The report's own reads succeeded from inside the cross-site frame (no cookie: the page's own session).
      assert.equal((await report).status(), 200);
      await frame.getByText(new Intl.NumberFormat('en-US').format(Number(totals!.pageviews)), { exact: true }).first().waitFor();
      assert.ok(v1.every((s) => s === 200), `the frame's /v1 answers: ${v1.join(', ')}`);
      assert.equal(await frame.locator('nav').count(), 0, 'no top bar in embed mode');
      assert.ok(Number(totals!.pageviews) >= 3);
      await shot(page, `share-embedded-${scheme}`);
      assert.deepEqual(page.errors, []);
      await page.context().close();
    }
  });

  it('refuses to be framed by an origin the site did not allow', async () => {
    await setOrigins([`http://blog.localhost:${blogPort}`]);
    const page = await openPage(browser, { viewport: { width: 1100, height: 900 } });
    const console: string[] = [];
    page.on('console', (m) => console.push(m.text()));
    const frameResponse = page.waitForResponse((r) => r.url().startsWith(`${base}/share/${siteId}`));
    await page.goto(`http://evil.localhost:${blogPort}/`);
    const answer = await frameResponse;
    assert.match(answer.headers()['content-security-policy'] ?? '', new RegExp(`frame-ancestors http://blog\\.localhost:${blogPort}(;|$)`));
    await page.locator('#stats[data-loaded]').waitFor({ state: 'attached' });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame);
    assert.ok(!frame.url().startsWith(base), `the frame shows Chromium's error page, not the report (${frame.url()})`);
    assert.ok(console.some((m) => /frame-ancestors/.test(m)), `Chromium names the refusal: ${console.join(' | ')}`);
    await page.context().close();
  });

  it('says inside the frame that a password-protected report cannot be embedded, with a link to open it', async () => {
    const privateId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Members only', sharing: 'private', share_password: 'a share password' })).body.id;
    await t.meta.setEmbedOrigins(privateId, [`http://blog.localhost:${blogPort}`]);
    for (const scheme of SCHEMES) {
      const page = await openPage(browser, { viewport: { width: 1100, height: 600 }, colorScheme: scheme });
      await page.goto(`http://blog.localhost:${blogPort}/?site=${privateId}`);
      const frame = page.frames().find((f) => f.url().includes(`/share/${privateId}`));
      assert.ok(frame);
      await frame.getByText('A report with a share password cannot be shown inside another page.', { exact: false }).waitFor();
      assert.equal(await frame.getByRole('link', { name: 'open it in its own window' }).getAttribute('href'), `/share/${privateId}`);
      assert.equal(await frame.locator('input[type=password]').count(), 0, 'no password asked inside another site');
      await shot(page, `share-embedded-private-${scheme}`);
      await page.context().close();
    }
  });

  it('is not framable at all while the site allows no origin', async () => {
    await setOrigins([]);
    const page = await openPage(browser, { viewport: { width: 1100, height: 900 } });
    const frameResponse = page.waitForResponse((r) => r.url().startsWith(`${base}/share/${siteId}`));
    await page.goto(`http://blog.localhost:${blogPort}/`);
    assert.match((await frameResponse).headers()['content-security-policy'] ?? '', /frame-ancestors 'none'/);
    await page.locator('#stats[data-loaded]').waitFor({ state: 'attached' });
    const frame = page.frames().find((f) => f !== page.mainFrame());
    assert.ok(frame && !frame.url().startsWith(base), 'refused');
    await page.context().close();
  });
});
