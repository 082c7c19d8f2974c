// One contract, two LimitStores: the in-memory one and the Redis one (against the Redis on this machine).

import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, describe, it } from 'node:test';
import { MemoryLimitStore } from '../../src/store/memory/limit-store.js';
import { RedisLimitStore } from '../../src/store/redis/limit-store.js';
import type { LimitStore } from '../../src/store/types.js';
import { REDIS_URL } from '../helpers/redis.js';

const implementations: [string, () => LimitStore][] = [
  ['memory', () => new MemoryLimitStore()],
  ['redis', () => new RedisLimitStore(REDIS_URL, `plumb-test:${randomUUID()}:`)],
];

for (const [name, make] of implementations) {
  describe(`${name} LimitStore`, () => {
    const store = make();
    after(async () => {
      if (store instanceof RedisLimitStore) await store.clear();
      await store.close();
    });
    const T0 = 1_800_000_000_000;
    let n = 0;
    const key = () => `k${++n}`;

    it('allows exactly the limit within a window, then says when the oldest leaves', async () => {
      const k = key();
      for (let i = 0; i < 10; i++) assert.deepEqual(await store.hitWindow(k, 60_000, 10, T0 + i * 1000), { allowed: true });
      assert.deepEqual(await store.hitWindow(k, 60_000, 10, T0 + 30_000), { allowed: false, retryAfterMs: 30_000 });
      assert.deepEqual(await store.hitWindow(k, 60_000, 10, T0 + 59_999), { allowed: false, retryAfterMs: 1 });
      // At T0 + 60 s the first request has left the window: one more fits, and only one.
      assert.deepEqual(await store.hitWindow(k, 60_000, 10, T0 + 60_000), { allowed: true });
      assert.deepEqual(await store.hitWindow(k, 60_000, 10, T0 + 60_000), { allowed: false, retryAfterMs: 1000 });
    });

    it('slides: a burst at the end of one minute is still counted at the start of the next', async () => {
      const k = key();
      for (let i = 0; i < 10; i++) assert.equal((await store.hitWindow(k, 60_000, 10, T0 + 59_000)).allowed, true);
      // A fixed window starting at T0 + 60 s would allow ten more here.
      const next = await store.hitWindow(k, 60_000, 10, T0 + 61_000);
      assert.deepEqual(next, { allowed: false, retryAfterMs: 58_000 });
      assert.equal((await store.hitWindow(k, 60_000, 10, T0 + 119_000)).allowed, true);
    });

    it('does not count refused requests', async () => {
      const k = key();
      for (let i = 0; i < 3; i++) await store.hitWindow(k, 1000, 3, T0);
      for (let i = 0; i < 50; i++) assert.equal((await store.hitWindow(k, 1000, 3, T0 + 500)).allowed, false);
      for (let i = 0; i < 3; i++) assert.equal((await store.hitWindow(k, 1000, 3, T0 + 1000)).allowed, true, `request ${i}`);
    });

    it('after a lower limit, waits until enough requests have left', async () => {
      const k = key();
      for (let i = 0; i < 20; i++) await store.hitWindow(k, 60_000, 20, T0 + i * 1000);
      // With limit 10, the 11th oldest (at T0 + 10 s) must leave before one more fits.
      assert.deepEqual(await store.hitWindow(k, 60_000, 10, T0 + 20_000), { allowed: false, retryAfterMs: 50_000 });
      assert.equal((await store.hitWindow(k, 60_000, 10, T0 + 70_000)).allowed, true);
    });

    it('keeps keys apart', async () => {
      const [a, b] = [key(), key()];
      assert.equal((await store.hitWindow(a, 60_000, 1, T0)).allowed, true);
      assert.equal((await store.hitWindow(a, 60_000, 1, T0)).allowed, false);
      assert.equal((await store.hitWindow(b, 60_000, 1, T0)).allowed, true);
    });

    it('hands out at most `limit` slots, frees them on release and when leases lapse', async () => {
      const k = key();
      for (let i = 0; i < 5; i++) assert.equal(await store.acquireSlot(k, `s${i}`, 5, 10_000, T0), true);
      assert.equal(await store.acquireSlot(k, 's5', 5, 10_000, T0), false);
      await store.releaseSlot(k, 's2');
      assert.equal(await store.acquireSlot(k, 's6', 5, 10_000, T0), true);
      assert.equal(await store.acquireSlot(k, 's7', 5, 10_000, T0 + 9_999), false);
      // Every lease taken at T0 lapses at T0 + 10 s, as if their process had died.
      assert.equal(await store.acquireSlot(k, 's8', 5, 10_000, T0 + 10_000), true);
      await store.releaseSlot(k, 'never-held');
    });

    it('grants exactly `limit` slots to a simultaneous rush', async () => {
      const k = key();
      const results = await Promise.all(Array.from({ length: 40 }, (_, i) => store.acquireSlot(k, `r${i}`, 7, 60_000, T0)));
      assert.equal(results.filter(Boolean).length, 7);
      const hits = await Promise.all(Array.from({ length: 40 }, () => store.hitWindow(key() + 'x', 60_000, 7, T0)));
      assert.equal(hits.filter((h) => h.allowed).length, 40, 'distinct keys do not interfere');
      const same = key();
      const burst = await Promise.all(Array.from({ length: 40 }, () => store.hitWindow(same, 60_000, 7, T0)));
      assert.equal(burst.filter((h) => h.allowed).length, 7);
    });
  });
}

describe('redis LimitStore across processes', () => {
  it('two store instances (as two processes would hold) share one budget', async () => {
    const prefix = `plumb-test:${randomUUID()}:`;
    const [a, b] = [new RedisLimitStore(REDIS_URL, prefix), new RedisLimitStore(REDIS_URL, prefix)];
    const T = 1_800_000_000_000;
    const results = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? a : b).hitWindow('acct', 60_000, 10, T)));
    assert.equal(results.filter((r) => r.allowed).length, 10);
    assert.equal(await a.acquireSlot('c', 'x', 1, 60_000, T), true);
    assert.equal(await b.acquireSlot('c', 'y', 1, 60_000, T), false);
    await a.releaseSlot('c', 'x');
    assert.equal(await b.acquireSlot('c', 'y', 1, 60_000, T), true);
    await a.clear();
    await Promise.all([a.close(), b.close()]);
  });
});
