// Day rollups on ClickHouse (migrations 9 and 10): each site's UTC days' counts of inserted and deleted hits
// (day_changes, kept by views as hits are written and by the deletions; a day's counts take in the 30 minutes on
// either side), and the builds of closed days (day_rollups), read in place of their hits while those counts are the
// ones a build was made from. What is built: src/report/day-rollups/.

import { utcDayStart } from '../../domain/time.js';
import { CROSSING_FIELD, type DayBuild, type DayChanges, type DayCrossings, type DayRollupRow, type DayRollupStore, type DayRollupSum } from '../types.js';
import type { ClickHouseConnection, Row } from './client.js';
import { sqlLiteral } from './literal.js';

/** The builds read here: format 3 holds the day's UTC hours too; 2 (migration 10) did not, 1 (version 9) no visits. */
const FORMAT = 3;

const DAY_MS = 86_400_000;
/**
 * How far from its day a hit can join one of the day's visits: the visit timeout (src/ingest/visits.ts), as
 * migration 10's view counts it.
 */
const REACH_MS = 30 * 60_000;

/** A hit's UTC day, as the view counts it (hits keep their times as epoch milliseconds). */
const utcDayOf = (ts: string) => `toDate(toDateTime(intDiv(${ts}, 1000), 'UTC'))`;
/** Each day whose counts take in a hit: its own, and the one on the other side of a midnight within REACH_MS. */
const HIT_DAYS =
  `arrayJoin(if(ts % ${DAY_MS} < ${REACH_MS}, [${utcDayOf(`ts - ${REACH_MS}`)}, ${utcDayOf('ts')}], ` +
  `if(ts % ${DAY_MS} >= ${DAY_MS - REACH_MS}, [${utcDayOf('ts')}, ${utcDayOf(`ts + ${REACH_MS}`)}], [${utcDayOf('ts')}])))`;

/** ClickHouse's default max_insert_block_size: the rows an insert's block holds unless told more. */
const DEFAULT_INSERT_BLOCK_ROWS = 1_048_576;

/** Rows added to the counts in one statement when healing. */
const CHANGES_PER_INSERT = 10_000;

const bigint = (v: unknown) => BigInt(String(v ?? 0));
const date = (day: string) => `toDate(${sqlLiteral(day)})`;

/**
 * The statement recording that the hits `where` selects are about to be deleted: run before the deletion, so a
 * build of their days stops being read as soon as it is asked (the deletion runs in the background).
 */
export function countDeletions(where: string): string {
  return `INSERT INTO day_changes (site_id, day, inserted, deleted) SELECT site_id, ${HIT_DAYS} AS day, toUInt64(0), count() FROM hits WHERE ${where} GROUP BY site_id, day`;
}

export class ClickHouseDayRollups implements DayRollupStore {
  constructor(private readonly conn: ClickHouseConnection) {}

  async validBuilds(siteId: string, fromDay: string, untilDay: string): Promise<DayBuild[]> {
    const site = sqlLiteral(siteId);
    const range = `day >= ${date(fromDay)} AND day < ${date(untilDay)}`;
    const rows = await this.conn.rows(
      `SELECT toString(day) AS d, max(built_at) AS b, any(inserted) AS i, any(deleted) AS x,
         argMax(head_until, built_at) AS h, argMax(tail_from, built_at) AS t FROM day_rollups
       WHERE site_id = ${site} AND field = '' AND format = ${FORMAT} AND ${range} AND (day, inserted, deleted) IN
         (SELECT day, sum(inserted), sum(deleted) FROM day_changes WHERE site_id = ${site} AND ${range} GROUP BY day)
       GROUP BY day ORDER BY day`,
    );
    return rows.map((r) => ({
      day: String(r.d), builtAt: Number(r.b), inserted: bigint(r.i), deleted: bigint(r.x), headUntil: Number(r.h), tailFrom: Number(r.t),
    }));
  }

