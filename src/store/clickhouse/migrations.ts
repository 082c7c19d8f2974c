// Versioned schema migrations for the ClickHouse event store, applied on open. Every statement is idempotent
// (IF NOT EXISTS), so several processes may open the same database at once: each applies what it finds missing,
// and schema_migrations (deduplicated by version) records it.

import type { ClickHouseConnection } from './client.js';
import { SHARDING_KEYS, type ClickHouseCluster } from './cluster.js';
import { atLeast, type ClickHouseFeatures } from './features.js';
import { identifier, sqlLiteral } from './literal.js';
import { JOURNEY_PAGE_COLUMNS } from '../event-rows.js';
import { refuseNewerSchema } from '../newer-schema.js';

interface Migration {
  version: number;
  name: string;
  /** The statements, written for the connected release where releases need different SQL. */
  statements: (string | ((f: ClickHouseFeatures) => string))[];
}

/**
 * `ADD COLUMN`, idempotent: `IF NOT EXISTS` where the release has it (not 18.16: there a second process adding
 * the same column gets code 44, which idempotent() accepts; 26.x reports that case as code 15, DUPLICATE_COLUMN,
 * and has IF NOT EXISTS, checked under the table's ALTER lock).
 */
const addColumn = (f: ClickHouseFeatures) => (atLeast(f, 20) ? 'ADD COLUMN IF NOT EXISTS' : 'ADD COLUMN');

// Text columns of a hit, in DuckDB's table order (src/store/duckdb/migrations.ts).
const HIT_TEXT = [
  'hostname', 'pathname', 'referrer_hostname', 'referrer_pathname', 'referrer_source', 'utm_campaign', 'utm_content',
  'utm_medium', 'utm_source', 'utm_term', 'ref', 'keyword', 'browser', 'operating_system', 'device_type',
  'country_code', 'region', 'state', 'city',
];

// Attribution columns added to visits by version 2 (the referrer pair was there from version 1).
const VISIT_ATTRIBUTION = ['referrer_source', 'utm_campaign', 'utm_content', 'utm_medium', 'utm_source', 'utm_term', 'ref', 'keyword'];

