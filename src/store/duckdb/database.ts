// One DuckDB database file: opening it, binding values, and serialized connections to it.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBAppender,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';

export type Param = string | number | boolean | null | Date | bigint;
type Row = Record<string, unknown>;

/** Every value reaches DuckDB through this function, as a bound parameter, never as SQL text. */
export function bindable(value: Param): DuckDBValue {
  if (value instanceof Date) return timestampValue(value);
  return value;
}

export function timestampValue(date: Date): DuckDBTimestampValue {
  return new DuckDBTimestampValue(BigInt(date.getTime()) * 1000n);
}

export interface Querier {
  rows<T = Row>(sql: string, params?: Param[]): Promise<T[]>;
  exec(sql: string, params?: Param[]): Promise<void>;
  appender(table: string): Promise<DuckDBAppender>;
}

/** Runs `work` on `q` inside BEGIN/COMMIT, rolling back on any error. */
export async function inTransaction<T>(q: Querier, work: (q: Querier) => Promise<T>): Promise<T> {
  await q.exec('BEGIN TRANSACTION');
  try {
    const result = await work(q);
    await q.exec('COMMIT');
    return result;
  } catch (err) {
    await q.exec('ROLLBACK');
    throw err;
  }
}

/**
 * A connection that runs one unit of work at a time. DuckDB connections are not meant for interleaved
 * statements, and a transaction must not see another caller's statements, so work queues here.
 */
export class SerialConnection {
  private queue: Promise<unknown> = Promise.resolve();
  private closed = false;

  constructor(private readonly conn: DuckDBConnection) {}

  private readonly querier: Querier = {
    rows: async <T = Row>(sql: string, params: Param[] = []) => {
      const reader = await this.conn.runAndReadAll(sql, params.map(bindable));
      return reader.getRowObjectsJS() as T[];
    },
    exec: async (sql: string, params: Param[] = []) => {
      await this.conn.run(sql, params.map(bindable));
    },
    appender: (table: string) => this.conn.createAppender(table),
  };

  serial<T>(work: (q: Querier) => Promise<T>): Promise<T> {
    if (this.closed) return Promise.reject(new Error('database connection is closed'));
    const run = this.queue.then(() => work(this.querier));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Runs `work` inside BEGIN/COMMIT, rolling back on any error. */
  transaction<T>(work: (q: Querier) => Promise<T>): Promise<T> {
    return this.serial((q) => inTransaction(q, work));
  }

  async close(): Promise<void> {
    await this.queue;
    this.closed = true;
    this.conn.closeSync();
  }
}

export class DuckDatabase {
  private readonly extra: SerialConnection[] = [];

  private constructor(
    readonly instance: DuckDBInstance,
    /** The metadata connection: small reads and writes, one at a time. */
    readonly meta: SerialConnection,
  ) {}

  /**
   * Opens (creating if needed) the database file; `:memory:` for a throwaway database. `memoryLimit` bounds
   * DuckDB's buffers (its default is 80% of the machine's memory); work beyond it spills to a folder beside the file.
   */
  static async open(path: string, { memoryLimit }: { memoryLimit?: string } = {}): Promise<DuckDatabase> {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const instance = await DuckDBInstance.create(path, memoryLimit === undefined ? {} : { memory_limit: memoryLimit });
    return new DuckDatabase(instance, new SerialConnection(await instance.connect()));
  }

  /** Another connection to the same database, for work that must not queue behind metadata (hit writes). */
  async connection(): Promise<SerialConnection> {
    const conn = new SerialConnection(await this.instance.connect());
    this.extra.push(conn);
    return conn;
  }

  serial<T>(work: (q: Querier) => Promise<T>): Promise<T> {
    return this.meta.serial(work);
  }

  transaction<T>(work: (q: Querier) => Promise<T>): Promise<T> {
    return this.meta.transaction(work);
  }

  /** Closes every connection, then the database; idempotent. */
  async close(): Promise<void> {
    if (this.closing) return this.closing;
    this.closing = (async () => {
      for (const c of this.extra) await c.close();
      await this.meta.close();
      this.instance.closeSync();
    })();
    return this.closing;
  }
  private closing: Promise<void> | undefined;
}
