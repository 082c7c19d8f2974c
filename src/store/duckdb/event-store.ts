// EventStore on the embedded DuckDB file: hits appended in batches, a batch's visits replaced (old rows deleted, new
// appended).

import { dateValue, LIST, VARCHAR, type DuckDBAppender } from '@duckdb/node-api';
import type { StoredHit, VisitRecord } from '../../domain/hits.js';
import { propColumns } from '../../domain/props.js';
import { HIT_CSV_COLUMNS, VISIT_CSV_COLUMNS, type CsvColumn, type CsvRows } from '../event-csv.js';
import { HIT_TEXT_COLUMNS, hitFromRow, journeyPageTexts, VISIT_ATTRIBUTION_COLUMNS, visitFromRow } from '../event-rows.js';
import { ImportedSites } from '../imported-sites.js';
import type { EventStore, ImportedDay, QueryParam, Statement } from '../types.js';
import type { BackupManifest } from '../../domain/backup-manifest.js';
import { backUpDatabase } from './backup.js';
import { inTransaction, timestampValue, type DuckDatabase, type Querier, type SerialConnection } from './database.js';
import { JOURNEY_ID_COLUMNS, numberNewPages, withJourneyIds } from './journey-pages.js';
import { INSERT_HITS, STAGE_RECORDS, STAGE_VISITS } from './record-load.js';
import { CHECKPOINT_THRESHOLD, RowGroupCheckpoints } from './row-group-checkpoints.js';

type Row = Record<string, unknown>;

const TEXT_LIST = LIST(VARCHAR);

function appendHit(a: DuckDBAppender, h: StoredHit): void {
  a.appendVarchar(h.siteId);
  a.appendVarchar(h.type);
  a.appendTimestamp(timestampValue(h.timestamp));
  a.appendUBigInt(h.visitorId);
  a.appendUBigInt(h.visitId);
  for (const column of HIT_TEXT_COLUMNS) a.appendVarchar(h[column]);
  a.appendVarchar(h.eventName);
  a.appendBigInt(BigInt(h.value));
  a.appendBoolean(h.firstView);
  // Custom properties (version 18) as two parallel lists, as in ClickHouse; NULL (read as none, like rows from
  // before the version) when there are none: appending two empty lists cost about 5 µs a hit, NULLs nothing.
  if (h.props && h.props.length > 0) {
    const [keys, values] = propColumns(h.props);
    a.appendList(keys, TEXT_LIST);
    a.appendList(values, TEXT_LIST);
  } else {
    a.appendNull();
    a.appendNull();
  }
  // An engagement hit's scroll depth and engaged time (version 25); 0 for every other hit.
  a.appendUTinyInt(h.scrollDepth ?? 0);
  a.appendUInteger(h.engagedMs ?? 0);
  a.endRow();
}

function appendVisit(a: DuckDBAppender, v: VisitRecord): void {
  a.appendUBigInt(v.visitId);
  a.appendVarchar(v.siteId);
  a.appendUBigInt(v.visitorId);
  a.appendTimestamp(timestampValue(v.startedAt));
  a.appendTimestamp(timestampValue(v.lastSeenAt));
  a.appendVarchar(v.entryPage);
  a.appendVarchar(v.exitPage);
  a.appendVarchar(v.exitHostname);
  a.appendInteger(v.pageviews);
  a.appendInteger(v.events);
  // Table order: the referrer pair came with the table, paths_exact with version 4, the rest of the
  // attribution with version 7.
  a.appendVarchar(v.referrerHostname);
  a.appendVarchar(v.referrerPathname);
  a.appendBoolean(v.pathsExact);
  for (const column of VISIT_ATTRIBUTION_COLUMNS.slice(2)) a.appendVarchar(v[column]);
  // The journey (version 27).
  a.appendUTinyInt(v.journeyLength);
  for (const page of journeyPageTexts(v)) a.appendVarchar(page);
  // Their numbers (version 28): set as the staged visits are stored (replaceVisits).
  for (let i = 0; i < JOURNEY_ID_COLUMNS.length; i++) a.appendUInteger(0);
  a.endRow();
}

/** Days since 1970-01-01 of a `YYYY-MM-DD` (checked by the importers). */
const epochDay = (day: string) => Date.parse(`${day}T00:00:00Z`) / 86_400_000;

