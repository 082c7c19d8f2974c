// ClickHouse 26 in process (chdb) behind the event store's transport seam, for tests and benchmarks only: the
// statements the store builds reach it unchanged. chdb is not a dependency of Plumb; scripts/chdb/install.sh
// installs it (npm ci, pinned by scripts/chdb/package-lock.json) into scripts/chdb/node_modules.

import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { projectRoot } from '../../src/project-root.js';
import type { ClickHouseTransport, JsonResult, OpenTransport } from '../../src/store/clickhouse/transport.js';
import { identifier } from '../../src/store/clickhouse/literal.js';

/** The part of chdb's Session this transport uses. */
interface ChdbSession {
  query(sql: string, format?: string): string;
  queryAsync(sql: string, options?: { format?: string }): Promise<{ text(): string }>;
  close(): void;
}
interface Chdb {
  Session: new (path: string, options?: { connectionArgs?: readonly string[] }) => ChdbSession;
}

const PACKAGE = join(projectRoot(), 'scripts', 'chdb', 'package.json');

/** Whether scripts/chdb/install.sh has installed chdb. */
export function chdbInstalled(): boolean {
  return existsSync(join(projectRoot(), 'scripts', 'chdb', 'node_modules', 'chdb', 'package.json'));
}

let chdb: Chdb | undefined;
let dataDir: string | undefined;

// Defaults in which clickhouse-local (chdb's engine) differs from clickhouse-server that change what the store
// reads: the server quotes 64-bit integers in JSON (client.ts turns them into bigint; unquoted they would lose
// precision in JSON.parse).
const SERVER_DEFAULTS = ['--output_format_json_quote_64bit_integers=1'];

/**
 * One data directory per process (libchdb binds one; sessions on it coexist, each with its own current
 * database), removed when the process exits. Every transport is a session on it.
 */
function session(): ChdbSession {
  if (!chdb) {
    if (!chdbInstalled()) throw new Error('chdb is not installed: run scripts/chdb/install.sh');
    chdb = createRequire(PACKAGE)('chdb') as Chdb;
  }
  if (!dataDir) {
    const dir = mkdtempSync(join(tmpdir(), 'plumb-chdb-'));
    dataDir = dir;
    process.once('exit', () => rmSync(dir, { recursive: true, force: true }));
  }
  return new chdb.Session(dataDir, { connectionArgs: SERVER_DEFAULTS });
}

/** chdb's error as the HTTP client reports one: ClickHouse's message, and its error number as `code`. */
function asClickHouseError(err: unknown): Error {
  const e = err as { message?: string; clickhouseCode?: number };
  const out = new Error(e.message ?? String(err), { cause: err });
  if (e.clickhouseCode !== undefined) Object.assign(out, { code: String(e.clickhouseCode) });
  return out;
}

class ChdbTransport implements ClickHouseTransport {
  private readonly session = session();
  private readonly running = new Set<Promise<unknown>>();
  private chosen: Promise<unknown> | undefined;

  constructor(private readonly database: string | undefined) {}

  async query(sql: string): Promise<JsonResult> {
    return JSON.parse((await this.run(sql, 'JSON')).text()) as JsonResult;
  }

  async command(sql: string): Promise<void> {
    await this.run(sql, 'TabSeparated');
  }

  /** Without the settings: they shape how a server splits an insert into parts, which matters to its replicas; this engine has none. */
  async insert(sql: string): Promise<void> {
    await this.run(sql, 'TabSeparated');
  }

  /** Waits for the session's statements (closing a session under a running one would abort the engine). */
  async close(): Promise<void> {
    await Promise.allSettled([...this.running]);
    this.session.close();
  }

  private async run(sql: string, format: string): Promise<{ text(): string }> {
    // The database is chosen on first use, as the HTTP transport names it with every request (it may not exist
    // when the transport is opened: the store creates it first).
    if (this.database !== undefined) {
      this.chosen ??= this.track(`USE ${identifier(this.database)}`, 'TabSeparated');
      await this.chosen;
    }
    return this.track(sql, format);
  }

  private async track(sql: string, format: string): Promise<{ text(): string }> {
    const running = this.session.queryAsync(sql, { format });
    this.running.add(running);
    try {
      return await running;
    } catch (err) {
      throw asClickHouseError(err);
    } finally {
      this.running.delete(running);
    }
  }
}

/** The chdb transport: a session on this process's chdb data directory. */
export const chdbTransport: OpenTransport = (target, useDatabase) => new ChdbTransport(useDatabase ? target.database : undefined);
