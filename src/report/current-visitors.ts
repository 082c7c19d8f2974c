// Current visitors counted from visit rows: the stored rows of the last five minutes with the visits in progress
// laid over them (the ingest thread's, embedded; every process's in Redis, scale-out; docs/reports.md, "Current
// visitors"), so that a hit counts as soon as it is answered instead of once its row is written. Counted and
// ordered exactly as the SQL of compiler.currentVisitors does over the same rows.

import type { LiveVisit } from '../domain/hits.js';
import type { CurrentVisitors } from './engine.js';

/** As the SQL's LIMIT. */
export const CURRENT_TOP = 150;

/** A stored visit row as compiler.currentVisitRows selects it. */
export type StoredVisitRow = Record<string, unknown>;

/** A stored time: DuckDB's TIMESTAMP comes as a Date, ClickHouse's Int64 of milliseconds as its number or text. */
const msOf = (value: unknown): number => (value instanceof Date ? value.getTime() : Number(value));

/** The visits of both: by visit id, the live state where there is one (it is never older than the stored row). */
export function mergeCurrentVisits(stored: readonly StoredVisitRow[], live: readonly LiveVisit[]): LiveVisit[] {
  const byId = new Map<string, LiveVisit>();
  for (const r of stored) {
    const visitId = String(r.visit_id);
    byId.set(visitId, {
      visitId, lastSeenMs: msOf(r.last_seen_at), pageviews: Number(r.pageviews),
      exitHostname: String(r.exit_hostname), exitPage: String(r.exit_page),
      referrerHostname: String(r.referrer_hostname), referrerPathname: String(r.referrer_pathname),
    });
  }
  for (const v of live) byId.set(v.visitId, v);
  return [...byId.values()];
}

// The stores compare text by its UTF-8 bytes; JavaScript's < by UTF-16 code units, which differ past U+FFFF.
const bytes = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** Counts by two texts, most first, ties by the first text then the second; at most CURRENT_TOP. */
function top(visits: readonly LiveVisit[], key: (v: LiveVisit) => [string, string]): [string, string, number][] {
  const counts = new Map<string, Map<string, [string, string, number]>>();
  for (const v of visits) {
    const [a, b] = key(v);
    let inner = counts.get(a);
    if (!inner) counts.set(a, (inner = new Map()));
    const held = inner.get(b);
    if (held) held[2]++;
    else inner.set(b, [a, b, 1]);
  }
  return [...counts.values()].flatMap((inner) => [...inner.values()]).sort((x, y) => y[2] - x[2] || bytes(x[0], y[0]) || bytes(x[1], y[1])).slice(0, CURRENT_TOP);
}

/** /v1/current_visitors' answer over these visits. */
export function currentVisitorsOf(visits: readonly LiveVisit[], detailed: boolean): CurrentVisitors {
  const result: CurrentVisitors = { total: visits.length };
  if (!detailed) return result;
  result.content = top(visits.filter((v) => v.pageviews > 0), (v) => [v.exitHostname, v.exitPage])
    .map(([hostname, pathname, total]) => ({ hostname, pathname, total }));
  result.referrers = top(visits.filter((v) => v.referrerHostname !== ''), (v) => [v.referrerHostname, v.referrerPathname])
    .map(([referrer_hostname, referrer_pathname, total]) => ({ referrer_hostname, referrer_pathname, total }));
  return result;
}