function appendImportedDay(a: DuckDBAppender, r: ImportedDay): void {
  a.appendVarchar(r.importId);
  a.appendVarchar(r.siteId);
  a.appendDate(dateValue(epochDay(r.day)));
  a.appendVarchar(r.dimension);
  a.appendVarchar(r.value);
  a.appendBigInt(BigInt(r.pageviews));
  a.appendBigInt(BigInt(r.visits));
  a.appendBigInt(BigInt(r.visitors));
  a.appendBigInt(BigInt(r.bounces));
  a.appendBigInt(BigInt(r.visitDuration));
  a.appendInteger(r.lacks ?? 0);
  // Migration 26's columns, in the table's order.
  for (const n of [r.scrollSum, r.scrollPairs, r.engagedMsSum, r.engagedPairs]) a.appendBigInt(BigInt(n ?? 0));
  a.endRow();
}

/**
 * Rows appended, and flushed into the table, between turns of the event loop: both are synchronous work on this
 * thread (the flush, where DuckDB stores the rows, about 40 µs a row), so a batch of thousands in one piece would
 * hold up every request for hundreds of milliseconds.
 */
const ROWS_PER_TURN = 500;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

async function appendAll<T>(a: DuckDBAppender, rows: readonly T[], append: (a: DuckDBAppender, row: T) => void): Promise<void> {
  for (let i = 0; i < rows.length; i++) {
    if (i > 0 && i % ROWS_PER_TURN === 0) {
      a.flushSync();
      await nextTurn();
    }
    append(a, rows[i]!);
  }
}

/**
 * `SELECT` of a CSV file's rows as table columns, by DuckDB's own parallel reader. The path is quoted as a SQL
 * literal: read_csv takes no bound parameter for it, and the importer names its files itself.
 */
function selectCsv(file: string, columns: readonly CsvColumn[]): string {
  const fileType = (c: CsvColumn) => (c.type === 'EPOCH_MS' ? 'BIGINT' : c.type === 'TEXT_LIST' ? 'VARCHAR' : c.type);
  const value = (c: CsvColumn) =>
    c.type === 'EPOCH_MS'
      ? `epoch_ms(${c.name})`
      : c.type === 'TEXT_LIST'
        ? // Most hits have none: NULL (as write() stores them) without parsing JSON costs about a third of the load less.
          `CASE WHEN ${c.name} = '[]' THEN NULL ELSE CAST(from_json(${c.name}, '["VARCHAR"]') AS VARCHAR[]) END`
        : c.name;
  const spec = columns.map((c) => `'${c.name}': '${fileType(c)}'`).join(', ');
  const select = columns.map((c) => `${value(c)} AS ${c.name}`).join(', ');
  return `SELECT ${select} FROM read_csv(${sqlText(file)}, columns = {${spec}}, header = false, auto_detect = false,
    delim = ',', quote = '"', escape = '"', nullstr = '', allow_quoted_nulls = false)`;
}

/** `value` as an SQL text literal, for the places DuckDB takes no parameter (a file name in read_csv or COPY). */
export const sqlText = (value: string) => `'${value.replaceAll("'", "''")}'`;
const columnList = (columns: readonly CsvColumn[]) => columns.map((c) => c.name).join(', ');

/**
 * Records in the same transaction that the hit log is confirmed up to `seq` (never lowering it). The row is replaced,
 * deleted and inserted, not updated: DuckDB cannot checkpoint while a transaction that began before a committed
 * UPDATE is still running, so with an update in every load the row-group checkpoints failed for as long as reports
 * overlapped one another, and the rows waiting for them piled up in memory (docs/benchmarks.md, "Memory: measurements
 * behind the code"). Deletes and inserts do not hold a checkpoint back.
 */
async function confirmLog(q: Querier, seq: number): Promise<void> {
  await q.exec('DELETE FROM hit_log_state WHERE id = 1 AND confirmed_seq < ?', [seq]);
  await q.exec('INSERT INTO hit_log_state VALUES (1, ?) ON CONFLICT (id) DO NOTHING', [seq]);
}

/**
 * An empty `visit_updates`, the temp table a write stages its visit states in, made anew rather than emptied with
 * DELETE: an in-memory table's deleted rows are reclaimed only when that table's own database is checkpointed, which
 * the database file's checkpoints do not do, so the staging table grew by every visit state ever staged (about 70 MB
 * for 600,000 states; docs/benchmarks.md, "Memory: measurements behind the code").
 */
function emptyStaging(q: Querier): Promise<void> {
  return q.exec('CREATE OR REPLACE TEMP TABLE visit_updates AS SELECT * FROM visits LIMIT 0');
}

