// A new site's first minutes in real Chromium against a real Plumb server: the report of a site without hits shows
// its tracking code, whose options change the tag (and the other trackers' forms); a real pageview sent to the
// collector turns the waiting page into the report without a reload; the test-pageview button records a real
// pageview of /plumb-test; the sites list shows each site's visitors of the last 24 hours and their trend as /v1
// answers them, with the add-site form behind a button. Screenshots (light, dark, 390 px) go to
// test-artifacts/screenshots/onboarding*.png and sites-list*.png.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import { hashPassword } from '../../src/domain/secrets.js';
import { formatTimestamp } from '../../src/domain/time.js';
import { lastDayRange } from '../../src/http/dashboard/site-summaries.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { browserSkipReason, closePage, desktopChromeUserAgent, launchBrowser, openPage, sidewaysOverflow } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const EMAIL = 'onboarding@example.test';
const PASSWORD = 'a long onboarding password';
const HOUR = 3_600_000;
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

type Watched = Page & { errors: string[] };

describe('onboarding in Chromium', { skip }, () => {
  let t: TestApp;
  let base: string;
  let browser: Browser;
  let owner: Watched;
  const pages: Watched[] = [];
  const offOrigin: string[] = [];
  const sites: Record<string, string> = {};

  const shot = (p: Page, name: string) => p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  const v1 = async (params: Record<string, string>) => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?${new URLSearchParams(params)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  };
  const newSite = async (body: Record<string, string>) => {
    const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', body);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.id as string;
  };

  async function newPage(options: Parameters<typeof openPage>[1] = {}): Promise<Watched> {
    // A desktop Chrome's User-Agent: the collector drops HeadlessChrome's hits as a bot's, and the test pageview is one.
    const p = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 }, locale: 'en-US', userAgent: desktopChromeUserAgent(browser), ...options });
    p.on('request', (r) => {
      if (!r.url().startsWith(base) && !r.url().startsWith('data:')) offOrigin.push(r.url());
    });
    if (owner) await p.context().addCookies(await owner.context().cookies());
    pages.push(p);
    return p;
  }

  /** The waiting page is up: its heading, its tag, and no report. */
  async function waiting(p: Page) {
    await p.getByRole('heading', { name: 'Waiting for the first pageview' }).waitFor();
    assert.equal(await p.locator('[data-metric]').count(), 0, 'no headline of zeros');
  }

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    await t.meta.updateAccount(1, { email: EMAIL });
    await t.meta.setPasswordHash(1, await hashPassword(PASSWORD));
    sites.busy = await newSite({ name: 'Busy shop', timezone: 'Asia/Kolkata' });
    sites.quiet = await newSite({ name: 'Quiet notes', timezone: 'America/New_York' });
    sites.fresh = await newSite({ name: 'Fresh blog', timezone: 'UTC', domain: 'fresh.example.test' });
    sites.tester = await newSite({ name: 'Test drive', timezone: 'UTC' });
    // A site that sends events only (a server calling the API, say): it has hits, so it gets its report.
    sites.events = await newSite({ name: 'Events only', timezone: 'UTC' });
    assert.equal((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${sites.events}/events`, { name: 'Signup' })).status, 200);

    // The busy shop's visitors over the last two days (some before the last 24 hours); the quiet notes', a week ago.
    const now = Date.now();
    const lines: object[] = [];
    const hoursAgo = [0.4, 0.5, 2.2, 2.3, 2.4, 7.5, 11.2, 15.7, 19.1, 22.6, 26, 30, 41];
    hoursAgo.forEach((h, i) => lines.push({
      type: 'pageview', site_id: sites.busy, timestamp: formatTimestamp(new Date(now - h * HOUR)), url: `https://shop.example/p${i % 3}`, referrer: '', user_agent: UA, ip: `3.9.0.${i + 1}`,
    }));
    lines.push({ type: 'event', site_id: sites.events, timestamp: formatTimestamp(new Date(now - 3 * HOUR)), url: 'https://api.example/', name: 'Signup', user_agent: UA, ip: '3.9.2.1' });
    lines.push({ type: 'pageview', site_id: sites.quiet, timestamp: formatTimestamp(new Date(now - 7 * 24 * HOUR)), url: 'https://notes.example/', referrer: '', user_agent: UA, ip: '3.9.1.1' });
    lines.sort((a, b) => String((a as { timestamp: string }).timestamp).localeCompare((b as { timestamp: string }).timestamp));
    const res = await t.app.inject({
      method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: lines.map((l) => JSON.stringify(l)).join('\n'),
    });
    assert.equal(res.statusCode, 200, res.body);
    await t.flushHits();

    browser = await launchBrowser();
    owner = await newPage();
    await owner.goto('/login');
    await owner.getByLabel('Email').fill(EMAIL);
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Log in' }).click();
    await owner.waitForURL(`${base}/sites`);
  });

  after(async () => {
    for (const p of pages) await closePage(p).catch(() => {});
    await browser?.close();
    await t?.close();
  });

  it('shows a new site its tracking code instead of an empty report, and the options change the tag', async () => {
    await owner.goto(`/sites/${sites.fresh}`);
    await waiting(owner);
    const tag = owner.getByLabel('Script tag for Fresh blog');
    assert.equal(await tag.inputValue(), `<script src="${base}/script.js" data-site="${sites.fresh}" data-spa="auto" defer></script>`);
    await shot(owner, 'onboarding');

    await owner.getByLabel('Page changes without a reload (single-page app)').selectOption('hash');
    await owner.getByLabel('Clicks on links to other sites').check();
    await owner.getByLabel('File downloads').check();
    assert.equal(
      await tag.inputValue(),
      `<script src="${base}/script.js" data-site="${sites.fresh}" data-spa="hash" data-outbound-links="true" data-file-downloads="true" defer></script>`,
    );
    await owner.getByLabel('Page changes without a reload (single-page app)').selectOption('off');
    await owner.getByLabel('Clicks on links to other sites').uncheck();
    await owner.getByLabel('File downloads').uncheck();
    await owner.getByLabel("This tag is for the site's “not found” page").check();
    assert.equal(await tag.inputValue(), `<script src="${base}/script.js" data-site="${sites.fresh}" data-track-404="true" defer></script>`);

    // The other trackers' tags, pointed at this server, with the same options.
    await owner.getByText('Switching from Fathom, Plausible or Umami?').click();
    await owner.getByLabel("This tag is for the site's “not found” page").uncheck();
    await owner.getByLabel('Page changes without a reload (single-page app)').selectOption('hash');
    await owner.getByLabel('Clicks on links to other sites').check();
    assert.equal(await owner.getByLabel('fathom-client').inputValue(), `Fathom.load('${sites.fresh}', { url: '${base}/script.js', spa: 'hash' });`);
    assert.equal(
      await owner.getByLabel("Plausible's tag").inputValue(),
      `<script defer data-domain="fresh.example.test" src="${base}/js/script.hash.outbound-links.js"></script>`,
    );
    assert.equal(await owner.getByLabel("Umami's tag").inputValue(), `<script defer src="${base}/script.js" data-website-id="${sites.fresh}"></script>`);
    // The Plausible script path it names is one the server serves.
    const served = await fetch(`${base}/js/script.hash.outbound-links.js`);
    assert.equal(served.status, 200);

    // Copy puts the tag on the clipboard (or selects it where the browser refuses).
    await owner.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: base });
    await owner.locator('.snippet').first().getByRole('button', { name: 'Copy' }).click();
    await owner.getByRole('status').filter({ hasText: 'Copied' }).first().waitFor();
    assert.equal(await owner.evaluate('navigator.clipboard.readText()'), await tag.inputValue());
    await shot(owner, 'onboarding-options');

    // Dark and a phone's width: the same page, nothing wider than the screen.
    const dark = await newPage({ colorScheme: 'dark' });
    await dark.goto(`/sites/${sites.fresh}`);
    await waiting(dark);
    await shot(dark, 'onboarding-dark');
    const phone = await newPage({ viewport: { width: 390, height: 844 } });
    await phone.goto(`/sites/${sites.fresh}`);
    await waiting(phone);
    await phone.getByText('Switching from Fathom, Plausible or Umami?').click();
    assert.ok((await sidewaysOverflow(phone)) <= 0, 'nothing scrolls sideways at 390 px');
    await shot(phone, 'onboarding-390');
    for (const p of [owner, dark, phone]) assert.deepEqual(p.errors, []);
  });

  it('shows the report of a site with hits, pageviews or only events', async () => {
    for (const id of [sites.busy, sites.events]) {
      await owner.goto(`/sites/${id}`);
      await owner.locator('[data-metric]').first().waitFor();
      assert.equal(await owner.getByRole('heading', { name: 'Waiting for the first pageview' }).count(), 0);
    }
  });

  it('turns into the report by itself when the first pageview arrives', async () => {
    await owner.goto(`/sites/${sites.fresh}`);
    await waiting(owner);
    await owner.evaluate('window.__sameDocument = true');
    // A real hit, as a visitor's browser running the tag sends it.
    const hit = await fetch(`${base}/?${new URLSearchParams({ sid: sites.fresh!, h: 'https://fresh.example.test', p: '/hello', r: '' })}`, { headers: { 'user-agent': UA } });
    assert.equal(hit.status, 200);
    await owner.locator('[data-metric="pageviews"]').waitFor({ timeout: 30_000 });
    assert.equal(await owner.getByRole('heading', { name: 'Waiting for the first pageview' }).count(), 0);
    assert.equal(await owner.evaluate('window.__sameDocument'), true, 'no reload');
    const [all] = await v1({ entity: 'pageview', entity_id: sites.fresh!, aggregates: 'pageviews', date_from: '2000-01-01' });
    assert.equal(all!.pageviews, '1');
    // Once it has a hit, the site opens on its report.
    await owner.reload();
    await owner.locator('[data-metric="pageviews"]').waitFor();
    assert.equal(await owner.getByRole('heading', { name: 'Waiting for the first pageview' }).count(), 0);
    assert.deepEqual(owner.errors, []);
  });

  it('sends a real test pageview of /plumb-test from the button, and the report follows', async () => {
    await owner.goto(`/sites/${sites.tester}`);
    await waiting(owner);
    await owner.getByRole('button', { name: 'Send a test pageview' }).click();
    await owner.getByRole('status').filter({ hasText: 'Sent a pageview of /plumb-test' }).waitFor();
    await owner.locator('[data-metric="pageviews"]').waitFor({ timeout: 30_000 });
    const rows = await v1({ entity: 'pageview', entity_id: sites.tester!, aggregates: 'pageviews', field_grouping: 'hostname,pathname', date_from: '2000-01-01' });
    assert.deepEqual(rows.map((r) => [r.hostname, r.pathname, r.pageviews]), [[base, '/plumb-test', '1']]);
    assert.deepEqual(owner.errors, []);
  });

  it("lists each site's visitors of the last 24 hours and their trend as /v1 answers them", async () => {
    await owner.goto('/sites');
    for (const [key, name] of [['busy', 'Busy shop'], ['quiet', 'Quiet notes'], ['fresh', 'Fresh blog'], ['tester', 'Test drive']] as const) {
      const id = sites[key]!;
      const site = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${id}`)).body as { timezone: string };
      const range = lastDayRange(site.timezone, Date.now());
      const query = { entity: 'pageview', entity_id: id, aggregates: 'visitors', date_from: range.date_from, date_to: range.date_to };
      const [total] = await v1(query);
      const hourly = await v1({ ...query, date_grouping: 'hour' });
      const card = owner.locator(`article.site[data-site-id="${id}"]`);
      await card.locator('strong[data-visitors-24h]').waitFor();
      assert.equal(await card.locator('[data-visitors-24h]').textContent(), String(Number(total?.visitors ?? 0)), `${name}: visitors`);
      const values = (await card.locator('svg.sparkline').getAttribute('data-values'))!.split(',').map(Number);
      assert.equal(values.length, 24, `${name}: 24 hours`);
      assert.deepEqual(values.filter((v) => v > 0), hourly.map((r) => Number(r.visitors)).filter((v) => v > 0), `${name}: the trend`);
      assert.ok(((await card.locator('svg.sparkline').getAttribute('aria-label')) ?? '').startsWith(`Visitors of ${name}`));
    }
    const busy = owner.locator(`article.site[data-site-id="${sites.busy}"]`);
    assert.equal(await busy.locator('[data-visitors-24h]').textContent(), '10', 'the shop had 10 visitors in the last 24 hours');

    // The tag is behind "Tracking code"; the add-site form behind its button, which moves the keyboard into it.
    assert.equal(await busy.getByLabel('Script tag for Busy shop').isVisible(), false);
    await busy.getByText('Tracking code').click();
    assert.equal(await busy.getByLabel('Script tag for Busy shop').isVisible(), true);
    await busy.getByText('Tracking code').click();
    assert.equal(await owner.getByRole('form', { name: 'Add a site' }).count(), 0);
    await shot(owner, 'sites-list');
    await owner.getByRole('button', { name: 'Add a site' }).click();
    await owner.getByRole('form', { name: 'Add a site' }).waitFor();
    assert.equal(await owner.evaluate('document.activeElement?.getAttribute("name")'), 'name');
    await owner.getByRole('button', { name: 'Close' }).click();
    await owner.getByRole('button', { name: 'Add a site' }).waitFor();

    const dark = await newPage({ colorScheme: 'dark' });
    await dark.goto('/sites');
    await dark.locator('strong[data-visitors-24h]').first().waitFor();
    await shot(dark, 'sites-list-dark');
    const phone = await newPage({ viewport: { width: 390, height: 844 } });
    await phone.goto('/sites');
    await phone.locator('strong[data-visitors-24h]').first().waitFor();
    assert.ok((await sidewaysOverflow(phone)) <= 0, 'nothing scrolls sideways at 390 px');
    await shot(phone, 'sites-list-390');
    for (const p of [owner, dark, phone]) assert.deepEqual(p.errors, []);
    assert.deepEqual(offOrigin, [], 'nothing loaded from another host');
  });
});
