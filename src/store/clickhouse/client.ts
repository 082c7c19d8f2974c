// A ClickHouse connection for the event store: SQL text in, rows out, over a transport (HTTP in production,
// src/store/clickhouse/transport.ts), with rows shaped as the DuckDB store shapes them so the report engine
// reads both alike.

import { identifier, sqlLiteral } from './literal.js';
import { httpTransport, type ClickHouseTarget, type ClickHouseTransport, type OpenTransport } from './transport.js';

export type { ClickHouseTarget, OpenTransport } from './transport.js';
export type Row = Record<string, unknown>;

/** Settings of one query, written into its SQL as a SETTINGS clause (18.16 and 26.x both read it). */
export type QuerySettings = Readonly<Record<string, string | number>>;

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

/**
 * A query with its settings. In the SQL text rather than beside it (HTTP URL parameters), so that every transport
 * sends the same statement. Names are constants of this module's callers; values go through sqlLiteral().
 */
export function withSettings(sql: string, settings: QuerySettings | undefined): string {
  const entries = Object.entries(settings ?? {});
  if (entries.length === 0) return sql;
  return `${sql} SETTINGS ${entries.map(([name, value]) => `${identifier(name)} = ${sqlLiteral(value)}`).join(', ')}`;
}

export class ClickHouseConnection {
  private constructor(
    private readonly transport: ClickHouseTransport,
    readonly database: string,
  ) {}

  /** A connection to `target.database`, or to the server's default database when `useDatabase` is false. */
  static open(target: ClickHouseTarget, options: { useDatabase?: boolean; transport?: OpenTransport } = {}): ClickHouseConnection {
    const open = options.transport ?? httpTransport;
    return new ClickHouseConnection(open(target, options.useDatabase !== false), target.database);
  }

  /** Rows of a SELECT, 64-bit integers as bigint; `settings` for this query only. Errors carry ClickHouse's own message. */
  async rows(sql: string, settings?: QuerySettings): Promise<Row[]> {
    const json = await this.transport.query(withSettings(sql, settings));
    const types = new Map((json.meta ?? []).map((m) => [m.name, m.type]));
    return json.data.map((row) => {
      const out: Row = {};
      for (const [name, value] of Object.entries(row)) out[name] = shape(types.get(name) ?? '', value);
      return out;
    });
  }

  /** A statement without a result (DDL, ALTER, SYSTEM), sent whole. */
  async exec(sql: string): Promise<void> {
    await this.transport.command(sql);
  }

  /** An INSERT ... VALUES statement built from literals; `settings` for this insert (where the transport sends any). */
  async insert(sql: string, settings?: QuerySettings): Promise<void> {
    await this.transport.insert(sql, settings);
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}
