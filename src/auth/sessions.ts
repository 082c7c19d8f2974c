// Dashboard and share-page sessions: issued at login (or share-password entry), kept in the MetaStore as a
// SHA-256 of their id so any process can check them, and turned into a /v1 principal when the page's script
// presents the session cookie together with the session's anti-CSRF value in a header. A login session acts with
// its member's role in the account it is switched to, read from the shared store on every request, so a removed
// member or a changed role takes effect at once on every process.

import { createHash, randomBytes } from 'node:crypto';
import { badRequest, unauthenticated } from '../domain/errors.js';
import { Scopes } from '../domain/scopes.js';
import { constantTimeEqual, hashToken } from '../domain/secrets.js';
import type { Membership, TeamStore, User } from '../store/team-types.js';
import type { Account, DashboardSession, MetaStore, Site, TokenRecord } from '../store/types.js';
import type { Principal } from './token-authenticator.js';

export const OWNER_COOKIE = 'plumb_session';
const SHARE_COOKIE_PREFIX = 'plumb_share_';
export const shareCookieName = (siteId: string) => `${SHARE_COOKIE_PREFIX}${siteId}`;
/** The header the dashboard's script sends with every /v1 call: the session's anti-CSRF value. */
export const CSRF_HEADER = 'x-plumb-csrf';
/**
 * An embedded share page (in another site's iframe) gets no cookies: browsers do not send SameSite=Lax cookies
 * to a framed cross-site page. Its page carries its share session instead and sends it in this header.
 */
export const SHARE_SESSION_HEADER = 'x-plumb-share-session';
/** The name under which a header-borne share session joins the request's session cookies. */
export const EMBEDDED_SHARE_COOKIE = 'plumb_share_embedded';

export const OWNER_SESSION_MS = 14 * 24 * 3_600_000;
export const SHARE_SESSION_MS = 24 * 3_600_000;
/** Between a right password and the second factor. */
export const PENDING_SESSION_MS = 10 * 60_000;

/** A principal from a session rather than an API token. */
export interface SessionPrincipal extends Principal {
  session: DashboardSession;
  /** Login sessions: who, and with which role. */
  member?: Member | undefined;
}

/** A logged-in person in the account their session is switched to. */
export interface Member {
  session: DashboardSession;
  user: User;
  account: Account;
  membership: Membership;
  /** The account requires two-factor authentication and this user has not turned it on: only the account page works. */
  needsTwoFactor: boolean;
}

/** What a role may do through /v1: owners and admins everything, viewers read all sites or their chosen ones. */
export function abilitiesOf(m: Pick<Membership, 'role' | 'siteIds'>): string[] {
  if (m.role !== 'viewer') return ['*'];
  return m.siteIds === null ? ['all-sites-readonly'] : m.siteIds.map((id) => `read:${id}`);
}

const RANK = { viewer: 1, admin: 2, owner: 3 } as const;
/** Whether a role is at least `min` (owner > admin > viewer). */
export const roleAtLeast = (role: Membership['role'], min: Membership['role']) => RANK[role] >= RANK[min];

export interface IssuedSession {
  /** The cookie value (never stored). */
  id: string;
  session: DashboardSession;
}

/** What a share session was granted against: changing the sharing mode or the password ends such sessions. */
export function shareBinding(site: Site): string {
  return createHash('sha256').update(`${site.sharing}\n${site.sharePasswordHash ?? ''}`).digest('hex');
}

const randomValue = () => randomBytes(32).toString('base64url');

export class SessionManager {
  constructor(
    private readonly meta: MetaStore,
    private readonly team: TeamStore,
    private readonly now: () => Date = () => new Date(),
  ) {}

  /** A login session of `userId`, acting in `accountId`. */
  async startMember(userId: number, accountId: number, userAgent?: string): Promise<IssuedSession> {
    return this.issue({ kind: 'owner', accountId, siteId: null, binding: null, userId, userAgent: shortAgent(userAgent) }, OWNER_SESSION_MS);
  }

  /** The password was right; the second factor is still to come. */
  async startPending(userId: number, accountId: number, userAgent?: string): Promise<IssuedSession> {
    return this.issue({ kind: 'pending', accountId, siteId: null, binding: null, userId, userAgent: shortAgent(userAgent) }, PENDING_SESSION_MS);
  }

  /** The member a login session stands for, or undefined when it is not one or the membership is gone. */
  async member(session: DashboardSession | undefined): Promise<Member | undefined> {
    if (!session || session.kind !== 'owner' || session.userId === null) return undefined;
    const [membership, user, account] = await Promise.all([
      this.team.getMembership(session.accountId, session.userId),
      this.team.getUser(session.userId),
      this.meta.getAccount(session.accountId),
    ]);
    if (!membership || !user || !account) return undefined;
    const needsTwoFactor = !user.twoFactorEnabled && (await this.team.getRequireTwoFactor(account.id));
    return { session, user, account, membership, needsTwoFactor };
  }

