// TeamStore in SQL, for the embedded DuckDB file and for PostgreSQL alike: users, memberships, invitations,
// one-time links, two-factor state, login sessions per user, report subscriptions and their delivery leases.

import { newUuid } from '../domain/ids.js';
import type { SqlDatabase, SqlParam } from './sql-database.js';
import { toAccount, toSession } from './sql-rows.js';
import type {
  AccountMembership, Frequency, Invitation, LinkPurpose, Member, Membership, NewInvitation, OneTimeLink,
  ReportSubscription, Role, TeamStore, User, UserSecrets,
} from './team-types.js';
import type { DashboardSession } from './types.js';

type Row = Record<string, unknown>;

/** The key emails are unique under: addresses are compared case-insensitively. */
export const emailKey = (email: string) => email.trim().toLowerCase();

const siteIdsOf = (v: unknown): string[] | null => (typeof v === 'string' ? (JSON.parse(v) as string[]) : null);
const siteIdsText = (ids: string[] | null): string | null => (ids === null ? null : JSON.stringify(ids));

const toUser = (r: Row, prefix = ''): User => ({
  id: Number(r[`${prefix}id`]),
  email: r[`${prefix}email`] as string,
  twoFactorEnabled: r[`${prefix}totp_secret`] !== null && r[`${prefix}totp_secret`] !== undefined,
  createdAt: r[`${prefix}created_at`] as Date,
  updatedAt: r[`${prefix}updated_at`] as Date,
});

const toMembership = (r: Row): Membership => ({
  accountId: Number(r.account_id),
  userId: Number(r.user_id),
  role: r.role as Role,
  siteIds: siteIdsOf(r.site_ids),
  createdAt: r.created_at as Date,
});

const toInvitation = (r: Row): Invitation => ({
  id: r.id as string,
  tokenHash: r.token_hash as string,
  accountId: Number(r.account_id),
  email: r.email as string,
  role: r.role as Role,
  siteIds: siteIdsOf(r.site_ids),
  invitedBy: Number(r.invited_by),
  createdAt: r.created_at as Date,
  expiresAt: r.expires_at as Date,
  acceptedAt: (r.accepted_at as Date | null) ?? null,
});

const toSubscription = (r: Row): ReportSubscription => ({
  id: r.id as string,
  userId: Number(r.user_id),
  accountId: Number(r.account_id),
  siteId: r.site_id as string,
  frequency: r.frequency as Frequency,
  createdAt: r.created_at as Date,
});

const toLink = (row: Row): OneTimeLink => ({
  tokenHash: row.token_hash as string,
  purpose: row.purpose as LinkPurpose,
  userId: Number(row.user_id),
  email: (row.email as string | null) ?? null,
  expiresAt: row.expires_at as Date,
});

const MEMBER_COLUMNS = 'm.*, u.id AS u_id, u.email AS u_email, u.totp_secret AS u_totp_secret, u.created_at AS u_created_at, u.updated_at AS u_updated_at';

export class SqlTeamStore implements TeamStore {
  constructor(private readonly db: SqlDatabase) {}

  private async rows(sql: string, params: SqlParam[] = []): Promise<Row[]> {
    return this.db.serial((q) => q.rows(sql, params));
  }

  // ---- users

  async createUser(email: string, passwordHash: string | null): Promise<User> {
    const now = new Date();
    const [row] = await this.rows(
      `INSERT INTO users (email, email_key, password_hash, created_at, updated_at) VALUES (?, ?, ?, ?, ?) RETURNING *`,
      [email.trim(), emailKey(email), passwordHash, now, now],
    );
    return toUser(row!);
  }

  async getUser(id: number): Promise<User | undefined> {
    const [row] = await this.rows('SELECT * FROM users WHERE id = ?', [id]);
    return row && toUser(row);
  }

  async findUserByEmail(email: string): Promise<User | undefined> {
    const [row] = await this.rows('SELECT * FROM users WHERE email_key = ?', [emailKey(email)]);
    return row && toUser(row);
  }

