// `plumb restore DIR`: puts a backup made by `plumb backup` in place as the embedded store of PLUMB_DATA_DIR, with
// the server stopped (it holds the database file while it runs). The files it replaces are moved aside, never
// deleted; the copy goes in under a temporary name and is renamed, so a failure leaves the data directory as it was.

import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { copyFile, mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { BACKUP_DATABASE_FILE, BACKUP_MANIFEST_FILE, parseBackupManifest, type BackupManifest } from '../domain/backup-manifest.js';
import { LOCAL_SERVER_FILE, readLocalServerUrl } from '../local-admin-key.js';

/** A restore that was not done, with the reason in words an operator acts on; nothing was changed. */
export class RestoreRefused extends Error {}

/** What the server keeps in its data directory for the embedded store, all of which a restore replaces. */
const DATABASE = 'plumb.duckdb';
const REPLACED = [DATABASE, `${DATABASE}.wal`, 'hit-log'];

export interface RestoreResult {
  object: 'restore';
  data_dir: string;
  backup: BackupManifest;
  /** Where the files the restore replaced were moved (none when the data directory had no store). */
  replaced_into: string | null;
}

const exists = (path: string) => stat(path).then(() => true, () => false);

/**
 * The pid holding DuckDB's lock on `file`, from Linux's /proc/locks (DuckDB takes a POSIX write lock on the database
 * file for as long as a process has it open); undefined when none holds it or the system has no /proc/locks.
 */
async function lockHolder(file: string): Promise<number | undefined> {
  let info;
  let locks: string;
  try {
    info = await stat(file);
    locks = await readFile('/proc/locks', 'utf8');
  } catch {
    return undefined;
  }
  const hex = (n: number) => n.toString(16).padStart(2, '0');
  // st_dev as the kernel prints it, major:minor:inode (glibc's encoding of the device number).
  const major = Number((BigInt(info.dev) >> 8n) & 0xfffn);
  const minor = Number((BigInt(info.dev) & 0xffn) | ((BigInt(info.dev) >> 12n) & 0xfff00n));
  const id = `${hex(major)}:${hex(minor)}:${info.ino}`;
  for (const line of locks.split('\n')) {
    const fields = line.trim().split(/\s+/);
    if (fields.includes(id)) return Number(fields[fields.indexOf(id) - 1]);
  }
  return undefined;
}

/** Whether a Plumb server answers at the address the server of `dataDir` wrote when it started. */
async function answeringServer(dataDir: string): Promise<string | undefined> {
  const url = readLocalServerUrl(dataDir);
  if (url === undefined) return undefined;
  try {
    const res = await fetch(new URL('/healthz', url), { signal: AbortSignal.timeout(2000) });
    return res.ok ? url : undefined;
  } catch {
    return undefined; // left behind by a server that did not stop cleanly
  }
}

async function refuseWhileRunning(dataDir: string): Promise<void> {
  const pid = await lockHolder(join(dataDir, DATABASE));
  if (pid !== undefined) {
    throw new RestoreRefused(`a Plumb server (pid ${pid}) is running on ${dataDir}: stop it first (SIGTERM stops it cleanly), then restore`);
  }
  const url = await answeringServer(dataDir);
  if (url !== undefined) {
    throw new RestoreRefused(
      `a Plumb server is running on ${dataDir} (it answers at ${url}, the address in ${join(dataDir, LOCAL_SERVER_FILE)}): stop it first, then restore`,
    );
  }
}

async function sha256(file: string): Promise<string> {
  const hash = createHash('sha256');
  await pipeline(createReadStream(file), hash);
  return hash.digest('hex');
}

/** The backup in `dir`, checked whole: its manifest, and a database file of the size and hash it names. */
async function readBackup(dir: string): Promise<BackupManifest> {
  let text: string;
  try {
    text = await readFile(join(dir, BACKUP_MANIFEST_FILE), 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new RestoreRefused(`${dir} holds no backup: it has no ${BACKUP_MANIFEST_FILE} (written last by plumb backup: a backup that did not finish has none)`);
    }
    throw new RestoreRefused(`cannot read ${join(dir, BACKUP_MANIFEST_FILE)}: ${(err as Error).message}`);
  }
  const manifest = parseBackupManifest(text);
  if (typeof manifest === 'string') throw new RestoreRefused(`${join(dir, BACKUP_MANIFEST_FILE)} ${manifest}`);
  const file = join(dir, BACKUP_DATABASE_FILE);
  const size = await stat(file).then((s) => s.size, () => undefined);
  if (size === undefined) throw new RestoreRefused(`${dir} has a manifest but no ${BACKUP_DATABASE_FILE}: the backup is incomplete`);
  if (size !== manifest.bytes || (await sha256(file)) !== manifest.sha256) {
    throw new RestoreRefused(`${file} is not the file its backup wrote (size or SHA-256 differ from ${BACKUP_MANIFEST_FILE}): it was changed or cut short`);
  }
  return manifest;
}

async function syncPath(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** `YYYYMMDD-HHMMSS` of `now` in UTC, for the folder of replaced files. */
const stamp = (now: Date) => now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);

/** Makes `base`, or `base-2`, `base-3`, ... when it exists (restores within the same second). */
async function newFolder(base: string): Promise<string> {
  for (let n = 1; n <= 100; n++) {
    const path = n === 1 ? base : `${base}-${n}`;
    try {
      await mkdir(path);
      return path;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  throw new RestoreRefused(`${base} and 99 more like it exist: remove earlier ones`);
}

/**
 * Restores the backup in `backupDir` as the store of `dataDir` (created if missing). Refuses (RestoreRefused,
 * nothing changed) while a server runs on `dataDir`, for a directory holding no complete backup, and when the data
 * directory's file system has no room for the copy.
 */
export async function restore(dataDirText: string, backupDirText: string, now = new Date()): Promise<RestoreResult> {
  const dataDir = resolve(dataDirText);
  const backupDir = resolve(backupDirText);
  await refuseWhileRunning(dataDir);
  const manifest = await readBackup(backupDir);
  await mkdir(dataDir, { recursive: true });

  const incoming = join(dataDir, `${DATABASE}.restoring`);
  try {
    await copyFile(join(backupDir, BACKUP_DATABASE_FILE), incoming);
    await syncPath(incoming);
  } catch (err) {
    await rm(incoming, { force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOSPC' || code === 'EDQUOT') {
      throw new RestoreRefused(`not enough space in ${dataDir} for the backup's ${manifest.bytes} bytes: nothing was changed`);
    }
    throw new RestoreRefused(`cannot copy the backup into ${dataDir} (${code ?? (err as Error).message}): nothing was changed`);
  }

  // What the restore replaces, the hit log with it (its records are hits after the backup, or ones the replaced
  // database already has), is moved aside: the operator deletes it once the restored server is as expected.
  const present = [];
  for (const name of REPLACED) if (await exists(join(dataDir, name))) present.push(name);
  let replacedInto: string | null = null;
  if (present.length > 0) {
    replacedInto = await newFolder(join(dataDir, `before-restore-${stamp(now)}`));
    for (const name of present) await rename(join(dataDir, name), join(replacedInto, name));
  }
  await rename(incoming, join(dataDir, DATABASE));
  await syncPath(dataDir);
  return { object: 'restore', data_dir: dataDir, backup: manifest, replaced_into: replacedInto };
}

export function describeRestore(r: RestoreResult): string {
  return [
    `restored the backup of ${r.backup.created_at} UTC (${r.backup.hits} hits, ${r.backup.visits} visits) into ${r.data_dir}`,
    r.replaced_into === null
      ? '  the data directory had no store before'
      : `  what it replaced (database, write-ahead log, hit log) is in ${r.replaced_into}: delete it once the restored server is as expected`,
    'Start Plumb on this data directory: hits recorded after the backup are not in it.',
  ].join('\n');
}