// Append only: a released migration is never edited, a change is a new version.
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'hits and visits',
    statements: [
      // Times are Int64 milliseconds since the epoch, UTC: 18.16 has no DateTime64, and hits, durations and range
      // ends are exact to the millisecond in DuckDB. Months partition hits (old months drop cheaply); reports
      // always filter one site, one type and a time range: the sorting key.
      `CREATE TABLE IF NOT EXISTS hits (
        site_id String, type String, ts Int64, visitor_id UInt64, visit_id UInt64,
        ${HIT_TEXT.map((c) => `${c} String`).join(', ')},
        event_name String, value Int64, first_view UInt8,
        log_node String, log_seq UInt64
      ) ENGINE = MergeTree PARTITION BY toYYYYMM(toDateTime(intDiv(ts, 1000), 'UTC')) ORDER BY (site_id, type, ts, visit_id)`,
      // The latest state of each visit: every change is a new row, and merges (or FINAL) keep the highest
      // version, pageviews + events, which grows with every hit of the visit whichever process wrote it. Not
      // partitioned by time: started_at moves back when a late hit arrives, and versions of one visit must meet.
      `CREATE TABLE IF NOT EXISTS visits (
        visit_id UInt64, site_id String, visitor_id UInt64, started_at Int64, last_seen_at Int64,
        entry_page String, exit_page String, exit_hostname String, pageviews UInt32, events UInt32,
        referrer_hostname String, referrer_pathname String, paths_exact UInt8, version UInt64
      ) ENGINE = ReplacingMergeTree(version) ORDER BY (site_id, visit_id)`,
      // The hit-log watermark of batches that stored no hit (hits carry their own: log_node, log_seq).
      `CREATE TABLE IF NOT EXISTS hit_log_marks (node String, seq UInt64) ENGINE = ReplacingMergeTree(seq) ORDER BY node`,
    ],
  },
  {
    version: 2,
    name: 'attribution belongs to the visit',
    // The visit's attribution (its first hit's), for resuming visits. Hits recorded before this version keep
    // their own attribution here (18.16 cannot update rows from another table's values; docs/reports.md).
    statements: VISIT_ATTRIBUTION.map((c) => (f: ClickHouseFeatures) => `ALTER TABLE visits ${addColumn(f)} ${c} String DEFAULT ''`),
  },
  {
    version: 3,
    name: 'imported daily aggregates',
    // Another product's daily numbers (Plausible's export), as in DuckDB's imported_daily; deleted by import.
    statements: [
      `CREATE TABLE IF NOT EXISTS imported_daily (
        import_id String, site_id String, day Date, dimension String, value String,
        pageviews UInt64, visits UInt64, visitors UInt64, bounces UInt64, visit_duration UInt64
      ) ENGINE = MergeTree ORDER BY (site_id, dimension, day, value)`,
    ],
  },
  {
    version: 4,
    name: 'what imported days lack',
    // As DuckDB's migration 16: the numbers a row does not carry, as bits (IMPORTED_LACKS); 0 on earlier rows.
    statements: [(f: ClickHouseFeatures) => `ALTER TABLE imported_daily ${addColumn(f)} lacks UInt8 DEFAULT 0`],
  },
  {
    version: 5,
    name: 'custom properties of hits',
    // Parallel arrays, as in DuckDB: prop_values[i] is the value of prop_keys[i]. Both releases have Array(String)
    // and ARRAY JOIN; rows written before default to empty arrays.
    statements: ['prop_keys', 'prop_values'].map((c) => (f: ClickHouseFeatures) => `ALTER TABLE hits ${addColumn(f)} ${c} Array(String)`),
  },
  {
    version: 6,
    name: 'engagement: scroll depth and engaged time of hits',
    // As DuckDB's migration 25: an engagement hit's deepest scroll (percent) and engaged ms; 0 on every other hit.
    statements: [
      (f: ClickHouseFeatures) => `ALTER TABLE hits ${addColumn(f)} scroll_depth UInt8 DEFAULT 0`,
      (f: ClickHouseFeatures) => `ALTER TABLE hits ${addColumn(f)} engaged_ms UInt32 DEFAULT 0`,
    ],
  },
  {
    version: 7,
    name: 'engagement of imported days',
    // As DuckDB's migration 26: Plausible's pages' summed deepest scroll and engaged ms with the pairs each is
    // over; 0 on earlier rows.
    statements: ['scroll_sum', 'scroll_pairs', 'engaged_ms_sum', 'engaged_pairs'].map(
      (c) => (f: ClickHouseFeatures) => `ALTER TABLE imported_daily ${addColumn(f)} ${c} UInt64 DEFAULT 0`,
    ),
  },
  {
    version: 8,
    name: 'journeys of visits',
    // As DuckDB's migration 27: a visit's journey length (capped at 6; 0 on earlier rows: not known) and its 2nd
    // to 5th pages.
    statements: [
      (f: ClickHouseFeatures) => `ALTER TABLE visits ${addColumn(f)} journey_length UInt8 DEFAULT 0`,
      ...JOURNEY_PAGE_COLUMNS.map((c) => (f: ClickHouseFeatures) => `ALTER TABLE visits ${addColumn(f)} ${c} String DEFAULT ''`),
    ],
  },
  {
    version: 9,
    name: 'day rollups',
    // Closed UTC days' pageviews and visitors per field value, built from the hits (src/report/day-rollups/) and
    // read instead of them while the day's hits are as they were: day_changes counts, per site and UTC day, every
    // hit ever inserted (the view, as the insert is written) and deleted (the deletions themselves). A build
    // records both counts; it is read only while they are unchanged. Days stored before this version have no counts:
    // the builder adds them (DayRollupStore.heal).
    statements: [
      `CREATE TABLE IF NOT EXISTS day_changes (site_id String, day Date, inserted UInt64, deleted UInt64)
        ENGINE = SummingMergeTree ORDER BY (site_id, day)`,
      `CREATE MATERIALIZED VIEW IF NOT EXISTS day_changes_view TO day_changes AS
        SELECT site_id, toDate(toDateTime(intDiv(ts, 1000), 'UTC')) AS day, count() AS inserted, toUInt64(0) AS deleted
        FROM hits GROUP BY site_id, day`,
      // One build of a site's day: rows with the same built_at, field '' holding the day's totals (a build without
      // that row is not read) and the counts it was built from.
      `CREATE TABLE IF NOT EXISTS day_rollups (
        site_id String, day Date, built_at Int64, field String, value String, pageviews UInt64, visitors UInt64,
        inserted UInt64, deleted UInt64
      ) ENGINE = MergeTree PARTITION BY toYYYYMM(day) ORDER BY (site_id, field, day, value)`,
    ],
  },
  {
    version: 10,
    name: 'day rollups of visits',
    // Builds also hold the visits lying wholly inside their day (visits, bounces, durations, page pairs per field
    // value) and list the day's other visits, which reports read from their hits: format 2 (builds of version 9,
    // format 1, are never read and are built again). Whether a visit lies inside its day also depends on the hits
    // up to the visit timeout (src/ingest/visits.ts, 30 minutes) before and after the day, which could join it:
    // a second view counts each hit that close to a midnight for the day on the other side too, so a day's counts
    // cover its day widened by 30 minutes each way. The builder mends every day's counts to that once (heal).
    statements: [
      `CREATE MATERIALIZED VIEW IF NOT EXISTS day_edges_view TO day_changes AS
        SELECT site_id, toDate(toDateTime(intDiv(ts + if(ts % 86400000 < 1800000, -1800000, 1800000), 1000), 'UTC')) AS day,
          count() AS inserted, toUInt64(0) AS deleted
        FROM hits WHERE ts % 86400000 < 1800000 OR ts % 86400000 >= 84600000 GROUP BY site_id, day`,
      ...['format UInt8 DEFAULT 1', 'visits UInt64 DEFAULT 0', 'bounces UInt64 DEFAULT 0', 'duration_ms UInt64 DEFAULT 0', 'uniques UInt64 DEFAULT 0',
        'head_until Int64 DEFAULT 0', 'tail_from Int64 DEFAULT 0'].map((c) => (f: ClickHouseFeatures) => `ALTER TABLE day_rollups ${addColumn(f)} ${c}`),
    ],
  },
];

