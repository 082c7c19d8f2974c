// LimitStore on Redis (one Redis or a Redis Cluster), shared by every Plumb process: each decision is one atomic Lua
// script on one key, and every key carries the limit's key as its hash tag (`plumb:window:{KEY}`).

import type { LimitStore, WindowDecision } from '../types.js';
import { deleteMatching, pingRedis, redisClient, type RedisClient } from './connect.js';

// Sliding-window log in a sorted set scored by request time. KEYS[1]; ARGV: now, window, limit, member.
const HIT_WINDOW = `
local now = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local limit = tonumber(ARGV[3])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - window)
local count = redis.call('ZCARD', KEYS[1])
if count < limit then
  redis.call('ZADD', KEYS[1], now, ARGV[4])
  redis.call('PEXPIRE', KEYS[1], window)
  return -1
end
local freeing = redis.call('ZRANGE', KEYS[1], count - limit, count - limit, 'WITHSCORES')
return tonumber(freeing[2]) + window - now
`;

// Counting semaphore: a sorted set of slot ids scored by lease expiry, so a crashed process's slots lapse.
// KEYS[1]; ARGV: now, limit, slot id, lease.
const ACQUIRE_SLOT = `
local now = tonumber(ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) < tonumber(ARGV[2]) then
  redis.call('ZADD', KEYS[1], now + tonumber(ARGV[4]), ARGV[3])
  redis.call('PEXPIRE', KEYS[1], tonumber(ARGV[4]))
  return 1
end
return 0
`;

export class RedisLimitStore implements LimitStore {
  private readonly redis: RedisClient;
  private sequence = 0;
  private readonly instance = Math.random().toString(36).slice(2, 10);

  constructor(url: string, private readonly prefix = 'plumb:') {
    // A decision waits at most a second: while Redis is away, requests are answered 503 at once (src/http/
    // service-outage.ts) rather than after ioredis' reconnection attempts, seconds each.
    // (src/store/redis/connect.ts: the same on a cluster, where the wait for a connection counts too.)
    this.redis = redisClient(url, { maxRetriesPerRequest: 2, commandTimeout: 1000 });
    this.redis.defineCommand('plumbHitWindow', { numberOfKeys: 1, lua: HIT_WINDOW });
    this.redis.defineCommand('plumbAcquireSlot', { numberOfKeys: 1, lua: ACQUIRE_SLOT });
  }

  async hitWindow(key: string, windowMs: number, limit: number, now: number): Promise<WindowDecision> {
    // Members must be unique even for requests in the same millisecond from different processes.
    const member = `${now}:${this.instance}:${++this.sequence}`;
    const wait = Number(await this.call('plumbHitWindow', this.key('window', key), now, windowMs, limit, member));
    return wait < 0 ? { allowed: true } : { allowed: false, retryAfterMs: wait };
  }

  async acquireSlot(key: string, slotId: string, limit: number, leaseMs: number, now: number): Promise<boolean> {
    return Number(await this.call('plumbAcquireSlot', this.key('slots', key), now, limit, slotId, leaseMs)) === 1;
  }

  async releaseSlot(key: string, slotId: string): Promise<void> {
    await this.redis.zrem(this.key('slots', key), slotId);
  }

  async ping(): Promise<void> {
    await pingRedis(this.redis);
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  /** Deletes this store's keys, on every master of a cluster (tests use a prefix of their own). */
  async clear(): Promise<void> {
    // The untagged keys of earlier versions too (`prefix` + `window:KEY`): the same patterns match both.
    for (const kind of ['window', 'slots']) await deleteMatching(this.redis, `${this.prefix}${kind}:*`);
  }

  /**
   * `prefix` + `window:{KEY}`: the limit's key as its hash tag, so limits spread over a cluster's slots. Each script
   * touches one key, so it is in one slot whatever the name; the tag makes that explicit, and keeps holding should a
   * script ever take a second key of the same limit (a `}` inside KEY would end the tag early: still one slot a key).
   */
  private key(kind: 'window' | 'slots', key: string): string {
    return `${this.prefix}${kind}:{${key}}`;
  }

  private call(command: string, ...args: (string | number)[]): Promise<unknown> {
    return (this.redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[command]!(...args);
  }
}
