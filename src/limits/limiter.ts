// The three per-account limits of SPEC.md section 8 (made precise in DESIGN.md section 7), applied per request.

import { randomUUID } from 'node:crypto';
import { ApiError } from '../domain/errors.js';
import { hourlyAllowance, nextTier, tierOf, type Tier } from '../domain/tiers.js';
import type { LimitStore, WindowDecision } from '../store/types.js';

/** Which window a route counts against: aggregations and current visitors per minute, the rest per hour. */
export type LimitClass = 'minute' | 'hour';

const MINUTE = 60_000;
const HOUR = 3_600_000;

/** 429 `{ message }` with a Retry-After a client can trust. */
export class RateLimited extends ApiError {
  readonly status = 429;
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
  body(): unknown {
    return { message: this.message };
  }
  override headers(): Record<string, string> {
    return { 'retry-after': String(this.retryAfterSeconds) };
  }
}

/** 429 with SPEC.md's `api_concurrency_limit_reached` object. */
export class ConcurrencyLimited extends ApiError {
  readonly status = 429;
  constructor(readonly tier: Tier) {
    super(`Too many requests in flight: ${tier.name} allows ${tier.concurrent} at once`);
  }
  body(): unknown {
    const next = nextTier(this.tier.tier);
    return {
      error: {
        code: 'api_concurrency_limit_reached',
        message: this.message,
        limit: this.tier.concurrent,
        next_tier: next && { name: next.name, concurrent_queries: next.concurrent, price: next.price },
      },
    };
  }
  override headers(): Record<string, string> {
    // A slot frees when any request of the account finishes; one second is an honest first wait.
    return { 'retry-after': '1' };
  }
}

/** Held for the life of an admitted request; releasing twice is harmless. */
export interface Admission {
  release(): Promise<void>;
}

const NOTHING_HELD: Admission = { release: async () => undefined };

export interface LimiterOptions {
  enabled: boolean;
  now?: () => number;
  /** How long a concurrency slot survives if its process dies without releasing it. */
  leaseMs?: number;
}

export class Limiter {
  private readonly now: () => number;
  private readonly leaseMs: number;

  constructor(
    private readonly store: LimitStore,
    private readonly options: LimiterOptions,
  ) {
    this.now = options.now ?? Date.now;
    this.leaseMs = options.leaseMs ?? 120_000;
  }

  /**
   * Takes a concurrency slot, then counts the request in its window. A request refused by its window gives its
   * slot straight back and is not counted, so refused requests never eat into the allowance.
   */
  async admit(accountId: number, tierNumber: number, limitClass: LimitClass): Promise<Admission> {
    if (!this.options.enabled) return NOTHING_HELD;
    const tier = tierOf(tierNumber);
    const now = this.now();
    const slotKey = `${accountId}:concurrent`;
    const slotId = randomUUID();
    if (!(await this.store.acquireSlot(slotKey, slotId, tier.concurrent, this.leaseMs, now))) {
      throw new ConcurrencyLimited(tier);
    }
    let released = false;
    const admission: Admission = {
      release: async () => {
        if (released) return;
        released = true;
        await this.store.releaseSlot(slotKey, slotId);
      },
    };
    try {
      await this.countInWindow(accountId, tier, limitClass, now);
    } catch (err) {
      await admission.release();
      throw err;
    }
    return admission;
  }

  /**
   * Counts one attempt under `key` in a sliding window, whether or not the API limits are enabled: login and
   * share-password attempts are a security limit, not a plan allowance. Same store, so shared across processes.
   */
  async attempt(key: string, windowMs: number, limit: number): Promise<WindowDecision> {
    return this.store.hitWindow(`attempt:${key}`, windowMs, limit, this.now());
  }

  private async countInWindow(accountId: number, tier: Tier, limitClass: LimitClass, now: number): Promise<void> {
    const [windowMs, allowance, what] =
      limitClass === 'minute'
        ? [MINUTE, tier.perMinute, 'aggregation and current visitor requests per minute']
        : [HOUR, hourlyAllowance(tier.tier, now), 'account, token, site, event and milestone requests per hour'];
    if (!Number.isFinite(allowance)) return;
    const decision = await this.store.hitWindow(`${accountId}:${limitClass}`, windowMs, allowance, now);
    if (decision.allowed) return;
    const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new RateLimited(`Rate limit exceeded: ${tier.name} allows ${allowance} ${what}. Retry in ${seconds} s.`, seconds);
  }
}
