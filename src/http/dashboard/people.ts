// People in an account, as JSON for the dashboard's script: who am I and where (and switching account), the
// members list, role changes and removal, invitations (emailed when mail is configured, the link always shown to
// the inviter), and the owner's "require two-factor authentication" switch. Session plus anti-CSRF header only.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Member, SessionManager } from '../../auth/sessions.js';
import { badRequest, FieldErrorCollector, notFound } from '../../domain/errors.js';
import { EMAIL_RE } from '../../domain/passwords.js';
import { hashToken } from '../../domain/secrets.js';
import { newTokenSecret } from '../../domain/ids.js';
import { formatTimestamp } from '../../domain/time.js';
import { RateLimited, type Limiter } from '../../limits/limiter.js';
import type { Mailer } from '../../mail/mailer.js';
import { invitationMail } from '../../mail/messages.js';
import { ROLES, type Invitation, type Role, type TeamStore } from '../../store/team-types.js';
import type { MetaStore } from '../../store/types.js';
import { MAX_INTEGER_ID, storedIntegerId } from '../validation.js';
import { memberForApi } from './guard.js';

export interface PeopleDeps {
  meta: MetaStore;
  limiter: Limiter;
  team: TeamStore;
  sessions: SessionManager;
  mailer: Mailer;
  publicUrl: string | undefined;
}

export const INVITATION_DAYS = 7;
/** Invitations an account may send per hour: plenty for a team, too few to turn Plumb into a mail cannon. */
export const INVITATIONS_PER_HOUR = 50;

/** Where links point: PLUMB_PUBLIC_URL, or (for links only shown in the page, never mailed) this request's origin. */
export const linkBase = (request: FastifyRequest, publicUrl: string | undefined) => publicUrl ?? `${request.protocol}://${request.host}`;

const presentInvitation = (i: Invitation) => ({
  id: i.id,
  object: 'invitation',
  email: i.email,
  role: i.role,
  site_ids: i.siteIds,
  created_at: formatTimestamp(i.createdAt),
  expires_at: formatTimestamp(i.expiresAt),
});

const roleBody = {
  type: 'object',
  properties: {
    role: { type: 'string', enum: [...ROLES] },
    site_ids: { anyOf: [{ type: 'null' }, { type: 'array', maxItems: 500, items: { type: 'string', maxLength: 64 } }] },
  },
  required: ['role'],
  additionalProperties: false,
} as const;

const inviteBody = {
  type: 'object',
  properties: { ...roleBody.properties, email: { type: 'string', minLength: 3, maxLength: 255 } },
  required: ['email', 'role'],
  additionalProperties: false,
} as const;

type RoleBody = { role: Role; site_ids?: string[] | null };

