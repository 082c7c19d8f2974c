// Who is asking: the logged-in member of a dashboard request and their role, anti-CSRF checks for form posts
// (@fastify/csrf-protection, plus an Origin check) and for script calls (the session's value in a header), and the
// cookies (@fastify/cookie) that carry them.

import type { FastifyInstance, FastifyReply, FastifyRequest, preHandlerHookHandler } from 'fastify';
import { CSRF_HEADER, OWNER_COOKIE, OWNER_SESSION_MS, roleAtLeast, type Member, type SessionManager } from '../../auth/sessions.js';
import { badRequest, unauthenticated } from '../../domain/errors.js';
import { constantTimeEqual } from '../../domain/secrets.js';
import type { Role } from '../../store/team-types.js';
import type { DashboardSession } from '../../store/types.js';
import { messagePage, sendPage } from './html.js';

/** Anonymous forms (login, setup, share password, reset): the CSRF secret lives in this cookie. */
export const FORM_COOKIE = 'plumb_form';
/** Between the password and the second factor: the pending session's cookie. */
export const PENDING_COOKIE = 'plumb_pending';

/** Secure whenever the client reached us over https (Fastify reads X-Forwarded-Proto only from trusted proxies). */
export const isSecure = (request: FastifyRequest) => request.protocol === 'https';

/** Every Plumb cookie: HttpOnly (none is for scripts), path-wide, Secure over https. */
export function setSessionCookie(request: FastifyRequest, reply: FastifyReply, name: string, id: string, maxAgeSeconds: number): void {
  void reply.setCookie(name, id, { path: '/', httpOnly: true, sameSite: 'lax', secure: isSecure(request), maxAge: maxAgeSeconds });
}

export function setOwnerCookie(request: FastifyRequest, reply: FastifyReply, id: string): void {
  setSessionCookie(request, reply, OWNER_COOKIE, id, OWNER_SESSION_MS / 1000);
}

export function clearCookie(request: FastifyRequest, reply: FastifyReply, name: string): void {
  void reply.setCookie(name, '', { path: '/', httpOnly: true, sameSite: 'lax', secure: isSecure(request), maxAge: 0 });
}

/** The live login session of a dashboard request, or undefined. */
export async function ownerSession(request: FastifyRequest, sessions: SessionManager): Promise<DashboardSession | undefined> {
  const session = await sessions.find(request.cookies[OWNER_COOKIE]);
  return session?.kind === 'owner' ? session : undefined;
}

/** The member a dashboard request is logged in as (still a member of the session's account), or undefined. */
export async function currentMember(request: FastifyRequest, sessions: SessionManager): Promise<Member | undefined> {
  return sessions.member(await ownerSession(request, sessions));
}

export interface ApiAccess {
  /** The lowest role allowed (default: any member). */
  role?: Role;
  /** Routes of the account page work before two-factor authentication is set up, when the account requires it. */
  beforeTwoFactor?: boolean;
}

/**
 * For the dashboard's JSON routes: the member, proven by the anti-CSRF header as on /v1, with at least the role
 * asked for. No session (or a removed member's): 401. A role too low: 400, as /v1 answers a missing permission.
 */
export async function memberForApi(request: FastifyRequest, sessions: SessionManager, access: ApiAccess = {}): Promise<Member> {
  const session = await ownerSession(request, sessions);
  const header = request.headers[CSRF_HEADER];
  if (!session) throw unauthenticated('Not logged in');
  if (typeof header !== 'string' || !constantTimeEqual(header, session.csrf)) {
    throw unauthenticated(`Missing or wrong ${CSRF_HEADER} header`);
  }
  const member = await sessions.member(session);
  if (!member) throw unauthenticated('You are no longer a member of this account: log in again');
  if (member.needsTwoFactor && !access.beforeTwoFactor) {
    throw badRequest('This account requires two-factor authentication: turn it on on your account page (/account) first');
  }
  if (access.role && !roleAtLeast(member.membership.role, access.role)) {
    throw badRequest(`Your role (${member.membership.role}) does not allow this`);
  }
  return member;
}

/** The form value of this browser (@fastify/csrf-protection: a token over the secret in the form cookie). */
export function formToken(reply: FastifyReply): string {
  return reply.generateCsrf();
}

/** A post from another site: its Origin (when the browser sends one) is not ours. */
export function crossOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  return origin !== `${request.protocol}://${request.host}`;
}

export const refusedForm = (reply: FastifyReply) =>
  sendPage(reply, 403, messagePage('Form expired', "This form was not sent from this server's own page, or it expired. Go back, reload the page and try again."));

/**
 * preHandler hooks of an anonymous form post: our own Origin, then the form value against the form cookie
 * (@fastify/csrf-protection; its refusal is rendered as the "Form expired" page by the dashboard's error handler).
 */
export function formPost(app: FastifyInstance): preHandlerHookHandler[] {
  const sameOrigin: preHandlerHookHandler = async (request, reply) => {
    if (crossOrigin(request)) return refusedForm(reply);
  };
  return [sameOrigin, app.csrfProtection];
}

/** Whether a logged-in form post (logout, switching account) carries the session's own value, from our origin. */
export function validSessionForm(request: FastifyRequest, session: DashboardSession): boolean {
  return !crossOrigin(request) && constantTimeEqual(field(request.body, 'csrf'), session.csrf);
}

/** A body field of a form post as a string ('' when missing or not a string). */
export function field(body: unknown, name: string): string {
  // Own properties only: a JSON body inherits `constructor` and the like from Object.prototype.
  const value = body && typeof body === 'object' && Object.hasOwn(body, name) ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' ? value : '';
}

/** `next` targets only paths on this server (never `//host` or a full URL). */
export function safeNext(value: unknown): string {
  return typeof value === 'string' && /^\/(?![/\\])[\x21-\x7e]*$/.test(value) && value.length < 500 ? value : '/sites';
}
