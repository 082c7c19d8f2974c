// Turns an Authorization header into the account and scopes of a live API token.
// Lookups are cached for a few seconds (DESIGN.md section 2 allows that much staleness across processes);
// last-use times are batched so a request never waits on a write.

import { unauthenticated } from '../domain/errors.js';
import { Scopes } from '../domain/scopes.js';
import { constantTimeEqual, hashToken } from '../domain/secrets.js';
import type { Account, MetaStore, TokenRecord } from '../store/types.js';

export interface Principal {
  token: TokenRecord;
  account: Account;
  scopes: Scopes;
}

export interface AuthenticatorOptions {
  /** How long a looked-up token or account is trusted without asking the store again. */
  cacheMs?: number;
  /** How often pending last-use times are written. */
  touchIntervalMs?: number;
  now?: () => Date;
}

interface Cached<T> {
  value: T | undefined;
  at: number;
}

const BEARER_RE = /^Bearer +([\x21-\x7e]{1,512})$/i;
const MAX_CACHE_ENTRIES = 10_000;

export class TokenAuthenticator {
  private readonly tokens = new Map<string, Cached<TokenRecord>>();
  private readonly accounts = new Map<number, Cached<Account>>();
  private readonly pendingTouches = new Map<string, Date>();
  /** How long a lookup is trusted; other caches of access facts (sites) use the same. */
  readonly cacheMs: number;
  private readonly now: () => Date;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: MetaStore,
    options: AuthenticatorOptions = {},
  ) {
    this.cacheMs = options.cacheMs ?? 3000;
    this.now = options.now ?? (() => new Date());
    this.timer = setInterval(() => void this.flushLastUsed().catch(() => undefined), options.touchIntervalMs ?? 30_000);
    this.timer.unref();
  }

  /** Resolves the header to a principal or throws the 401 a client should see. */
  async authenticate(header: string | undefined): Promise<Principal> {
    if (header === undefined || header.trim() === '') {
      throw unauthenticated('Missing API token: send the header Authorization: Bearer <token>');
    }
    const match = BEARER_RE.exec(header.trim());
    if (!match) throw unauthenticated('Malformed Authorization header: expected "Bearer <token>"');
    const presented = match[1]!;
    const hash = hashToken(presented);
    const token = await this.cached(this.tokens, hash, () => this.store.findTokenByHash(hash));
    // The lookup is by hash; comparing the hashes again in constant time keeps the check itself timing-safe
    // whatever the store's index does.
    if (!token || !constantTimeEqual(token.hash, hash)) throw unauthenticated('Invalid API token');
    const now = this.now();
    if (token.revokedAt) throw unauthenticated('This API token has been revoked');
    if (token.expiresAt && token.expiresAt.getTime() <= now.getTime()) throw unauthenticated('This API token has expired');
    const account = await this.cached(this.accounts, token.accountId, () => this.store.getAccount(token.accountId));
    if (!account) throw unauthenticated('Invalid API token');
    this.pendingTouches.set(token.id, now);
    return { token: { ...token, lastUsedAt: now }, account, scopes: new Scopes(token.abilities) };
  }

  /** Forgets cached state after a change made through this process (revocation, tier change). */
  forgetToken(tokenId: string): void {
    for (const [hash, entry] of this.tokens) if (entry.value?.id === tokenId) this.tokens.delete(hash);
  }
  forgetAccount(accountId: number): void {
    this.accounts.delete(accountId);
  }

  async flushLastUsed(): Promise<void> {
    if (this.pendingTouches.size === 0) return;
    const batch = new Map(this.pendingTouches);
    this.pendingTouches.clear();
    await this.store.touchTokens(batch);
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flushLastUsed();
  }

  private async cached<K, T>(map: Map<K, Cached<T>>, key: K, load: () => Promise<T | undefined>): Promise<T | undefined> {
    const hit = map.get(key);
    const t = Date.now();
    if (hit && t - hit.at < this.cacheMs) return hit.value;
    const value = await load();
    if (map.size >= MAX_CACHE_ENTRIES) map.clear();
    map.set(key, { value, at: t });
    return value;
  }
}
