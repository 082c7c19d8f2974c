// Email reports: a member subscribes to a site's weekly report and receives it through a real SMTP server once its
// week (in the site's zone) is over, with numbers equal to /v1's for that week, plain text and HTML, and an
// unsubscribe link that works without logging in; two schedulers on one store send each report exactly once.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { lastCompletePeriod } from '../../src/domain/report-periods.js';
import { formatChange, formatValue, TOTALS } from '../../src/mail/report-email.js';
import { ReportScheduler } from '../../src/mail/report-scheduler.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { linkIn, startMailbox, type Mailbox } from '../helpers/mail.js';
import { addMember, Browser, importInOrder, logIn, newLogin, reportTraffic } from './helpers.js';

const PUBLIC_URL = 'https://plumb.example.test';
const ZONE = 'Europe/Berlin';
const DAY = 86_400_000;


describe('email reports', () => {
  let t: TestApp;
  let mailbox: Mailbox;
  let owner: Browser;
  let csrf: string;
  let site: string;
  let ownerEmail: string;
  let accountId: number;
  const runAt = new Date(Date.now() + 7 * DAY); // a week from now, this week is the last complete one
  const period = lastCompletePeriod('weekly', ZONE, runAt);

  before(async () => {
    mailbox = await startMailbox();
    t = await startTestApp({ mail: { smtpUrl: mailbox.url, publicUrl: PUBLIC_URL } });
    const login = await newLogin(t.meta);
    ownerEmail = login.email;
    accountId = login.id;
    owner = new Browser(t.app);
    csrf = await logIn(owner, login.email);
    site = (await owner.api('POST', '/v1/sites', csrf, { name: 'Shop', timezone: ZONE })).body.id;
    assert.equal((await owner.api('POST', `/v1/sites/${site}/events`, csrf, { name: 'Signup' })).status, 200);
    await importInOrder(t.app, [...reportTraffic(site, period.previousFrom, 5, 1, 10), ...reportTraffic(site, period.from, 12, 2, 10)]);
  });
  after(async () => {
    await t.close();
    await mailbox.close();
  });

  const v1 = async (params: Record<string, string>) => {
    const token = await t.token(['*'], { accountId });
    const res = await t.call(token, 'GET', `/v1/aggregations?${new URLSearchParams(params)}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  };

  it('sends the weekly report once the week is over, with the numbers /v1 gives for that week', async () => {
    const list = await owner.api('GET', '/dashboard/api/subscriptions', csrf);
    assert.deepEqual(list.body.data, [{ site_id: site, site_name: 'Shop', timezone: ZONE, weekly: false, monthly: false }]);
    assert.equal(list.body.mail_configured, true);
    assert.equal((await owner.api('PUT', '/dashboard/api/subscriptions', csrf, { site_id: site, frequency: 'weekly', subscribed: true })).status, 200);
    assert.equal((await t.reportEmails!.runOnce(new Date())).valueOf(), 0, 'this week is not over yet');
    assert.equal(await t.reportEmails!.runOnce(runAt), 1);
    assert.equal(await t.reportEmails!.runOnce(runAt), 0, 'sent once');

    const message = await mailbox.waitFor(ownerEmail, /Shop: your weekly report/);
    assert.match(message.subject ?? '', new RegExp(`${period.from} to ${period.to}`));
    const text = message.text ?? '';
    assert.ok(message.html, 'an HTML part too');
    const range = (from: string, to: string) => ({ date_from: `${from} 00:00:00`, date_to: `${to} 23:59:59` });
    const [cur] = await v1({ entity: 'pageview', entity_id: site, aggregates: TOTALS.join(','), ...range(period.from, period.to) });
    const [prev] = await v1({ entity: 'pageview', entity_id: site, aggregates: TOTALS.join(','), ...range(period.previousFrom, period.previousTo) });
    assert.equal(cur!.pageviews, '20', 'the week has the imported pageviews');
    assert.equal(prev!.visits, '5');
    const labels = { visitors: 'Visitors', visits: 'Visits', pageviews: 'Pageviews', bounce_rate: 'Bounce rate', avg_duration: 'Visit duration' };
    for (const total of TOTALS) {
      const line = `${labels[total]}: ${formatValue(total, cur![total]!)} (${formatChange(total, cur![total]!, prev![total]!)} against the previous week)`;
      assert.ok(text.includes(line), `${line}\n---\n${text}`);
      assert.ok(String(message.html).includes(formatValue(total, cur![total]!)));
    }
    const pages = await v1({ entity: 'pageview', entity_id: site, aggregates: 'pageviews', field_grouping: 'pathname', sort_by: 'pageviews:desc', ...range(period.from, period.to) });
    for (const p of pages) assert.ok(text.includes(`  ${p.pathname}: ${p.pageviews} pageviews`), `${p.pathname}\n${text}`);
    const sources = await v1({ entity: 'pageview', entity_id: site, aggregates: 'visits', field_grouping: 'referrer_source', sort_by: 'visits:desc', ...range(period.from, period.to) });
    assert.ok(sources.some((s) => s.referrer_source === 'Google'));
    for (const s of sources) assert.ok(text.includes(`  ${s.referrer_source || 'Direct / none'}: ${s.visits} visits`), text);
    const [goal] = await v1({ entity: 'event', site_id: site, entity_name: 'Signup', aggregates: 'conversions,unique_conversions', ...range(period.from, period.to) });
    assert.equal(goal!.conversions, '3');
    assert.ok(text.includes(`  Signup: ${goal!.conversions} conversions (${goal!.unique_conversions} unique)`), text);

    // Unsubscribing needs no login: a page with a button, then the POST (also what one-click mail clients send).
    const listUnsubscribe = message.headerLines.find((h) => h.key === 'list-unsubscribe');
    assert.match(String(listUnsubscribe?.line), /<https:\/\/plumb\.example\.test\/unsubscribe\/plumb_/);
    const link = linkIn(message, `${PUBLIC_URL}/unsubscribe/`);
    const stranger = new Browser(t.app);
    const page = await stranger.get(new URL(link).pathname);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /Stop the weekly email report of <strong>Shop/);
    assert.equal((await stranger.request({ method: 'POST', url: new URL(link).pathname })).statusCode, 200);
    assert.equal((await owner.api('GET', '/dashboard/api/subscriptions', csrf)).body.data[0].weekly, false);
    assert.equal(await t.reportEmails!.runOnce(new Date(runAt.getTime() + 7 * DAY)), 0, 'nothing more after unsubscribing');
  });

  it('sends each report exactly once with two schedulers on the same store', async () => {
    const member = await addMember(t.team, accountId, 'viewer');
    const b = new Browser(t.app);
    const c = await logIn(b, member.email);
    assert.equal((await b.api('PUT', '/dashboard/api/subscriptions', c, { site_id: site, frequency: 'monthly', subscribed: true })).status, 200);
    const other = new ReportScheduler({ meta: t.meta, team: t.team, engine: t.reports, mailer: t.mailer, publicUrl: PUBLIC_URL, log: () => undefined });
    const at = new Date(Date.now() + 35 * DAY); // this month is over by then
    const sent = await Promise.all([t.reportEmails!.runOnce(at), other.runOnce(at), t.reportEmails!.runOnce(at), other.runOnce(at)]);
    assert.equal(sent.reduce((a, n) => a + n, 0), 1, `sent ${sent.join(', ')}`);
    await mailbox.waitFor(member.email, /Shop: your monthly report/);
    assert.equal(mailbox.to(member.email).length, 1);
    assert.deepEqual(sent.filter((n) => n > 0).length, 1);
  });

  it('lets a member subscribe only to sites they can see, and refuses bad input', async () => {
    const second = (await owner.api('POST', '/v1/sites', csrf, { name: 'Second' })).body.id;
    const limited = await addMember(t.team, accountId, 'viewer', [site]);
    const b = new Browser(t.app);
    const c = await logIn(b, limited.email);
    assert.deepEqual((await b.api('GET', '/dashboard/api/subscriptions', c)).body.data.map((s: { site_id: string }) => s.site_id), [site]);
    const put = (body: unknown) => b.api('PUT', '/dashboard/api/subscriptions', c, body);
    assert.ok((await put({ site_id: second, frequency: 'weekly', subscribed: true })).body.errors.site_id);
    assert.equal((await put({ site_id: site, frequency: 'daily', subscribed: true })).status, 400);
    assert.equal((await put({ site_id: site, frequency: 'weekly' })).status, 400);
    assert.equal((await put({ site_id: site, frequency: 'weekly', subscribed: 'yes' })).status, 400);
    assert.equal((await put({ site_id: site, frequency: 'weekly', subscribed: true })).status, 200);
    // A removed member's subscriptions go with the membership.
    await t.team.removeMembership(accountId, limited.userId);
    assert.equal((await t.team.listSubscriptions(limited.userId, accountId)).length, 0);
    assert.equal((await new Browser(t.app).get('/unsubscribe/plumb_nothing-here')).statusCode, 200);
  });
});
