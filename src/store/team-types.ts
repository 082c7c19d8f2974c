// Store interface for people: users, their memberships and roles in accounts, invitations, one-time links,
// two-factor secrets and recovery codes, login sessions per user, and email report subscriptions with their
// delivery leases (docs/dashboard.md, "People and roles").

import type { Account, DashboardSession } from './types.js';

/** owner: everything; admin: sites, goals, milestones, tokens and members below owner; viewer: reports only. */
export type Role = 'owner' | 'admin' | 'viewer';
export const ROLES: readonly Role[] = ['owner', 'admin', 'viewer'];

export interface User {
  id: number;
  email: string;
  twoFactorEnabled: boolean;
  createdAt: Date;
  updatedAt: Date;
}

/** What a user proves themselves with; read only where it is checked or changed. */
export interface UserSecrets {
  passwordHash: string | null;
  /** The TOTP secret (base32) once two-factor authentication is on. */
  totpSecret: string | null;
  /** A secret offered during setup, not yet confirmed with a code. */
  totpPendingSecret: string | null;
}

export interface Membership {
  accountId: number;
  userId: number;
  role: Role;
  /** Viewers limited to some sites; null: every site of the account. */
  siteIds: string[] | null;
  createdAt: Date;
}

export interface Member extends Membership {
  user: User;
}

export interface AccountMembership extends Membership {
  account: Account;
}

export interface Invitation {
  id: string;
  /** SHA-256 of the secret in the link. */
  tokenHash: string;
  accountId: number;
  email: string;
  role: Role;
  siteIds: string[] | null;
  invitedBy: number;
  createdAt: Date;
  expiresAt: Date;
  acceptedAt: Date | null;
}
export type NewInvitation = Omit<Invitation, 'id' | 'createdAt' | 'acceptedAt'>;

/** A single-use emailed link: `reset` a password, or confirm a new `email` address. */
export type LinkPurpose = 'reset' | 'email';
export interface OneTimeLink {
  tokenHash: string;
  purpose: LinkPurpose;
  userId: number;
  /** `email` links: the address being confirmed. */
  email: string | null;
  expiresAt: Date;
}

export type Frequency = 'weekly' | 'monthly';
export const FREQUENCIES: readonly Frequency[] = ['weekly', 'monthly'];

export interface ReportSubscription {
  id: string;
  userId: number;
  accountId: number;
  siteId: string;
  frequency: Frequency;
  createdAt: Date;
}

export interface TeamStore {
  createUser(email: string, passwordHash: string | null): Promise<User>;
  getUser(id: number): Promise<User | undefined>;
  /** Compared case-insensitively. */
  findUserByEmail(email: string): Promise<User | undefined>;
  getUserSecrets(id: number): Promise<UserSecrets | undefined>;
  setUserPassword(userId: number, hash: string): Promise<void>;
  /** False when another user already has that address. */
  setUserEmail(userId: number, email: string): Promise<boolean>;
  setTotpPending(userId: number, secret: string | null): Promise<void>;
  /** Turns the pending secret into the live one; false when there is none. */
  enableTotp(userId: number): Promise<boolean>;
  disableTotp(userId: number): Promise<void>;
  /** Records a used TOTP time step; false when this or a later step was already used (no replays). */
  useTotpStep(userId: number, step: number): Promise<boolean>;
  replaceRecoveryCodes(userId: number, hashes: readonly string[]): Promise<void>;
  /** Marks the code used; false when it is not an unused code of this user. */
  useRecoveryCode(userId: number, hash: string): Promise<boolean>;
  unusedRecoveryCodes(userId: number): Promise<number>;

  getMembership(accountId: number, userId: number): Promise<Membership | undefined>;
  /** The user's accounts, by account id. */
  listMemberships(userId: number): Promise<AccountMembership[]>;
  /** The account's members, owners first, then by when they joined. */
  listMembers(accountId: number): Promise<Member[]>;
  /** Adds the user to the account, or changes their role there. */
  putMembership(accountId: number, userId: number, role: Role, siteIds: string[] | null): Promise<Membership>;
  /**
   * Removes the member with their sessions in that account, their report subscriptions there and their personal
   * segments of its sites (the ones they shared stay).
   */
  removeMembership(accountId: number, userId: number): Promise<boolean>;

  getRequireTwoFactor(accountId: number): Promise<boolean>;
  setRequireTwoFactor(accountId: number, required: boolean): Promise<void>;

  createInvitation(input: NewInvitation): Promise<Invitation>;
  findInvitation(tokenHash: string): Promise<Invitation | undefined>;
  /** Invitations neither accepted nor expired at `now`. */
  listInvitations(accountId: number, now: Date): Promise<Invitation[]>;
  deleteInvitation(accountId: number, id: string): Promise<boolean>;
  /** Marks it accepted if it still can be (single use, not expired); false otherwise. */
  acceptInvitation(tokenHash: string, now: Date): Promise<boolean>;

  createLink(link: OneTimeLink): Promise<void>;
  /** The link if it is live, without using it (to show its form). */
  findLink(tokenHash: string, purpose: LinkPurpose, now: Date): Promise<OneTimeLink | undefined>;
  /** Uses the link if it is live (unused, unexpired, this purpose): returns it once, then never again. */
  consumeLink(tokenHash: string, purpose: LinkPurpose, now: Date): Promise<OneTimeLink | undefined>;

  listUserSessions(userId: number, now: Date): Promise<DashboardSession[]>;
  /** Ends the user's login sessions except `keepIdHash`; returns how many. */
  deleteUserSessions(userId: number, keepIdHash?: string): Promise<number>;
  deleteUserSession(userId: number, idHash: string): Promise<boolean>;
  switchSessionAccount(idHash: string, accountId: number): Promise<void>;

  listSubscriptions(userId: number, accountId: number): Promise<ReportSubscription[]>;
  listAllSubscriptions(): Promise<ReportSubscription[]>;
  subscribe(userId: number, accountId: number, siteId: string, frequency: Frequency): Promise<ReportSubscription>;
  unsubscribe(userId: number, siteId: string, frequency: Frequency): Promise<boolean>;
  deleteSubscription(id: string): Promise<boolean>;

  /**
   * Takes the lease on sending one subscription's report for one period: true for exactly one caller while the
   * lease lasts, never once the report is marked sent.
   */
  claimDelivery(subscriptionId: string, period: string, owner: string, leaseUntil: Date, now: Date, unsubscribeHash: string): Promise<boolean>;
  markDelivered(subscriptionId: string, period: string, owner: string, now: Date): Promise<void>;
  /** Gives a lease back after a failed send, so the next tick (of any process) tries again. */
  releaseDelivery(subscriptionId: string, period: string, owner: string): Promise<void>;
  /** The subscription an emailed report's unsubscribe link names (by the link's hash). */
  findSubscriptionByUnsubscribe(hash: string): Promise<ReportSubscription | undefined>;
}
