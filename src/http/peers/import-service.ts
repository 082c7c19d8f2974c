// Imports of other products' exports into a site, shared by /admin/imports and the dashboard's upload routes:
// Umami's raw events as hits, Plausible CE's and Fathom's exports as imported daily aggregates; listing, deleting,
// and replacing an earlier import of the same export (known by its content: a CSV's bytes, a zip's files). Request
// bodies arrive as streams and are never held whole. An import is there whole or not at all: one that fails has its
// rows removed here, one whose process dies is undone by another run (its owner and heartbeat,
// src/ingest/peer-imports/import-owner.ts; src/ingest/peer-imports/import-sweeper.ts).

import { createHash, randomBytes, type Hash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, badRequest, GeneralError, ValidationError } from '../../domain/errors.js';
import { LONG_UPLOADS } from '../errors.js';
import { formatTimestamp } from '../../domain/time.js';
import type { Ingest } from '../../ingest/ingest.js';
import { FathomFormatError, importFathomZip } from '../../ingest/peer-imports/fathom-import.js';
import { CompressedBodyError, inflatedIfGzipped } from '../../ingest/peer-imports/gzip-body.js';
import { ImportLeaseLost, type ImportLease, type ImportOwner } from '../../ingest/peer-imports/import-owner.js';
import { removeImportRows } from '../../ingest/peer-imports/import-rows.js';
import type { ImportSpool } from '../../ingest/peer-imports/import-spool.js';
import { importPlausibleZip, PlausibleFormatError } from '../../ingest/peer-imports/plausible-import.js';
import { SiteDirectory } from '../../ingest/site-directory.js';
import { importUmamiCsv, UmamiFormatError } from '../../ingest/peer-imports/umami-import.js';
import type { EventStore, ImportedDay, ImportKind, ImportOutcome, ImportRecord, MetaStore, NewImport, Site } from '../../store/types.js';

/**
 * The largest Plausible export zip taken. It is spooled to a temporary file (a zip's directory is at its end), so
 * the cap bounds the disk one upload can take; exports hold daily aggregates, tens of MB even for large sites.
 */
export const MAX_PLAUSIBLE_ZIP_BYTES = 1024 ** 3;

/** Passes a body through, hashing it, and fails it with a 413 once it is longer than `max` bytes. */
export function hashedUpTo(max: number, digest: Hash): Transform {
  let bytes = 0;
  return new Transform({
    transform: (chunk: Buffer, _e, done) => {
      bytes += chunk.length;
      if (bytes > max) return done(new GeneralError(413, `The upload is larger than ${max.toLocaleString('en')} bytes, more than an export of aggregates holds`));
      digest.update(chunk);
      done(null, chunk);
    },
  });
}

/** Imported hits waiting to be written beyond which the import waits for a write. */
const ROOM_HITS = 20_000;

const ts = (d: Date | null) => (d ? formatTimestamp(d) : null);

export const presentImport = (i: ImportRecord) => ({
  id: i.id,
  object: 'import',
  site_id: i.siteId,
  kind: i.kind,
  file_name: i.fileName,
  status: i.status,
  imported: i.imported,
  rejected: i.rejected,
  first_hit_at: ts(i.firstHitAt),
  last_hit_at: ts(i.lastHitAt),
  created_at: formatTimestamp(i.createdAt),
  finished_at: ts(i.finishedAt),
  failure_reason: i.status === 'failed' ? (i.failure ?? 'failed') : null,
});

/**
 * What the person who started a failed import is told (its record's `failure_reason`): the message of an error
 * about the upload itself (a 4xx: not an export, too large); for anything else only that the server failed, its
 * details being for the server's log.
 */
function failureOf(err: unknown): string {
  if (err instanceof UmamiFormatError || err instanceof PlausibleFormatError || err instanceof FathomFormatError || err instanceof CompressedBodyError) return `not a valid export: ${err.message}`;
  if (err instanceof ImportLeaseLost) return 'interrupted: this server lost its hold on the import; nothing of it was kept, import the file again';
  if (err instanceof ApiError && err.status < 500) return err.message;
  return 'the server could not finish the import (its log says why); nothing of it was kept, import the file again';
}

/** In the calling plugin's scope: CSV and zip bodies reach handlers as the request stream itself. */
export function streamedImportBodies(app: FastifyInstance): void {
  app.addContentTypeParser(['text/csv', 'application/csv', 'application/gzip', 'application/x-gzip', 'application/zip', 'application/x-zip-compressed'], (_request, payload, done) =>
    done(null, payload),
  );
}

const BODY_TYPES: Record<ImportKind, string> = {
  umami: "must be Umami's CSV export, or Umami Cloud's .csv.gz (Content-Type: text/csv or application/gzip)",
  plausible: "must be Plausible's export zip (Content-Type: application/zip)",
  fathom: "must be Fathom's CSV export as a zip (Content-Type: application/zip)",
};

