// /share/{site_id}: a site's read-only report for anyone (`public`), behind its share password (`private`), or
// nothing at all (`none`). The page reads /v1 with a share session good for that one site only.
// `?embed=true`: the same report without the top bar, for an iframe on the origins the owner allowed (CSP
// frame-ancestors; none allowed: no framing at all). Public reports only: a framed page gets no cookies, so it
// carries its share session itself, and a password cannot be asked for inside another site's page.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { shareCookieName, SHARE_SESSION_MS, type SessionManager } from '../../auth/sessions.js';
import { frameAncestors } from '../../domain/embed-origins.js';
import { verifyPassword } from '../../domain/secrets.js';
import type { Limiter } from '../../limits/limiter.js';
import type { DashboardSession, MetaStore, Site } from '../../store/types.js';
import { goalCurrencies } from './goal-currencies.js';
import { field, formPost, formToken, setSessionCookie } from './guard.js';
import { cspWithFrameAncestors, escapeHtml, messagePage, renderPage, sendPage } from './html.js';
import { attemptsLeft, LOGIN_ATTEMPTS, LOGIN_WINDOW_MS, tooManyAttempts } from './login.js';

export interface ShareDeps {
  meta: MetaStore;
  sessions: SessionManager;
  limiter: Limiter;
}

function passwordForm(site: Site, token: string, error?: string): string {
  return renderPage({
    title: 'Shared report',
    body: `<section class="card narrow">
<h1>This report is password protected</h1>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/share/${escapeHtml(site.id)}" class="stack">
  <input type="hidden" name="csrf" value="${escapeHtml(token)}">
  <label for="share_password">Share password</label>
  <input id="share_password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">View report</button>
</form>
</section>`,
  });
}

/** Share sessions one client address may start in LOGIN_WINDOW_MS (15 minutes), all sites together. */
export const SHARE_SESSIONS_PER_CLIENT = 120;

export function shareRoutes(app: FastifyInstance, { meta, sessions, limiter }: ShareDeps): void {
  const shared = async (id: string) => {
    const site = await meta.getSite(id);
    return site && site.sharing !== 'none' ? site : undefined;
  };
  const nothing = (reply: FastifyReply) => sendPage(reply, 404, messagePage('Not found', 'There is no shared report here.'));

  const report = async (reply: FastifyReply, site: Site, session: DashboardSession, embedded?: { sessionId: string; csp: string }) =>
    sendPage(
      reply,
      200,
      renderPage({
        title: `${site.name}: shared report`,
        csrf: session.csrf,
        data: {
          page: 'report', mode: 'share', site: site.id, 'site-name': site.name, timezone: site.timezone,
          'goal-currencies': await goalCurrencies(meta, site.id),
          ...(embedded ? { embed: 'true' } : {}),
        },
        withScript: true,
        chrome: !embedded,
        shareSession: embedded?.sessionId,
        body: `<h1>${escapeHtml(site.name)}</h1>\n<p class="muted" data-loading>Loading…</p>`,
      }),
      embedded?.csp,
    );

  /** The embedded report: framed only by the site's allowed origins (helmet's X-Frame-Options would forbid all). */
  const embed = async (request: FastifyRequest, reply: FastifyReply, site: Site) => {
    const csp = cspWithFrameAncestors(frameAncestors(await meta.getEmbedOrigins(site.id)));
    void reply.removeHeader('x-frame-options');
    if (site.sharing !== 'public') {
      const link = `<a href="/share/${escapeHtml(site.id)}" target="_blank" rel="noopener">open it in its own window</a>`;
      const body = `<section class="card narrow"><h1>This report is password protected</h1>
<p>A report with a share password cannot be shown inside another page. You can ${link} and enter the password there.</p></section>`;
      return sendPage(reply, 200, renderPage({ title: 'Shared report', chrome: false, body }), csp);
    }
    const wait = await sessionsLeft(request);
    if (wait > 0) return tooManyAttempts(reply, wait);
    const issued = await sessions.startShare(site);
    return report(reply, site, issued.session, { sessionId: issued.id, csp });
  };

  /**
   * Each page load without a session stores one (a day long): without a bound, one client reloading a public
   * report, or its embedded frame, would fill the sessions table. A visitor keeps theirs in a cookie; a frame gets
   * a new one per load, which SHARE_SESSIONS_PER_CLIENT allows for any person reading reports.
   */
  const sessionsLeft = (request: FastifyRequest) =>
    attemptsLeft(limiter, [`share-session:${request.ip}`], SHARE_SESSIONS_PER_CLIENT, LOGIN_WINDOW_MS);

  const grant = async (request: FastifyRequest, reply: FastifyReply, site: Site) => {
    const issued = await sessions.startShare(site);
    setSessionCookie(request, reply, shareCookieName(site.id), issued.id, SHARE_SESSION_MS / 1000);
    return issued.session;
  };

  app.get<{ Params: { site_id: string }; Querystring: { embed?: unknown } }>('/share/:site_id', async (request, reply) => {
    const site = await shared(request.params.site_id);
    if (!site) return nothing(reply);
    if (request.query.embed === 'true') return embed(request, reply, site);
    const existing = await sessions.find(request.cookies[shareCookieName(site.id)]);
    if (existing?.kind === 'share' && existing.siteId === site.id) return report(reply, site, existing);
    if (site.sharing === 'public') {
      const wait = await sessionsLeft(request);
      if (wait > 0) return tooManyAttempts(reply, wait);
      return report(reply, site, await grant(request, reply, site));
    }
    return sendPage(reply, 200, passwordForm(site, formToken(reply)));
  });

  app.post<{ Params: { site_id: string } }>('/share/:site_id', { preHandler: formPost(app) }, async (request, reply) => {
    const site = await shared(request.params.site_id);
    if (!site) return nothing(reply);
    if (site.sharing === 'public') return reply.redirect(`/share/${site.id}`, 303);
    // Per address, and a looser cap per site against guessing from many addresses (looser so that one
    // stranger cannot lock everyone else out).
    const wait = Math.max(
      await attemptsLeft(limiter, [`share:ip:${site.id}:${request.ip}`], LOGIN_ATTEMPTS, LOGIN_WINDOW_MS),
      await attemptsLeft(limiter, [`share:site:${site.id}`], LOGIN_ATTEMPTS * 10, LOGIN_WINDOW_MS),
    );
    if (wait > 0) return tooManyAttempts(reply, wait);
    const password = field(request.body, 'password').slice(0, 1024);
    const ok = site.sharePasswordHash !== null && (await verifyPassword(password, site.sharePasswordHash));
    if (!ok) return sendPage(reply, 401, passwordForm(site, formToken(reply), 'Wrong password.'));
    await grant(request, reply, site);
    return reply.redirect(`/share/${site.id}`, 303);
  });
}