// DuckDB returns TIMESTAMP as Date and UBIGINT as bigint.
const toHit = (r: Row) => hitFromRow(r, (v) => v as Date);
const toVisit = (r: Row) => visitFromRow(r, (v) => v as Date);

/** How long hitsEstimate's answer is used before it is asked again. */
const ESTIMATE_TTL_MS = 60_000;

export class DuckEventStore implements EventStore {
  private next = 0;
  private readonly importedSites = new ImportedSites();
  private estimate: { hits: number; at: number } | undefined;
  private estimating: Promise<number> | undefined;
  /** Checkpoints as the hits table's row groups fill (the database's own threshold raised in open()). */
  readonly checkpoints = new RowGroupCheckpoints();

  private constructor(
    private readonly conn: SerialConnection,
    private readonly readers: SerialConnection[],
    /**
     * A second writer, for an import load's new visits only: they go in beside the load's hits, on another core
     * (writeCsv). Nothing else writes through it.
     */
    private readonly side: SerialConnection,
    /** DuckDB's thread count, which an import's load lowers while it runs (writeCsv). */
    private readonly threads: number,
    private readonly db: DuckDatabase,
  ) {}

  /**
   * Hit writes get a connection of their own, so they never queue behind metadata work or the reverse; reports
   * get `readers` connections (as many as may run at once, see QueryGate).
   */
  static async open(db: DuckDatabase, readers = 2): Promise<DuckEventStore> {
    const conn = await db.connection();
    const threads = await conn.serial(async (q) => {
      await emptyStaging(q);
      await q.exec(`SET GLOBAL checkpoint_threshold = '${CHECKPOINT_THRESHOLD}'`);
      return Number((await q.rows<{ n: bigint }>("SELECT current_setting('threads') AS n"))[0]!.n);
    });
    const pool = await Promise.all(Array.from({ length: readers }, () => db.connection()));
    return new DuckEventStore(conn, pool, await db.connection(), threads, db);
  }

  query(sql: string, params: readonly QueryParam[]): Promise<Record<string, unknown>[]> {
    const reader = this.readers[this.next++ % this.readers.length]!;
    return reader.serial((q) => q.rows(sql, [...params]));
  }

  /** In one read transaction: DuckDB gives it one snapshot, so hits written between the two are seen by neither. */
  queryAfter(first: Statement, next: (rows: Record<string, unknown>[]) => Statement | Promise<Statement>): Promise<Record<string, unknown>[]> {
    const reader = this.readers[this.next++ % this.readers.length]!;
    return reader.serial((q) =>
      inTransaction(q, async (q) => {
        const then = await next(await q.rows(first.sql, [...first.params]));
        return q.rows(then.sql, [...then.params]);
      }),
    );
  }

  write(hits: readonly StoredHit[], visits: readonly VisitRecord[], logSeq?: number): Promise<void> {
    if (hits.length === 0 && visits.length === 0 && logSeq === undefined) return Promise.resolve();
    return this.conn.serial(async (q) => {
      await inTransaction(q, (q) => this.append(q, hits, visits, logSeq));
      await this.checkpoints.appended(q, hits.length);
    });
  }

  /** write()'s rows, inside its transaction. */
  private async append(q: Querier, hits: readonly StoredHit[], visits: readonly VisitRecord[], logSeq?: number): Promise<void> {
    if (logSeq !== undefined) await confirmLog(q, logSeq);
    if (hits.length > 0) {
      const a = await q.appender('hits');
      await appendAll(a, hits, appendHit);
      a.closeSync();
    }
    if (visits.length > 0) {
      // Appending to a staging table and upserting from it is far faster than one statement per visit.
      await emptyStaging(q);
      const a = await q.appender('visit_updates');
      await appendAll(a, visits, appendVisit);
      a.closeSync();
      await this.replaceVisits(q);
    }
  }