/**
 * An import answers when it is done, which for a large export is minutes after its upload ended: the connection is
 * idle meanwhile, and the server's idle timeout (twice the request timeout) would close it and lose the answer.
 * An upload read as it arrives (Umami's) lasts as long as the import, longer than the request timeout allows a
 * whole request (LONG_UPLOADS). Both lifted for this request, put back once its answer is sent.
 */
export function holdConnection(request: FastifyRequest, reply: FastifyReply): void {
  const socket = request.raw.socket as Partial<Socket> | undefined;
  // Injected requests (tests, light-my-request) have a socket that is no net.Socket.
  if (typeof socket?.setTimeout !== 'function') return;
  const idle = request.server.server.timeout;
  socket.setTimeout(0);
  LONG_UPLOADS.add(socket as Socket);
  reply.raw.once('finish', () => {
    LONG_UPLOADS.delete(socket as Socket);
    socket.setTimeout!(idle);
  });
}

/** The request body as a stream, or a 400 naming what the import wants. */
export function importBody(body: unknown, kind: ImportKind): Readable {
  if (!body || typeof (body as Readable).pipe !== 'function') throw new ValidationError({ body: [BODY_TYPES[kind]] });
  return body as Readable;
}

export interface ImportServiceOptions {
  meta: MetaStore;
  events: EventStore;
  ingest: Ingest;
  /** This process as the owner of the imports it runs (their heartbeats). */
  owner: ImportOwner;
  /** Where uploaded zips wait while they are read. */
  spool: ImportSpool;
  log: (err: unknown, message: string) => void;
  /** Told when a site's imports changed (one finished, was replaced or deleted): reports' remembered done imports. */
  changed?: (siteId: string) => void;
}

export class ImportService {
  private readonly meta: MetaStore;
  private readonly events: EventStore;
  private readonly ingest: Ingest;

  constructor(private readonly o: ImportServiceOptions) {
    ({ meta: this.meta, events: this.events, ingest: this.ingest } = o);
  }

  /** Records a new import owned by this process and holds its lease (renewed until released). */
  private begin(input: Omit<NewImport, 'owner'>): Promise<{ record: ImportRecord; lease: ImportLease }> {
    return this.o.owner.begin(this.meta, () => this.meta.createImport({ ...input, owner: this.o.owner.id }), this.o.log);
  }

  /** Umami's raw events into `site` as hits (src/ingest/peer-imports/umami-import.ts). */
  async umami(site: Site, body: Readable, fileName: string) {
    const { record, lease } = await this.begin({
      siteId: site.id,
      kind: 'umami',
      fileName,
      visitIdBase: BigInt(randomBytes(4).readUInt32BE(0)) << 32n,
    });
    const buffer = this.ingest.buffer;
    try {
      let result;
      try {
        // Umami Cloud's export comes gzip-compressed; psql's is plain CSV. The same CSV either way is the same import.
        const { body: csv } = await inflatedIfGzipped(body);
        result = await importUmamiCsv(csv, {
          siteId: site.id,
          defaultHostname: site.domains[0],
          visitIdBase: record.visitIdBase,
          goalName: async (name) => (await this.ingest.sites.goalByName(site.id, name))?.name,
          sink: (hit, visit) => {
            lease.check();
            buffer.add(hit, visit);
            if (buffer.pending >= ROOM_HITS) return buffer.flush();
          },
        });
        await buffer.flush();
      } catch (err) {
        // Whatever was written of a failed import goes: an import is there whole or not at all.
        await buffer.flush().catch(() => undefined);
        await this.failed(record, err);
        if (err instanceof UmamiFormatError || err instanceof CompressedBodyError) throw badRequest(err.message);
        throw err;
      }
      const finished = await this.finish(record, {
        status: 'done',
        digest: result.digest,
        imported: result.imported,
        rejected: result.rejected,
        firstHitAt: result.firstHitAt,
        lastHitAt: result.lastHitAt,
        failure: null,
      });
      return { ...presentImport(finished), errors: result.errors, ...(await this.settle(finished)) };
    } finally {
      lease.release();
    }
  }

  /** Plausible CE's export zip into `site` as imported daily aggregates (src/ingest/peer-imports/plausible-import.ts). */
  plausible(site: Site, body: Readable, fileName: string) {
    return this.daily('plausible', site, body, fileName);
  }

  /** Fathom's CSV export, zipped, into `site` as imported daily aggregates (src/ingest/peer-imports/fathom-import.ts). */
  fathom(site: Site, body: Readable, fileName: string) {
    return this.daily('fathom', site, body, fileName);
  }

  private async daily(kind: 'plausible' | 'fathom', site: Site, body: Readable, fileName: string) {
    const { record, lease } = await this.begin({ siteId: site.id, kind, fileName, visitIdBase: 0n });
    try {
      return await this.dailyHeld(kind, site, body, record, lease);
    } finally {
      lease.release();
    }
  }

