// Login (password, then the second factor when the user has one), logout and the first-run setup page:
// server-rendered forms that work without the page script.

import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { OWNER_COOKIE, PENDING_SESSION_MS, type SessionManager } from '../../auth/sessions.js';
import type { TokenAuthenticator } from '../../auth/token-authenticator.js';
import { checkSecondFactor } from '../../auth/two-factor.js';
import { ApiError } from '../../domain/errors.js';
import { EMAIL_RE, passwordProblem } from '../../domain/passwords.js';
import { hashPassword, verifyPassword } from '../../domain/secrets.js';
import type { Limiter } from '../../limits/limiter.js';
import type { TeamStore } from '../../store/team-types.js';
import type { MetaStore } from '../../store/types.js';
import {
  clearCookie, field, formPost, formToken, ownerSession, PENDING_COOKIE, refusedForm, safeNext, setOwnerCookie, setSessionCookie,
  validSessionForm,
} from './guard.js';
import { escapeHtml, messagePage, NEW_PASSWORD_FIELDS, renderPage, sendPage } from './html.js';

/**
 * Login attempts allowed per email in a sliding window (shared across processes), and per client address: more
 * there, since one address may be a whole office behind NAT.
 */
export const LOGIN_ATTEMPTS = 10;
export const LOGIN_ATTEMPTS_PER_ADDRESS = 30;
export const LOGIN_WINDOW_MS = 15 * 60_000;

export interface LoginDeps {
  meta: MetaStore;
  team: TeamStore;
  auth: TokenAuthenticator;
  sessions: SessionManager;
  limiter: Limiter;
}

// Verifying against a throwaway hash when the email is unknown makes both answers take the same time.
let dummyHash: Promise<string> | undefined;
const dummy = () => (dummyHash ??= hashPassword('plumb: no such login, but take as long as a real one'));

export const digest = (text: string) => createHash('sha256').update(text).digest('hex');

/** The owner: the first account, which first-run setup gives a login. */
async function ownerAccount(meta: MetaStore) {
  return (await meta.listAccounts())[0];
}

export async function ownerNeedsSetup(meta: MetaStore): Promise<boolean> {
  const owner = await ownerAccount(meta);
  return owner !== undefined && (await meta.getPasswordHash(owner.id)) === undefined;
}

/** Counts an attempt under each key; the longest wait of any refusal, in seconds, or 0 when all allow it. */
export async function attemptsLeft(limiter: Limiter, keys: string[], limit: number, windowMs: number): Promise<number> {
  let wait = 0;
  for (const key of keys) {
    const d = await limiter.attempt(key, windowMs, limit);
    if (!d.allowed) wait = Math.max(wait, Math.ceil(d.retryAfterMs / 1000));
  }
  return wait;
}

export function tooManyAttempts(reply: FastifyReply, seconds: number): FastifyReply {
  void reply.header('retry-after', String(Math.max(1, seconds)));
  const minutes = Math.max(1, Math.ceil(seconds / 60));
  return sendPage(reply, 429, messagePage('Too many attempts', `Too many attempts. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`));
}

function loginForm(token: string, o: { email?: string; error?: string; next?: string; setup?: boolean }): string {
  return renderPage({
    title: 'Log in',
    body: `<section class="card narrow">
<h1>Log in</h1>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
${o.setup ? '<p class="notice">This server has no dashboard login yet. <a href="/setup">Set up the owner login</a> with the owner API token printed at first start.</p>' : ''}
<form method="post" action="/login" class="stack">
  <input type="hidden" name="csrf" value="${escapeHtml(token)}">
  <input type="hidden" name="next" value="${escapeHtml(o.next ?? '/sites')}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(o.email ?? '')}">
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Log in</button>
</form>
<p><a href="/forgot">Forgot your password?</a></p>
</section>`,
  });
}