// ClickHouse's codes for "already exists": two processes creating the same thing at the same moment may see
// them despite IF NOT EXISTS (18.16 checks and creates in two steps). 44 is also "column already exists": 18.16
// has no ADD COLUMN IF NOT EXISTS, so a second process adding the same column gets it (and only then is it benign).
const ALREADY_EXISTS = new Set(['57', '82']);

/**
 * ClickHouse 18.16's answer to an ALTER that ran into another process's ALTER adding the same column ("Code: 179,
 * Different expressions with the same alias <column>_tmp"; seen when four processes migrated a new cluster database
 * at once). Asked again once the other is done, the column is there (code 44, taken as done).
 */
const CONCURRENT_ALTER = /Code: 179\b/;
const CONCURRENT_ALTER_ATTEMPTS = 5;

async function idempotent(conn: ClickHouseConnection, sql: string): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    try {
      await conn.exec(sql);
      return;
    } catch (err) {
      const message = String((err as Error).message);
      const code = String((err as { code?: unknown }).code ?? /Code: (\d+)/.exec(message)?.[1]);
      if (ALREADY_EXISTS.has(code) || (code === '44' && /already exists/.test(message))) return;
      if (/^ALTER /.test(sql) && CONCURRENT_ALTER.test(message) && attempt < CONCURRENT_ALTER_ATTEMPTS) {
        await new Promise((resolve) => setTimeout(resolve, 100 * attempt));
        continue;
      }
      throw err;
    }
  }
}

/**
 * idempotent() of a statement on every node of a cluster. ON CLUSTER reports a node's error inside its own
 * (`There was an error on [host:port]: Code: 44, ...`), so the node's code is looked for in the message too.
 */
async function idempotentOnCluster(cluster: ClickHouseCluster, conn: ClickHouseConnection, sql: string): Promise<void> {
  await cluster.run(conn, sql, async (node, statement) => {
    try {
      await idempotent(node, statement);
    } catch (err) {
      const nodeCode = /error on \[[^\]]*\]: Code: (\d+)/.exec(String((err as Error).message))?.[1];
      if (nodeCode !== undefined && (ALREADY_EXISTS.has(nodeCode) || (nodeCode === '44' && /already exists/.test(String((err as Error).message))))) return;
      throw err;
    }
  });
}

