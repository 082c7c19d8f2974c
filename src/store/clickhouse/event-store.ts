// EventStore on ClickHouse (scale-out): hits in a MergeTree, visits in a ReplacingMergeTree read with FINAL,
// batched VALUES inserts built by the one literal function (insert-text.ts, also used on the ingest thread), and the
// hit-log watermark kept per node in the hits. On a cluster (CLICKHOUSE_CLUSTER) the same SQL reads and writes
// Distributed tables over node-local ones, and mutations go to the local tables of every node (cluster.ts).
// Written for 18.16 (Debian's package) and later releases: no query parameters, DateTime64, LowCardinality or
// CTEs are used. Tested on 18.16.1 (HTTP) and 26.7 (chdb, in process); version() is read once on open.

import type { StoredHit, VisitRecord } from '../../domain/hits.js';
import { hitFromRow, visitFromRow } from '../event-rows.js';
import { ImportedSites } from '../imported-sites.js';
import type { EventStore, ImportedDay, InsertStatements, QueryParam, Statement } from '../types.js';
import { ClickHouseConnection, parseClickHouseUrl, type ClickHouseTarget, type OpenTransport, type QuerySettings, type Row } from './client.js';
import { ClickHouseCluster, CLUSTER_SETTINGS } from './cluster.js';
import { ClickHouseDayRollups, countDeletions } from './day-rollups.js';
import { atLeast, featuresOf, type ClickHouseFeatures } from './features.js';
import { batchInserts } from './insert-text.js';
import { identifier, sqlLiteral } from './literal.js';
import { ensureDatabase, migrate } from './migrations.js';

export interface ClickHouseEventStoreOptions {
  /** CLICKHOUSE_URL: http(s)://[user[:password]@]host:port[/database]; database defaults to `plumb`. */
  url: string;
  /** Overrides the URL's database (tests use a fresh one each). Created if missing. */
  database?: string;
  /** This process's hit-log identity (a stable random id per data dir): logWatermark() is per node. */
  node: string;
  /** How to reach ClickHouse: HTTP unless a test or benchmark plugs in another engine (test/helpers/chdb.ts). */
  transport?: OpenTransport;
  /**
   * CLICKHOUSE_CLUSTER: a cluster of ClickHouse's remote_servers to spread the tables over (src/store/clickhouse/
   * cluster.ts); undefined: the process's CLICKHOUSE_CLUSTER (checked by loadConfig at start), if any.
   */
  cluster?: string;
}

/** Imported-day rows per INSERT. */
const ROWS_PER_INSERT = 20_000;

/**
 * Settings of report queries, by release. By default 18.16 also uses the set of `visit_id IN (subquery)` to skip
 * granules of a table whose sort key holds visit_id; on hits, visit_id comes after ts, so nothing is skipped, and
 * preparing the set for it cost more than the whole scan (the reports that read visits ran about 2x faster
 * without, see docs/benchmarks.md). 26.x prepares such sets cheaply and skips visits' granules with them: its
 * default measured faster on every report, so it gets none. Skipping granules or not never changes an answer.
 */
const reportSettings = (f: ClickHouseFeatures): QuerySettings => (atLeast(f, 20) ? {} : { use_index_for_in_with_subqueries: 0 });
const MUTATION_TIMEOUT_MS = 120_000;

const time = (value: unknown) => new Date(Number(value));

const toHit = (r: Row) => hitFromRow(r, time);
const toVisit = (r: Row) => visitFromRow(r, time);

/**
 * A deletion whose mutations outlast MUTATION_TIMEOUT_MS: ClickHouse goes on with them, and sending the deletion
 * again is harmless, so the request is answered as an outage (503 with Retry-After, src/http/service-outage.ts).
 */
