// Forgotten passwords and email confirmation, as server-rendered pages: /forgot sends a single-use, expiring reset
// link (the answer is the same whether or not the address has a login, and it is rate limited), /reset/{secret}
// sets the new password and ends every session, /confirm-email/{secret} makes a requested address the login's.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { newTokenSecret } from '../../domain/ids.js';
import { EMAIL_RE, passwordProblem } from '../../domain/passwords.js';
import { hashPassword, hashToken } from '../../domain/secrets.js';
import type { Limiter } from '../../limits/limiter.js';
import type { Mailer } from '../../mail/mailer.js';
import { resetMail } from '../../mail/messages.js';
import type { TeamStore } from '../../store/team-types.js';
import { field, formPost, formToken } from './guard.js';
import { escapeHtml, messagePage, NEW_PASSWORD_FIELDS, renderPage, sendPage } from './html.js';
import { attemptsLeft, digest, LOGIN_ATTEMPTS_PER_ADDRESS, LOGIN_WINDOW_MS, tooManyAttempts } from './login.js';

export interface RecoveryDeps {
  team: TeamStore;
  limiter: Limiter;
  mailer: Mailer;
  publicUrl: string | undefined;
}

export const RESET_MINUTES = 60;
/** Reset requests per address in the login window: enough to retry, too few to flood someone's mailbox. */
export const RESET_REQUESTS_PER_EMAIL = 3;

function forgotForm(token: string, o: { sent?: boolean; error?: string; mail: boolean }): string {
  const body = !o.mail
    ? '<p>This server cannot send email (no PLUMB_SMTP_URL), so passwords cannot be reset by email here. Ask the person who runs it: <code>plumb account password ID</code> sets a new one.</p>'
    : o.sent
      ? '<p role="status">If that address has a Plumb login, a link to choose a new password is on its way. It works once, for an hour.</p>'
      : `${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
<form method="post" action="/forgot" class="stack">
  <input type="hidden" name="csrf" value="${escapeHtml(token)}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required>
  <button type="submit">Send a reset link</button>
</form>`;
  return renderPage({
    title: 'Forgot your password?',
    body: `<section class="card narrow">\n<h1>Forgot your password?</h1>\n${body}\n<p><a href="/login">Back to log in</a></p>\n</section>`,
  });
}

function resetForm(token: string, secret: string, error?: string): string {
  return renderPage({
    title: 'Choose a new password',
    body: `<section class="card narrow">
<h1>Choose a new password</h1>
${error ? `<p class="error" role="alert">${escapeHtml(error)}</p>` : ''}
<form method="post" action="/reset/${escapeHtml(secret)}" class="stack">
  <input type="hidden" name="csrf" value="${escapeHtml(token)}">
  ${NEW_PASSWORD_FIELDS}
  <button type="submit">Save the new password</button>
</form>
</section>`,
  });
}

const deadLink = (reply: FastifyReply) =>
  sendPage(reply, 404, messagePage('Link not valid', 'This link has expired or was already used. Ask for a new one.'));

