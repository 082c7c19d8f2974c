// VisitStateStore on Redis: visitor keys are strings holding a visit id, visits are hashes {ver, doc}; every
// read and every compare-and-set is one atomic Lua script, so processes never see half a change.

import { Redis } from 'ioredis';
import type { VisitCommit, VisitStateStore } from '../types.js';

// KEYS: visitor keys. ARGV[1]: the visit key prefix. Returns [visitId1, doc1, visitId2, doc2, ...] (false: none).
// The visit keys are derived inside the script, which is fine on one Redis (not on Redis Cluster).
const LOOKUP = `
local out = {}
for i = 1, #KEYS do
  local id = redis.call('GET', KEYS[i])
  out[2 * i - 1] = id
  if id then out[2 * i] = redis.call('HGET', ARGV[1] .. id, 'doc') else out[2 * i] = false end
end
return out
`;

// KEYS[1]: the visit; KEYS[2..]: visitor keys to point at it. ARGV: expected version, new version, doc, ttl,
// visit id, then the expected value of each visitor key ('' for none). Returns 1 when applied, 0 on a conflict.
const COMMIT = `
local current = tonumber(redis.call('HGET', KEYS[1], 'ver') or '0')
if current ~= tonumber(ARGV[1]) then return 0 end
for i = 2, #KEYS do
  local pointer = redis.call('GET', KEYS[i]) or ''
  if pointer ~= ARGV[4 + i] and pointer ~= ARGV[5] then return 0 end
end
redis.call('HSET', KEYS[1], 'ver', ARGV[2], 'doc', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ARGV[4])
for i = 2, #KEYS do redis.call('SET', KEYS[i], ARGV[5], 'PX', ARGV[4]) end
return 1
`;

type Scripted = Redis & {
  plumbVisitLookup(...args: (string | number)[]): Promise<(string | null)[]>;
  plumbVisitCommit(...args: (string | number)[]): Promise<number>;
};

export class RedisVisitStateStore implements VisitStateStore {
  private readonly redis: Scripted;

  constructor(url: string, private readonly prefix = 'plumb:') {
    // Auto-pipelining sends the lookups of concurrent hits in one round trip.
    const redis = new Redis(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true });
    redis.defineCommand('plumbVisitLookup', { lua: LOOKUP });
    redis.defineCommand('plumbVisitCommit', { lua: COMMIT });
    this.redis = redis as Scripted;
  }

  async lookup(keys: readonly string[]): Promise<({ visitId: string; doc: string | null } | null)[]> {
    const flat = await this.redis.plumbVisitLookup(keys.length, ...keys.map((k) => this.visitorKey(k)), this.visitKey(''));
    return keys.map((_, i) => {
      const id = flat[2 * i];
      return id ? { visitId: id, doc: flat[2 * i + 1] ?? null } : null;
    });
  }

  async commit(c: VisitCommit): Promise<boolean> {
    const applied = await this.redis.plumbVisitCommit(
      1 + c.pointers.length,
      this.visitKey(c.visitId),
      ...c.pointers.map((p) => this.visitorKey(p.key)),
      c.expectedVersion,
      c.version,
      c.doc,
      c.ttlMs,
      c.visitId,
      ...c.pointers.map((p) => p.expected ?? ''),
    );
    return applied === 1;
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  /** Deletes every visit key under this store's prefix (tests use a prefix of their own). */
  async clear(): Promise<void> {
    for (const pattern of [this.visitorKey('*'), this.visitKey('*')]) {
      const keys = await this.redis.keys(pattern);
      if (keys.length > 0) await this.redis.del(...keys);
    }
  }

  private visitorKey(key: string): string {
    return `${this.prefix}visitor:${key}`;
  }

  private visitKey(visitId: string): string {
    return `${this.prefix}visit:${visitId}`;
  }
}