  async sums(siteId: string, field: string, builds: readonly DayBuild[], buckets?: ReadonlyMap<string, string>, valueWhere?: string): Promise<DayRollupSum[] | undefined> {
    if (builds.length === 0) return [];
    // A build is its day, time and counts: an older build of the same day made in the same millisecond (a clock
    // that stands still) is another build.
    const keys = builds.map((b) => `(${date(b.day)}, ${sqlLiteral(b.builtAt)}, ${sqlLiteral(b.inserted)}, ${sqlLiteral(b.deleted)})`).join(', ');
    let bucket = "''";
    if (buckets) {
      const days = builds.map((b) => sqlLiteral(b.day)).join(', ');
      const starts = builds.map((b) => sqlLiteral(buckets.get(b.day) ?? '')).join(', ');
      bucket = `transform(toString(day), [${days}], [${starts}], '')`;
    }
    // The totals rows come along to tell that every build was found: one each.
    const rows = await this.conn.rows(
      `SELECT field, value, ${bucket} AS bucket, sum(pageviews) AS pageviews, sum(visitors) AS visitors, sum(visits) AS visits,
         sum(bounces) AS bounces, sum(duration_ms) AS duration_ms, sum(uniques) AS uniques, count() AS builds
       FROM day_rollups WHERE site_id = ${sqlLiteral(siteId)}
         AND (field = '' OR (field = ${sqlLiteral(field)}${valueWhere ? ` AND ${valueWhere}` : ''}))
         AND (day, built_at, inserted, deleted) IN (${keys})
       GROUP BY field, value, bucket`,
    );
    let found = 0;
    for (const r of rows) if (r.field === '') found += Number(r.builds);
    if (found !== builds.length) return undefined;
    // A day of events alone has a totals row of no pageviews: no group, as reports of pageviews have none for it.
    return rows
      .filter((r) => r.field === field && bigint(r.pageviews) > 0n)
      .map((r) => ({
        value: String(r.value), ...(buckets ? { bucket: String(r.bucket) } : {}), pageviews: bigint(r.pageviews), visitors: bigint(r.visitors),
        visits: bigint(r.visits), bounces: bigint(r.bounces), durationMs: bigint(r.duration_ms), uniques: bigint(r.uniques),
      }));
  }

  async changes(siteId: string, day: string): Promise<DayChanges & { hits: bigint }> {
    const site = sqlLiteral(siteId);
    const start = utcDayStart(day);
    const [counts] = await this.conn.rows(
      `SELECT sum(inserted) AS inserted, sum(deleted) AS deleted FROM day_changes WHERE site_id = ${site} AND day = ${date(day)}`,
    );
    const [hits] = await this.conn.rows(
      `SELECT count() AS hits FROM hits WHERE site_id = ${site} AND ts >= ${sqlLiteral(start - REACH_MS)} AND ts < ${sqlLiteral(start + DAY_MS + REACH_MS)}`,
    );
    return { inserted: bigint(counts?.inserted), deleted: bigint(counts?.deleted), hits: bigint(hits?.hits) };
  }

  addChanges(siteId: string, day: string, change: DayChanges): Promise<void> {
    return this.conn.insert(
      `INSERT INTO day_changes (site_id, day, inserted, deleted) VALUES (${sqlLiteral(siteId)}, ${sqlLiteral(day)}, ${sqlLiteral(change.inserted)}, ${sqlLiteral(change.deleted)})`,
    );
  }