  /**
   * Replaces the visits staged in visit_updates: their old rows go, the new states are appended with their journey
   * pages' numbers (journey-pages.ts; new pages numbered here, on the writer's connection). A visit's start only
   * moves earlier, so its old row started no earlier than the batch's earliest start: rows before that (most of the
   * table, visits are stored in start order) are skipped by their zone maps.
   */
  private async replaceVisits(q: Querier): Promise<void> {
    await q.exec(
      'DELETE FROM visits WHERE started_at >= (SELECT min(started_at) FROM visit_updates) AND visit_id IN (SELECT visit_id FROM visit_updates)',
    );
    await q.exec(numberNewPages('visit_updates'));
    const numbered = (ids: string[]) => `u.* REPLACE (${ids.map((id, i) => `${id} AS ${JOURNEY_ID_COLUMNS[i]}`).join(', ')})`;
    await q.exec(`INSERT INTO visits ${withJourneyIds({ table: 'visit_updates' }, numbered, 'u.rowid')}`);
  }

  /**
   * Runs a bulk load in one transaction on one DuckDB thread. Loading in parallel took far more CPU for the same rows:
   * about 1.5 times for an import's CSV files (docs/benchmarks.md, "Import: measurements behind the code") and 1.6
   * times for the collector's record files ("Collector: measurements behind the code"), CPU that the import and ingest
   * threads need on a machine whose cores they already keep busy. The setting is the whole database's: reports asked
   * during a load run on one thread too, and so does the checkpoint that may follow (RowGroupCheckpoints). `load`
   * answers how many hits it appended.
   */
  private loadOnOneThread(load: (q: Querier) => Promise<number>): Promise<void> {
    return this.conn.serial(async (q) => {
      await q.exec('SET threads = 1');
      try {
        const hits = await inTransaction(q, load);
        await this.checkpoints.appended(q, hits);
      } finally {
        await q.exec(`SET threads = ${this.threads}`);
      }
    });
  }

  /**
   * Loads an import's rows (loadOnOneThread). Visits that no earlier load stored are appended in a transaction of
   * their own on the side connection, at the same time as the hits and the replaced visits on the writer's: the two
   * run on two cores, which matters once the import thread is done and the last load is all that is left (the
   * last load's hits and visits took about a second on one core: docs/benchmarks.md, "Import: measurements
   * behind the code"). No other write touches those new rows, and a later load that replaces them starts only after
   * this one is done. If one of the two fails the other may have committed, as rows of a chunk already may when
   * the chunk spans two loads: the chunk fails either way.
   */
  async writeCsv(rows: CsvRows): Promise<void> {
    const insert = (table: string, file: string, columns: readonly CsvColumn[]) =>
      `INSERT INTO ${table} (${columnList(columns)}) ${selectCsv(file, columns)}`;
    // The new visits' journey pages are numbered first, on the writer's connection and committed, so that the side
    // connection finds their numbers and never gives any out.
    let insertNew: string | undefined;
    if (rows.newVisits > 0) {
      const newVisits = selectCsv(rows.newVisitsFile, VISIT_CSV_COLUMNS);
      await this.conn.serial((q) => inTransaction(q, (q) => q.exec(numberNewPages(`(${newVisits})`))));
      const numbered = (ids: string[]) => `u.*, ${ids.join(', ')}`;
      insertNew = `INSERT INTO visits (${columnList(VISIT_CSV_COLUMNS)}, ${JOURNEY_ID_COLUMNS.join(', ')}) ${withJourneyIds({ subquery: newVisits }, numbered)}`;
    }
    return this.loadOnOneThread(async (q) => {
      const fresh = insertNew !== undefined ? this.side.transaction((s) => s.exec(insertNew!)) : Promise.resolve();
      // Awaited below whatever happens here: the load is not over while the side's insert runs.
      fresh.catch(() => undefined);
      try {
        if (rows.hits > 0) await q.exec(insert('hits', rows.hitsFile, HIT_CSV_COLUMNS));
        if (rows.visits > 0) {
          await emptyStaging(q);
          await q.exec(insert('visit_updates', rows.visitsFile, VISIT_CSV_COLUMNS));
          await this.replaceVisits(q);
        }
      } finally {
        await fresh.catch(() => undefined);
      }
      await fresh;
      return rows.hits;
    });
  }

  /** Loads a file of hit records, with the hit log confirmed up to `logSeq` (loadOnOneThread). */
  loadRecords(file: string, logSeq?: number): Promise<void> {
    return this.loadOnOneThread(async (q) => {
      if (logSeq !== undefined) await confirmLog(q, logSeq);
      await q.exec(STAGE_RECORDS, [file]);
      const [inserted] = await q.rows<{ Count: bigint }>(INSERT_HITS);
      await emptyStaging(q);
      await q.exec(STAGE_VISITS);
      await this.replaceVisits(q);
      await q.exec('DROP TABLE record_batch');
      return Number(inserted?.Count ?? 0);
    });
  }