  async getUserSecrets(id: number): Promise<UserSecrets | undefined> {
    const [row] = await this.rows('SELECT password_hash, totp_secret, totp_pending_secret FROM users WHERE id = ?', [id]);
    if (!row) return undefined;
    return {
      passwordHash: (row.password_hash as string | null) ?? null,
      totpSecret: (row.totp_secret as string | null) ?? null,
      totpPendingSecret: (row.totp_pending_secret as string | null) ?? null,
    };
  }

  async setUserPassword(userId: number, hash: string): Promise<void> {
    await this.rows('UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ? RETURNING id', [hash, new Date(), userId]);
  }

  async setUserEmail(userId: number, email: string): Promise<boolean> {
    return this.db.transaction(async (q) => {
      const taken = await q.rows('SELECT id FROM users WHERE email_key = ? AND id <> ?', [emailKey(email), userId]);
      if (taken.length > 0) return false;
      await q.exec('UPDATE users SET email = ?, email_key = ?, updated_at = ? WHERE id = ?', [email.trim(), emailKey(email), new Date(), userId]);
      return true;
    });
  }

  async setTotpPending(userId: number, secret: string | null): Promise<void> {
    await this.rows('UPDATE users SET totp_pending_secret = ? WHERE id = ? RETURNING id', [secret, userId]);
  }

  async enableTotp(userId: number): Promise<boolean> {
    const rows = await this.rows(
      `UPDATE users SET totp_secret = totp_pending_secret, totp_pending_secret = NULL, totp_last_step = NULL, updated_at = ?
       WHERE id = ? AND totp_pending_secret IS NOT NULL RETURNING id`,
      [new Date(), userId],
    );
    return rows.length > 0;
  }

  async disableTotp(userId: number): Promise<void> {
    await this.db.transaction(async (q) => {
      await q.exec('UPDATE users SET totp_secret = NULL, totp_pending_secret = NULL, totp_last_step = NULL, updated_at = ? WHERE id = ?', [new Date(), userId]);
      await q.exec('DELETE FROM recovery_codes WHERE user_id = ?', [userId]);
    });
  }

  async useTotpStep(userId: number, step: number): Promise<boolean> {
    const rows = await this.rows(
      'UPDATE users SET totp_last_step = ? WHERE id = ? AND (totp_last_step IS NULL OR totp_last_step < ?) RETURNING id',
      [step, userId, step],
    );
    return rows.length > 0;
  }

  async replaceRecoveryCodes(userId: number, hashes: readonly string[]): Promise<void> {
    await this.db.transaction(async (q) => {
      await q.exec('DELETE FROM recovery_codes WHERE user_id = ?', [userId]);
      for (const hash of hashes) await q.exec('INSERT INTO recovery_codes (user_id, code_hash, used_at) VALUES (?, ?, NULL)', [userId, hash]);
    });
  }

  async useRecoveryCode(userId: number, hash: string): Promise<boolean> {
    const rows = await this.rows(
      'UPDATE recovery_codes SET used_at = ? WHERE user_id = ? AND code_hash = ? AND used_at IS NULL RETURNING user_id',
      [new Date(), userId, hash],
    );
    return rows.length > 0;
  }

  async unusedRecoveryCodes(userId: number): Promise<number> {
    const [row] = await this.rows('SELECT count(*) AS n FROM recovery_codes WHERE user_id = ? AND used_at IS NULL', [userId]);
    return Number(row?.n ?? 0);
  }

  // ---- memberships

  async getMembership(accountId: number, userId: number): Promise<Membership | undefined> {
    const [row] = await this.rows('SELECT * FROM memberships WHERE account_id = ? AND user_id = ?', [accountId, userId]);
    return row && toMembership(row);
  }

