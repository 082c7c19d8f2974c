// The account page's JSON routes: change the password (needs the current one; ends the other sessions), change
// the email (confirmed by a link sent to the new address), list and end sessions, and two-factor authentication
// (TOTP setup confirmed by a code, recovery codes shown once, turning it off). Password checks are rate limited as
// logins are.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import UAParser from 'ua-parser-js';
import type { Member, SessionManager } from '../../auth/sessions.js';
import { newRecoveryCodes, newTotpSecret, otpauthUri, recoveryCodeHash, totpStep } from '../../auth/two-factor.js';
import { badRequest, GeneralError, notFound, ValidationError } from '../../domain/errors.js';
import { newTokenSecret } from '../../domain/ids.js';
import { EMAIL_RE, passwordProblem } from '../../domain/passwords.js';
import { hashPassword, hashToken, verifyPassword } from '../../domain/secrets.js';
import { formatTimestamp } from '../../domain/time.js';
import type { Limiter } from '../../limits/limiter.js';
import type { Mailer } from '../../mail/mailer.js';
import { emailChangeMail, emailTakenMail } from '../../mail/messages.js';
import { RateLimited } from '../../limits/limiter.js';
import type { TeamStore } from '../../store/team-types.js';
import { memberForApi } from './guard.js';
import { LOGIN_ATTEMPTS, LOGIN_WINDOW_MS } from './login.js';

export interface AccountDeps {
  team: TeamStore;
  sessions: SessionManager;
  limiter: Limiter;
  mailer: Mailer;
  publicUrl: string | undefined;
}

export const EMAIL_LINK_HOURS = 24;

const body = (properties: Record<string, object>, required: string[]) =>
  ({ type: 'object', properties, required, additionalProperties: false }) as const;
const text = { type: 'string', maxLength: 4096 } as const;

/** A session's browser and system in words ("Firefox 133 on Ubuntu"), from the user agent it logged in with. */
export function deviceName(userAgent: string | null | undefined): string {
  if (!userAgent) return 'Unknown browser';
  const { browser, os } = new UAParser(userAgent).getResult();
  const name = browser.name ? `${browser.name}${browser.major ? ` ${browser.major}` : ''}` : 'Unknown browser';
  return os.name ? `${name} on ${os.name}${os.version && !/^\d{4,}/.test(os.version) ? ` ${os.version}` : ''}` : name;
}

