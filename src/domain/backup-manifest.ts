// What a backup of the embedded store is on disk: its database file and the manifest written last, which the
// server writes (src/store/duckdb/backup.ts) and `plumb restore` reads (src/cli/restore.ts).

/** The copy of the database in a backup directory: a DuckDB file, what `plumb.duckdb` becomes on restore. */
export const BACKUP_DATABASE_FILE = 'plumb.duckdb';
/** Written last, once the database file is complete and synced: a directory without it holds no usable backup. */
export const BACKUP_MANIFEST_FILE = 'plumb-backup.json';
export const BACKUP_FORMAT = 'plumb-embedded-backup-1';

/** The target directory of a backup cannot take one: it is not empty, not a directory, or not writable. */
export class BackupTargetError extends Error {}

/** The file system holding a backup's target filled up; what was written is removed. */
export class BackupSpaceError extends Error {}

export interface BackupManifest {
  format: typeof BACKUP_FORMAT;
  /** When the copy's snapshot was taken (UTC, `YYYY-MM-DD HH:MM:SS`): what a restore brings back is the store then. */
  created_at: string;
  /** The highest schema migration the copy has; a server that knows fewer refuses to open it. */
  schema_version: number;
  /** Hits and visits in the snapshot, and the hit log sequence number it holds. */
  hits: number;
  visits: number;
  hit_log_watermark: number;
  file: typeof BACKUP_DATABASE_FILE;
  bytes: number;
  sha256: string;
}

/** The manifest in `text`, or a sentence saying why it is none. */
export function parseBackupManifest(text: string): BackupManifest | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return 'is not JSON';
  }
  if (!value || typeof value !== 'object') return 'is not a JSON object';
  const m = value as Record<string, unknown>;
  if (m.format !== BACKUP_FORMAT) return `is not of a format this release reads (format ${JSON.stringify(m.format)}, expected ${BACKUP_FORMAT})`;
  if (m.file !== BACKUP_DATABASE_FILE) return `names the file ${JSON.stringify(m.file)}, expected ${BACKUP_DATABASE_FILE}`;
  for (const key of ['schema_version', 'hits', 'visits', 'hit_log_watermark', 'bytes'] as const) {
    if (!Number.isSafeInteger(m[key]) || (m[key] as number) < 0) return `has no valid ${key}`;
  }
  if (typeof m.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(m.sha256)) return 'has no valid sha256';
  if (typeof m.created_at !== 'string') return 'has no created_at';
  return m as unknown as BackupManifest;
}