  async listMemberships(userId: number): Promise<AccountMembership[]> {
    const rows = await this.rows(
      `SELECT a.*, m.role AS m_role, m.site_ids AS m_site_ids, m.created_at AS m_created_at
       FROM memberships m JOIN accounts a ON a.id = m.account_id WHERE m.user_id = ? ORDER BY a.id`,
      [userId],
    );
    return rows.map((r) => ({
      accountId: Number(r.id),
      userId,
      role: r.m_role as Role,
      siteIds: siteIdsOf(r.m_site_ids),
      createdAt: r.m_created_at as Date,
      account: toAccount(r),
    }));
  }

  async listMembers(accountId: number): Promise<Member[]> {
    const rows = await this.rows(
      `SELECT ${MEMBER_COLUMNS} FROM memberships m JOIN users u ON u.id = m.user_id WHERE m.account_id = ?
       ORDER BY CASE m.role WHEN 'owner' THEN 0 WHEN 'admin' THEN 1 ELSE 2 END, m.created_at, u.id`,
      [accountId],
    );
    return rows.map((r) => ({ ...toMembership(r), user: toUser(r, 'u_') }));
  }

  async putMembership(accountId: number, userId: number, role: Role, siteIds: string[] | null): Promise<Membership> {
    const [row] = await this.rows(
      `INSERT INTO memberships (account_id, user_id, role, site_ids, created_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (account_id, user_id) DO UPDATE SET role = excluded.role, site_ids = excluded.site_ids RETURNING *`,
      [accountId, userId, role, siteIdsText(siteIds), new Date()],
    );
    return toMembership(row!);
  }

  async removeMembership(accountId: number, userId: number): Promise<boolean> {
    return this.db.transaction(async (q) => {
      const removed = await q.rows('DELETE FROM memberships WHERE account_id = ? AND user_id = ? RETURNING user_id', [accountId, userId]);
      // Their sessions in this account end with the membership: the next request of any process finds none.
      await q.exec("DELETE FROM dashboard_sessions WHERE account_id = ? AND user_id = ? AND kind <> 'share'", [accountId, userId]);
      const subscriptions = await q.rows<{ id: string }>('SELECT id FROM report_subscriptions WHERE account_id = ? AND user_id = ?', [accountId, userId]);
      for (const s of subscriptions) await q.exec('DELETE FROM report_deliveries WHERE subscription_id = ?', [s.id]);
      await q.exec('DELETE FROM report_subscriptions WHERE account_id = ? AND user_id = ?', [accountId, userId]);
      // Their personal segments of the account's sites go too (no one else may see or delete them); the ones they
      // shared are the account's and stay, for its owners and admins to keep or delete.
      await q.exec('DELETE FROM segments WHERE user_id = ? AND NOT shared AND site_id IN (SELECT id FROM sites WHERE account_id = ?)', [userId, accountId]);
      return removed.length > 0;
    });
  }

  async getRequireTwoFactor(accountId: number): Promise<boolean> {
    const [row] = await this.rows('SELECT require_two_factor FROM account_security WHERE account_id = ?', [accountId]);
    return Boolean(row?.require_two_factor);
  }

  async setRequireTwoFactor(accountId: number, required: boolean): Promise<void> {
    await this.rows(
      `INSERT INTO account_security (account_id, require_two_factor, updated_at) VALUES (?, ?, ?)
       ON CONFLICT (account_id) DO UPDATE SET require_two_factor = excluded.require_two_factor, updated_at = excluded.updated_at
       RETURNING account_id`,
      [accountId, required, new Date()],
    );
  }

  // ---- invitations

  async createInvitation(input: NewInvitation): Promise<Invitation> {
    const [row] = await this.rows(
      `INSERT INTO invitations (id, token_hash, account_id, email, role, site_ids, invited_by, created_at, expires_at, accepted_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, NULL) RETURNING *`,
      [newUuid(), input.tokenHash, input.accountId, input.email.trim(), input.role, siteIdsText(input.siteIds), input.invitedBy, new Date(), input.expiresAt],
    );
    return toInvitation(row!);
  }

