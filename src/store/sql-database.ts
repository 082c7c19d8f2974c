// What a SQL MetaStore needs of a database connection: statements with `?` placeholders, run one unit of work
// at a time or in a transaction. DuckDB (embedded) and PostgreSQL (scale-out) both provide it.

export type SqlParam = string | number | boolean | null | Date | bigint;

export interface SqlQuerier {
  rows<T = Record<string, unknown>>(sql: string, params?: SqlParam[]): Promise<T[]>;
  exec(sql: string, params?: SqlParam[]): Promise<void>;
}

export interface SqlDatabase {
  serial<T>(work: (q: SqlQuerier) => Promise<T>): Promise<T>;
  transaction<T>(work: (q: SqlQuerier) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}
