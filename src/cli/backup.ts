// `plumb backup DIR`: asks the running server, the one process that holds the embedded database, to copy it into
// DIR as of one moment while it keeps collecting (POST /admin/backup; README, "Backup and restore").

import { isAbsolute, resolve } from 'node:path';
import type { BackupManifest } from '../domain/backup-manifest.js';
import type { AdminClient } from './admin-client.js';

export interface BackupAnswer extends BackupManifest {
  object: 'backup';
  directory: string;
}

/**
 * The backup made into `dir`: a relative DIR is the current directory's, when the server is on this machine; for
 * a server elsewhere DIR is on its machine, so it must be absolute (returned as a message otherwise).
 */
export async function backup(client: AdminClient, dir: string, serverIsLocal: boolean): Promise<BackupAnswer | string> {
  if (!serverIsLocal && !isAbsolute(dir)) {
    return `DIR is a directory on the server's machine: give an absolute path (the server is not this machine)`;
  }
  // Sent with node:http: a large database takes longer to copy than fetch waits for an answer.
  const body = JSON.stringify({ directory: resolve(dir) });
  return client.requestText<BackupAnswer>('/admin/backup', body, { 'content-type': 'application/json' });
}

export function describeBackup(b: BackupAnswer): string {
  const mib = (b.bytes / (1024 * 1024)).toFixed(1);
  return [
    `backed up the store as of ${b.created_at} UTC into ${b.directory}`,
    `  ${b.hits} hits, ${b.visits} visits, schema version ${b.schema_version}, ${mib} MiB (sha256 ${b.sha256})`,
    `Restore it with the server stopped: plumb restore ${b.directory}`,
  ].join('\n');
}
