// Current visitors' visits in progress on the scale-out store: every process's visits of a site written to Redis in
// the last minutes (the live set the visit commit keeps, src/store/redis/visit-state.ts), read as LiveVisits so that
// a hit counts as soon as its collector answers, not once its batch reaches ClickHouse.

import type { LiveVisit } from '../../domain/hits.js';
import { redisClient, type RedisClient } from './connect.js';
import { liveKeyOf, visitKeyOf } from './visit-state.js';

/**
 * The fields of a visit's doc current visitors read: `r` of VisitDoc (src/ingest/visits.ts, encode), the record
 * whose row the batch writes.
 */
interface DocRecord {
  visitId: string;
  lastSeenAt: number;
  pageviews: number;
  exitHostname: string;
  exitPage: string;
  referrerHostname: string;
  referrerPathname: string;
}

/** The visit a doc holds, or undefined for a doc that is not one (never written by Plumb: it counts from its row). */
export function liveVisitOfDoc(text: string): LiveVisit | undefined {
  let r: Partial<Record<keyof DocRecord, unknown>> | undefined;
  try {
    r = (JSON.parse(text) as { r?: typeof r } | null)?.r;
  } catch {
    return undefined;
  }
  if (!r || typeof r !== 'object') return undefined;
  const { visitId, lastSeenAt, pageviews, exitHostname, exitPage, referrerHostname, referrerPathname } = r;
  if (typeof visitId !== 'string' || !/^\d+$/.test(visitId) || !Number.isFinite(lastSeenAt) || !Number.isFinite(pageviews)) return undefined;
  if (typeof exitHostname !== 'string' || typeof exitPage !== 'string') return undefined;
  if (typeof referrerHostname !== 'string' || typeof referrerPathname !== 'string') return undefined;
  return { visitId, lastSeenMs: lastSeenAt as number, pageviews: pageviews as number, exitHostname, exitPage, referrerHostname, referrerPathname };
}

// KEYS[1]: a site's live set. ARGV: the lowest score, the most ids to return. Returns the ids scored at or above it,
// or false when there are more than that: counted first (O(log n)), so a site too busy to count this way costs no
// transfer of its ids.
const IDS_SINCE = `
if redis.call('ZCOUNT', KEYS[1], ARGV[1], '+inf') > tonumber(ARGV[2]) then return false end
return redis.call('ZRANGEBYSCORE', KEYS[1], ARGV[1], '+inf')
`;

type Scripted = RedisClient & { plumbLiveIds(key: string, since: number, max: number): Promise<string[] | null> };

export class RedisLiveVisits {
  private readonly redis: Scripted;

  constructor(url: string, private readonly prefix = 'plumb:') {
    // As the visit state's client (visit-state.ts): while Redis is away a read fails within about two seconds, and
    // the request is answered 503 (src/http/service-outage.ts) like any other that needs Redis.
    const redis = redisClient(url, { maxRetriesPerRequest: 2, commandTimeout: 2000 });
    redis.defineCommand('plumbLiveIds', { lua: IDS_SINCE, numberOfKeys: 1 });
    this.redis = redis as Scripted;
  }

  /**
   * The site's visits with a hit at `sinceMs` or later, as Redis holds them now (every process's), at most `max`:
   * null when there are more, for the caller to count the stored rows alone. Two round trips: the ids written since
   * (by the writer's clock, at or after each visit's last hit; IDS_SINCE), then their docs, pipelined (one slot, the
   * site's hash tag: one node of a cluster), so that Redis serves other clients between them rather than running
   * one long script. A Redis failure rejects.
   */
  async since(siteId: string, sinceMs: number, max: number): Promise<LiveVisit[] | null> {
    // A site id cannot hold a hash tag's braces (visit-state.ts, siteOf): such a site has no visits in Redis.
    if (/[{}]/.test(siteId)) return [];
    const ids = await this.redis.plumbLiveIds(liveKeyOf(this.prefix, siteId), Math.floor(sinceMs), max);
    if (!ids) return null;
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hget(visitKeyOf(this.prefix, siteId, id), 'doc');
    const replies = (await pipeline.exec()) ?? [];
    const out: LiveVisit[] = [];
    for (const [err, doc] of replies) {
      if (err) throw err;
      // No doc: the visit expired since the ids were read (its row has long been written).
      const visit = typeof doc === 'string' ? liveVisitOfDoc(doc) : undefined;
      if (visit && visit.lastSeenMs >= sinceMs) out.push(visit);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.redis.quit();
  }
}
