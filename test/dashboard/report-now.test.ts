// Email reports sent now: a member asks from the dashboard for last week's or last month's report of a site they
// can see and receives it through a real SMTP server at once, to their own address, with the numbers /v1 gives for
// that period; an administrator sends one to any address (POST /admin/report-emails); both rate-limited, both
// refusing bad input and a server without mail with SPEC.md's error shapes.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ParsedMail } from 'mailparser';
import { lastCompletePeriod, type ReportPeriod } from '../../src/domain/report-periods.js';
import { formatChange, formatValue, TOTALS } from '../../src/mail/report-email.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { startMailbox, type Mailbox } from '../helpers/mail.js';
import { addMember, Browser, importInOrder, logIn, newLogin, reportTraffic } from './helpers.js';

const PUBLIC_URL = 'https://plumb.example.test';
const ZONE = 'Pacific/Auckland';
const LABELS = { visitors: 'Visitors', visits: 'Visits', pageviews: 'Pageviews', bounce_rate: 'Bounce rate', avg_duration: 'Visit duration' };


describe('email reports sent now', () => {
  let t: TestApp;
  let mailbox: Mailbox;
  let owner: Browser;
  let csrf: string;
  let site: string;
  let other: string;
  let ownerEmail: string;
  let accountId: number;
  const week = lastCompletePeriod('weekly', ZONE, new Date());
  const month = lastCompletePeriod('monthly', ZONE, new Date());

  before(async () => {
    mailbox = await startMailbox();
    t = await startTestApp({ mail: { smtpUrl: mailbox.url, publicUrl: PUBLIC_URL } });
    const login = await newLogin(t.meta);
    ownerEmail = login.email;
    accountId = login.id;
    owner = new Browser(t.app);
    csrf = await logIn(owner, login.email);
    site = (await owner.api('POST', '/v1/sites', csrf, { name: 'Shop', timezone: ZONE })).body.id;
    other = (await owner.api('POST', '/v1/sites', csrf, { name: 'Other', timezone: ZONE })).body.id;
    assert.equal((await owner.api('POST', `/v1/sites/${site}/events`, csrf, { name: 'Signup' })).status, 200);
    // Last week, the week before, and the month before last (what last month's report compares with).
    // Noon UTC is the same calendar day in Auckland's zone (UTC+12/+13) only before noon there: at 01:00 UTC.
    await importInOrder(t.app, [
      ...reportTraffic(site, week.previousFrom, 5, 1, 1),
      ...reportTraffic(site, week.from, 12, 2, 1),
      ...reportTraffic(site, month.previousFrom, 7, 3, 1),
    ]);
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
  const range = (from: string, to: string) => ({ date_from: `${from} 00:00:00`, date_to: `${to} 23:59:59` });

  /** Every number of the mail is the one /v1 answers for its period; returns the period's pageviews. */
  async function sameAsV1(message: ParsedMail, period: ReportPeriod): Promise<string> {
    const text = message.text ?? '';
    const unit = period.frequency === 'weekly' ? 'week' : 'month';
    const [cur] = await v1({ entity: 'pageview', entity_id: site, aggregates: TOTALS.join(','), ...range(period.from, period.to) });
    const [prev] = await v1({ entity: 'pageview', entity_id: site, aggregates: TOTALS.join(','), ...range(period.previousFrom, period.previousTo) });
    for (const total of TOTALS) {
      const line = `${LABELS[total]}: ${formatValue(total, cur![total]!)} (${formatChange(total, cur![total]!, prev![total]!)} against the previous ${unit})`;
      assert.ok(text.includes(line), `${line}\n---\n${text}`);
      assert.ok(String(message.html).includes(formatValue(total, cur![total]!)));
    }
    const pages = await v1({ entity: 'pageview', entity_id: site, aggregates: 'pageviews', field_grouping: 'pathname', sort_by: 'pageviews:desc', ...range(period.from, period.to) });
    for (const p of pages) assert.ok(text.includes(`  ${p.pathname}: ${p.pageviews} pageviews`), `${p.pathname}\n${text}`);
    const sources = await v1({ entity: 'pageview', entity_id: site, aggregates: 'visits', field_grouping: 'referrer_source', sort_by: 'visits:desc', ...range(period.from, period.to) });
    for (const s of sources) assert.ok(text.includes(`  ${s.referrer_source || 'Direct / none'}: ${s.visits} visits`), text);
    const [goal] = await v1({ entity: 'event', site_id: site, entity_name: 'Signup', aggregates: 'conversions,unique_conversions', ...range(period.from, period.to) });
    assert.ok(text.includes(`  Signup: ${goal!.conversions} conversions (${goal!.unique_conversions} unique)`), text);
    return cur!.pageviews!;
  }

  it("sends the member last week's report now, to their own address, with /v1's numbers for that week", async () => {
    const res = await owner.api('POST', '/dashboard/api/subscriptions/send', csrf, { site_id: site, period: 'last_week' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { object: 'report_email', site_id: site, period: 'last_week', date_from: week.from, date_to: week.to, sent_to: ownerEmail });
    const message = await mailbox.waitFor(ownerEmail, /Shop: your weekly report/);
    assert.match(message.subject ?? '', new RegExp(`${week.from} to ${week.to}`));
    assert.equal(await sameAsV1(message, week), '20', "the week's imported pageviews are in it");
    // Nothing was subscribed to: no unsubscribe link or header, and it says it was sent once.
    assert.ok(!message.headerLines.some((h) => h.key === 'list-unsubscribe'));
    assert.match(message.text ?? '', /Sent once, because it was asked for in Plumb/);
    assert.doesNotMatch(message.text ?? '', /unsubscribe/i);
    // Sending now subscribes to nothing.
    assert.deepEqual((await owner.api('GET', '/dashboard/api/subscriptions', csrf)).body.data.find((s: { site_id: string }) => s.site_id === site), {
      site_id: site, site_name: 'Shop', timezone: ZONE, weekly: false, monthly: false,
    });
  });

  it("sends last month's report with /v1's numbers for that month", async () => {
    const res = await owner.api('POST', '/dashboard/api/subscriptions/send', csrf, { site_id: site, period: 'last_month' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual([res.body.date_from, res.body.date_to], [month.from, month.to]);
    const message = await mailbox.waitFor(ownerEmail, /Shop: your monthly report/);
    await sameAsV1(message, month);
  });

  it('sends only sites the member can see, only to them, and refuses bad input with SPEC.md shapes', async () => {
    const viewer = await addMember(t.team, accountId, 'viewer', [site]);
    const b = new Browser(t.app);
    const c = await logIn(b, viewer.email);
    const send = (body: unknown) => b.api('POST', '/dashboard/api/subscriptions/send', c, body);
    const hidden = await send({ site_id: other, period: 'last_week' });
    assert.equal(hidden.status, 400);
    assert.ok(Array.isArray(hidden.body.errors.site_id), JSON.stringify(hidden.body));
    assert.ok((await send({ site_id: 'NOSUCHSITE', period: 'last_week' })).body.errors.site_id);
    for (const body of [{ site_id: site, period: 'yesterday' }, { site_id: site }, { site_id: site, period: 'last_week', to: 'someone@example.test' }, { period: 'last_week' }]) {
      const res = await send(body);
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.equal(typeof res.body.errors, 'object', JSON.stringify(res.body));
    }
    const noCsrf = await b.api('POST', '/dashboard/api/subscriptions/send', undefined, { site_id: site, period: 'last_week' });
    assert.equal(noCsrf.status, 401);
    assert.equal(typeof noCsrf.body.error, 'string');
    const stranger = await new Browser(t.app).api('POST', '/dashboard/api/subscriptions/send', 'x', { site_id: site, period: 'last_week' });
    assert.equal(stranger.status, 401);
    assert.equal(mailbox.to(viewer.email).length, 0, 'nothing sent for refused requests');
    // The viewer's own report of the site they can see goes to them.
    assert.equal((await send({ site_id: site, period: 'last_week' })).status, 200);
    await mailbox.waitFor(viewer.email, /Shop: your weekly report/);
  });

  it('allows a few sends a minute per member, then answers 429 with Retry-After', async () => {
    const member = await addMember(t.team, accountId, 'viewer');
    const b = new Browser(t.app);
    const c = await logIn(b, member.email);
    const send = () => b.api('POST', '/dashboard/api/subscriptions/send', c, { site_id: site, period: 'last_week' });
    for (let i = 0; i < 3; i++) assert.equal((await send()).status, 200);
    const refused = await send();
    assert.equal(refused.status, 429);
    assert.equal(typeof refused.body.message, 'string');
    assert.ok(Number(refused.headers['retry-after']) >= 1);
    await mailbox.waitFor(member.email, /Shop: your weekly report/, 3);
    assert.equal(mailbox.to(member.email).length, 3);
    // Another member's count is their own.
    assert.equal((await owner.api('POST', '/dashboard/api/subscriptions/send', csrf, { site_id: site, period: 'last_week' })).status, 200);
  });

  it('POST /admin/report-emails sends a report to the address given, with /v1 numbers; refuses bad input', async () => {
    const admin = (body: unknown) => t.call(ADMIN_TOKEN, 'POST', '/admin/report-emails', body);
    const res = await admin({ site_id: site, period: 'last_week', to: 'someone.else@example.test' });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body, { object: 'report_email', site_id: site, period: 'last_week', date_from: week.from, date_to: week.to, sent_to: 'someone.else@example.test' });
    await sameAsV1(await mailbox.waitFor('someone.else@example.test', /Shop: your weekly report/), week);
    assert.equal((await t.call(undefined, 'POST', '/admin/report-emails', { site_id: site, period: 'last_week', to: 'x@example.test' })).status, 401);
    const missing = await admin({ site_id: 'NOSUCHSITE', period: 'last_week', to: 'x@example.test' });
    assert.equal(missing.status, 404);
    assert.equal(typeof missing.body.error, 'string');
    for (const body of [{ site_id: site, period: 'last_week', to: 'not an address' }, { site_id: site, period: 'last_year', to: 'x@example.test' }, { site_id: site, period: 'last_week' }]) {
      const bad = await admin(body);
      assert.equal(bad.status, 400, JSON.stringify(body));
      assert.equal(typeof bad.body.errors, 'object', JSON.stringify(bad.body));
    }
    assert.equal(mailbox.to('x@example.test').length, 0);
  });
});

describe('email reports sent now, on servers that cannot send mail', () => {
  it('answers 400 without mail configured, and 503 with Retry-After when the SMTP server cannot be reached', async () => {
    for (const mail of [undefined, { smtpUrl: 'smtp://127.0.0.1:1', publicUrl: PUBLIC_URL }]) {
      const t = await startTestApp(mail ? { mail } : {});
      try {
        const login = await newLogin(t.meta);
        const b = new Browser(t.app);
        const c = await logIn(b, login.email);
        const site = (await b.api('POST', '/v1/sites', c, { name: 'Shop', timezone: ZONE })).body.id;
        const dashboard = await b.api('POST', '/dashboard/api/subscriptions/send', c, { site_id: site, period: 'last_week' });
        const admin = await t.call(ADMIN_TOKEN, 'POST', '/admin/report-emails', { site_id: site, period: 'last_month', to: 'x@example.test' });
        for (const res of [dashboard, admin]) {
          assert.equal(res.status, mail ? 503 : 400, JSON.stringify(res.body));
          assert.equal(typeof (res.body as { error: unknown }).error, 'string');
          if (mail) assert.equal(res.headers['retry-after'], '60');
          else assert.match((res.body as { error: string }).error, /PLUMB_SMTP_URL/);
        }
      } finally {
        await t.close();
      }
    }
  });
});