  async startShare(site: Site): Promise<IssuedSession> {
    return this.issue({ kind: 'share', accountId: site.accountId, siteId: site.id, binding: shareBinding(site) }, SHARE_SESSION_MS);
  }

  /** The live session a cookie value names, or undefined (unknown, expired, or a share grant gone stale). */
  async find(id: string | undefined): Promise<DashboardSession | undefined> {
    if (!id || id.length > 100) return undefined;
    const session = await this.meta.findSession(hashToken(id));
    if (!session || session.expiresAt.getTime() <= this.now().getTime()) return undefined;
    if (session.kind === 'share') {
      const site = session.siteId ? await this.meta.getSite(session.siteId) : undefined;
      if (!site || site.sharing === 'none' || session.binding !== shareBinding(site)) return undefined;
    }
    return session;
  }

  async end(id: string | undefined): Promise<void> {
    if (id) await this.meta.deleteSession(hashToken(id));
  }

  /** Whether a request carries any Plumb session cookie (then it authenticates by session, not token). */
  hasSessionCookie(cookies: ReadonlyMap<string, string>): boolean {
    for (const name of cookies.keys()) if (name === OWNER_COOKIE || name.startsWith(SHARE_COOKIE_PREFIX)) return true;
    return false;
  }

  /**
   * The principal of the session whose anti-CSRF value the header carries. Without the header (a cross-site
   * request the browser sent cookies with), or with one no presented session matches: 401, as with no token.
   */
  async principal(cookies: ReadonlyMap<string, string>, csrf: string | undefined): Promise<SessionPrincipal> {
    if (!csrf) throw unauthenticated(`Missing ${CSRF_HEADER} header: dashboard sessions must send it with every request`);
    const candidates = [...cookies]
      .filter(([name]) => name === OWNER_COOKIE || name.startsWith(SHARE_COOKIE_PREFIX))
      .sort(([a], [b]) => (a === OWNER_COOKIE ? -1 : b === OWNER_COOKIE ? 1 : 0))
      .slice(0, 8);
    for (const [, id] of candidates) {
      const session = await this.find(id);
      if (!session || session.kind === 'pending' || !constantTimeEqual(session.csrf, csrf)) continue;
      if (session.kind === 'owner') {
        const member = await this.member(session);
        if (!member) break;
        if (member.needsTwoFactor) {
          throw badRequest('This account requires two-factor authentication: turn it on on your account page (/account) first');
        }
        const abilities = abilitiesOf(member.membership);
        const { account } = member;
        return { session, member, account, scopes: new Scopes(abilities), token: this.pseudoToken(session, account, abilities) };
      }
      const account = await this.meta.getAccount(session.accountId);
      if (!account) break;
      const abilities = [`read:${session.siteId}`];
      return { session, account, scopes: new Scopes(abilities), token: this.pseudoToken(session, account, abilities) };
    }
    throw unauthenticated('The dashboard session has ended or does not match: log in again');
  }

  private async issue(
    fields: Pick<DashboardSession, 'kind' | 'accountId' | 'siteId' | 'binding'> & Partial<Pick<DashboardSession, 'userId' | 'userAgent'>>,
    ttlMs: number,
  ): Promise<IssuedSession> {
    const now = this.now();
    // Expired sessions are swept as new ones start: no timer, and the table stays as small as the live set.
    await this.meta.deleteExpiredSessions(now);
    const id = randomValue();
    const session = await this.meta.createSession({
      ...fields,
      idHash: hashToken(id),
      csrf: randomValue(),
      expiresAt: new Date(now.getTime() + ttlMs),
    });
    return { id, session };
  }

  /** GET /v1/token answers for a session with what the session may do (it has no stored token). */
  private pseudoToken(session: DashboardSession, account: Account, abilities: string[]): TokenRecord {
    return {
      id: `session:${session.idHash.slice(0, 16)}`,
      accountId: account.id,
      name: session.kind === 'owner' ? 'Dashboard session' : `Share page of ${session.siteId}`,
      version: 1,
      abilities,
      hash: session.idHash,
      lastUsedAt: this.now(),
      expiresAt: session.expiresAt,
      revokedAt: null,
      createdAt: session.createdAt,
      updatedAt: session.createdAt,
    };
  }
}

/** Enough of a User-Agent to tell sessions apart in a list, never the whole header. */
function shortAgent(agent: string | undefined): string | null {
  if (!agent) return null;
  return agent.replace(/[^\x20-\x7e]/g, '').slice(0, 200) || null;
}