/** A statement of MIGRATIONS as the cluster runs it on its node-local table (clusterStatement). */
interface LocalStatement {
  table: string;
  /** A CREATE (else an ALTER's change, `ADD COLUMN ...`, to be joined with the same table's next ones). */
  create: boolean;
  /** A materialized view: made on every node over the local tables, with no Distributed table of its own. */
  view?: boolean;
  sql: string;
}

/**
 * A single-server statement of MIGRATIONS on the cluster's node-local table `<name>_local`: a CREATE TABLE with its
 * engine replicated when a ZooKeeper serves the cluster (its data at a path of this database, table and shard),
 * an ALTER TABLE's change as it is. The Distributed table over it is made by distributedTable().
 */
function clusterStatement(sql: string, cluster: ClickHouseCluster, database: string): LocalStatement {
  const db = identifier(database);
  const create = /^CREATE TABLE IF NOT EXISTS (\w+) \(([\s\S]*)\)\s*ENGINE = (\w+)(?:\(([^)]*)\))?([\s\S]*)$/.exec(sql);
  if (create) {
    const [, table, columns, engine, args, rest] = create as unknown as [string, string, string, string, string | undefined, string];
    const replicated = cluster.replicated
      ? `Replicated${engine}(${[sqlLiteral(`/clickhouse/tables/{shard}/${db}/${table}`), "'{replica}'", ...(args ? [args] : [])].join(', ')})`
      : `${engine}${args === undefined ? '' : `(${args})`}`;
    return { table, create: true, sql: `CREATE TABLE IF NOT EXISTS ${cluster.local(table)}${cluster.onCluster} (${columns}) ENGINE = ${replicated}${rest}` };
  }
  // A view fed by inserts into the local table of one node writes that node's local target (replicated from there).
  const view = /^CREATE MATERIALIZED VIEW IF NOT EXISTS (\w+) TO (\w+) AS\s+([\s\S]*)\s+FROM (\w+)([\s\S]*)$/.exec(sql);
  if (view) {
    const [, name, target, select, source, rest] = view as unknown as [string, string, string, string, string, string];
    return {
      table: name,
      create: true,
      view: true,
      sql: `CREATE MATERIALIZED VIEW IF NOT EXISTS ${cluster.local(name)}${cluster.onCluster} TO ${cluster.local(target)} AS ${select} FROM ${cluster.local(source)}${rest}`,
    };
  }
  const alter = /^ALTER TABLE (\w+) ([\s\S]*)$/.exec(sql);
  if (alter) return { table: alter[1]!, create: false, sql: alter[2]! };
  throw new Error(`a migration statement the cluster cannot run: ${sql.slice(0, 80)}`);
}

/** The Distributed table `<name>` over every node's `<name>_local`, sharded by SHARDING_KEYS. */
function distributedTable(table: string, cluster: ClickHouseCluster, database: string): string {
  const key = SHARDING_KEYS[table];
  if (key === undefined) throw new Error(`no sharding key for ClickHouse table ${table}`);
  const db = identifier(database);
  return `CREATE TABLE IF NOT EXISTS ${db}.${table}${cluster.onCluster} AS ${cluster.local(table)} ENGINE = Distributed(${cluster.name}, ${db}, ${table}_local, ${key})`;
}

/**
 * The migrations still to apply, on a cluster: each on the node-local tables (a migration's changes of one table
 * as one ALTER: on a cluster each statement is a round of ClickHouse's DDL queue, a fraction of a second), then
 * each Distributed table made (again) over its altered local table once, then the versions recorded. The
 * Distributed tables are made again rather than altered: 18.16 refuses ALTER ... ON CLUSTER of a table that is
 * not replicated on a cluster whose shards are. They hold no rows (inserts are synchronous, cluster.ts), so
 * nothing is lost; a report in that instant fails and may be retried. A crash before the versions are recorded
 * leaves them to the next start, which finds the tables and columns there (idempotent()).
 */