function codeForm(token: string, o: { error?: string; next?: string }): string {
  return renderPage({
    title: 'Two-factor authentication',
    body: `<section class="card narrow">
<h1>Two-factor authentication</h1>
<p>Enter the 6-digit code from your authenticator app, or one of your recovery codes.</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
<form method="post" action="/login/code" class="stack">
  <input type="hidden" name="csrf" value="${escapeHtml(token)}">
  <input type="hidden" name="next" value="${escapeHtml(o.next ?? '/sites')}">
  <label for="code">Code</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required autofocus>
  <button type="submit">Verify</button>
</form>
<p><a href="/login">Start again</a></p>
</section>`,
  });
}

function setupForm(token: string, o: { email?: string; error?: string }): string {
  return renderPage({
    title: 'Set up the owner login',
    body: `<section class="card narrow">
<h1>Set up the owner login</h1>
<p>Prove you own this server with the owner API token Plumb printed at its first start, then choose the email and password you will log in with.</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
<form method="post" action="/setup" class="stack">
  <input type="hidden" name="csrf" value="${escapeHtml(token)}">
  <label for="owner_token">Owner API token</label>
  <input id="owner_token" name="owner_token" type="password" autocomplete="off" required>
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required value="${escapeHtml(o.email ?? '')}">
  ${NEW_PASSWORD_FIELDS}
  <button type="submit">Save and log in</button>
</form>
</section>`,
  });
}

/** Second-factor attempts per user and per address, as for passwords. */
export const CODE_ATTEMPTS = LOGIN_ATTEMPTS;

