// In real headless Chromium: a report over Fathom's imported days shows the numbers the export holds (pageviews)
// and, on each panel showing one it lacks (visitors; a goal's unique completions, rate and value), a note that
// it counts recorded hits only there; and the account page's "send me now" mails the member last week's report.

import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { strToU8, zipSync } from 'fflate';
import type { Browser, Page } from 'playwright-core';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { startMailbox, type Mailbox } from '../helpers/mail.js';
import { EMAIL, givePassword, PASSWORD } from '../dashboard/helpers.js';
import { browserSkipReason, launchBrowser, openPage } from './browser.js';

const skip = browserSkipReason();

const csv = (rows: (string | number)[][]) => `${rows.map((r) => r.join(',')).join('\n')}\n`;
const FATHOM = zipSync({
  'shop.example/Site.csv': strToU8(csv([['Timestamp', 'Pageviews', 'Visits', 'Bounce Rate', 'Avg Duration'], ['2026-03-02 10:00:00', 20, 8, 0.5, 30], ['2026-03-03 11:00:00', 10, 4, 0.25, 60]])),
  'shop.example/Pages.csv': strToU8(csv([['Timestamp', 'Pathname', 'Views'], ['2026-03-02 10:00:00', '/a', 20], ['2026-03-03 11:00:00', '/b', 10]])),
  'shop.example/Events.csv': strToU8(csv([['Timestamp', 'Event', 'Completions'], ['2026-03-02 10:00:00', 'Purchase', 3]])),
});

describe('numbers imported days lack, in Chromium', { skip }, () => {
  let t: TestApp;
  let mailbox: Mailbox;
  let browser: Browser;
  let owner: Page & { errors: string[] };
  let siteId = '';

  before(async () => {
    mailbox = await startMailbox();
    t = await startTestApp({ mail: { smtpUrl: mailbox.url, publicUrl: 'https://plumb.example.test' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    siteId = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'From Fathom', domain: 'shop.example', timezone: 'UTC' })).body.id;
    const res = await t.app.inject({
      method: 'POST',
      url: `/admin/imports/fathom?site_id=${siteId}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/zip' },
      payload: Buffer.from(FATHOM),
    });
    assert.equal(res.statusCode, 200, res.body);
    await givePassword(t.meta, 1, EMAIL, PASSWORD);
    browser = await launchBrowser();
    owner = await openPage(browser, { baseURL: base, viewport: { width: 1200, height: 900 } });
    await owner.goto('/login');
    await owner.getByLabel('Email').fill(EMAIL);
    await owner.getByLabel('Password').fill(PASSWORD);
    await owner.getByRole('button', { name: 'Log in' }).click();
    await owner.waitForURL(`${base}/sites`);
  });

  after(async () => {
    await browser?.close();
    await t?.close();
    await mailbox?.close();
  });

  it("shows Fathom's pageviews and says, on the panels, that visitors and a goal's unique completions are recorded ones only", async () => {
    await owner.goto(`/sites/${siteId}?range=custom&from=2026-03-02&to=2026-03-04`);
    await owner.locator('[data-imported-notice]').waitFor();
    // The headline's pageviews are the export's (nothing was recorded): 30, not the 0 a whole fallback gave.
    const pageviews = owner.locator('[data-metric="pageviews"] [data-value]');
    await owner.locator('[data-metric="pageviews"] [data-value]', { hasText: /^30$/ }).waitFor();
    assert.equal(await pageviews.innerText(), '30');
    const headlineNote = owner.locator('.headline [data-imported-gap]');
    await headlineNote.waitFor();
    assert.match(await headlineNote.innerText(), /Fathom's export has no visitors.*what Plumb recorded only/);
    // Top pages: pageviews by page are the export's, visitors by page are not.
    const pages = owner.locator('[data-table="pathname"]');
    await pages.locator('tr[data-value="/a"]').waitFor();
    assert.match(await pages.locator('[data-imported-gap]').innerText(), /no visitors by this field/);
    // A table by a field Fathom's export has none of.
    await owner.locator('[data-tab="utm_source"]').click();
    assert.match(await owner.locator('[data-table="utm_source"] [data-imported-gap]').innerText(), /not in this table/);
    const goals = owner.locator('.goals-panel [data-imported-gap]');
    await goals.waitFor();
    assert.match(await goals.innerText(), /no unique completions, conversion rate and value/);
    // A period without imported days has no note.
    await owner.goto(`/sites/${siteId}?range=custom&from=2026-04-01&to=2026-04-10`);
    await owner.locator('[data-metric="pageviews"]').waitFor();
    assert.equal(await owner.locator('[data-imported-gap]').count(), 0);
    assert.deepEqual(owner.errors, []);
  });

  it("sends the member last week's report from the account page", async () => {
    await owner.goto('/account');
    await owner.getByRole('button', { name: "Send me last week's report of From Fathom now" }).click();
    await owner.getByText(/^Sent last week's report of From Fathom \(\d{4}-\d{2}-\d{2} to \d{4}-\d{2}-\d{2}\) to /).waitFor();
    await mailbox.waitFor(EMAIL, /From Fathom: your weekly report/);
    assert.deepEqual(owner.errors, []);
  });
});