export function recoveryRoutes(app: FastifyInstance, { team, limiter, mailer, publicUrl }: RecoveryDeps): void {
  const canMail = mailer.configured && publicUrl !== undefined;

  app.get('/forgot', async (_request, reply) => sendPage(reply, 200, forgotForm(formToken(reply), { mail: canMail })));

  app.post('/forgot', { preHandler: formPost(app) }, async (request: FastifyRequest, reply) => {
    if (!canMail) return sendPage(reply, 200, forgotForm('', { mail: false }));
    const email = field(request.body, 'email').trim().slice(0, 255);
    if (!EMAIL_RE.test(email)) return sendPage(reply, 400, forgotForm(formToken(reply), { mail: true, error: 'Enter a valid email address.' }));
    const wait = Math.max(
      await attemptsLeft(limiter, [`reset:ip:${request.ip}`], LOGIN_ATTEMPTS_PER_ADDRESS, LOGIN_WINDOW_MS),
      await attemptsLeft(limiter, [`reset:email:${digest(email.toLowerCase())}`], RESET_REQUESTS_PER_EMAIL, LOGIN_WINDOW_MS),
    );
    if (wait > 0) return tooManyAttempts(reply, wait);
    const user = await team.findUserByEmail(email);
    if (user) {
      const secret = newTokenSecret();
      await team.createLink({ tokenHash: hashToken(secret), purpose: 'reset', userId: user.id, email: null, expiresAt: new Date(Date.now() + RESET_MINUTES * 60_000) });
      // Sent without waiting: an answer that took longer for known addresses would tell which ones exist.
      void mailer.send(resetMail({ to: user.email, link: `${publicUrl}/reset/${secret}`, minutes: RESET_MINUTES })).catch((err: unknown) => {
        request.log.warn({ err }, 'password reset mail failed');
      });
    }
    return sendPage(reply, 200, forgotForm('', { mail: true, sent: true }));
  });

  app.get<{ Params: { secret: string } }>('/reset/:secret', async (request, reply) => {
    const link = await team.findLink(hashToken(request.params.secret.slice(0, 200)), 'reset', new Date());
    if (!link) return deadLink(reply);
    return sendPage(reply, 200, resetForm(formToken(reply), request.params.secret));
  });

  app.post<{ Params: { secret: string } }>('/reset/:secret', { preHandler: formPost(app) }, async (request, reply) => {
    const { secret } = request.params;
    const hash = hashToken(secret.slice(0, 200));
    if (!(await team.findLink(hash, 'reset', new Date()))) return deadLink(reply);
    const password = field(request.body, 'password');
    const problem = passwordProblem(password);
    if (problem) return sendPage(reply, 400, resetForm(formToken(reply), secret, `The password ${problem}.`));
    if (password !== field(request.body, 'password_again')) return sendPage(reply, 400, resetForm(formToken(reply), secret, 'The two passwords differ.'));
    const link = await team.consumeLink(hash, 'reset', new Date());
    if (!link) return deadLink(reply);
    await team.setUserPassword(link.userId, await hashPassword(password));
    // Whoever knew the old password is out everywhere; the person logs in anew (with their second factor, if on).
    await team.deleteUserSessions(link.userId);
    return sendPage(reply, 200, messagePage('Password changed', 'Your new password is saved and every session of this login has ended. Log in again at /login.'));
  });

  // A page with a button, not a GET that acts: mail scanners open links in messages before people do.
  app.get<{ Params: { secret: string } }>('/confirm-email/:secret', async (request, reply) => {
    const { secret } = request.params;
    const link = await team.findLink(hashToken(secret.slice(0, 200)), 'email', new Date());
    if (!link?.email) return deadLink(reply);
    return sendPage(
      reply,
      200,
      renderPage({
        title: 'Confirm your new email',
        body: `<section class="card narrow">
<h1>Confirm your new email</h1>
<p>Use <strong>${escapeHtml(link.email)}</strong> to log in to Plumb from now on?</p>
<form method="post" action="/confirm-email/${escapeHtml(secret)}" class="stack">
  <input type="hidden" name="csrf" value="${escapeHtml(formToken(reply))}">
  <button type="submit">Confirm</button>
</form>
</section>`,
      }),
    );
  });

  app.post<{ Params: { secret: string } }>('/confirm-email/:secret', { preHandler: formPost(app) }, async (request, reply) => {
    const link = await team.consumeLink(hashToken(request.params.secret.slice(0, 200)), 'email', new Date());
    if (!link?.email) return deadLink(reply);
    if (!(await team.setUserEmail(link.userId, link.email))) {
      return sendPage(reply, 409, messagePage('Address taken', 'Another login took this address in the meantime.'));
    }
    return sendPage(reply, 200, messagePage('Email changed', `Your login is now ${link.email}.`));
  });
}
