// The narrow seam between the ClickHouse event store and a ClickHouse engine: read rows, execute a statement,
// insert rows, each as SQL text the store has already written whole. Production speaks HTTP (@clickhouse/client);
// tests and benchmarks may plug in ClickHouse 26 in process (chdb, test/helpers/chdb.ts) through the same seam.
// A transport never writes or changes SQL: every engine receives exactly the text the store built.

import { ClickHouseLogLevel, createClient, type ClickHouseClient } from '@clickhouse/client';

/** A result in ClickHouse's JSON output format (64-bit integers quoted, as the server's default says). */
export interface JsonResult {
  meta?: { name: string; type: string }[];
  data: Record<string, unknown>[];
}

export interface ClickHouseTransport {
  /** Rows of a SELECT, read in the JSON format. Errors carry ClickHouse's message and `code` (its number, as text). */
  query(sql: string): Promise<JsonResult>;
  /** A statement without a result: DDL, ALTER, SYSTEM, OPTIMIZE. */
  command(sql: string): Promise<void>;
  /**
   * An `INSERT ... VALUES` statement whose rows are already literals (src/store/clickhouse/literal.ts); `settings`
   * for this insert beside it (18.16 has no SETTINGS clause on INSERT), where they matter: on a server.
   */
  insert(sql: string, settings?: Readonly<Record<string, string | number>>): Promise<void>;
  close(): Promise<void>;
}

/** Where to connect, from `http(s)://[user[:password]@]host:port[/database]`. */
export interface ClickHouseTarget {
  origin: string;
  username: string;
  password: string;
  database: string;
  /**
   * Settings of every request, sent beside the SQL (18.16 has no SETTINGS clause on INSERT): only a cluster's
   * (src/store/clickhouse/cluster.ts), which every statement must run under. The HTTP transport alone has them.
   */
  settings?: Readonly<Record<string, string | number>>;
}

/** Opens a transport to `target`, on `target.database` unless `useDatabase` is false (the server's default). */
export type OpenTransport = (target: ClickHouseTarget, useDatabase: boolean) => ClickHouseTransport;

/** The production transport: the official @clickhouse/client over HTTP (checked against 18.16 and 26.x). */
export const httpTransport: OpenTransport = (target, useDatabase) => new HttpTransport(target, useDatabase);

class HttpTransport implements ClickHouseTransport {
  private readonly client: ClickHouseClient;

  constructor(target: ClickHouseTarget, useDatabase: boolean) {
    this.client = createClient({
      url: target.origin,
      username: target.username,
      password: target.password,
      ...(useDatabase ? { database: target.database } : {}),
      ...(target.settings ? { clickhouse_settings: { ...target.settings } } : {}),
      // The client's default request timeout (30 s): no report or batch comes near it, and a longer one makes the
      // client ask for progress headers, one more thing old servers and proxies handle differently.
      keep_alive: { enabled: true },
      max_open_connections: 16,
      // Wire compression is off: the server is on a near network and 18.16 gains nothing measurable here.
      compression: { request: false, response: false },
      // Failures reach the caller as errors with ClickHouse's message (an invalid regex is a 400, not a log line).
      log: { level: ClickHouseLogLevel.OFF },
    });
  }

  async query(sql: string): Promise<JsonResult> {
    const result = await this.client.query({ query: sql, format: 'JSON' });
    return result.json<Record<string, unknown>>();
  }

  async command(sql: string): Promise<void> {
    // Sent whole in the request body, so long statements are fine.
    await this.client.command({ query: sql });
  }

  async insert(sql: string, settings?: Readonly<Record<string, string | number>>): Promise<void> {
    // The client adds these to its own (the cluster's).
    await this.client.command({ query: sql, ...(settings ? { clickhouse_settings: { ...settings } } : {}) });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
