// The ClickHouse store on a cluster defined in ClickHouse's own configuration (remote_servers, CLICKHOUSE_CLUSTER):
// what the cluster is, and how a statement reaches every node of it: ON CLUSTER when a ZooKeeper (Keeper) serves
// ClickHouse's distributed DDL, else sent to each node in turn over HTTP. Tables are `<name>_local` on every node
// (Replicated* engines with a ZooKeeper) under a Distributed table with the single server's name, so the report
// SQL and the insert text (written for one server) read and write the Distributed tables unchanged.

import { ClickHouseConnection, type Row } from './client.js';
import type { ClickHouseTarget, OpenTransport } from './transport.js';
import { identifier, sqlLiteral } from './literal.js';

/**
 * Settings every statement runs under on a cluster. insert_distributed_sync: an INSERT is answered once its rows
 * are on their shard (replicated from there), not queued on the node that took it, so an acknowledged hit is
 * stored. distributed_product_mode 'global': an IN or JOIN subquery over a Distributed table runs once and its
 * result goes to every shard ('local' would be exact too, the rows a report puts together sharing a shard, but
 * 18.16's rewrite for it drops the subquery's table alias, and Plumb's SQL names columns by alias).
 * insert_deduplicate 0: a replicated table silently drops a block identical to a recent one, and the hit-log
 * recovery writes exactly such a block again after deleting the part of it a crash left (event-store.ts);
 * Plumb's watermark, not ClickHouse, keeps a batch from being stored twice.
 */
export const CLUSTER_SETTINGS = { insert_distributed_sync: 1, distributed_product_mode: 'global', insert_deduplicate: 0 } as const;

/**
 * Each table's sharding key. hits and visits by visit_id: a visit's hits, all its versions (read with FINAL) and
 * its row in every join are on one shard. Not visitor_id: a visit that goes on past midnight keeps its id while
 * its later hits carry the new day's visitor id (the salt changes), so they would land on another shard. Counts
 * of distinct visitors are merged across shards by the Distributed aggregation. imported_daily and day_changes are
 * only summed, and a day rollup's build is one insert (by site: on one shard, so it is seen whole or not at all),
 * hit_log_marks only read for max(seq) of a node: any key would do; theirs keep a site's imports and a node's
 * marks together.
 */
export const SHARDING_KEYS: Record<string, string> = {
  hits: 'visit_id',
  visits: 'visit_id',
  imported_daily: 'cityHash64(site_id)',
  day_changes: 'cityHash64(site_id)',
  day_rollups: 'cityHash64(site_id)',
  hit_log_marks: 'cityHash64(node)',
  schema_migrations: 'version',
};

export interface ClusterNode {
  address: string;
  port: number;
}

/** How to reach `cluster`'s nodes, read from the node Plumb connects to. */
export class ClickHouseCluster {
  private constructor(
    readonly name: string,
    /** Whether a ZooKeeper serves the node: replicated tables and ON CLUSTER. */
    readonly replicated: boolean,
    /** Every node (every replica of every shard), as system.clusters names them (TCP port). */
    readonly nodes: readonly ClusterNode[],
    private readonly target: ClickHouseTarget,
    private readonly transport: OpenTransport | undefined,
  ) {}

  /** Reads the cluster's layout; an unknown name fails here, at start, naming the clusters the server has. */
  static async read(conn: ClickHouseConnection, name: string, target: ClickHouseTarget, transport?: OpenTransport): Promise<ClickHouseCluster> {
    identifier(name);
    const rows = await conn.rows(`SELECT host_address, port FROM system.clusters WHERE cluster = ${sqlLiteral(name)} ORDER BY shard_num, replica_num`);
    if (rows.length === 0) {
      const known = (await conn.rows('SELECT DISTINCT cluster FROM system.clusters ORDER BY cluster')).map((r) => String(r.cluster));
      throw new Error(
        `CLICKHOUSE_CLUSTER is "${name}", but the ClickHouse server at ${target.origin} defines no such cluster in remote_servers ` +
          `(it defines: ${known.length > 0 ? known.join(', ') : 'none'})`,
      );
    }
    let replicated = true;
    try {
      await conn.rows("SELECT name FROM system.zookeeper WHERE path = '/' LIMIT 1");
    } catch (err) {
      // 60: no system.zookeeper table, i.e. no ZooKeeper configured; anything else (ZooKeeper down) is an error.
      if (!/Code: 60\b|doesn't exist/.test(String((err as Error).message))) throw err;
      replicated = false;
    }
    const nodes = rows.map((r: Row) => ({ address: String(r.host_address), port: Number(r.port) }));
    return new ClickHouseCluster(name, replicated, nodes, target, transport);
  }

  /** `db.table` of the node-local table under the Distributed `table`. */
  local(table: string): string {
    return `${identifier(this.target.database)}.${identifier(table)}_local`;
  }

  /** ` ON CLUSTER name` where ClickHouse runs the statement on every node itself, else nothing (see run()). */
  get onCluster(): string {
    return this.replicated ? ` ON CLUSTER ${this.name}` : '';
  }

  /**
   * Runs a DDL statement or mutation on every node. With a ZooKeeper, `sql` carries ON CLUSTER (this.onCluster) and
   * runs once: ClickHouse's DDL queue runs it on each node (an ALTER of a replicated table on one replica per
   * shard) and answers when all have. Without, it is sent to each node in turn, at the address system.clusters
   * gives and CLICKHOUSE_URL's scheme, port and credentials (every node serves HTTP on the same port).
   */
  async run(conn: ClickHouseConnection, sql: string, runOne: (c: ClickHouseConnection, sql: string) => Promise<void> = (c, s) => c.exec(s)): Promise<void> {
    if (this.replicated) return runOne(conn, sql);
    await this.onEveryNode((node) => runOne(node, sql));
  }

  /** Runs `work` on a connection to each node in turn (without a database: name tables with it). */
  async onEveryNode(work: (node: ClickHouseConnection) => Promise<void>): Promise<void> {
    for (const address of new Set(this.nodes.map((n) => n.address))) {
      const port = new URL(this.target.origin).port;
      const host = address.includes(':') ? `[${address}]` : address;
      const origin = `${new URL(this.target.origin).protocol}//${host}${port ? `:${port}` : ''}`;
      const node = ClickHouseConnection.open({ ...this.target, origin }, { useDatabase: false, ...(this.transport ? { transport: this.transport } : {}) });
      try {
        await work(node);
      } finally {
        await node.close();
      }
    }
  }

  /** A table function reading `system.<table>` on every node (each replica too: one "shard" per node). */
  everyNode(systemTable: string): string {
    const addresses = this.nodes.map((n) => `${n.address.includes(':') ? `[${n.address}]` : n.address}:${n.port}`);
    const user = `${sqlLiteral(this.target.username)}, ${sqlLiteral(this.target.password)}`;
    return `remote(${sqlLiteral(addresses.join(','))}, system, ${identifier(systemTable)}, ${user})`;
  }
}
