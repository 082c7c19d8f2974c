// People and account security in real headless Chromium against one Plumb server with mail to an in-process SMTP
// server: the owner invites a viewer, who accepts in a second browser, sees the reports and fails to edit; the
// viewer turns on two-factor authentication with a code computed here, logs out, logs in with the next code and
// then with a recovery code; the owner subscribes to the weekly report and receives it; a forgotten password is
// reset through the delivered email. Screenshots go to test-artifacts/screenshots/.

import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Secret, TOTP } from 'otpauth';
import QRCode from 'qrcode';
import type { Browser, Page, Route } from 'playwright-core';
import { lastCompletePeriod } from '../../src/domain/report-periods.js';
import { formatTimestamp } from '../../src/domain/time.js';
import { projectRoot } from '../../src/project-root.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { linkIn, startMailbox, type Mailbox } from '../helpers/mail.js';
import { newLogin, PASSWORD } from '../dashboard/helpers.js';
import { browserSkipReason, launchBrowser, openPage } from './browser.js';

const skip = browserSkipReason();
const SHOTS = join(projectRoot(), 'test-artifacts', 'screenshots');
const PUBLIC_URL = 'https://plumb.example.test';
const UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0.0.0 Safari/537.36';
const VIEWER = `viewer.${process.pid}@example.test`;
const VIEWER_PASSWORD = 'the viewer password';

interface PageGlobals {
  document: { querySelector(selector: string): { textContent: string | null } | null };
}

const codeFor = (secret: string, offsetSteps = 0) =>
  new TOTP({ secret: Secret.fromBase32(secret), digits: 6, period: 30, algorithm: 'SHA1' }).generate({ timestamp: Date.now() + offsetSteps * 30_000 });

