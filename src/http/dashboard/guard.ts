// Who is asking: the owner session of a dashboard request, anti-CSRF checks for form posts and script calls,
// and the cookies that carry them.

import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CSRF_HEADER, OWNER_COOKIE, OWNER_SESSION_MS, type SessionManager } from '../../auth/sessions.js';
import { unauthenticated } from '../../domain/errors.js';
import { constantTimeEqual } from '../../domain/secrets.js';
import type { DashboardSession } from '../../store/types.js';
import { parseCookies, serializeCookie } from '../cookies.js';

/** Anonymous forms (login, setup, share password) get a random value in a cookie and in a hidden field. */
export const FORM_COOKIE = 'plumb_form';
const FORM_COOKIE_SECONDS = 3600;

/** Secure whenever the client reached us over https (Fastify reads X-Forwarded-Proto only from trusted proxies). */
export const isSecure = (request: FastifyRequest) => request.protocol === 'https';

export function cookiesOf(request: FastifyRequest): Map<string, string> {
  return parseCookies(request.headers.cookie);
}

export function setCookie(reply: FastifyReply, cookie: string): void {
  const existing = reply.getHeader('set-cookie');
  const list = existing === undefined ? [] : Array.isArray(existing) ? existing.map(String) : [String(existing)];
  void reply.header('set-cookie', [...list, cookie]);
}

export function setOwnerCookie(request: FastifyRequest, reply: FastifyReply, id: string): void {
  setCookie(reply, serializeCookie(OWNER_COOKIE, id, { secure: isSecure(request), sameSite: 'Lax', maxAge: OWNER_SESSION_MS / 1000 }));
}

export function clearCookie(request: FastifyRequest, reply: FastifyReply, name: string): void {
  setCookie(reply, serializeCookie(name, '', { secure: isSecure(request), sameSite: 'Lax', maxAge: 0 }));
}

/** The live owner session of a dashboard request, or undefined. */
export async function ownerSession(request: FastifyRequest, sessions: SessionManager): Promise<DashboardSession | undefined> {
  const session = await sessions.find(cookiesOf(request).get(OWNER_COOKIE));
  return session?.kind === 'owner' ? session : undefined;
}

/** For the dashboard's JSON routes: the owner session, proven by the anti-CSRF header as on /v1. */
export async function ownerSessionForApi(request: FastifyRequest, sessions: SessionManager): Promise<DashboardSession> {
  const session = await ownerSession(request, sessions);
  const header = request.headers[CSRF_HEADER];
  if (!session) throw unauthenticated('Not logged in');
  if (typeof header !== 'string' || !constantTimeEqual(header, session.csrf)) {
    throw unauthenticated(`Missing or wrong ${CSRF_HEADER} header`);
  }
  return session;
}

/** The form value of this browser, made (and its cookie set) when it has none yet. */
export function formToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = cookiesOf(request).get(FORM_COOKIE);
  if (existing && /^[\w-]{20,100}$/.test(existing)) return existing;
  const value = randomBytes(24).toString('base64url');
  // Strict: the form cookie is only ever needed by a post from our own pages.
  setCookie(reply, serializeCookie(FORM_COOKIE, value, { secure: isSecure(request), sameSite: 'Strict', maxAge: FORM_COOKIE_SECONDS }));
  return value;
}

/** A post from another site: its Origin (when the browser sends one) is not ours. */
export function crossOrigin(request: FastifyRequest): boolean {
  const origin = request.headers.origin;
  if (origin === undefined) return false;
  return origin !== `${request.protocol}://${request.host}`;
}

/** Whether an anonymous form post carries this browser's form value and comes from our own origin. */
export function validFormPost(request: FastifyRequest, field: unknown): boolean {
  const cookie = cookiesOf(request).get(FORM_COOKIE);
  return !crossOrigin(request) && typeof field === 'string' && cookie !== undefined && field.length > 0 && constantTimeEqual(field, cookie);
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