export function loginRoutes(app: FastifyInstance, { meta, team, auth, sessions, limiter }: LoginDeps): void {
  const agent = (request: FastifyRequest) => request.headers['user-agent'];

  app.get('/login', async (request, reply) => {
    if (await ownerSession(request, sessions)) return reply.redirect('/sites', 303);
    const next = safeNext((request.query as Record<string, unknown>).next);
    return sendPage(reply, 200, loginForm(formToken(reply), { next, setup: await ownerNeedsSetup(meta) }));
  });

  app.post('/login', { preHandler: formPost(app) }, async (request, reply) => {
    const body = request.body;
    const email = field(body, 'email').trim().slice(0, 255);
    const password = field(body, 'password').slice(0, 4096);
    const next = safeNext(field(body, 'next'));
    const wait = Math.max(
      await attemptsLeft(limiter, [`login:ip:${request.ip}`], LOGIN_ATTEMPTS_PER_ADDRESS, LOGIN_WINDOW_MS),
      await attemptsLeft(limiter, [`login:email:${digest(email.toLowerCase())}`], LOGIN_ATTEMPTS, LOGIN_WINDOW_MS),
    );
    if (wait > 0) return tooManyAttempts(reply, wait);
    const login = email ? await meta.findLogin(email) : undefined;
    const ok = await verifyPassword(password, login?.passwordHash ?? (await dummy()));
    if (!login || !ok) {
      return sendPage(reply, 401, loginForm(formToken(reply), { email, next, error: 'Wrong email or password.' }));
    }
    if (!login.account) {
      return sendPage(reply, 403, messagePage('No account', 'This login is not a member of any account any more. Ask an owner to invite you again.'));
    }
    const secrets = await team.getUserSecrets(login.userId);
    if (secrets?.totpSecret) {
      const pending = await sessions.startPending(login.userId, login.account.id, agent(request));
      setSessionCookie(request, reply, PENDING_COOKIE, pending.id, PENDING_SESSION_MS / 1000);
      return reply.redirect(`/login/code?next=${encodeURIComponent(next)}`, 303);
    }
    const issued = await sessions.startMember(login.userId, login.account.id, agent(request));
    setOwnerCookie(request, reply, issued.id);
    return reply.redirect(next, 303);
  });

  const pendingOf = async (request: FastifyRequest) => {
    const session = await sessions.find(request.cookies[PENDING_COOKIE]);
    return session?.kind === 'pending' && session.userId !== null ? session : undefined;
  };

  app.get('/login/code', async (request, reply) => {
    if (!(await pendingOf(request))) return reply.redirect('/login', 303);
    const next = safeNext((request.query as Record<string, unknown>).next);
    return sendPage(reply, 200, codeForm(formToken(reply), { next }));
  });

  app.post('/login/code', { preHandler: formPost(app) }, async (request, reply) => {
    const pending = await pendingOf(request);
    if (!pending || pending.userId === null) return reply.redirect('/login', 303);
    const next = safeNext(field(request.body, 'next'));
    const wait = Math.max(
      await attemptsLeft(limiter, [`login:ip:${request.ip}`], LOGIN_ATTEMPTS_PER_ADDRESS, LOGIN_WINDOW_MS),
      await attemptsLeft(limiter, [`login:code:${pending.userId}`], CODE_ATTEMPTS, LOGIN_WINDOW_MS),
    );
    if (wait > 0) return tooManyAttempts(reply, wait);
    const secrets = await team.getUserSecrets(pending.userId);
    const used = secrets?.totpSecret
      ? await checkSecondFactor(team, pending.userId, secrets.totpSecret, field(request.body, 'code'), new Date())
      : undefined;
    if (!used) return sendPage(reply, 401, codeForm(formToken(reply), { next, error: 'That code is not right (or was already used).' }));
    await sessions.end(request.cookies[PENDING_COOKIE]);
    clearCookie(request, reply, PENDING_COOKIE);
    const issued = await sessions.startMember(pending.userId, pending.accountId, agent(request));
    setOwnerCookie(request, reply, issued.id);
    return reply.redirect(next, 303);
  });

  app.post('/logout', async (request, reply) => {
    const id = request.cookies[OWNER_COOKIE];
    const session = await ownerSession(request, sessions);
    // Only our own page knows the session's value: another site cannot log a member out.
    if (session && !validSessionForm(request, session)) return refusedForm(reply);
    await sessions.end(id);
    clearCookie(request, reply, OWNER_COOKIE);
    return reply.redirect('/login', 303);
  });

  app.get('/setup', async (_request, reply) => {
    if (!(await ownerNeedsSetup(meta))) return reply.redirect('/login', 303);
    return sendPage(reply, 200, setupForm(formToken(reply), {}));
  });

  app.post('/setup', { preHandler: formPost(app) }, async (request, reply) => {
    const body = request.body;
    if (!(await ownerNeedsSetup(meta))) return reply.redirect('/login', 303);
    const wait = await attemptsLeft(limiter, [`setup:ip:${request.ip}`], LOGIN_ATTEMPTS, LOGIN_WINDOW_MS);
    if (wait > 0) return tooManyAttempts(reply, wait);
    const email = field(body, 'email').trim();
    const password = field(body, 'password');
    const again = (error: string, status = 400) => sendPage(reply, status, setupForm(formToken(reply), { email, error }));
    const owner = (await ownerAccount(meta))!;
    const principal = await auth.authenticate(`Bearer ${field(body, 'owner_token').trim()}`).catch((err: unknown) => {
      if (err instanceof ApiError) return undefined;
      throw err;
    });
    if (!principal || principal.account.id !== owner.id || !principal.scopes.isFullAccess) {
      return again('That is not a valid full-access API token of the owner account.', 401);
    }
    if (!EMAIL_RE.test(email) || email.length > 255) return again('Enter a valid email address.');
    const problem = passwordProblem(password);
    if (problem) return again(`The password ${problem}.`);
    if (password !== field(body, 'password_again')) return again('The two passwords differ.');
    await meta.updateAccount(owner.id, { email });
    await meta.setPasswordHash(owner.id, await hashPassword(password));
    auth.forgetAccount(owner.id);
    const login = await meta.findLogin(email);
    const issued = await sessions.startMember(login!.userId, owner.id, agent(request));
    setOwnerCookie(request, reply, issued.id);
    return reply.redirect('/sites', 303);
  });
}
