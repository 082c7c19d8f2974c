// POST /admin/backup: a consistent copy of the embedded store made by this process, which holds the database file,
// while it keeps collecting (`plumb backup DIR`; README, "Backup and restore").

import { isAbsolute } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { TokenAuthenticator } from '../../auth/token-authenticator.js';
import { BackupSpaceError, BackupTargetError } from '../../domain/backup-manifest.js';
import { GeneralError, unprocessable, ValidationError } from '../../domain/errors.js';
import type { Ingest } from '../../ingest/ingest.js';
import type { UsageMeter } from '../../limits/usage-meter.js';
import type { EventStore } from '../../store/types.js';
import { holdConnection } from '../peers/import-service.js';

export interface BackupRouteOptions {
  events: EventStore;
  ingest: Ingest;
  usage: UsageMeter;
  auth: TokenAuthenticator;
}

/** Linux's PATH_MAX: no longer path names a directory. */
const MAX_PATH = 4096;

const body = {
  type: 'object',
  properties: { directory: { type: 'string', minLength: 1, maxLength: MAX_PATH } },
  required: ['directory'],
  additionalProperties: false,
} as const;

export async function backupRoutes(app: FastifyInstance, { events, ingest, usage, auth }: BackupRouteOptions): Promise<void> {
  // One at a time: two copies at once would only compete for the same disk.
  let running = false;

  app.post<{ Body: { directory: string } }>('/backup', {
    schema: { body },
    handler: async (request, reply) => {
      const { directory } = request.body;
      if (!isAbsolute(directory) || directory.includes('\0')) {
        throw ValidationError.of('directory', 'must be an absolute path on the server\'s machine');
      }
      if (!events.backup) {
        throw unprocessable(
          'Backups through Plumb are for the embedded store. Scaled out, back up PostgreSQL with pg_dump and ClickHouse ' +
            'with BACKUP (or clickhouse-backup); Redis needs none (README, "Backup and restore")',
        );
      }
      if (running) throw new GeneralError(409, 'A backup is already running: wait for it to finish');
      running = true;
      // The copy of a large database takes longer than the server lets a connection idle.
      holdConnection(request, reply);
      try {
        // Everything acknowledged before this request goes into the copy: accepted hits (from the write buffer and
        // the ingest thread), API usage counted in memory, tokens' last use.
        await ingest.flush();
        await usage.flush();
        await auth.flushLastUsed();
        const manifest = await events.backup(directory);
        return { object: 'backup', directory, ...manifest };
      } catch (err) {
        if (err instanceof BackupTargetError) throw ValidationError.of('directory', err.message);
        if (err instanceof BackupSpaceError) throw new GeneralError(507, `Not enough disk space for the backup: ${err.message}; the server and its data are unaffected`);
        throw err;
      } finally {
        running = false;
      }
    },
  });
}
