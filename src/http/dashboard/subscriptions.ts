// Email report subscriptions: each member chooses, per site they can see, a weekly and/or monthly report (JSON for
// the account page), and /unsubscribe/{secret} from any report's email stops it without logging in (a page with a
// button, and a one-click POST for mail clients, RFC 8058).

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import { ValidationError } from '../../domain/errors.js';
import { hashToken } from '../../domain/secrets.js';
import type { Mailer } from '../../mail/mailer.js';
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
}

export function subscriptionRoutes(app: FastifyInstance, { meta, team, sessions, mailer, publicUrl }: SubscriptionDeps): void {
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