async function migrateCluster(conn: ClickHouseConnection, features: ClickHouseFeatures, cluster: ClickHouseCluster, pending: Migration[]): Promise<void> {
  const created = new Set<string>();
  const altered = new Set<string>();
  for (const m of pending) {
    const statements = m.statements.map((sql) => clusterStatement(typeof sql === 'string' ? sql : sql(features), cluster, conn.database));
    for (let i = 0; i < statements.length; ) {
      const s = statements[i]!;
      if (s.create) {
        await idempotentOnCluster(cluster, conn, s.sql);
        if (!s.view) created.add(s.table);
        i++;
        continue;
      }
      const changes: string[] = [];
      for (; i < statements.length && !statements[i]!.create && statements[i]!.table === s.table; i++) changes.push(statements[i]!.sql);
      await idempotentOnCluster(cluster, conn, `ALTER TABLE ${cluster.local(s.table)}${cluster.onCluster} ${changes.join(', ')}`);
      altered.add(s.table);
    }
  }
  const db = identifier(conn.database);
  for (const table of [...new Set([...created, ...altered])]) {
    if (altered.has(table)) await idempotentOnCluster(cluster, conn, `DROP TABLE IF EXISTS ${db}.${table}${cluster.onCluster}`);
    await idempotentOnCluster(cluster, conn, distributedTable(table, cluster, conn.database));
  }
  for (const m of pending) await conn.exec(`INSERT INTO schema_migrations VALUES (${sqlLiteral(m.version)}, ${sqlLiteral(m.name)}, now())`);
}

/** Creates the database unless it exists (through a connection to the server's default database); on every node of `cluster`. */
export async function ensureDatabase(admin: ClickHouseConnection, database: string, cluster?: ClickHouseCluster): Promise<void> {
  if (cluster) return idempotentOnCluster(cluster, admin, `CREATE DATABASE IF NOT EXISTS ${identifier(database)}${cluster.onCluster}`);
  await idempotent(admin, `CREATE DATABASE IF NOT EXISTS ${identifier(database)}`);
}

/**
 * Brings the schema up to the newest version; returns the versions this call applied, or refuses (NewerSchemaError)
 * a database a newer release migrated. On a cluster every statement
 * runs on every node (migrateCluster) and schema_migrations is itself a Distributed table, so the cluster is
 * migrated once, whichever node a process connects to.
 */
export async function migrate(conn: ClickHouseConnection, features: ClickHouseFeatures, cluster?: ClickHouseCluster): Promise<number[]> {
  const schemaMigrations = `CREATE TABLE IF NOT EXISTS schema_migrations (version UInt32, name String, applied_at DateTime)
     ENGINE = ReplacingMergeTree ORDER BY version`;
  if (cluster) {
    // A database made for one server has its tables under the names the Distributed tables take: refused, not
    // taken over (nothing here moves its rows onto the shards).
    const [single] = await conn.rows(
      `SELECT name, engine FROM system.tables WHERE database = ${sqlLiteral(conn.database)} AND name IN ('schema_migrations', 'hits') AND engine != 'Distributed'`,
    );
    if (single) {
      throw new Error(
        `CLICKHOUSE_CLUSTER is set, but database ${conn.database} was made for one ClickHouse server (its ${String(single.name)} is a ` +
          `${String(single.engine)} table): use a new database for the cluster, or unset CLICKHOUSE_CLUSTER`,
      );
    }
    await idempotentOnCluster(cluster, conn, clusterStatement(schemaMigrations, cluster, conn.database).sql);
    await idempotentOnCluster(cluster, conn, distributedTable('schema_migrations', cluster, conn.database));
  } else {
    await idempotent(conn, schemaMigrations);
  }
  const applied = new Set((await conn.rows('SELECT DISTINCT version FROM schema_migrations')).map((r) => Number(r.version)));
  // Written by a newer release: refused before anything changes, as the other stores refuse it (newer-schema.ts).
  refuseNewerSchema(applied, MIGRATIONS.at(-1)!.version, `ClickHouse (CLICKHOUSE_URL, database ${conn.database})`);
  const pending = MIGRATIONS.filter((m) => !applied.has(m.version));
  if (cluster) {
    await migrateCluster(conn, features, cluster, pending);
    return pending.map((m) => m.version);
  }
  const ran: number[] = [];
  for (const m of pending) {
    for (const sql of m.statements) await idempotent(conn, typeof sql === 'string' ? sql : sql(features));
    await conn.exec(`INSERT INTO schema_migrations VALUES (${sqlLiteral(m.version)}, ${sqlLiteral(m.name)}, now())`);
    ran.push(m.version);
  }
  return ran;
}
