// A PostgreSQL connection pool as a SqlDatabase: `?` placeholders numbered for pg, dates as `YYYY-MM-DD` text,
// transactions on one pooled client.

import pg from 'pg';
import type { SqlDatabase, SqlParam, SqlQuerier } from '../sql-database.js';

const DATE_OID = 1082;

/** `?` placeholders (the SQL MetaStore's, never inside our string literals) as pg's `$1, $2, ...`. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * PostgreSQL text cannot hold NUL, which the API otherwise accepts in names and looks up in filters: it becomes
 * U+FFFD, the replacement character, on the way in, so such a value is stored and found consistently instead of
 * failing the statement.
 */
const storable = (params: SqlParam[]) =>
  params.map((p) => (typeof p === 'string' && p.includes('\0') ? p.replaceAll('\0', '\uFFFD') : p));

const querier = (client: pg.Pool | pg.PoolClient): SqlQuerier => ({
  rows: async <T>(sql: string, params: SqlParam[] = []) => (await client.query(numbered(sql), storable(params))).rows as T[],
  exec: async (sql: string, params: SqlParam[] = []) => {
    await client.query(numbered(sql), storable(params));
  },
});

export class PgDatabase implements SqlDatabase {
  private readonly pool: pg.Pool;

  constructor(url: string, options: { schema?: string; max?: number; onIdleError?: (err: Error) => void } = {}) {
    if (options.schema !== undefined && !/^[a-z_][a-z0-9_]{0,62}$/.test(options.schema)) {
      throw new Error(`invalid schema name "${options.schema}"`);
    }
    this.pool = new pg.Pool({
      connectionString: url,
      max: options.max ?? 10,
      ...(options.schema ? { options: `-c search_path=${options.schema}` } : {}),
      // Calendar dates stay text: a Date would be midnight in the process's time zone.
      types: { getTypeParser: ((oid: number, format?: string) => (oid === DATE_OID ? (v: string) => v : pg.types.getTypeParser(oid, format as 'text'))) as typeof pg.types.getTypeParser },
    });
    // An idle pooled client whose connection ends (PostgreSQL restarted, an administrator terminated it) makes the
    // pool emit 'error': unheard, Node would end the process. The pool drops that client and connects anew for the
    // next query; queries while PostgreSQL is away fail, and are answered 503 (src/http/service-outage.ts).
    this.pool.on('error', (err) => options.onIdleError?.(err));
  }

  serial<T>(work: (q: SqlQuerier) => Promise<T>): Promise<T> {
    return work(querier(this.pool));
  }

  async transaction<T>(work: (q: SqlQuerier) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await work(querier(client));
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  }

  /**
   * Runs `work` while holding a PostgreSQL advisory lock (a session lock on one pooled client), so that of
   * several processes starting at once only one does it at a time (first-start bootstrap).
   */
  async exclusive<T>(key: number, work: () => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [key]);
      try {
        return await work();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [key]);
      }
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
