// Email report subscriptions: each member chooses, per site they can see, a weekly and/or monthly report (JSON for
// the account page), may have one sent to themselves now (last week's or last month's, to try mail without waiting
// for a period to end), and /unsubscribe/{secret} from any report's email stops it without logging in (a page with
// a button, and a one-click POST for mail clients, RFC 8058).

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import { badRequest, ValidationError } from '../../domain/errors.js';
import { hashToken } from '../../domain/secrets.js';
import { RateLimited, type Limiter } from '../../limits/limiter.js';
import type { Mailer } from '../../mail/mailer.js';
import { checkReportMail, REPORT_NOW_PERIODS, REPORTS_NOW_PER_MINUTE, sendReportNow, type ReportNowPeriod } from '../../mail/report-now.js';
import type { ReportEngine } from '../../report/engine.js';
import { FREQUENCIES, type Frequency, type TeamStore } from '../../store/team-types.js';
import type { MetaStore, Site } from '../../store/types.js';
import { memberForApi } from './guard.js';
import { escapeHtml, messagePage, renderPage, sendPage } from './html.js';
import { canSeeSite } from './pages.js';

export interface SubscriptionDeps {
  meta: MetaStore;
  team: TeamStore;
  sessions: SessionManager;
  mailer: Mailer;
  publicUrl: string | undefined;
  limiter: Limiter;
  /** The report engine, for reports sent now (without it, asking for one is a 400 saying so). */
  reports?: ReportEngine | undefined;
}

export function subscriptionRoutes(app: FastifyInstance, { meta, team, sessions, mailer, publicUrl, limiter, reports }: SubscriptionDeps): void {
  /** Every site of the account the member can see, in creation order. */
  const visibleSites = async (accountId: number, member: Parameters<typeof canSeeSite>[0]): Promise<Site[]> => {
    const sites: Site[] = [];
    let after: string | undefined;
    for (let page = 0; page < 1000; page++) {
      const { items, hasMore } = await meta.listSites(accountId, { limit: 100, ...(after ? { startingAfter: after } : {}) });
      sites.push(...items.filter((s) => canSeeSite(member, s.id)));
      if (!hasMore || items.length === 0) break;
      after = items[items.length - 1]!.id;
    }
    return sites;
  };

  app.get('/dashboard/api/subscriptions', async (request) => {
    const m = await memberForApi(request, sessions);
    const [sites, subscriptions] = await Promise.all([visibleSites(m.account.id, m), team.listSubscriptions(m.user.id, m.account.id)]);
    const has = (siteId: string, f: Frequency) => subscriptions.some((s) => s.siteId === siteId && s.frequency === f);
    return {
      object: 'list',
      mail_configured: mailer.configured && publicUrl !== undefined,
      email: m.user.email,
      data: sites.map((s) => ({ site_id: s.id, site_name: s.name, timezone: s.timezone, weekly: has(s.id, 'weekly'), monthly: has(s.id, 'monthly') })),
    };
  });

  app.put<{ Body: { site_id: string; frequency: Frequency; subscribed: boolean } }>('/dashboard/api/subscriptions', {
    schema: {
      body: {
        type: 'object',
        properties: { site_id: { type: 'string', maxLength: 64 }, frequency: { type: 'string', enum: [...FREQUENCIES] }, subscribed: { type: 'boolean' } },
        required: ['site_id', 'frequency', 'subscribed'],
        additionalProperties: false,
      },
    },
    preValidation: async (request) => {
      await memberForApi(request, sessions);
    },
    handler: async (request) => {
      const m = await memberForApi(request, sessions);
      const { site_id: siteId, frequency, subscribed } = request.body;
      const site = await meta.getSite(siteId);
      if (!site || site.accountId !== m.account.id || !canSeeSite(m, site.id)) throw ValidationError.of('site_id', 'is not a site you can see');
      if (subscribed) await team.subscribe(m.user.id, m.account.id, site.id, frequency);
      else await team.unsubscribe(m.user.id, site.id, frequency);
      return { object: 'subscription', site_id: site.id, frequency, subscribed };
    },
  });

  // The member's own report of a site they can see, now, to their own address only (no address is taken).
  app.post<{ Body: { site_id: string; period: ReportNowPeriod } }>('/dashboard/api/subscriptions/send', {
    schema: {
      body: {
        type: 'object',
        properties: { site_id: { type: 'string', maxLength: 64 }, period: { type: 'string', enum: Object.keys(REPORT_NOW_PERIODS) } },
        required: ['site_id', 'period'],
        additionalProperties: false,
      },
    },
    preValidation: async (request) => {
      await memberForApi(request, sessions);
    },
    handler: async (request) => {
      const m = await memberForApi(request, sessions);
      const { site_id: siteId, period } = request.body;
      const site = await meta.getSite(siteId);
      if (!site || site.accountId !== m.account.id || !canSeeSite(m, site.id)) throw ValidationError.of('site_id', 'is not a site you can see');
      checkReportMail({ mailer, publicUrl });
      if (!reports) throw badRequest('Email reports are not available on this server');
      // Counted before the work, in the shared limit store: every process of a scale-out deployment sees the count.
      const allowed = await limiter.attempt(`report-now:user:${m.user.id}`, 60_000, REPORTS_NOW_PER_MINUTE);
      if (!allowed.allowed) {
        const seconds = Math.max(1, Math.ceil(allowed.retryAfterMs / 1000));
        throw new RateLimited(`You asked for ${REPORTS_NOW_PER_MINUTE} reports in the last minute. Retry in ${seconds} s.`, seconds);
      }
      const sent = await sendReportNow({ engine: reports, meta, mailer, publicUrl }, site, period, m.user.email);
      return { object: 'report_email', site_id: site.id, period, date_from: sent.from, date_to: sent.to, sent_to: m.user.email };
    },
  });

  const gone = (reply: FastifyReply) =>
    sendPage(reply, 200, messagePage('Unsubscribed', 'This report is not sent to you any more (or never was from this link).'));

  app.get<{ Params: { secret: string } }>('/unsubscribe/:secret', async (request, reply) => {
    const { secret } = request.params;
    const subscription = await team.findSubscriptionByUnsubscribe(hashToken(secret.slice(0, 200)));
    if (!subscription) return gone(reply);
    const site = await meta.getSite(subscription.siteId);
    return sendPage(
      reply,
      200,
      renderPage({
        title: 'Unsubscribe',
        body: `<section class="card narrow">
<h1>Unsubscribe</h1>
<p>Stop the ${escapeHtml(subscription.frequency)} email report of <strong>${escapeHtml(site?.name ?? subscription.siteId)}</strong>?</p>
<form method="post" action="/unsubscribe/${escapeHtml(secret)}" class="stack">
  <button type="submit">Unsubscribe</button>
</form>
</section>`,
      }),
    );
  });

  // No login and no form value: the secret in the link is the proof, and unsubscribing is all it can do.
  app.post<{ Params: { secret: string } }>('/unsubscribe/:secret', async (request, reply) => {
    const subscription = await team.findSubscriptionByUnsubscribe(hashToken(request.params.secret.slice(0, 200)));
    if (subscription) await team.deleteSubscription(subscription.id);
    return gone(reply);
  });
}
