// VisitStateStore on Redis: visitor keys are strings holding a visit id, visits are hashes {ver, doc}; every
// read and every compare-and-set (of a batch's visits of one site) is one atomic Lua script, so processes never see half a change. Every key of a
// site carries the site as its hash tag (`plumb:{SITE}:visit:...`), so each script touches one slot and runs on
// Redis Cluster as on a single Redis. The commit also keeps each site's visits written in the last minutes in a
// sorted set (`plumb:{SITE}:live`), which current visitors read (src/store/redis/live-visits.ts).

import type { VisitCommit, VisitStateStore } from '../types.js';
import { deleteMatching, redisClient, type RedisClient } from './connect.js';

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

// Compare-and-set of several visits of one site, each applied or refused on its own, in order. KEYS[1]: the site's
// live set; then for each visit, KEYS: the visit, then the visitor keys to point at it; ARGV: the number of those
// keys, the visit id, the expected version, the new version, the doc, then the expected value of each visitor key
// ('' for none). ARGV[1] is the ttl, ARGV[2] the number of visits, ARGV[3] the writer's clock (ms), ARGV[4] the
// oldest score the live set keeps and ARGV[5] its ttl. A visit is applied only if its version and its keys'
// pointers are as read (or the keys already point at it); an applied visit is scored in the live set with the
// writer's clock, at or just after its last hit, and the set loses what is older than it keeps on every commit, so
// it holds the site's visits of the last minutes only. Returns 1 (applied) or 0 (a conflict: read again) per visit.
const COMMIT = `
local ttl = ARGV[1]
local out = {}
local a, k = 6, 2
for v = 1, tonumber(ARGV[2]) do
  local n = tonumber(ARGV[a])
  local id = ARGV[a + 1]
  local ok = tonumber(redis.call('HGET', KEYS[k], 'ver') or '0') == tonumber(ARGV[a + 2])
  if ok then
    for i = 1, n do
      local pointer = redis.call('GET', KEYS[k + i]) or ''
      if pointer ~= ARGV[a + 4 + i] and pointer ~= id then
        ok = false
        break
      end
    end
  end
  if ok then
    redis.call('HSET', KEYS[k], 'ver', ARGV[a + 3], 'doc', ARGV[a + 4])
    redis.call('PEXPIRE', KEYS[k], ttl)
    for i = 1, n do redis.call('SET', KEYS[k + i], id, 'PX', ttl) end
    redis.call('ZADD', KEYS[1], ARGV[3], id)
    out[v] = 1
  else
    out[v] = 0
  end
  a = a + 5 + n
  k = k + 1 + n
end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', '(' .. ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return out
`;

/**
 * How long the live set keeps a visit after its last write: the 5 minutes current visitors count (src/report/engine.ts),
 * and a minute for the clocks of the processes that write and read it to differ by.
 */
export const LIVE_KEEP_MS = 6 * 60_000;

type Scripted = RedisClient & {
  plumbVisitLookup(...args: (string | number)[]): Promise<(string | null)[]>;
  plumbVisitCommit(...args: (string | number)[]): Promise<number[]>;
};

export class RedisVisitStateStore implements VisitStateStore {
  private readonly redis: Scripted;

  constructor(url: string, private readonly prefix = 'plumb:') {
    // Auto-pipelining sends the lookups of concurrent hits in one round trip (one Redis; src/store/redis/connect.ts
    // says why not on a cluster). While Redis is away a hit waits at most two seconds for its visit and is then
    // refused (503, src/http/service-outage.ts), not held for as long as ioredis' reconnection attempts take.
    const redis = redisClient(url, { maxRetriesPerRequest: 2, enableAutoPipelining: true, commandTimeout: 2000 });
    // Unheard, a lost connection's 'error' is printed on every reconnection attempt; failed commands say it instead.
    redis.on('error', () => undefined);
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

  async commitAll(commits: readonly VisitCommit[]): Promise<boolean[]> {
    // One script per site (every key of a site is in its slot), in the commits' order within each site.
    const bySite = new Map<string, number[]>();
    commits.forEach((c, i) => {
      const site = c.pointers[0] ? siteOf(c.pointers[0].key) : undefined;
      if (site === undefined || c.pointers.some((p) => siteOf(p.key) !== site)) {
        throw new Error('a visit commit points the keys of exactly one site at the visit');
      }
      bySite.set(site, [...(bySite.get(site) ?? []), i]);
    });
    const out = commits.map(() => false);
    await Promise.all(
      [...bySite].map(async ([site, indexes]) => {
        const keys: string[] = [liveKeyOf(this.prefix, site)];
        const now = Date.now();
        const args: (string | number)[] = [commits[indexes[0]!]!.ttlMs, indexes.length, now, now - LIVE_KEEP_MS, LIVE_KEEP_MS];
        for (const i of indexes) {
          const c = commits[i]!;
          keys.push(this.visitKey(site, c.visitId), ...c.pointers.map((p) => this.visitorKey(p.key)));
          args.push(c.pointers.length, c.visitId, c.expectedVersion, c.version, c.doc, ...c.pointers.map((p) => p.expected ?? ''));
        }
        const applied = await this.redis.plumbVisitCommit(keys.length, ...keys, ...args);
        indexes.forEach((index, j) => (out[index] = applied[j] === 1));
      }),
    );
    return out;
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }

  /** Deletes every key of a site under this store's prefix, on every master of a cluster (tests use a prefix of their own). */
  async clear(): Promise<void> {
    await deleteMatching(this.redis, `${this.prefix}{*}:*`);
  }

  /** `prefix{SITE}:visitor:REST` for the visitor key `SITE:REST` (src/ingest/visits.ts, visitorKey). */
  private visitorKey(key: string): string {
    const site = siteOf(key);
    return `${this.prefix}{${site}}:visitor:${key.slice(site.length + 1)}`;
  }

  private visitKey(site: string, visitId: string): string {
    return visitKeyOf(this.prefix, site, visitId);
  }
}

/** A visit's hash: `prefix{SITE}:visit:ID`. */
export const visitKeyOf = (prefix: string, site: string, visitId: string) => `${prefix}{${site}}:visit:${visitId}`;

/** The site's live set (COMMIT): the ids of its visits written in the last LIVE_KEEP_MS, scored by when (ms). */
export const liveKeyOf = (prefix: string, site: string) => `${prefix}{${site}}:live`;

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
