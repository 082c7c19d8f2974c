// VisitStateStore on Redis: visitor keys are strings holding a visit id, visits are hashes {ver, doc}; every
// read and every compare-and-set is one atomic Lua script, so processes never see half a change. Every key of a
// site carries the site as its hash tag (`plumb:{SITE}:visit:...`), so each script touches one slot and runs on
// Redis Cluster as on a single Redis.

import { Redis } from 'ioredis';
import type { VisitCommit, VisitStateStore } from '../types.js';

// KEYS: visitor keys of one site. ARGV[1]: that site's visit key prefix. Returns [visitId1, doc1, visitId2, doc2,
// ...] (false: none). The visit keys are only known inside the script; they carry the same hash tag as KEYS, so
// they are in the same slot (Redis Cluster refuses only keys of another slot than the declared ones).
const LOOKUP = `
local out = {}
for i = 1, #KEYS do
  local id = redis.call('GET', KEYS[i])
  out[2 * i - 1] = id
  if id then out[2 * i] = redis.call('HGET', ARGV[1] .. id, 'doc') else out[2 * i] = false end
end
return out
`;

// KEYS[1]: the visit; KEYS[2..]: visitor keys to point at it (one site: one hash tag, one slot). ARGV: expected version, new version, doc, ttl,
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
    // One script per site (in practice every lookup is of one visitor's keys, so one site): one slot each.
    const bySite = new Map<string, number[]>();
    keys.forEach((k, i) => bySite.set(siteOf(k), [...(bySite.get(siteOf(k)) ?? []), i]));
    const out: ({ visitId: string; doc: string | null } | null)[] = keys.map(() => null);
    await Promise.all(
      [...bySite].map(async ([site, indexes]) => {
        const flat = await this.redis.plumbVisitLookup(indexes.length, ...indexes.map((i) => this.visitorKey(keys[i]!)), this.visitKey(site, ''));
        indexes.forEach((index, j) => {
          const id = flat[2 * j];
          out[index] = id ? { visitId: id, doc: flat[2 * j + 1] ?? null } : null;
        });
      }),
    );
    return out;
  }

  async commit(c: VisitCommit): Promise<boolean> {
    const site = c.pointers[0] ? siteOf(c.pointers[0].key) : undefined;
    if (site === undefined || c.pointers.some((p) => siteOf(p.key) !== site)) {
      throw new Error('a visit commit points the keys of exactly one site at the visit');
    }
    const applied = await this.redis.plumbVisitCommit(
      1 + c.pointers.length,
      this.visitKey(site, c.visitId),
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
    for (const pattern of [`${this.prefix}{*}:visitor:*`, `${this.prefix}{*}:visit:*`]) {
      // One key per DEL: on a cluster the keys of different sites live in different slots.
      for (const key of await this.redis.keys(pattern)) await this.redis.del(key);
    }
  }

  /** `prefix{SITE}:visitor:REST` for the visitor key `SITE:REST` (src/ingest/visits.ts, visitorKey). */
  private visitorKey(key: string): string {
    const site = siteOf(key);
    return `${this.prefix}{${site}}:visitor:${key.slice(site.length + 1)}`;
  }

  private visitKey(site: string, visitId: string): string {
    return `${this.prefix}{${site}}:visit:${visitId}`;
  }
}

/**
 * The site of a visitor key (`SITE:...`, src/ingest/visits.ts), its keys' hash tag: the keys one script touches
 * (a visitor's keys of two days, the visit they point at) share nothing else. A site's visits thus live in one
 * slot; slots spread sites, not the visits of one site, over the cluster's nodes.
 */
function siteOf(visitorKey: string): string {
  const colon = visitorKey.indexOf(':');
  if (colon <= 0 || /[{}]/.test(visitorKey.slice(0, colon))) throw new Error(`not a visitor key: ${JSON.stringify(visitorKey)}`);
  return visitorKey.slice(0, colon);
}
