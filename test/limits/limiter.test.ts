// The tier table applied by the Limiter: exact edges of both windows for every tier, on both LimitStores,
// with a clock the test moves instead of sleeping.

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { TIER1_HOURLY_FROM, TIERS } from '../../src/domain/tiers.js';
import { ConcurrencyLimited, Limiter, RateLimited, type LimitClass } from '../../src/limits/limiter.js';
import { MemoryLimitStore } from '../../src/store/memory/limit-store.js';
import { RedisLimitStore } from '../../src/store/redis/limit-store.js';
import type { LimitStore } from '../../src/store/types.js';
import { REDIS_URL } from '../helpers/redis.js';

const stores: [string, () => LimitStore][] = [
  ['memory', () => new MemoryLimitStore()],
  ['redis', () => new RedisLimitStore(REDIS_URL, `plumb-test:${randomUUID()}:`)],
];

for (const [name, make] of stores) {
  describe(`Limiter on the ${name} store`, () => {
    const store = make();
    let now = Date.UTC(2026, 10, 21, 12, 0, 0);
    const limiter = new Limiter(store, { enabled: true, now: () => now });
    let account = 100;
    after(async () => {
      if (store instanceof RedisLimitStore) await store.clear();
      await store.close();
    });

    const fill = async (acct: number, tier: number, cls: LimitClass, n: number) => {
      for (let i = 0; i < n; i++) await (await limiter.admit(acct, tier, cls)).release();
    };

    for (const tier of TIERS) {
      for (const [cls, allowance, windowS] of [
        ['minute', tier.perMinute, 60],
        ['hour', tier.perHour, 3600],
      ] as const) {
        it(`${tier.name}: request ${allowance} of the ${cls} passes, ${allowance + 1} is refused until the window slides`, async () => {
          const acct = ++account;
          const start = now;
          await fill(acct, tier.tier, cls, allowance);
          now = start + 10_000;
          const refused = await limiter.admit(acct, tier.tier, cls).then(
            () => assert.fail('expected a 429'),
            (e: unknown) => e,
          );
          assert.ok(refused instanceof RateLimited);
          assert.equal(refused.status, 429);
          assert.equal(refused.retryAfterSeconds, windowS - 10);
          assert.deepEqual(Object.keys(refused.body() as object), ['message']);
          assert.equal(refused.headers()['retry-after'], String(windowS - 10));
          // The other window is a separate budget.
          await (await limiter.admit(acct, tier.tier, cls === 'minute' ? 'hour' : 'minute')).release();
          // Waiting exactly Retry-After succeeds.
          now += refused.retryAfterSeconds * 1000;
          await (await limiter.admit(acct, tier.tier, cls)).release();
          now += windowS * 1000;
        });
      }
    }

    it('caps requests in flight at the tier, with the next tier in the refusal', async () => {
      const acct = ++account;
      const held = await Promise.all(Array.from({ length: 5 }, () => limiter.admit(acct, 2, 'hour')));
      const refused = await limiter.admit(acct, 2, 'hour').catch((e: unknown) => e);
      assert.ok(refused instanceof ConcurrencyLimited);
      assert.deepEqual(refused.body(), {
        error: {
          code: 'api_concurrency_limit_reached',
          message: refused.message,
          limit: 5,
          next_tier: { name: 'Tier 3', concurrent_queries: 10, price: '39' },
        },
      });
      assert.equal(refused.headers()['retry-after'], '1');
      await held[0]!.release();
      await held[0]!.release(); // twice is harmless and frees nothing more
      const again = await limiter.admit(acct, 2, 'hour');
      assert.ok((await limiter.admit(acct, 2, 'hour').catch((e: unknown) => e)) instanceof ConcurrencyLimited);
      await Promise.all([...held, again].map((a) => a.release()));
    });

    it('has no next tier above Tier 6', async () => {
      const acct = ++account;
      const held = await Promise.all(Array.from({ length: 25 }, () => limiter.admit(acct, 6, 'minute')));
      const refused = (await limiter.admit(acct, 6, 'minute').catch((e: unknown) => e)) as ConcurrencyLimited;
      assert.equal((refused.body() as { error: { next_tier: unknown } }).error.next_tier, null);
      await Promise.all(held.map((a) => a.release()));
    });

    it('gives the slot back when the window refuses', async () => {
      const acct = ++account;
      await fill(acct, 1, 'minute', 10);
      for (let i = 0; i < 20; i++) await assert.rejects(limiter.admit(acct, 1, 'minute'), RateLimited);
      // Had the refusals kept their slots, the concurrency cap (5) would refuse this one.
      await (await limiter.admit(acct, 1, 'hour')).release();
    });

    it('has no Tier 1 hourly allowance before 1 July 2026', async () => {
      const acct = ++account;
      const saved = now;
      now = TIER1_HOURLY_FROM - 3_600_000;
      await fill(acct, 1, 'hour', 600);
      now = TIER1_HOURLY_FROM;
      await fill(acct, 1, 'hour', 500);
      await assert.rejects(limiter.admit(acct, 1, 'hour'), RateLimited);
      now = saved + 7_200_000;
    });
  });
}

describe('Limiter switched off', () => {
  it('admits everything', async () => {
    const limiter = new Limiter(new MemoryLimitStore(), { enabled: false });
    const held = await Promise.all(Array.from({ length: 100 }, () => limiter.admit(1, 1, 'minute')));
    assert.equal(held.length, 100);
  });
});
