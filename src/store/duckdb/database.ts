// One DuckDB database file: opening it, binding values, and a serialized connection for metadata work.

import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  DuckDBInstance,
  DuckDBTimestampValue,
  type DuckDBConnection,
  type DuckDBValue,
} from '@duckdb/node-api';

export type Param = string | number | boolean | null | Date | bigint;
type Row = Record<string, unknown>;

/** Every value reaches DuckDB through this function, as a bound parameter, never as SQL text. */
function bindable(value: Param): DuckDBValue {
  if (value instanceof Date) return new DuckDBTimestampValue(BigInt(value.getTime()) * 1000n);
  return value;
}

export class DuckDatabase {
  private queue: Promise<unknown> = Promise.resolve();

  private constructor(
    readonly instance: DuckDBInstance,
    private readonly conn: DuckDBConnection,
  ) {}

  /** Opens (creating if needed) the database file; `:memory:` for a throwaway database. */
  static async open(path: string): Promise<DuckDatabase> {
    if (path !== ':memory:') mkdirSync(dirname(path), { recursive: true });
    const instance = await DuckDBInstance.create(path);
    const conn = await instance.connect();
    return new DuckDatabase(instance, conn);
  }

  /**
   * Runs `work` alone on the metadata connection. DuckDB connections are not meant for interleaved
   * statements, and metadata writes are small, so one at a time keeps transactions simple and correct.
   */
  serial<T>(work: (q: Querier) => Promise<T>): Promise<T> {
    const run = this.queue.then(() => work(this.querier));
    this.queue = run.catch(() => undefined);
    return run;
  }

  /** Runs `work` inside BEGIN/COMMIT on the metadata connection, rolling back on any error. */
  transaction<T>(work: (q: Querier) => Promise<T>): Promise<T> {
    return this.serial(async (q) => {
      await q.exec('BEGIN TRANSACTION');
      try {
        const result = await work(q);
        await q.exec('COMMIT');
        return result;
      } catch (err) {
        await q.exec('ROLLBACK');
        throw err;
      }
    });
  }

  private readonly querier: Querier = {
    rows: async <T = Row>(sql: string, params: Param[] = []) => {
      const reader = await this.conn.runAndReadAll(sql, params.map(bindable));
      return reader.getRowObjectsJS() as T[];
    },
    exec: async (sql: string, params: Param[] = []) => {
      await this.conn.run(sql, params.map(bindable));
    },
  };

  async close(): Promise<void> {
    await this.queue;
    this.conn.closeSync();
    this.instance.closeSync();
  }
}

export interface Querier {
  rows<T = Row>(sql: string, params?: Param[]): Promise<T[]>;
  exec(sql: string, params?: Param[]): Promise<void>;
}
