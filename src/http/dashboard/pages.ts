// The owner's pages: each is a shell the page script (src/web/) fills through /v1 with the session.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import type { Account, DashboardSession, MetaStore, Site } from '../../store/types.js';
import { goalCurrencies } from './goal-currencies.js';
import { ownerSession } from './guard.js';
import { escapeHtml, messagePage, renderPage, sendPage } from './html.js';

export interface PageDeps {
  meta: MetaStore;
  sessions: SessionManager;
}

interface Owner {
  session: DashboardSession;
  account: Account;
}

const loading = '<p class="muted" data-loading>Loading…</p>';

export function pageRoutes(app: FastifyInstance, { meta, sessions }: PageDeps): void {
  /** The logged-in owner, or undefined after sending the browser to the login page. */
  const owner = async (request: FastifyRequest, reply: FastifyReply): Promise<Owner | undefined> => {
    const session = await ownerSession(request, sessions);
    const account = session && (await meta.getAccount(session.accountId));
    if (session && account) return { session, account };
    void reply.redirect(`/login?next=${encodeURIComponent(request.url.split('?')[0]!)}`, 303);
    return undefined;
  };

  const shell = (reply: FastifyReply, o: Owner, title: string, page: string, data: Record<string, string> = {}, heading = title) =>
    sendPage(
      reply,
      200,
      renderPage({
        title,
        csrf: o.session.csrf,
        nav: { csrf: o.session.csrf, email: o.account.email },
        data: { page, ...data },
        withScript: true,
        body: `<h1>${escapeHtml(heading)}</h1>\n${loading}`,
      }),
    );

  const siteOf = async (o: Owner, id: string): Promise<Site | undefined> => {
    const site = await meta.getSite(id);
    return site && site.accountId === o.account.id ? site : undefined;
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
    const o = await owner(request, reply);
    if (!o) return reply;
    const site = await siteOf(o, request.params.site_id);
    if (!site) return noSite(reply);
    return shell(reply, o, `Settings of ${site.name}`, 'site-settings', siteData(site));
  });

  app.get<{ Params: { site_id: string } }>('/sites/:site_id/goals', async (request, reply) => {
    const o = await owner(request, reply);
    if (!o) return reply;
    const site = await siteOf(o, request.params.site_id);
    if (!site) return noSite(reply);
    return shell(reply, o, `Goals and milestones of ${site.name}`, 'goals', { ...siteData(site), 'goal-currencies': await goalCurrencies(meta, site.id) });
  });

  app.get('/settings/api', async (request, reply) => {
    const o = await owner(request, reply);
    if (!o) return reply;
    return shell(reply, o, 'API settings', 'tokens');
  });
}