  async findInvitation(tokenHash: string): Promise<Invitation | undefined> {
    const [row] = await this.rows('SELECT * FROM invitations WHERE token_hash = ?', [tokenHash]);
    return row && toInvitation(row);
  }

  async listInvitations(accountId: number, now: Date): Promise<Invitation[]> {
    const rows = await this.rows(
      'SELECT * FROM invitations WHERE account_id = ? AND accepted_at IS NULL AND expires_at > ? ORDER BY created_at, id',
      [accountId, now],
    );
    return rows.map(toInvitation);
  }

  async deleteInvitation(accountId: number, id: string): Promise<boolean> {
    const rows = await this.rows('DELETE FROM invitations WHERE account_id = ? AND id = ? AND accepted_at IS NULL RETURNING id', [accountId, id]);
    return rows.length > 0;
  }

  async acceptInvitation(tokenHash: string, now: Date): Promise<boolean> {
    const rows = await this.rows(
      'UPDATE invitations SET accepted_at = ? WHERE token_hash = ? AND accepted_at IS NULL AND expires_at > ? RETURNING id',
      [now, tokenHash, now],
    );
    return rows.length > 0;
  }

  // ---- one-time links

  async createLink(link: OneTimeLink): Promise<void> {
    await this.rows(
      `INSERT INTO login_links (token_hash, purpose, user_id, email, created_at, expires_at, used_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL) RETURNING token_hash`,
      [link.tokenHash, link.purpose, link.userId, link.email, new Date(), link.expiresAt],
    );
  }

  async findLink(tokenHash: string, purpose: LinkPurpose, now: Date): Promise<OneTimeLink | undefined> {
    const [row] = await this.rows(
      'SELECT * FROM login_links WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?',
      [tokenHash, purpose, now],
    );
    return row && toLink(row);
  }

  async consumeLink(tokenHash: string, purpose: LinkPurpose, now: Date): Promise<OneTimeLink | undefined> {
    // One UPDATE both checks and uses the link: two processes presenting it at once cannot both succeed.
    const [row] = await this.rows(
      `UPDATE login_links SET used_at = ? WHERE token_hash = ? AND purpose = ? AND used_at IS NULL AND expires_at > ?
       RETURNING token_hash, purpose, user_id, email, expires_at`,
      [now, tokenHash, purpose, now],
    );
    return row && toLink(row);
  }

  // ---- login sessions

  async listUserSessions(userId: number, now: Date): Promise<DashboardSession[]> {
    const rows = await this.rows(
      "SELECT * FROM dashboard_sessions WHERE user_id = ? AND kind = 'owner' AND expires_at > ? ORDER BY created_at DESC",
      [userId, now],
    );
    return rows.map(toSession);
  }

  async deleteUserSessions(userId: number, keepIdHash?: string): Promise<number> {
    const rows = await this.rows(
      "DELETE FROM dashboard_sessions WHERE user_id = ? AND kind <> 'share' AND id_hash <> ? RETURNING id_hash",
      [userId, keepIdHash ?? ''],
    );
    return rows.length;
  }

  async deleteUserSession(userId: number, idHash: string): Promise<boolean> {
    const rows = await this.rows("DELETE FROM dashboard_sessions WHERE user_id = ? AND id_hash = ? AND kind <> 'share' RETURNING id_hash", [userId, idHash]);
    return rows.length > 0;
  }

  async switchSessionAccount(idHash: string, accountId: number): Promise<void> {
    await this.rows('UPDATE dashboard_sessions SET account_id = ? WHERE id_hash = ? RETURNING id_hash', [accountId, idHash]);
  }

  // ---- report subscriptions

  async listSubscriptions(userId: number, accountId: number): Promise<ReportSubscription[]> {
    const rows = await this.rows('SELECT * FROM report_subscriptions WHERE user_id = ? AND account_id = ? ORDER BY created_at, id', [userId, accountId]);
    return rows.map(toSubscription);
  }

