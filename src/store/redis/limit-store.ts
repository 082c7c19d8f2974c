// LimitStore on Redis, shared by every Plumb process: each decision is one atomic Lua script.

import { Redis } from 'ioredis';
import type { LimitStore, WindowDecision } from '../types.js';

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
  private readonly redis: Redis;
  private sequence = 0;
  private readonly instance = Math.random().toString(36).slice(2, 10);

  constructor(url: string, private readonly prefix = 'plumb:') {
    // A decision waits at most a second: while Redis is away, requests are answered 503 at once (src/http/
    // service-outage.ts) rather than after ioredis' reconnection attempts, seconds each.
    this.redis = new Redis(url, { lazyConnect: false, maxRetriesPerRequest: 2, enableOfflineQueue: true, commandTimeout: 1000 });
    // Unheard, a lost connection's 'error' would end the process; ioredis reconnects by itself.
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('plumbHitWindow', { numberOfKeys: 1, lua: HIT_WINDOW });
    this.redis.defineCommand('plumbAcquireSlot', { numberOfKeys: 1, lua: ACQUIRE_SLOT });
  }

  async hitWindow(key: string, windowMs: number, limit: number, now: number): Promise<WindowDecision> {
    // Members must be unique even for requests in the same millisecond from different processes.
    const member = `${now}:${this.instance}:${++this.sequence}`;
    const wait = Number(await this.call('plumbHitWindow', `${this.prefix}window:${key}`, now, windowMs, limit, member));
    return wait < 0 ? { allowed: true } : { allowed: false, retryAfterMs: wait };
  }

  async acquireSlot(key: string, slotId: string, limit: number, leaseMs: number, now: number): Promise<boolean> {
    return Number(await this.call('plumbAcquireSlot', `${this.prefix}slots:${key}`, now, limit, slotId, leaseMs)) === 1;
  }

  async releaseSlot(key: string, slotId: string): Promise<void> {
    await this.redis.zrem(`${this.prefix}slots:${key}`, slotId);
  }

  async ping(): Promise<void> {
    await this.redis.ping();
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  /** Deletes every key under this store's prefix (tests use a prefix of their own). */
  async clear(): Promise<void> {
    const keys = await this.redis.keys(`${this.prefix}*`);
    if (keys.length > 0) await this.redis.del(...keys);
  }

  private call(command: string, ...args: (string | number)[]): Promise<unknown> {
    return (this.redis as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[command]!(...args);
  }
}