export function peopleRoutes(app: FastifyInstance, { meta, team, sessions, limiter, mailer, publicUrl }: PeopleDeps): void {
  const admin = (request: FastifyRequest) => memberForApi(request, sessions, { role: 'admin' });

  /** Owners alone grant or touch ownership; site lists belong to viewers and must name the account's sites. */
  const checkRole = async (me: Member, body: RoleBody, errors: FieldErrorCollector): Promise<string[] | null> => {
    if (body.role === 'owner' && me.membership.role !== 'owner') errors.add('role', 'only an owner can make owners');
    const ids = body.site_ids ?? null;
    if (ids === null) return null;
    if (body.role !== 'viewer') {
      errors.add('site_ids', 'only viewers can be limited to some sites');
      return null;
    }
    const unique = [...new Set(ids)];
    for (const id of unique) {
      const site = await meta.getSite(id);
      if (!site || site.accountId !== me.account.id) errors.add('site_ids', `"${id}" is not a site of this account`);
    }
    if (unique.length === 0) errors.add('site_ids', 'must name at least one site (or be null for every site)');
    return unique;
  };

  app.get('/dashboard/api/me', async (request) => {
    const me = await memberForApi(request, sessions, { beforeTwoFactor: true });
    const memberships = await team.listMemberships(me.user.id);
    return {
      object: 'me',
      user: { id: me.user.id, email: me.user.email, two_factor: me.user.twoFactorEnabled },
      account: {
        id: me.account.id,
        name: me.account.name,
        role: me.membership.role,
        site_ids: me.membership.siteIds,
        require_two_factor: await team.getRequireTwoFactor(me.account.id),
        needs_two_factor: me.needsTwoFactor,
      },
      accounts: memberships.map((m) => ({ id: m.accountId, name: m.account.name, role: m.role })),
      mail_configured: mailer.configured,
    };
  });

  app.post<{ Body: { account_id: number } }>('/dashboard/api/switch', {
    schema: { body: { type: 'object', properties: { account_id: { type: 'integer', minimum: 1, maximum: MAX_INTEGER_ID } }, required: ['account_id'], additionalProperties: false } },
    preValidation: async (request) => {
      await memberForApi(request, sessions, { beforeTwoFactor: true });
    },
    handler: async (request) => {
      const me = await memberForApi(request, sessions, { beforeTwoFactor: true });
      const target = await team.getMembership(request.body.account_id, me.user.id);
      if (!target) throw notFound('You are not a member of that account');
      await team.switchSessionAccount(me.session.idHash, target.accountId);
      return { object: 'switch', account_id: target.accountId, role: target.role };
    },
  });

  app.get('/dashboard/api/members', async (request) => {
    const me = await admin(request);
    const [members, invitations] = await Promise.all([team.listMembers(me.account.id), team.listInvitations(me.account.id, new Date())]);
    return {
      object: 'list',
      data: members.map((m) => ({
        user_id: m.userId,
        object: 'member',
        email: m.user.email,
        role: m.role,
        site_ids: m.siteIds,
        two_factor: m.user.twoFactorEnabled,
        joined_at: formatTimestamp(m.createdAt),
        you: m.userId === me.user.id,
      })),
      invitations: invitations.map(presentInvitation),
      mail_configured: mailer.configured,
    };
  });

  app.post<{ Body: RoleBody & { email: string } }>('/dashboard/api/invitations', {
    schema: { body: inviteBody },
    preValidation: async (request) => {
      await admin(request);
    },
    handler: async (request) => {
      const me = await admin(request);
      const errors = new FieldErrorCollector();
      const email = request.body.email.trim();
      if (!EMAIL_RE.test(email)) errors.add('email', 'is not an email address');
      const siteIds = await checkRole(me, request.body, errors);
      const existing = await team.findUserByEmail(email);
      if (existing && (await team.getMembership(me.account.id, existing.id))) errors.add('email', 'is already a member of this account');
      errors.throwIfAny();
      const allowed = await limiter.attempt(`invitations:${me.account.id}`, 3_600_000, INVITATIONS_PER_HOUR);
      if (!allowed.allowed) {
        const seconds = Math.max(1, Math.ceil(allowed.retryAfterMs / 1000));
        throw new RateLimited(`This account sent ${INVITATIONS_PER_HOUR} invitations in the last hour. Retry in ${seconds} s.`, seconds);
      }
      const secret = newTokenSecret();
      const invitation = await team.createInvitation({
        tokenHash: hashToken(secret),
        accountId: me.account.id,
        email,
        role: request.body.role,
        siteIds,
        invitedBy: me.user.id,
        expiresAt: new Date(Date.now() + INVITATION_DAYS * 86_400_000),
      });
      const link = `${linkBase(request, publicUrl)}/invite/${secret}`;
      let emailed = false;
      let mailError: string | null = null;
      if (mailer.configured && publicUrl) {
        try {
          await mailer.send(invitationMail({ to: email, accountName: me.account.name, inviter: me.user.email, role: invitation.role, link, expiresAt: invitation.expiresAt }));
          emailed = true;
        } catch (err) {
          request.log.warn({ err }, 'invitation mail failed');
          mailError = 'The mail server did not accept the message: give the link to the person yourself.';
        }
      }
      // The link is the invitation: shown to the inviter once, like a token's secret, whether or not it was mailed.
      return { ...presentInvitation(invitation), link, emailed, mail_error: mailError };
    },
  });

  app.delete<{ Params: { id: string } }>('/dashboard/api/invitations/:id', async (request) => {
    const me = await admin(request);
    if (!(await team.deleteInvitation(me.account.id, request.params.id))) throw notFound('Invitation not found or already accepted');
    return { id: request.params.id, object: 'invitation', deleted: true };
  });

  /** The member named in the path, if the caller may change them: admins never touch owners. */
  const target = async (me: Member, userIdText: string) => {
    const userId = storedIntegerId(userIdText);
    const membership = userId === undefined ? undefined : await team.getMembership(me.account.id, userId);
    if (!membership) throw notFound('Member not found');
    if (membership.role === 'owner' && me.membership.role !== 'owner') throw badRequest('Only an owner can change or remove an owner');
    return membership;
  };

  const lastOwner = async (accountId: number, userId: number) => {
    const owners = (await team.listMembers(accountId)).filter((m) => m.role === 'owner');
    return owners.length === 1 && owners[0]!.userId === userId;
  };

  app.post<{ Params: { user_id: string }; Body: RoleBody }>('/dashboard/api/members/:user_id', {
    schema: { body: roleBody },
    preValidation: async (request) => {
      await admin(request);
    },
    handler: async (request) => {
      const me = await admin(request);
      const membership = await target(me, request.params.user_id);
      const errors = new FieldErrorCollector();
      const siteIds = await checkRole(me, request.body, errors);
      errors.throwIfAny();
      if (membership.role === 'owner' && request.body.role !== 'owner' && (await lastOwner(me.account.id, membership.userId))) {
        throw badRequest('The account needs an owner: make someone else owner first');
      }
      const updated = await team.putMembership(me.account.id, membership.userId, request.body.role, siteIds);
      return { user_id: updated.userId, object: 'member', role: updated.role, site_ids: updated.siteIds };
    },
  });

  app.delete<{ Params: { user_id: string } }>('/dashboard/api/members/:user_id', async (request) => {
    const me = await admin(request);
    const membership = await target(me, request.params.user_id);
    if (membership.role === 'owner' && (await lastOwner(me.account.id, membership.userId))) {
      throw badRequest('The account needs an owner: make someone else owner first');
    }
    // Their sessions in this account go with the membership, so every process refuses their next request.
    await team.removeMembership(me.account.id, membership.userId);
    return { user_id: membership.userId, object: 'member', deleted: true };
  });

  app.post<{ Body: { required: boolean } }>('/dashboard/api/account/require-two-factor', {
    schema: { body: { type: 'object', properties: { required: { type: 'boolean' } }, required: ['required'], additionalProperties: false } },
    preValidation: async (request) => {
      await memberForApi(request, sessions, { role: 'owner' });
    },
    handler: async (request) => {
      const me = await memberForApi(request, sessions, { role: 'owner' });
      if (request.body.required && !me.user.twoFactorEnabled) {
        throw badRequest('Turn on two-factor authentication for yourself first');
      }
      await team.setRequireTwoFactor(me.account.id, request.body.required);
      return { object: 'account_security', require_two_factor: request.body.required };
    },
  });
}