export function accountRoutes(app: FastifyInstance, { team, sessions, limiter, mailer, publicUrl }: AccountDeps): void {
  // The account page works before two-factor authentication is set up, when the account requires it.
  const me = (request: FastifyRequest) => memberForApi(request, sessions, { beforeTwoFactor: true });
  const authed = { preValidation: async (request: FastifyRequest) => void (await me(request)) };

  /** The current password, checked with the login's rate limit (per person): 400 under the field when wrong. */
  const checkPassword = async (m: Member, password: string, fieldName = 'current_password') => {
    const decision = await limiter.attempt(`login:user:${m.user.id}`, LOGIN_WINDOW_MS, LOGIN_ATTEMPTS);
    if (!decision.allowed) {
      const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
      throw new RateLimited(`Too many attempts. Retry in ${seconds} s.`, seconds);
    }
    const secrets = await team.getUserSecrets(m.user.id);
    if (!secrets?.passwordHash || !(await verifyPassword(password.slice(0, 4096), secrets.passwordHash))) {
      throw ValidationError.of(fieldName, 'is not your current password');
    }
    return secrets;
  };

  app.post<{ Body: { current_password: string; new_password: string } }>('/dashboard/api/account/password', {
    schema: { body: body({ current_password: text, new_password: text }, ['current_password', 'new_password']) },
    ...authed,
    handler: async (request) => {
      const m = await me(request);
      await checkPassword(m, request.body.current_password);
      const problem = passwordProblem(request.body.new_password);
      if (problem) throw ValidationError.of('new_password', problem);
      await team.setUserPassword(m.user.id, await hashPassword(request.body.new_password));
      // Whoever else was logged in as this person (a stolen session, a forgotten laptop) is out now.
      const ended = await team.deleteUserSessions(m.user.id, m.session.idHash);
      return { object: 'password', changed: true, sessions_ended: ended };
    },
  });

  app.post<{ Body: { email: string; current_password: string } }>('/dashboard/api/account/email', {
    schema: { body: body({ email: { type: 'string', maxLength: 255 }, current_password: text }, ['email', 'current_password']) },
    ...authed,
    handler: async (request) => {
      const m = await me(request);
      if (!mailer.configured || !publicUrl) throw badRequest('Changing the email needs outgoing mail, which this server has not configured (PLUMB_SMTP_URL)');
      const email = request.body.email.trim();
      if (!EMAIL_RE.test(email)) throw ValidationError.of('email', 'is not an email address');
      await checkPassword(m, request.body.current_password);
      const taken = await team.findUserByEmail(email);
      // An address with another login is answered as a free one, or any member (a viewer too) could learn who has a
      // login here; the mail to it says so instead of carrying a link, and nothing changes.
      let mail;
      if (taken && taken.id !== m.user.id) {
        mail = emailTakenMail({ to: email, publicUrl });
      } else {
        const secret = newTokenSecret();
        await team.createLink({ tokenHash: hashToken(secret), purpose: 'email', userId: m.user.id, email, expiresAt: new Date(Date.now() + EMAIL_LINK_HOURS * 3_600_000) });
        mail = emailChangeMail({ to: email, link: `${publicUrl}/confirm-email/${secret}`, hours: EMAIL_LINK_HOURS });
      }
      try {
        await mailer.send(mail);
      } catch (err) {
        request.log.warn({ err }, 'email confirmation mail failed');
        throw new GeneralError(502, 'The mail server did not accept the message: try again later');
      }
      return { object: 'email_change', email, sent: true };
    },
  });

  app.get('/dashboard/api/account/sessions', async (request) => {
    const m = await me(request);
    const list = await team.listUserSessions(m.user.id, new Date());
    return {
      object: 'list',
      data: list.map((s) => ({
        id: s.idHash.slice(0, 32),
        object: 'session',
        created_at: formatTimestamp(s.createdAt),
        expires_at: formatTimestamp(s.expiresAt),
        browser: s.userAgent,
        device: deviceName(s.userAgent),
        current: s.idHash === m.session.idHash,
      })),
    };
  });

  app.delete<{ Params: { id: string } }>('/dashboard/api/account/sessions/:id', async (request) => {
    const m = await me(request);
    const id = request.params.id;
    const match = /^[0-9a-f]{32}$/.test(id) ? (await team.listUserSessions(m.user.id, new Date())).find((s) => s.idHash.startsWith(id)) : undefined;
    if (!match || !(await team.deleteUserSession(m.user.id, match.idHash))) throw notFound('Session not found');
    return { id, object: 'session', deleted: true };
  });

  app.get('/dashboard/api/account/two-factor', async (request) => {
    const m = await me(request);
    return { object: 'two_factor', enabled: m.user.twoFactorEnabled, recovery_codes_left: await team.unusedRecoveryCodes(m.user.id) };
  });

  app.post<{ Body: { current_password: string } }>('/dashboard/api/account/two-factor/setup', {
    schema: { body: body({ current_password: text }, ['current_password']) },
    ...authed,
    handler: async (request) => {
      const m = await me(request);
      if (m.user.twoFactorEnabled) throw badRequest('Two-factor authentication is already on: turn it off first to use another app');
      await checkPassword(m, request.body.current_password);
      const secret = newTotpSecret();
      await team.setTotpPending(m.user.id, secret);
      // Shown so the person can add it to their app; it becomes live only once a code from that app is given.
      return { object: 'two_factor_setup', secret, otpauth_uri: otpauthUri(secret, m.user.email) };
    },
  });

  app.post<{ Body: { code: string } }>('/dashboard/api/account/two-factor/enable', {
    schema: { body: body({ code: { type: 'string', maxLength: 64 } }, ['code']) },
    ...authed,
    handler: async (request) => {
      const m = await me(request);
      const decision = await limiter.attempt(`login:code:${m.user.id}`, LOGIN_WINDOW_MS, LOGIN_ATTEMPTS);
      if (!decision.allowed) throw new RateLimited('Too many attempts', Math.max(1, Math.ceil(decision.retryAfterMs / 1000)));
      const secrets = await team.getUserSecrets(m.user.id);
      if (!secrets?.totpPendingSecret) throw badRequest('Start the setup first');
      const step = totpStep(secrets.totpPendingSecret, request.body.code, new Date());
      if (step === undefined) throw ValidationError.of('code', 'is not the current code of your authenticator app');
      await team.enableTotp(m.user.id);
      await team.useTotpStep(m.user.id, step);
      const codes = newRecoveryCodes();
      await team.replaceRecoveryCodes(m.user.id, codes.map(recoveryCodeHash));
      return { object: 'two_factor', enabled: true, recovery_codes: codes };
    },
  });

  app.post<{ Body: { current_password: string } }>('/dashboard/api/account/two-factor/recovery-codes', {
    schema: { body: body({ current_password: text }, ['current_password']) },
    ...authed,
    handler: async (request) => {
      const m = await me(request);
      if (!m.user.twoFactorEnabled) throw badRequest('Two-factor authentication is off');
      await checkPassword(m, request.body.current_password);
      const codes = newRecoveryCodes();
      await team.replaceRecoveryCodes(m.user.id, codes.map(recoveryCodeHash));
      return { object: 'recovery_codes', recovery_codes: codes };
    },
  });

  app.post<{ Body: { current_password: string } }>('/dashboard/api/account/two-factor/disable', {
    schema: { body: body({ current_password: text }, ['current_password']) },
    ...authed,
    handler: async (request) => {
      const m = await me(request);
      await checkPassword(m, request.body.current_password);
      for (const membership of await team.listMemberships(m.user.id)) {
        if (await team.getRequireTwoFactor(membership.accountId)) {
          throw badRequest(`The account "${membership.account.name}" requires two-factor authentication`);
        }
      }
      await team.disableTotp(m.user.id);
      return { object: 'two_factor', enabled: false };
    },
  });
}
