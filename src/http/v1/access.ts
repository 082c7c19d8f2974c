// Authentication and the scope table of SPEC.md section 5, applied to every /v1 route from its `access` config.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { CSRF_HEADER, EMBEDDED_SHARE_COOKIE, SHARE_SESSION_HEADER, type SessionManager, type SessionPrincipal } from '../../auth/sessions.js';
import type { Principal, TokenAuthenticator } from '../../auth/token-authenticator.js';
import { badRequest, forbidden, notFound } from '../../domain/errors.js';
import { RateLimited, type Admission, type LimitClass, type Limiter } from '../../limits/limiter.js';
import type { UsageMeter } from '../../limits/usage-meter.js';
import type { MetaStore, Site } from '../../store/types.js';
import { coerceFormBody } from '../validation.js';
import type { SiteLookup } from './site-cache.js';

/**
 * What a route requires, one value per row of SPEC.md's scope table:
 * - `token`: any valid token (GET /token)
 * - `full`: `*` (GET /account, POST /sites)
 * - `list-sites`: `*` or `all-sites-readonly` (GET /sites)
 * - `read-site`: read access to the `site_id` in the path
 * - `manage-site`: `manage:{site_id}` or `*`
 * - `full-site`: the site must be visible, and the token must hold `*` (DELETE /sites/{site_id})
 * - `public`: no token at all (the retired 410 endpoints, which answer 410 whatever is sent)
 */
export type Access = 'token' | 'full' | 'list-sites' | 'read-site' | 'manage-site' | 'full-site' | 'public';

declare module 'fastify' {
  interface FastifyContextConfig {
    access?: Access;
    /** The window the route counts against (default `hour`). */
    limit?: LimitClass;
  }
  interface FastifyRequest {
    principal: Principal | null;
    site: Site | null;
    admission: Admission | null;
  }
}

export function principalOf(request: FastifyRequest): Principal {
  if (!request.principal) throw new Error('route has no principal: is its access "public"?');
  return request.principal;
}

/** The sites a dashboard session's viewer is limited to, or undefined for any other principal. */
export function chosenSitesOf(request: FastifyRequest): readonly string[] | undefined {
  const principal = request.principal as SessionPrincipal | null;
  return principal?.member?.membership.siteIds ?? undefined;
}

export function siteOf(request: FastifyRequest): Site {
  if (!request.site) throw new Error('route has no site: is its access site-scoped?');
  return request.site;
}

export interface AccessDeps {
  meta: MetaStore;
  /** Site lookups for access checks (a SiteCache in the server). */
  sites: SiteLookup;
  auth: TokenAuthenticator;
  limiter: Limiter;
  usage: UsageMeter;
  sessions: SessionManager;
}

/** Report requests a share page's visitors may make per minute, per site and client address. */
export const SHARE_REQUESTS_PER_MINUTE = 120;

/** The site if the token may read it; another account's site and one outside the token's scopes are 404 too. */
export async function readableSite(sites: SiteLookup, { account, scopes }: Principal, siteId: string): Promise<Site> {
  const site = await sites.getSite(siteId);
  if (!site || site.accountId !== account.id || !scopes.canReadSite(site.id)) throw notFound('Site not found');
  return site;
}

/** The request's cookies (parsed by @fastify/cookie) as a map of those with a value. */
export function cookieMap(request: FastifyRequest): Map<string, string> {
  const map = new Map<string, string>();
  for (const [name, value] of Object.entries(request.cookies)) if (typeof value === 'string') map.set(name, value);
  return map;
}

export function installAccessControl(app: FastifyInstance, { sites, auth, limiter, usage, sessions }: AccessDeps): void {
  app.decorateRequest('principal', null);
  app.decorateRequest('site', null);
  app.decorateRequest('admission', null);

  // onRequest: a bad token is a 401, and an exhausted limit a 429, before the body is even read.
  app.addHook('onRequest', async (request) => {
    const access = request.routeOptions.config.access;
    if (access === undefined || access === 'public') return;
    // The dashboard's own pages call /v1 with their session cookie (and the session's anti-CSRF header) instead
    // of a token. Their requests are not API usage: they neither count toward the plan's limits nor the monthly
    // total (docs/dashboard.md); the report engine's bounded queue still protects the server. Share pages,
    // open to anyone, get a window of their own.
    // A request with a token never reads cookies: only token-less requests may authenticate by session.
    const cookies = request.headers.authorization === undefined ? cookieMap(request) : undefined;
    const embedded = request.headers[SHARE_SESSION_HEADER];
    if (cookies && typeof embedded === 'string') cookies.set(EMBEDDED_SHARE_COOKIE, embedded);
    if (cookies && sessions.hasSessionCookie(cookies)) {
      const csrf = request.headers[CSRF_HEADER];
      const principal = await sessions.principal(cookies, typeof csrf === 'string' ? csrf : undefined);
      if (principal.account.subscriptionStatus === 'lapsed') throw badRequest('The subscription of this account has lapsed');
      if (principal.session.kind === 'share') {
        const decision = await limiter.attempt(`share:${principal.session.siteId}:${request.ip}`, 60_000, SHARE_REQUESTS_PER_MINUTE);
        if (!decision.allowed) {
          const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
          throw new RateLimited(`Too many requests from this share page. Retry in ${seconds} s.`, seconds);
        }
      }
      request.principal = principal;
      return;
    }
    const principal = await auth.authenticate(request.headers.authorization);
    const { account } = principal;
    usage.count(account.id, new Date());
    if (account.subscriptionStatus === 'lapsed') throw badRequest('The subscription of this account has lapsed');
    request.admission = await limiter.admit(account.id, account.tier, request.routeOptions.config.limit ?? 'hour');
    request.principal = principal;
  });

  // The concurrency slot is given back just before the answer leaves, so a client that sends its next request
  // on receiving this answer never finds its own finished request still counted; the other hooks cover
  // answers that skip onSend and clients that hang up.
  const release = async (request: FastifyRequest) => {
    await request.admission?.release();
  };
  app.addHook('onSend', async (request, _reply, payload) => {
    await release(request);
    return payload;
  });
  app.addHook('onResponse', release);
  app.addHook('onRequestAbort', release);

  // preValidation: existence and permission are settled before the body is judged, so a write to a missing
  // site is a 404 and a write without permission a 400, whatever its body says.
  app.addHook('preValidation', async (request) => {
    const access = request.routeOptions.config.access;
    if (access === undefined || access === 'public') return;
    const { scopes } = principalOf(request);
    if (access === 'full' && !scopes.isFullAccess) throw forbidden();
    // A dashboard viewer of chosen sites may list sites: the list is then theirs only (src/http/v1/sites.ts).
    if (access === 'list-sites' && !scopes.canListSites && !chosenSitesOf(request)) throw forbidden();
    if (access === 'read-site' || access === 'manage-site' || access === 'full-site') {
      const site = await readableSite(sites, principalOf(request), (request.params as { site_id?: string }).site_id ?? '');
      if (access === 'manage-site' && !scopes.canManageSite(site.id)) throw forbidden();
      if (access === 'full-site' && !scopes.isFullAccess) throw forbidden();
      request.site = site;
    }
    coerceFormBody(request);
  });
}
