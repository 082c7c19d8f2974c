// The members' pages: each is a shell the page script (src/web/) fills through /v1 with the session. The role is
// checked here too: a viewer never gets a page for changing things, a site-limited viewer no page of another site.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { roleAtLeast, type Member, type SessionManager } from '../../auth/sessions.js';
import type { Role } from '../../store/team-types.js';
import type { MetaStore, Site } from '../../store/types.js';
import { goalCurrencies } from './goal-currencies.js';
import { currentMember } from './guard.js';
import { escapeHtml, messagePage, renderPage, sendPage } from './html.js';

export interface PageDeps {
  meta: MetaStore;
  sessions: SessionManager;
}

type Owner = Member;

/** Whether the member may see this site's report (viewers of chosen sites see only those). */
export function canSeeSite(m: Member, siteId: string): boolean {
  return m.membership.siteIds === null || m.membership.siteIds.includes(siteId);
}

const loading = '<p class="muted" data-loading>Loading…</p>';

export function pageRoutes(app: FastifyInstance, { meta, sessions }: PageDeps): void {
  /**
   * The logged-in member with at least `role`, or undefined after answering: the login page without a session,
   * the account page while the account requires two-factor authentication the member has not set up, a 403
   * page for a role too low.
   */
  const owner = async (request: FastifyRequest, reply: FastifyReply, role: Role = 'viewer', beforeTwoFactor = false): Promise<Owner | undefined> => {
    const member = await currentMember(request, sessions);
    if (!member) {
      void reply.redirect(`/login?next=${encodeURIComponent(request.url.split('?')[0]!)}`, 303);
      return undefined;
    }
    if (member.needsTwoFactor && !beforeTwoFactor) {
      void reply.redirect('/account', 303);
      return undefined;
    }
    if (!roleAtLeast(member.membership.role, role)) {
      void sendPage(reply, 403, messagePage('Not allowed', `Your role in this account (${member.membership.role}) does not allow this page.`));
      return undefined;
    }
    return member;
  };

  const shell = (reply: FastifyReply, o: Owner, title: string, page: string, data: Record<string, string> = {}, heading = title) =>
    sendPage(
      reply,
      200,
      renderPage({
        title,
        csrf: o.session.csrf,
        nav: { csrf: o.session.csrf, email: o.user.email, role: o.membership.role },
        data: { page, role: o.membership.role, ...data },
        withScript: true,
        body: `<h1>${escapeHtml(heading)}</h1>\n${loading}`,
      }),
    );

  const siteOf = async (o: Owner, id: string): Promise<Site | undefined> => {
    const site = await meta.getSite(id);
    return site && site.accountId === o.account.id && canSeeSite(o, site.id) ? site : undefined;
  };
  const noSite = (reply: FastifyReply) => sendPage(reply, 404, messagePage('Site not found', 'There is no such site in your account.'));
  const siteData = (s: Site) => ({ site: s.id, 'site-name': s.name, timezone: s.timezone });

  app.get('/sites', async (request, reply) => {
    const o = await owner(request, reply);
    if (!o) return reply;
    return shell(reply, o, 'Sites', 'sites', { timezone: o.account.timezone });
  });

  app.get<{ Params: { site_id: string } }>('/sites/:site_id', async (request, reply) => {
    const o = await owner(request, reply);
    if (!o) return reply;
    const site = await siteOf(o, request.params.site_id);
    if (!site) return noSite(reply);
    return shell(reply, o, site.name, 'report', { ...siteData(site), mode: 'owner', 'goal-currencies': await goalCurrencies(meta, site.id) });
  });

  app.get<{ Params: { site_id: string } }>('/sites/:site_id/settings', async (request, reply) => {
    const o = await owner(request, reply, 'admin');
    if (!o) return reply;
    const site = await siteOf(o, request.params.site_id);
    if (!site) return noSite(reply);
    return shell(reply, o, `Settings of ${site.name}`, 'site-settings', siteData(site));
  });

  app.get<{ Params: { site_id: string } }>('/sites/:site_id/goals', async (request, reply) => {
    const o = await owner(request, reply, 'admin');
    if (!o) return reply;
    const site = await siteOf(o, request.params.site_id);
    if (!site) return noSite(reply);
    return shell(reply, o, `Goals and milestones of ${site.name}`, 'goals', { ...siteData(site), 'goal-currencies': await goalCurrencies(meta, site.id) });
  });

  app.get('/settings/api', async (request, reply) => {
    const o = await owner(request, reply, 'admin');
    if (!o) return reply;
    return shell(reply, o, 'API settings', 'tokens');
  });

  app.get('/settings/members', async (request, reply) => {
    const o = await owner(request, reply, 'admin');
    if (!o) return reply;
    return shell(reply, o, 'Members', 'members');
  });

  app.get('/account', async (request, reply) => {
    const o = await owner(request, reply, 'viewer', true);
    if (!o) return reply;
    return shell(reply, o, 'Your account', 'account');
  });
}
