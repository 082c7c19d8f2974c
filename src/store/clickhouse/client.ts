// A ClickHouse connection for the event store: the official @clickhouse/client over HTTP (checked against
// 18.16: queries, commands and inserts work; its defaults send no setting 18.16 rejects), with rows shaped as the
// DuckDB store shapes them so the report engine reads both alike.

import { ClickHouseLogLevel, createClient, type ClickHouseClient, type ClickHouseSettings } from '@clickhouse/client';
import { identifier } from './literal.js';

export type Row = Record<string, unknown>;

/** Where to connect, from `http(s)://[user[:password]@]host:port[/database]`. */
export interface ClickHouseTarget {
  origin: string;
  username: string;
  password: string;
  database: string;
}

export function parseClickHouseUrl(url: string, database?: string): ClickHouseTarget {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new RangeError('CLICKHOUSE_URL must be http(s)://');
  const path = decodeURIComponent(u.pathname.replace(/^\/+|\/+$/g, ''));
  return {
    origin: u.origin,
    username: decodeURIComponent(u.username) || 'default',
    password: decodeURIComponent(u.password),
    database: identifier(database ?? (path || 'plumb')),
  };
}

// 64-bit (and wider) integers arrive as JSON strings: bigint, as DuckDB's BIGINT columns do.
const WIDE_INTEGER = /^(U?Int(64|128|256))$/;

/** A JSON value of a ClickHouse column type as the DuckDB store would return it. */
function shape(type: string, value: unknown): unknown {
  if (value === null) return null;
  const inner = type.startsWith('Nullable(') ? type.slice(9, -1) : type;
  if (WIDE_INTEGER.test(inner) && (typeof value === 'string' || typeof value === 'number')) return BigInt(value);
  return value;
}

export class ClickHouseConnection {
  private constructor(
    private readonly client: ClickHouseClient,
    readonly database: string,
  ) {}

  /** A connection to `target.database`, or to the server's default database when `database` is false. */
  static open(target: ClickHouseTarget, options: { useDatabase?: boolean } = {}): ClickHouseConnection {
    const client = createClient({
      url: target.origin,
      username: target.username,
      password: target.password,
      ...(options.useDatabase === false ? {} : { database: target.database }),
      // The client's default request timeout (30 s): no report or batch comes near it, and a longer one makes the
      // client ask for progress headers, one more thing old servers and proxies handle differently.
      keep_alive: { enabled: true },
      max_open_connections: 16,
      // Wire compression is off: the server is on a near network and 18.16 gains nothing measurable here.
      compression: { request: false, response: false },
      // Failures reach the caller as errors with ClickHouse's message (an invalid regex is a 400, not a log line).
      log: { level: ClickHouseLogLevel.OFF },
    });
    return new ClickHouseConnection(client, target.database);
  }

  /** Rows of a SELECT, 64-bit integers as bigint; `settings` for this query only. Errors carry ClickHouse's own message. */
  async rows(sql: string, settings?: ClickHouseSettings): Promise<Row[]> {
    const result = await this.client.query({ query: sql, format: 'JSON', ...(settings ? { clickhouse_settings: settings } : {}) });
    const json = await result.json<Row>();
    const types = new Map((json.meta ?? []).map((m) => [m.name, m.type]));
    return json.data.map((row) => {
      const out: Row = {};
      for (const [name, value] of Object.entries(row)) out[name] = shape(types.get(name) ?? '', value);
      return out;
    });
  }

  /** A statement without a result (DDL, ALTER, INSERT ... VALUES), sent whole in the request body. */
  async exec(sql: string): Promise<void> {
    await this.client.command({ query: sql });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}