  private async dailyHeld(kind: 'plausible' | 'fathom', site: Site, body: Readable, record: ImportRecord, lease: ImportLease) {
    // A zip's directory is at its end: the upload goes to a spool file first (streamed, hashed on the way).
    let dir: string | undefined;
    const digest = createHash('sha256');
    let result;
    try {
      dir = await this.o.spool.make();
      const file = join(dir, 'export.zip');
      await pipeline(body, hashedUpTo(MAX_PLAUSIBLE_ZIP_BYTES, digest), createWriteStream(file));
      // Events are found or created by name as the collector does (SiteDirectory.goalByName, its limit too). A
      // name is looked up once per import (the answers kept are bounded).
      const goals = new SiteDirectory(this.meta, Infinity);
      const known = new Map<string, boolean>();
      const common = {
        siteId: site.id,
        importId: record.id,
        write: (rows: ImportedDay[]) => {
          lease.check();
          return this.events.writeImportedDays(rows);
        },
        eventGoal: async (name: string) => {
          let has = known.get(name);
          if (has === undefined) {
            has = (await goals.goalByName(site.id, name)) !== undefined;
            if (known.size < 100_000) known.set(name, has);
          }
          return has;
        },
      };
      result = kind === 'plausible' ? await importPlausibleZip(file, common) : await importFathomZip(file, { ...common, timezone: site.timezone });
    } catch (err) {
      await this.failed(record, err);
      if (err instanceof PlausibleFormatError || err instanceof FathomFormatError) throw badRequest(err.message);
      throw err;
    } finally {
      if (dir !== undefined) await rm(dir, { recursive: true, force: true });
    }
    const day = (d: string | null) => (d ? new Date(`${d}T00:00:00Z`) : null);
    // The export's content, not the zip's bytes: the CLI zips a folder anew each time it is sent, with new times.
    const finished = await this.finish(record, {
      status: 'done',
      digest: result.digest,
      imported: result.imported,
      rejected: result.rejected,
      firstHitAt: day(result.firstDay),
      lastHitAt: day(result.lastDay),
      failure: null,
    });
    // Imports recorded before digests were of the content have the zip's SHA-256: the same file replaces them too.
    const sameFile = digest.digest('hex');
    return { ...presentImport(finished), errors: result.errors, read: result.read, skipped: result.skipped, ...(await this.settle(finished, sameFile)) };
  }

  async list(siteId: string) {
    return { object: 'list', data: (await this.meta.listImports(siteId)).map(presentImport) };
  }

  /** The import with this id (a UUID), if any. */
  async get(id: string): Promise<ImportRecord | undefined> {
    return /^[0-9a-f-]{36}$/i.test(id) ? this.meta.getImport(id) : undefined;
  }

  /** Deletes the import and everything it brought. */
  async remove(record: ImportRecord) {
    await this.ingest.flush();
    await removeImportRows(this.events, record);
    await this.meta.deleteImport(record.id);
    this.o.changed?.(record.siteId);
    return { id: record.id, object: 'import', deleted: true };
  }

  /**
   * Removes what a failed import wrote and records why it failed (unless another process took it over meanwhile:
   * then that process says why). Should this itself fail, the record stays running under this process's id, and
   * the next sweep (src/ingest/peer-imports/import-sweeper.ts) undoes it.
   */
  private async failed(record: ImportRecord, err: unknown): Promise<void> {
    await removeImportRows(this.events, record);
    await this.meta.finishImport(record.id, this.o.owner.id, {
      status: 'failed', digest: null, imported: 0, rejected: 0, firstHitAt: null, lastHitAt: null, failure: failureOf(err),
    });
  }

  /**
   * Finishes an import that ran to its end as done, if it is still this process's: an import deleted while it ran,
   * or taken over by another process (this one stalled past its lease), is removed instead of counted.
   */
  private async finish(record: ImportRecord, outcome: ImportOutcome): Promise<ImportRecord> {
    const finished = await this.meta.finishImport(record.id, this.o.owner.id, outcome);
    // Its days count from now on in this process's reports (in others' within their few seconds).
    if (finished) this.o.changed?.(record.siteId);
    if (finished) return finished;
    await removeImportRows(this.events, record);
    throw new ImportLeaseLost(record.id);
  }

  /**
   * Replaces earlier imports of the same export (the same digest, or `alsoSame`, the digest earlier versions gave
   * the same file); names those the new one overlaps in time.
   */
  private async settle(finished: ImportRecord, alsoSame?: string): Promise<{ replaced: string[]; overlaps: string[] }> {
    const replaced: string[] = [];
    const overlaps: string[] = [];
    for (const earlier of await this.meta.listImports(finished.siteId)) {
      if (earlier.id === finished.id || earlier.status !== 'done') continue;
      if (earlier.kind === finished.kind && earlier.digest !== null && (earlier.digest === finished.digest || earlier.digest === alsoSame)) {
        await removeImportRows(this.events, earlier);
        await this.meta.deleteImport(earlier.id);
        replaced.push(earlier.id);
      } else if (earlier.firstHitAt && earlier.lastHitAt && finished.firstHitAt && finished.lastHitAt &&
        earlier.firstHitAt <= finished.lastHitAt && finished.firstHitAt <= earlier.lastHitAt) {
        overlaps.push(earlier.id);
      }
    }
    return { replaced, overlaps };
  }
}