describe('people and account security in Chromium', { skip }, () => {
  let t: TestApp;
  let mailbox: Mailbox;
  let base: string;
  let browser: Browser;
  let owner: Page & { errors: string[] };
  let viewer: Page & { errors: string[] };
  let ownerEmail: string;
  let accountId: number;
  let siteId: string;
  let ownerToken: string;
  let recoveryCodes: string[] = [];
  const offOrigin: string[] = [];

  const shot = (page: Page, name: string) => page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
  /** A link from a message, on this test server (the mail says PLUMB_PUBLIC_URL). */
  const local = (link: string) => `${base}${new URL(link).pathname}`;

  async function logIn(page: Page, email: string, password: string) {
    await page.goto('/login');
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in' }).click();
  }

  before(async () => {
    await mkdir(SHOTS, { recursive: true });
    mailbox = await startMailbox();
    t = await startTestApp({ mail: { smtpUrl: mailbox.url, publicUrl: PUBLIC_URL } });
    const login = await newLogin(t.meta);
    ownerEmail = login.email;
    accountId = login.id;
    ownerToken = await t.token(['*'], { accountId });
    siteId = (await t.call(ownerToken, 'POST', '/v1/sites', { name: 'Shop', timezone: 'UTC' })).body.id;
    const at = (minutesAgo: number) => formatTimestamp(new Date(Date.now() - minutesAgo * 60_000));
    const hit = (minutesAgo: number, ip: string, path: string) =>
      JSON.stringify({ type: 'pageview', site_id: siteId, timestamp: at(minutesAgo), url: `https://shop.example${path}`, referrer: '', user_agent: UA, ip });
    const imported = await t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: [hit(200, '203.0.113.1', '/'), hit(199, '203.0.113.1', '/pricing'), hit(60, '203.0.113.2', '/')].join('\n'),
    });
    assert.equal(JSON.parse(imported.body).imported, 3);
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    browser = await launchBrowser();
    const open = async () => {
      const page = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 } });
      page.on('request', (r) => {
        if (!r.url().startsWith(base) && !r.url().startsWith('data:')) offOrigin.push(r.url());
      });
      return page;
    };
    owner = await open();
    viewer = await open();
  });

  after(async () => {
    await owner?.context().close().catch(() => {});
    await viewer?.context().close().catch(() => {});
    await browser?.close();
    await t?.close();
    await mailbox?.close();
  });

  it('invites a viewer, who accepts in another browser, sees the reports and cannot edit', async () => {
    await logIn(owner, ownerEmail, PASSWORD);
    await owner.waitForURL(`${base}/sites`);
    await owner.getByRole('link', { name: 'Members' }).click();
    await owner.waitForURL(`${base}/settings/members`);
    await owner.locator('tr[data-member]').first().waitFor();
    await owner.getByLabel('Email address').fill(VIEWER);
    await owner.getByLabel('Role', { exact: true }).selectOption('viewer');
    await owner.getByRole('button', { name: 'Invite' }).click();
    await owner.getByRole('status').filter({ hasText: `Invitation emailed to ${VIEWER}.` }).waitFor();
    const shown = await owner.getByLabel('Invitation link').inputValue();
    await owner.locator('[data-invited]').filter({ hasText: VIEWER }).waitFor();
    await shot(owner, 'members');
    const message = await mailbox.waitFor(VIEWER, /invited/);
    const link = linkIn(message, `${PUBLIC_URL}/invite/`);
    assert.equal(link, shown, 'the page shows the link that was mailed');

    await viewer.goto(local(link));
    await viewer.getByLabel('New password (at least 10 characters)').fill(VIEWER_PASSWORD);
    await viewer.getByLabel('New password again').fill(VIEWER_PASSWORD);
    await shot(viewer, 'accept-invitation');
    await viewer.getByRole('button', { name: 'Accept and log in' }).click();
    await viewer.waitForURL(`${base}/sites`);
    assert.equal(await viewer.getByRole('link', { name: 'Members' }).count(), 0, 'viewers have no members page');

    // The report shows what /v1 answers.
    await viewer.goto(`/sites/${siteId}`);
    const today = new Date().toISOString().slice(0, 10);
    const from = new Date(Date.parse(`${today}T00:00:00Z`) - 6 * 86_400_000).toISOString().slice(0, 10);
    const [totals] = (await t.call(ownerToken, 'GET', `/v1/aggregations?${new URLSearchParams({ entity: 'pageview', entity_id: siteId, aggregates: 'pageviews', date_from: `${from} 00:00:00`, date_to: `${today} 23:59:59` })}`)).body;
    assert.equal(totals.pageviews, '3');
    await viewer.waitForFunction(
      (expected) => (globalThis as unknown as PageGlobals).document.querySelector('[data-metric="pageviews"] [data-value]')?.textContent?.trim() === expected,
      totals.pageviews,
    );
    await shot(viewer, 'viewer-report');

    // Editing fails: the settings page is refused, and a site added from the sites page is refused by the server.
    const settings = await viewer.goto(`/sites/${siteId}/settings`);
    assert.equal(settings?.status(), 403);
    await viewer.getByText('does not allow this page').waitFor();
    await viewer.goto('/sites');
    const add = viewer.getByRole('form', { name: 'Add a site' });
    if ((await add.count()) > 0) {
      await add.getByLabel('Site name').fill('Sneaky');
      await add.getByLabel('Time zone').fill('UTC');
      await add.getByRole('button', { name: 'Add site' }).click();
      await viewer.getByRole('status').filter({ hasText: 'Your role in this account does not allow this' }).waitFor();
    }
    const sites = (await t.call(ownerToken, 'GET', '/v1/sites')).body.data.map((s: { name: string }) => s.name);
    assert.deepEqual(sites, ['Shop'], 'nothing was changed');
  });

  it('turns on two-factor authentication, logs in with a code, then with a recovery code', async () => {
    await viewer.goto('/account');
    await viewer.locator('[data-two-factor="off"]').waitFor();
    await viewer.getByRole('form', { name: 'Set up two-factor authentication' }).getByLabel('Your current password').fill(VIEWER_PASSWORD);
    await viewer.getByRole('button', { name: 'Set up two-factor authentication' }).click();
    const secret = (await viewer.getByLabel('Key').inputValue()).trim();
    assert.match(secret, /^[A-Z2-7]+$/);
    // The QR code is the otpauth address of this key, the one the link opens.
    const uri = (await viewer.getByRole('link', { name: 'Open in authenticator app' }).getAttribute('href'))!;
    assert.equal(new URL(uri).searchParams.get('secret'), secret);
    const svg = await QRCode.toString(uri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 });
    const shown = await viewer.getByRole('img', { name: 'QR code for your authenticator app' }).getAttribute('src');
    assert.equal(shown, `data:image/svg+xml;charset=utf-8,${encodeURIComponent(svg)}`);
    await shot(viewer, 'two-factor-setup');
    await viewer.getByLabel('The 6-digit code the app shows now').fill(codeFor(secret));
    await viewer.getByRole('button', { name: 'Turn on' }).click();
    await viewer.locator('[data-recovery-codes] li').first().waitFor();
    recoveryCodes = await viewer.locator('[data-recovery-codes] li').allTextContents();
    assert.equal(recoveryCodes.length, 10);
    await viewer.locator('[data-two-factor="on"]').waitFor();
    await shot(viewer, 'two-factor-on');

    await viewer.getByRole('button', { name: 'Log out' }).click();
    await viewer.waitForURL(/\/login$/);
    await logIn(viewer, VIEWER, VIEWER_PASSWORD);
    await viewer.waitForURL(/\/login\/code/);
    await shot(viewer, 'login-code');
    // The code shown when turning it on is spent; the app's next one is taken.
    await viewer.getByLabel('Code').fill(codeFor(secret, 1));
    await viewer.getByRole('button', { name: 'Verify' }).click();
    await viewer.waitForURL(`${base}/sites`);

    await viewer.getByRole('button', { name: 'Log out' }).click();
    await viewer.waitForURL(/\/login$/);
    await logIn(viewer, VIEWER, VIEWER_PASSWORD);
    await viewer.waitForURL(/\/login\/code/);
    await viewer.getByLabel('Code').fill(recoveryCodes[0]!);
    await viewer.getByRole('button', { name: 'Verify' }).click();
    await viewer.waitForURL(`${base}/sites`);
    await viewer.goto('/account');
    await viewer.getByText('9 recovery codes left').waitFor();
  });

  it('subscribes to the weekly report and receives it', async () => {
    await owner.goto('/account');
    const box = owner.getByLabel('Weekly report of Shop');
    await box.waitFor();
    // The list read again after the change comes a second late: meanwhile the box shows the state asked for.
    const late = async (route: Route) => {
      if (route.request().method() === 'GET') await new Promise((resolve) => setTimeout(resolve, 1000));
      await route.continue();
    };
    await owner.route('**/dashboard/api/subscriptions', late);
    const reread = owner.waitForResponse((r) => r.url().endsWith('/dashboard/api/subscriptions') && r.request().method() === 'GET');
    await box.check();
    await owner.getByRole('status').filter({ hasText: 'You will get the weekly report of Shop by email.' }).waitFor();
    assert.equal(await box.isChecked(), true, 'checked while the list is read again');
    await reread;
    await owner.unroute('**/dashboard/api/subscriptions', late);
    assert.equal(await box.isChecked(), true, 'checked once it is read again');
    await shot(owner, 'account');
    const runAt = new Date(Date.now() + 7 * 86_400_000);
    assert.equal(await t.reportEmails!.runOnce(runAt), 1);
    const message = await mailbox.waitFor(ownerEmail, /Shop: your weekly report/);
    const period = lastCompletePeriod('weekly', 'UTC', runAt);
    const [week] = (await t.call(ownerToken, 'GET', `/v1/aggregations?${new URLSearchParams({ entity: 'pageview', entity_id: siteId, aggregates: 'pageviews', date_from: `${period.from} 00:00:00`, date_to: `${period.to} 23:59:59` })}`)).body;
    assert.match(message.text ?? '', new RegExp(`^Pageviews: ${week.pageviews} `, 'm'));
  });

  it('offers the only owner nothing the server refuses, names sessions by browser and system, asks for a new password twice', async () => {
    await owner.goto('/settings/members');
    const me = owner.locator('tr[data-member]').filter({ hasText: '(you)' });
    await me.locator('[data-sole-owner]').waitFor();
    assert.equal(await me.locator('select').count(), 0, 'no role to pick');
    assert.equal(await me.getByRole('button', { name: 'Remove' }).count(), 0, 'no Remove');

    await owner.goto('/account');
    const session = owner.locator('tr[data-session]').filter({ hasText: '(this one)' });
    await session.waitFor();
    const device = (await session.locator('td').first().textContent())?.trim() ?? '';
    assert.match(device, /^Chrome( Headless)? \d+ on Linux/);
    assert.doesNotMatch(device, /Mozilla/);

    const form = owner.getByRole('form', { name: 'Change password' });
    await form.getByLabel('Current password').fill(PASSWORD);
    await form.getByLabel('New password (at least 10 characters)').fill('a brand new password');
    await form.getByLabel('New password again').fill('a brand new passwort');
    await form.getByRole('button', { name: 'Change password' }).click();
    await form.getByRole('status').filter({ hasText: 'The new password and its confirmation differ' }).waitFor();
    // Nothing was changed: the old password still logs in.
    const again = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 } });
    try {
      await logIn(again, ownerEmail, PASSWORD);
      await again.waitForURL(`${base}/sites`);
    } finally {
      await again.context().close();
    }
  });

  it('resets a forgotten password through the delivered email', async () => {
    const page = await openPage(browser, { baseURL: base, viewport: { width: 1280, height: 900 } });
    try {
      await page.goto('/login');
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await page.getByLabel('Email').fill(ownerEmail);
      await page.getByRole('button', { name: 'Send a reset link' }).click();
      await page.getByText('If that address has a Plumb login').waitFor();
      const message = await mailbox.waitFor(ownerEmail, /Reset your Plumb password/);
      await page.goto(local(linkIn(message, `${PUBLIC_URL}/reset/`)));
      await page.getByLabel('New password (at least 10 characters)').fill('my fresh new password');
      await page.getByLabel('New password again').fill('my fresh new password');
      await page.getByRole('button', { name: 'Save the new password' }).click();
      await page.getByRole('heading', { name: 'Password changed' }).waitFor();
      await logIn(page, ownerEmail, PASSWORD);
      await page.getByRole('alert').filter({ hasText: 'Wrong email or password.' }).waitFor();
      await logIn(page, ownerEmail, 'my fresh new password');
      await page.waitForURL(`${base}/sites`);
      // The owner's earlier session ended with the reset.
      await owner.goto('/account');
      await owner.waitForURL(/\/login/);
    } finally {
      await page.context().close();
    }
    assert.deepEqual(offOrigin, [], 'no request left this server');
    assert.deepEqual([...owner.errors, ...viewer.errors], []);
  });
});
