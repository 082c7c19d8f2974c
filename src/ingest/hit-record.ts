// One stored hit with its visit's state, as one line of JSON: the hit log's record, and the line DuckDB loads
// (src/store/duckdb/record-load.ts), so a live hit is encoded once. Times are epoch milliseconds, 64-bit ids
// decimal strings (JSON numbers lose precision past 2^53).

import { attributionOf, type StoredHit, type VisitRecord } from '../domain/hits.js';

export interface LogRecord {
  /** Hit-log sequence number; 0 for rows that were not logged (imports). */
  seq: number;
  hit: StoredHit;
  visit: VisitRecord;
}

export const encodeRecord = (seq: number, hit: StoredHit, visit: VisitRecord): string =>
  JSON.stringify({
    s: seq,
    h: { ...hit, timestamp: hit.timestamp.getTime(), visitorId: String(hit.visitorId), visitId: String(hit.visitId) },
    v: {
      ...visit,
      startedAt: visit.startedAt.getTime(),
      lastSeenAt: visit.lastSeenAt.getTime(),
      visitorId: String(visit.visitorId),
      visitId: String(visit.visitId),
    },
  }) + '\n';

export function decodeRecord(line: string): LogRecord {
  const { s, h, v } = JSON.parse(line) as { s: number; h: Record<string, unknown>; v: Record<string, unknown> };
  return {
    seq: s,
    hit: { ...h, timestamp: new Date(h.timestamp as number), visitorId: BigInt(h.visitorId as string), visitId: BigInt(h.visitId as string) } as StoredHit,
    visit: {
      ...v,
      // Records written by an older version carry only the visit's referrer.
      ...attributionOf(v),
      startedAt: new Date(v.startedAt as number),
      lastSeenAt: new Date(v.lastSeenAt as number),
      visitorId: BigInt(v.visitorId as string),
      visitId: BigInt(v.visitId as string),
    } as VisitRecord,
  };
}