  async heal(): Promise<number> {
    const key = (r: Row) => `${String(r.site_id)}\0${String(r.d)}`;
    const hits = new Map<string, { siteId: string; day: string; hits: bigint }>();
    for (const r of await this.conn.rows(`SELECT site_id, toString(${HIT_DAYS}) AS d, count() AS n FROM hits GROUP BY site_id, d`)) {
      hits.set(key(r), { siteId: String(r.site_id), day: String(r.d), hits: bigint(r.n) });
    }
    const counted = new Map<string, { siteId: string; day: string; net: bigint }>();
    for (const r of await this.conn.rows(
      'SELECT site_id, toString(day) AS d, sum(inserted) AS inserted, sum(deleted) AS deleted FROM day_changes GROUP BY site_id, d',
    )) {
      counted.set(key(r), { siteId: String(r.site_id), day: String(r.d), net: bigint(r.inserted) - bigint(r.deleted) });
    }
    const mends: string[] = [];
    for (const k of new Set([...hits.keys(), ...counted.keys()])) {
      const h = hits.get(k);
      const c = counted.get(k);
      const diff = (h?.hits ?? 0n) - (c?.net ?? 0n);
      if (diff === 0n) continue;
      const { siteId, day } = (h ?? c)!;
      const [inserted, deleted] = diff > 0n ? [diff, 0n] : [0n, -diff];
      mends.push(`(${sqlLiteral(siteId)}, ${sqlLiteral(day)}, ${sqlLiteral(inserted)}, ${sqlLiteral(deleted)})`);
    }
    for (let i = 0; i < mends.length; i += CHANGES_PER_INSERT) {
      await this.conn.insert(`INSERT INTO day_changes (site_id, day, inserted, deleted) VALUES ${mends.slice(i, i + CHANGES_PER_INSERT).join(', ')}`);
    }
    return mends.length;
  }

  async daysToBuild(beforeDay: string, limit: number): Promise<{ siteId: string; day: string }[]> {
    const before = `day < ${date(beforeDay)}`;
    const rows = await this.conn.rows(
      `SELECT site_id, toString(day) AS d FROM
         (SELECT site_id, day, sum(inserted) AS inserted, sum(deleted) AS deleted FROM day_changes WHERE ${before} GROUP BY site_id, day)
       WHERE inserted > deleted AND (site_id, day, inserted, deleted) NOT IN
         (SELECT site_id, day, inserted, deleted FROM day_rollups WHERE field = '' AND format = ${FORMAT} AND ${before})
       ORDER BY day DESC, site_id LIMIT ${sqlLiteral(limit)}`,
    );
    return rows.map((r) => ({ siteId: String(r.site_id), day: String(r.d) }));
  }

  async insertBuild(siteId: string, day: string, builtAt: number, counts: DayChanges, rows: readonly DayRollupRow[], crossings: DayCrossings): Promise<void> {
    const head = `${sqlLiteral(siteId)}, ${sqlLiteral(day)}, ${sqlLiteral(builtAt)}, ${sqlLiteral(counts.inserted)}, ${sqlLiteral(counts.deleted)}, ${FORMAT}`;
    const row = (r: DayRollupRow, windows = '0, 0') =>
      `(${head}, ${sqlLiteral(r.field)}, ${sqlLiteral(r.value)}, ${[r.pageviews, r.visitors, r.visits, r.bounces, r.durationMs, r.uniques].map(sqlLiteral).join(', ')}, ${windows})`;
    const none = { pageviews: 0n, visitors: 0n, visits: 0n, bounces: 0n, durationMs: 0n, uniques: 0n };
    const values = [
      ...rows.filter((r) => r.field !== '').map((r) => row(r)),
      ...crossings.visitIds.map((id) => row({ field: CROSSING_FIELD, value: String(id), ...none })),
      // The totals row, which makes a build readable (validBuilds), last.
      ...rows.filter((r) => r.field === '').map((r) => row(r, `${sqlLiteral(crossings.headUntil)}, ${sqlLiteral(crossings.tailFrom)}`)),
    ];
    // One insert, one block: one part (the build's day is one partition, its site one shard), which a replica has
    // whole or not at all, so a statement that finds a build's totals row finds the rest (sums() and the report's
    // crossing ids check that it does). Waiting for every replica instead (SYSTEM SYNC REPLICA) held 18.16's
    // servers for as long as a replica lagged.
    await this.conn.insert(
      'INSERT INTO day_rollups (site_id, day, built_at, inserted, deleted, format, field, value, pageviews, visitors, visits, bounces, duration_ms, uniques, head_until, tail_from) ' +
        `VALUES ${values.join(', ')}`,
      { max_insert_block_size: Math.max(values.length, DEFAULT_INSERT_BLOCK_ROWS) },
    );
  }
}