export function mutationsStillRunning(what: string): Error {
  return new Error(`${what}: ClickHouse mutations still running after ${MUTATION_TIMEOUT_MS} ms`);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export class ClickHouseEventStore implements EventStore {
  private readonly importedSites = new ImportedSites();
  readonly dayRollups: ClickHouseDayRollups;
  /** Whether the last logged batch failed part way: see writeInserts. */
  private lastLoggedBatchFailed = false;

  private constructor(
    private readonly conn: ClickHouseConnection,
    private readonly target: ClickHouseTarget,
    private readonly node: string,
    private readonly openTransport: OpenTransport | undefined,
    /** The server's release and what it can do, read once on open (the dialect is built from it). */
    readonly features: ClickHouseFeatures,
    /** The cluster the tables are spread over; undefined: one server. */
    readonly cluster: ClickHouseCluster | undefined,
  ) {
    this.dayRollups = new ClickHouseDayRollups(conn);
  }

  /** Connects, creates the database if missing and applies migrations (safe when several processes start at once). */
  static async open(o: ClickHouseEventStoreOptions): Promise<ClickHouseEventStore> {
    const clusterName = o.cluster ?? (process.env.CLICKHOUSE_CLUSTER?.trim() || undefined);
    const parsed = parseClickHouseUrl(o.url, o.database);
    // On a cluster every request runs under the cluster's settings (cluster.ts), inserts included.
    const target = clusterName === undefined ? parsed : { ...parsed, settings: CLUSTER_SETTINGS };
    const transport = o.transport;
    const admin = ClickHouseConnection.open(target, { useDatabase: false, ...(transport ? { transport } : {}) });
    let cluster: ClickHouseCluster | undefined;
    try {
      if (clusterName !== undefined) cluster = await ClickHouseCluster.read(admin, clusterName, target, transport);
      await ensureDatabase(admin, target.database, cluster);
    } finally {
      await admin.close();
    }
    const conn = ClickHouseConnection.open(target, transport ? { transport } : {});
    try {
      const [row] = await conn.rows('SELECT version() AS version');
      const release = featuresOf(String(row?.version ?? ''));
      const features = cluster ? { ...release, cluster: true } : release;
      await migrate(conn, features, cluster);
      return new ClickHouseEventStore(conn, target, o.node, transport, features, cluster);
    } catch (err) {
      await conn.close();
      throw err;
    }
  }

  /** Report SQL from ClickHouseDialect, whose values are already inlined literals: nothing is bound here. */
  query(sql: string, params: readonly QueryParam[]): Promise<Record<string, unknown>[]> {
    if (params.length > 0) return Promise.reject(new Error('ClickHouse queries take no bound parameters (use ClickHouseDialect)'));
    return this.conn.rows(sql, reportSettings(this.features));
  }

  /**
   * One statement after the other: ClickHouse has no snapshot across statements. ClickHouseDialect compiles no
   * prelude (SqlDialect.preludes), so reports never come here; the two are still run as asked.
   */
  async queryAfter(first: Statement, next: (rows: Record<string, unknown>[]) => Statement | Promise<Statement>): Promise<Record<string, unknown>[]> {
    const then = await next(await this.query(first.sql, first.params));
    return this.query(then.sql, then.params);
  }

  /**
   * Visits first, then hits tagged with this node and `logSeq`, then the batch's mark in hit_log_marks. Not one
   * transaction (ClickHouse has none), so the mark is what commits the batch: the watermark is the highest mark,
   * and hits a crash left beyond it (their batch's mark never landed; a batch spanning two months is stored as
   * two parts, so some of its hits may have) are removed by logWatermark() before the log is replayed. Visits
   * written again on replay are harmless: the highest version of a visit wins.
   */
  write(hits: readonly StoredHit[], visits: readonly VisitRecord[], logSeq?: number): Promise<void> {
    // One INSERT for the whole batch, every row tagged with the same sequence number (see above).
    return this.writeInserts(batchInserts(hits, visits, this.node, logSeq ?? 0), logSeq);
  }

  /** The node the hits of this process are tagged with: the ingest thread builds batches' statements for it. */
  get insertNode(): string {
    return this.node;
  }

  /**
   * A batch as built by batchInserts (here, or on the ingest thread), stored as write() stores it. After a logged
   * batch failed, nothing says how far it got: its hits may be stored and only the mark lost, or the mark stored and
   * only its answer lost (a connection reset mid-request). So the next logged batch (the write buffer retries the
   * failed one first) starts as a restart does: the watermark read, hits beyond it removed, and a batch at or below
   * it skipped as committed. Each acknowledged hit is then stored once however the outage fell.
   */
  async writeInserts(inserts: InsertStatements, logSeq?: number): Promise<void> {
    if (logSeq !== undefined && this.lastLoggedBatchFailed) {
      if ((await this.logWatermark()) >= logSeq) {
        this.lastLoggedBatchFailed = false;
        return;
      }
    }
    try {
      for (const sql of inserts.visits) await this.conn.insert(sql);
      if (inserts.hits !== undefined) await this.conn.insert(inserts.hits);
      if (logSeq !== undefined) {
        await this.conn.insert(`INSERT INTO hit_log_marks VALUES (${sqlLiteral(this.node)}, ${sqlLiteral(logSeq)})`);
      }
    } catch (err) {
      if (logSeq !== undefined) this.lastLoggedBatchFailed = true;
      throw err;
    }
    if (logSeq !== undefined) this.lastLoggedBatchFailed = false;
  }

  /**
   * The highest committed batch of this node. Called at start, before the log is replayed, and before a failed
   * batch is written again: hits of this node beyond it belong to a batch that was cut short, and are deleted so
   * that the replay or the retry stores them once.
   */
  async logWatermark(): Promise<number> {
    const node = sqlLiteral(this.node);
    const [row] = await this.conn.rows(`SELECT max(seq) AS seq FROM hit_log_marks WHERE node = ${node}`);
    const watermark = Number(row?.seq ?? 0);
    const beyond = `log_node = ${node} AND log_seq > ${sqlLiteral(watermark)}`;
    const [orphans] = await this.conn.rows(`SELECT count() AS n FROM hits WHERE ${beyond}`);
    if (Number(orphans?.n ?? 0) > 0) {
      await this.conn.insert(countDeletions(beyond));
      await this.mutate('hits', `DELETE WHERE ${beyond}`);
      await this.mutationsDone('removing the hits of an unfinished batch');
    }
    return watermark;
  }

  async visitsSeenSince(since: Date): Promise<VisitRecord[]> {
    return (await this.conn.rows(`SELECT * FROM visits FINAL WHERE last_seen_at >= ${sqlLiteral(since)}`)).map(toVisit);
  }

  async listHits(siteId: string): Promise<StoredHit[]> {
    return (await this.conn.rows(`SELECT * FROM hits WHERE site_id = ${sqlLiteral(siteId)} ORDER BY ts`)).map(toHit);
  }

  async listVisits(siteId: string): Promise<VisitRecord[]> {
    return (await this.conn.rows(`SELECT * FROM visits FINAL WHERE site_id = ${sqlLiteral(siteId)} ORDER BY started_at`)).map(toVisit);
  }

  /** Deletes by mutation and waits until the mutations are done, so nothing of the site is read afterwards. */
  async deleteSite(siteId: string): Promise<void> {
    this.importedSites.forget(siteId);
    for (const table of ['hits', 'visits', 'imported_daily', 'day_changes', 'day_rollups'] as const) {
      await this.mutate(table, `DELETE WHERE site_id = ${sqlLiteral(siteId)}`);
    }
    await this.mutationsDone(`deleting site ${siteId}`);
  }

  async deleteVisitRange(siteId: string, from: bigint, to: bigint): Promise<void> {
    const range = `site_id = ${sqlLiteral(siteId)} AND visit_id BETWEEN ${sqlLiteral(from)} AND ${sqlLiteral(to)}`;
    await this.conn.insert(countDeletions(range));
    for (const table of ['hits', 'visits'] as const) await this.mutate(table, `DELETE WHERE ${range}`);
    await this.mutationsDone(`deleting visits of site ${siteId}`);
  }

  async writeImportedDays(rows: readonly ImportedDay[]): Promise<void> {
    for (const siteId of new Set(rows.map((r) => r.siteId))) this.importedSites.forget(siteId);
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      const tuples = rows.slice(i, i + ROWS_PER_INSERT).map((r) =>
        `(${[r.importId, r.siteId, r.day, r.dimension, r.value, r.pageviews, r.visits, r.visitors, r.bounces, r.visitDuration, r.lacks ?? 0,
          r.scrollSum ?? 0, r.scrollPairs ?? 0, r.engagedMsSum ?? 0, r.engagedPairs ?? 0].map(sqlLiteral).join(', ')})`,
      );
      await this.conn.insert(
        'INSERT INTO imported_daily (import_id, site_id, day, dimension, value, pageviews, visits, visitors, bounces, visit_duration, lacks, ' +
          `scroll_sum, scroll_pairs, engaged_ms_sum, engaged_pairs) VALUES ${tuples.join(',')}`,
      );
    }
  }

  hasImportedDays(siteId: string): Promise<boolean> {
    const any = async () => (await this.conn.rows(`SELECT 1 FROM imported_daily WHERE site_id = ${sqlLiteral(siteId)} LIMIT 1`)).length > 0;
    return this.importedSites.has(siteId, any);
  }

  async deleteImportedDays(siteId: string, importId: string): Promise<void> {
    this.importedSites.forget(siteId);
    await this.mutate('imported_daily', `DELETE WHERE site_id = ${sqlLiteral(siteId)} AND import_id = ${sqlLiteral(importId)}`);
    await this.mutationsDone(`deleting import ${importId}`);
  }

  /** Waits until every mutation of Plumb's tables has finished (ALTER ... DELETE runs in the background). */
  private async mutationsDone(what: string): Promise<void> {
    const deadline = Date.now() + MUTATION_TIMEOUT_MS;
    // On a cluster, the node-local tables' mutations on every node (each replica applies them itself).
    const c = this.cluster;
    const mutations = c ? c.everyNode('mutations') : 'system.mutations';
    const names = ['hits', 'visits', 'imported_daily', 'day_changes', 'day_rollups'];
    const tables = `(${names.map((t) => sqlLiteral(c ? `${t}_local` : t)).join(', ')})`;
    for (;;) {
      const [row] = await this.conn.rows(
        `SELECT count() AS pending FROM ${mutations} WHERE database = ${sqlLiteral(this.target.database)} ` +
          `AND table IN ${tables} AND is_done = 0`,
      );
      if (Number(row?.pending ?? 0) === 0) return;
      if (Date.now() > deadline) throw mutationsStillRunning(what);
      await sleep(50);
    }
  }

  /**
   * `ALTER TABLE <table> <change>` (a DELETE mutation). On a cluster the node-local tables are altered, on every
   * shard: a Distributed table takes no mutation.
   */
  private async mutate(table: 'hits' | 'visits' | 'imported_daily' | 'day_changes' | 'day_rollups', change: string): Promise<void> {
    const c = this.cluster;
    if (!c) return this.conn.exec(`ALTER TABLE ${table} ${change}`);
    await c.run(this.conn, `ALTER TABLE ${c.local(table)}${c.onCluster} ${change}`);
  }

  /** Drops the database (tests), on every node of a cluster. */
  async dropDatabase(): Promise<void> {
    const admin = ClickHouseConnection.open(this.target, { useDatabase: false, ...(this.openTransport ? { transport: this.openTransport } : {}) });
    try {
      const sql = `DROP DATABASE IF EXISTS ${identifier(this.target.database)}`;
      if (this.cluster) await this.cluster.run(admin, `${sql}${this.cluster.onCluster}`);
      else await admin.exec(sql);
    } finally {
      await admin.close();
    }
  }

  close(): Promise<void> {
    return this.conn.close();
  }
}