  /** The whole database as of one moment, on a connection of its own (src/store/duckdb/backup.ts). */
  backup(dir: string): Promise<BackupManifest> {
    return backUpDatabase(this.db, dir);
  }

  async logWatermark(): Promise<number> {
    const rows = await this.conn.serial((q) => q.rows<{ seq: bigint }>('SELECT confirmed_seq AS seq FROM hit_log_state WHERE id = 1'));
    return Number(rows[0]?.seq ?? 0);
  }

  async visitsSeenSince(since: Date): Promise<VisitRecord[]> {
    const rows = await this.conn.serial((q) => q.rows('SELECT * FROM visits WHERE last_seen_at >= ?', [since]));
    return rows.map(toVisit);
  }

  async listHits(siteId: string): Promise<StoredHit[]> {
    const rows = await this.conn.serial((q) => q.rows('SELECT * FROM hits WHERE site_id = ? ORDER BY ts', [siteId]));
    return rows.map(toHit);
  }

  async listVisits(siteId: string): Promise<VisitRecord[]> {
    const rows = await this.conn.serial((q) => q.rows('SELECT * FROM visits WHERE site_id = ? ORDER BY started_at', [siteId]));
    return rows.map(toVisit);
  }

  async deleteSite(siteId: string): Promise<void> {
    this.importedSites.forget(siteId);
    await this.conn.transaction(async (q) => {
      await q.exec('DELETE FROM hits WHERE site_id = ?', [siteId]);
      await q.exec('DELETE FROM visits WHERE site_id = ?', [siteId]);
      await q.exec('DELETE FROM journey_pages WHERE site_id = ?', [siteId]);
      await q.exec('DELETE FROM imported_daily WHERE site_id = ?', [siteId]);
    });
  }

  async deleteVisitRange(siteId: string, from: bigint, to: bigint): Promise<void> {
    await this.conn.transaction(async (q) => {
      for (const table of ['hits', 'visits']) {
        await q.exec(`DELETE FROM ${table} WHERE site_id = ? AND visit_id BETWEEN CAST(? AS UBIGINT) AND CAST(? AS UBIGINT)`, [
          siteId, from.toString(), to.toString(),
        ]);
      }
    });
  }

  async writeImportedDays(rows: readonly ImportedDay[]): Promise<void> {
    if (rows.length === 0) return;
    for (const siteId of new Set(rows.map((r) => r.siteId))) this.importedSites.forget(siteId);
    // Appended, not inserted: binding 11 parameters a row cost about 100 µs of CPU a row, most of an import's.
    await this.conn.transaction(async (q) => {
      const a = await q.appender('imported_daily');
      await appendAll(a, rows, appendImportedDay);
      a.closeSync();
    });
  }

  /**
   * DuckDB's catalog count of hit rows (deleted ones too, until compacted): a lookup, not a scan. Only the first
   * call waits for it; later ones get the last answer, asked again in the background once a minute old.
   */
  hitsEstimate(): Promise<number> {
    if (this.estimate && Date.now() - this.estimate.at < ESTIMATE_TTL_MS) return Promise.resolve(this.estimate.hits);
    this.estimating ??= this.conn
      .serial((q) => q.rows("SELECT estimated_size AS n FROM duckdb_tables() WHERE schema_name = 'main' AND table_name = 'hits'"))
      .then((rows) => {
        this.estimate = { hits: Number(rows[0]?.n ?? 0), at: Date.now() };
        return this.estimate.hits;
      })
      // Unknown counts as small: the plans it chooses between give the same answers.
      .catch(() => this.estimate?.hits ?? 0)
      .finally(() => (this.estimating = undefined));
    return this.estimate ? Promise.resolve(this.estimate.hits) : this.estimating;
  }

  hasImportedDays(siteId: string): Promise<boolean> {
    const any = () => this.conn.serial(async (q) => (await q.rows('SELECT 1 FROM imported_daily WHERE site_id = ? LIMIT 1', [siteId])).length > 0);
    return this.importedSites.has(siteId, any);
  }

  async deleteImportedDays(siteId: string, importId: string): Promise<void> {
    this.importedSites.forget(siteId);
    await this.conn.serial((q) => q.exec('DELETE FROM imported_daily WHERE site_id = ? AND import_id = ?', [siteId, importId]));
  }

  async close(): Promise<void> {
    await this.side.close();
    await this.conn.close();
  }
}
