// A consistent copy of the embedded database made by the process that holds it (DuckDB allows one writer process),
// while it keeps collecting: one read transaction's snapshot copied into a new DuckDB file with DuckDB's own
// COPY FROM DATABASE, then the manifest (src/domain/backup-manifest.ts) written last. Writes committed meanwhile go on
// in the live file and are not in the copy.

import { createHash } from 'node:crypto';
import { constants, createReadStream } from 'node:fs';
import { access, mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import {
  BACKUP_DATABASE_FILE, BACKUP_FORMAT, BACKUP_MANIFEST_FILE, BackupSpaceError, BackupTargetError, type BackupManifest,
} from '../../domain/backup-manifest.js';
import { formatTimestamp } from '../../domain/time.js';
import type { DuckDatabase } from './database.js';

/** The attached copy's name in the database instance (attached databases are visible to every connection). */
const ALIAS = 'plumb_backup';

/** A text as a SQL string literal: ATTACH takes no bound parameter. The path was checked by the caller. */
const sqlString = (text: string) => `'${text.replaceAll("'", "''")}'`;
const sqlIdentifier = (text: string) => `"${text.replaceAll('"', '""')}"`;

const outOfSpace = (err: unknown) =>
  ['ENOSPC', 'EDQUOT'].includes((err as NodeJS.ErrnoException)?.code ?? '') || /no space left on device|disk quota exceeded/i.test(String((err as Error)?.message));

/** Makes `dir` (and its parents) if missing; refuses one that holds anything. */
async function emptyTarget(dir: string): Promise<void> {
  try {
    // Created for the server's user only: the copy holds everything the database does (hashes of tokens and
    // passwords, salts).
    await mkdir(dir, { recursive: true, mode: 0o700 });
    if (!(await stat(dir)).isDirectory()) throw new BackupTargetError(`${dir} is not a directory`);
    const present = await readdir(dir);
    if (present.length > 0) throw new BackupTargetError(`${dir} is not empty (it holds ${present.length} entries): give a new or empty directory`);
    await access(dir, constants.W_OK);
  } catch (err) {
    if (err instanceof BackupTargetError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST' || code === 'ENOTDIR') throw new BackupTargetError(`${dir} is not a directory`);
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') throw new BackupTargetError(`the server cannot write to ${dir} (${code})`);
    if (outOfSpace(err)) throw new BackupSpaceError(`no space left to create ${dir}`);
    throw err;
  }
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** Writes `text` to `file` through a synced temporary file and a rename, then syncs the directory. */
async function writeDurably(dir: string, name: string, text: string): Promise<void> {
  const temporary = join(dir, `.${name}.tmp`);
  const handle = await open(temporary, 'w');
  try {
    await handle.writeFile(text);
    await handle.sync();
  } finally {
    await handle.close();
  }
  await rename(temporary, join(dir, name));
  const directory = await open(dir, 'r');
  try {
    await directory.sync();
  } finally {
    await directory.close();
  }
}

interface Snapshot {
  name: string;
  hits: bigint;
  visits: bigint;
  schema_version: number;
  watermark: bigint;
}

/**
 * Copies the database's committed state as of one moment into `dir` (new or empty; created if missing), on a
 * connection of its own so that collection and reports go on meanwhile. Throws BackupTargetError or
 * BackupSpaceError (the partial copy removed) for the operator's mistakes and a full disk.
 */
export async function backUpDatabase(db: DuckDatabase, dir: string): Promise<BackupManifest> {
  await emptyTarget(dir);
  const file = join(dir, BACKUP_DATABASE_FILE);
  const conn = await db.instance.connect();
  let snapshot!: Snapshot;
  let createdAt!: Date;
  try {
    await conn.run(`DETACH DATABASE IF EXISTS ${ALIAS}`); // left by a process that failed between ATTACH and DETACH
    await conn.run('BEGIN TRANSACTION');
    try {
      // The transaction's first read fixes its snapshot: the counts and the copy see the same committed state.
      createdAt = new Date();
      const reader = await conn.runAndReadAll(`SELECT current_database() AS name,
        (SELECT count(*) FROM hits) AS hits, (SELECT count(*) FROM visits) AS visits,
        (SELECT coalesce(max(version), 0) FROM schema_migrations) AS schema_version,
        (SELECT coalesce(max(confirmed_seq), 0) FROM hit_log_state) AS watermark`);
      snapshot = reader.getRowObjectsJS()[0] as unknown as Snapshot;
      await conn.run(`ATTACH ${sqlString(file)} AS ${ALIAS}`);
      await conn.run(`COPY FROM DATABASE ${sqlIdentifier(snapshot.name)} TO ${ALIAS}`);
      await conn.run('COMMIT');
    } catch (err) {
      await conn.run('ROLLBACK').catch(() => undefined);
      throw err;
    }
    // Detaching checkpoints the copy into its file and syncs it; no write-ahead log is left beside it.
    await conn.run(`DETACH DATABASE ${ALIAS}`);
  } catch (err) {
    await conn.run(`DETACH DATABASE IF EXISTS ${ALIAS}`).catch(() => undefined);
    await removeCopy(dir);
    if (outOfSpace(err)) throw new BackupSpaceError(`no space left on the file system of ${dir}: the partial backup was removed`);
    // DuckDB's own words for a file it may not create, as ATTACH reports it.
    if (/permission denied|read-only file system/i.test(String((err as Error)?.message))) throw new BackupTargetError(`the server cannot write to ${dir}`);
    throw err;
  } finally {
    conn.closeSync();
  }
  try {
    const manifest: BackupManifest = {
      format: BACKUP_FORMAT,
      created_at: formatTimestamp(createdAt),
      schema_version: Number(snapshot.schema_version),
      hits: Number(snapshot.hits),
      visits: Number(snapshot.visits),
      hit_log_watermark: Number(snapshot.watermark),
      file: BACKUP_DATABASE_FILE,
      bytes: (await stat(file)).size,
      sha256: await sha256(file),
    };
    await writeDurably(dir, BACKUP_MANIFEST_FILE, `${JSON.stringify(manifest, null, 2)}\n`);
    return manifest;
  } catch (err) {
    await removeCopy(dir);
    if (outOfSpace(err)) throw new BackupSpaceError(`no space left on the file system of ${dir}: the partial backup was removed`);
    throw err;
  }
}

/** Removes what a failed backup wrote, so the directory is empty again and never taken for a backup. */
async function removeCopy(dir: string): Promise<void> {
  for (const name of [BACKUP_DATABASE_FILE, `${BACKUP_DATABASE_FILE}.wal`, BACKUP_MANIFEST_FILE, `.${BACKUP_MANIFEST_FILE}.tmp`]) {
    await rm(join(dir, name), { force: true }).catch(() => undefined);
  }
}
