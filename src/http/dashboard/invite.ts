// /invite/{secret}: accepting an invitation. A new person chooses a password (the account is theirs at once); a
// person who already has a login proves it with their password (and second factor, if on). The link works once.

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import { checkSecondFactor } from '../../auth/two-factor.js';
import { passwordProblem } from '../../domain/passwords.js';
import { hashPassword, hashToken, verifyPassword } from '../../domain/secrets.js';
import type { Limiter } from '../../limits/limiter.js';
import type { Invitation, TeamStore, User } from '../../store/team-types.js';
import type { MetaStore } from '../../store/types.js';
import { field, formPost, formToken, setOwnerCookie } from './guard.js';
import { escapeHtml, messagePage, NEW_PASSWORD_FIELDS, renderPage, sendPage } from './html.js';
import { attemptsLeft, LOGIN_ATTEMPTS, LOGIN_WINDOW_MS, tooManyAttempts } from './login.js';

export interface InviteDeps {
  meta: MetaStore;
  team: TeamStore;
  sessions: SessionManager;
  limiter: Limiter;
}

function acceptForm(o: { token: string; secret: string; invitation: Invitation; accountName: string; existing: User | undefined; twoFactor: boolean; error?: string }): string {
  const { invitation: i } = o;
  const fields = o.existing
    ? `<p>You already have a Plumb login as <strong>${escapeHtml(o.existing.email)}</strong>: enter its password to add this account to it.</p>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  ${o.twoFactor ? `<label for="code">Code from your authenticator app (or a recovery code)</label>
  <input id="code" name="code" type="text" inputmode="numeric" autocomplete="one-time-code" required>` : ''}`
    : `<p>Choose a password for your login <strong>${escapeHtml(i.email)}</strong>.</p>
  ${NEW_PASSWORD_FIELDS}`;
  return renderPage({
    title: 'Accept invitation',
    body: `<section class="card narrow">
<h1>Join ${escapeHtml(o.accountName)}</h1>
<p>You are invited as ${i.role === 'admin' ? 'an admin' : `a ${escapeHtml(i.role)}`}${i.siteIds ? ' of some of its sites' : ''}.</p>
${o.error ? `<p class="error" role="alert">${escapeHtml(o.error)}</p>` : ''}
<form method="post" action="/invite/${escapeHtml(o.secret)}" class="stack">
  <input type="hidden" name="csrf" value="${escapeHtml(o.token)}">
  <input type="hidden" name="email" value="${escapeHtml(o.existing?.email ?? i.email)}" autocomplete="username">
  ${fields}
  <button type="submit">Accept and log in</button>
</form>
</section>`,
  });
}

const invalid = (reply: FastifyReply) =>
  sendPage(reply, 404, messagePage('Invitation not valid', 'This invitation link has expired, was already used or was withdrawn. Ask for a new one.'));

export function inviteRoutes(app: FastifyInstance, { meta, team, sessions, limiter }: InviteDeps): void {
  const live = async (secret: string) => {
    if (secret.length > 200) return undefined;
    const invitation = await team.findInvitation(hashToken(secret));
    if (!invitation || invitation.acceptedAt || invitation.expiresAt.getTime() <= Date.now()) return undefined;
    const account = await meta.getAccount(invitation.accountId);
    return account && { invitation, account };
  };

  const form = async (reply: FastifyReply, secret: string, status: number, error?: string) => {
    const found = await live(secret);
    if (!found) return invalid(reply);
    const existing = await team.findUserByEmail(found.invitation.email);
    const secrets = existing && (await team.getUserSecrets(existing.id));
    return sendPage(
      reply,
      status,
      acceptForm({
        token: formToken(reply), secret, invitation: found.invitation, accountName: found.account.name, existing,
        twoFactor: Boolean(secrets?.totpSecret), ...(error ? { error } : {}),
      }),
    );
  };

  app.get<{ Params: { secret: string } }>('/invite/:secret', async (request, reply) => form(reply, request.params.secret, 200));

  app.post<{ Params: { secret: string } }>('/invite/:secret', { preHandler: formPost(app) }, async (request, reply) => {
    const { secret } = request.params;
    const found = await live(secret);
    if (!found) return invalid(reply);
    const { invitation } = found;
    const wait = Math.max(
      await attemptsLeft(limiter, [`invite:ip:${request.ip}`], LOGIN_ATTEMPTS * 3, LOGIN_WINDOW_MS),
      await attemptsLeft(limiter, [`invite:${invitation.id}`], LOGIN_ATTEMPTS, LOGIN_WINDOW_MS),
    );
    if (wait > 0) return tooManyAttempts(reply, wait);
    const password = field(request.body, 'password').slice(0, 4096);
    let user = await team.findUserByEmail(invitation.email);
    if (user) {
      const secrets = await team.getUserSecrets(user.id);
      const ok = secrets?.passwordHash ? await verifyPassword(password, secrets.passwordHash) : false;
      if (!ok) return form(reply, secret, 401, 'Wrong password.');
      if (secrets?.totpSecret && !(await checkSecondFactor(team, user.id, secrets.totpSecret, field(request.body, 'code'), new Date()))) {
        return form(reply, secret, 401, 'That code is not right (or was already used).');
      }
    } else {
      const problem = passwordProblem(password);
      if (problem) return form(reply, secret, 400, `The password ${problem}.`);
      if (password !== field(request.body, 'password_again')) return form(reply, secret, 400, 'The two passwords differ.');
    }
    // Used up here, once, even if two tabs post at the same moment.
    if (!(await team.acceptInvitation(invitation.tokenHash, new Date()))) return invalid(reply);
    user ??= await team.createUser(invitation.email, await hashPassword(password));
    await team.putMembership(invitation.accountId, user.id, invitation.role, invitation.siteIds);
    const issued = await sessions.startMember(user.id, invitation.accountId, request.headers['user-agent']);
    setOwnerCookie(request, reply, issued.id);
    return reply.redirect('/sites', 303);
  });
}