  async listAllSubscriptions(): Promise<ReportSubscription[]> {
    return (await this.rows('SELECT * FROM report_subscriptions ORDER BY created_at, id')).map(toSubscription);
  }

  async subscribe(userId: number, accountId: number, siteId: string, frequency: Frequency): Promise<ReportSubscription> {
    return this.db.transaction(async (q) => {
      const [existing] = await q.rows('SELECT * FROM report_subscriptions WHERE user_id = ? AND site_id = ? AND frequency = ?', [userId, siteId, frequency]);
      if (existing) return toSubscription(existing);
      const [row] = await q.rows(
        'INSERT INTO report_subscriptions (id, user_id, account_id, site_id, frequency, created_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
        [newUuid(), userId, accountId, siteId, frequency, new Date()],
      );
      return toSubscription(row!);
    });
  }

  async unsubscribe(userId: number, siteId: string, frequency: Frequency): Promise<boolean> {
    const [row] = await this.rows('SELECT id FROM report_subscriptions WHERE user_id = ? AND site_id = ? AND frequency = ?', [userId, siteId, frequency]);
    return row ? this.deleteSubscription(row.id as string) : false;
  }

  async deleteSubscription(id: string): Promise<boolean> {
    return this.db.transaction(async (q) => {
      await q.exec('DELETE FROM report_deliveries WHERE subscription_id = ?', [id]);
      const rows = await q.rows('DELETE FROM report_subscriptions WHERE id = ? RETURNING id', [id]);
      return rows.length > 0;
    });
  }

  async claimDelivery(subscriptionId: string, period: string, owner: string, leaseUntil: Date, now: Date, unsubscribeHash: string): Promise<boolean> {
    // The first claim inserts the row; a later one may take it only when unsent and its lease has lapsed (the
    // process holding it died). Each statement is atomic on its own, in DuckDB and in PostgreSQL alike.
    const inserted = await this.rows(
      `INSERT INTO report_deliveries (subscription_id, period, lease_owner, lease_until, sent_at, unsubscribe_hash)
       VALUES (?, ?, ?, ?, NULL, ?) ON CONFLICT (subscription_id, period) DO NOTHING RETURNING subscription_id`,
      [subscriptionId, period, owner, leaseUntil, unsubscribeHash],
    );
    if (inserted.length > 0) return true;
    const taken = await this.rows(
      `UPDATE report_deliveries SET lease_owner = ?, lease_until = ?, unsubscribe_hash = ?
       WHERE subscription_id = ? AND period = ? AND sent_at IS NULL AND lease_until < ? RETURNING subscription_id`,
      [owner, leaseUntil, unsubscribeHash, subscriptionId, period, now],
    );
    return taken.length > 0;
  }

  async markDelivered(subscriptionId: string, period: string, owner: string, now: Date): Promise<void> {
    await this.rows(
      `UPDATE report_deliveries SET sent_at = ? WHERE subscription_id = ? AND period = ? AND lease_owner = ?
       RETURNING subscription_id`,
      [now, subscriptionId, period, owner],
    );
  }

  async releaseDelivery(subscriptionId: string, period: string, owner: string): Promise<void> {
    await this.rows(
      `UPDATE report_deliveries SET lease_until = ? WHERE subscription_id = ? AND period = ? AND lease_owner = ? AND sent_at IS NULL
       RETURNING subscription_id`,
      [new Date(0), subscriptionId, period, owner],
    );
  }

  async findSubscriptionByUnsubscribe(hash: string): Promise<ReportSubscription | undefined> {
    const [row] = await this.rows(
      'SELECT s.* FROM report_deliveries d JOIN report_subscriptions s ON s.id = d.subscription_id WHERE d.unsubscribe_hash = ?',
      [hash],
    );
    return row && toSubscription(row);
  }
}
