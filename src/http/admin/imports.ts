// /admin/imports: other products' exports imported into a site (Umami's raw events as hits, Plausible CE's export
// as imported daily aggregates), listed and deleted. Exports are streamed: a request body is never held whole.

import { createHash, randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { FastifyInstance } from 'fastify';
import { badRequest, notFound, ValidationError } from '../../domain/errors.js';
import { TRACKING_CODE_RE } from '../../domain/ids.js';
import { formatTimestamp } from '../../domain/time.js';
import type { Ingest } from '../../ingest/live.js';
import { importPlausibleZip, PlausibleFormatError } from '../../ingest/plausible-import.js';
import { importUmamiCsv, UmamiFormatError } from '../../ingest/umami-import.js';
import type { EventStore, ImportRecord, MetaStore, Site } from '../../store/types.js';

export interface ImportRoutesOptions {
  meta: MetaStore;
  events: EventStore;
  ingest: Ingest;
}

/** Imported hits waiting to be written beyond which the import waits for a write. */
const ROOM_HITS = 20_000;
const VISIT_RANGE = (1n << 32n) - 1n;

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
});

interface SiteQuery {
  site_id?: string;
  file_name?: string;
}

export async function importRoutes(app: FastifyInstance, { meta, events, ingest }: ImportRoutesOptions): Promise<void> {
  // CSV bodies reach the handler as the request stream itself (a 1 GB export is never in memory).
  app.addContentTypeParser(['text/csv', 'application/csv', 'application/zip', 'application/x-zip-compressed'], (_request, payload, done) =>
    done(null, payload),
  );

  /** Everything an import brought, whatever its kind. */
  const removeImported = async (record: ImportRecord) => {
    if (record.kind === 'plausible') await events.deleteImportedDays(record.siteId, record.id);
    else await events.deleteVisitRange(record.siteId, record.visitIdBase, record.visitIdBase + VISIT_RANGE);
  };

  /** Replaces earlier imports of the same file; names those the new one overlaps in time. */
  const settle = async (finished: ImportRecord) => {
    const replaced: string[] = [];
    const overlaps: string[] = [];
    for (const earlier of await meta.listImports(finished.siteId)) {
      if (earlier.id === finished.id || earlier.status !== 'done') continue;
      if (earlier.kind === finished.kind && earlier.digest === finished.digest) {
        await removeImported(earlier);
        await meta.deleteImport(earlier.id);
        replaced.push(earlier.id);
      } else if (earlier.firstHitAt && earlier.lastHitAt && finished.firstHitAt && finished.lastHitAt &&
        earlier.firstHitAt <= finished.lastHitAt && finished.firstHitAt <= earlier.lastHitAt) {
        overlaps.push(earlier.id);
      }
    }
    return { replaced, overlaps };
  };

  const siteOf = async (id: unknown): Promise<Site> => {
    if (typeof id !== 'string' || id === '') throw ValidationError.of('site_id', 'is required');
    const site = TRACKING_CODE_RE.test(id) ? await meta.getSite(id) : undefined;
    if (!site) throw notFound('Site not found');
    return site;
  };

  app.post<{ Querystring: SiteQuery }>('/imports/umami', async (request, reply) => {
    const site = await siteOf(request.query.site_id);
    const body = request.body as Readable | undefined;
    if (!body || typeof (body as Readable).pipe !== 'function') {
      throw new ValidationError({ body: ["must be Umami's CSV export (Content-Type: text/csv)"] });
    }
    const fileName = (request.query.file_name ?? 'umami.csv').slice(0, 255);
    const record = await meta.createImport({
      siteId: site.id,
      kind: 'umami',
      fileName,
      visitIdBase: BigInt(randomBytes(4).readUInt32BE(0)) << 32n,
    });
    const range = [record.visitIdBase, record.visitIdBase + VISIT_RANGE] as const;
    let result;
    try {
      result = await importUmamiCsv(body, {
        siteId: site.id,
        defaultHostname: site.domains[0],
        visitIdBase: record.visitIdBase,
        goalName: async (name) => (await ingest.sites.goalByName(site.id, name))?.name,
        sink: (hit, visit) => {
          ingest.buffer.add(hit, visit);
          if (ingest.buffer.pending >= ROOM_HITS) return ingest.buffer.flush();
        },
      });
      await ingest.buffer.flush();
    } catch (err) {
      // Whatever was written of a failed import goes: an import is there whole or not at all.
      await ingest.buffer.flush().catch(() => undefined);
      await events.deleteVisitRange(site.id, ...range);
      await meta.finishImport(record.id, { status: 'failed', digest: null, imported: 0, rejected: 0, firstHitAt: null, lastHitAt: null });
      if (err instanceof UmamiFormatError) throw badRequest(err.message);
      throw err;
    }
    const finished = await meta.finishImport(record.id, {
      status: 'done',
      digest: result.digest,
      imported: result.imported,
      rejected: result.rejected,
      firstHitAt: result.firstHitAt,
      lastHitAt: result.lastHitAt,
    });
    // Importing the same file again replaces the earlier import instead of counting it twice.
    const { replaced, overlaps } = await settle(finished);
    return reply.send({ ...presentImport(finished), errors: result.errors, replaced, overlaps });
  });

  app.post<{ Querystring: SiteQuery }>('/imports/plausible', async (request, reply) => {
    const site = await siteOf(request.query.site_id);
    const body = request.body as Readable | undefined;
    if (!body || typeof (body as Readable).pipe !== 'function') {
      throw new ValidationError({ body: ["must be Plausible's export zip (Content-Type: application/zip)"] });
    }
    const record = await meta.createImport({ siteId: site.id, kind: 'plausible', fileName: (request.query.file_name ?? 'plausible.zip').slice(0, 255), visitIdBase: 0n });
    // A zip's directory is at its end: the upload goes to a temporary file first (streamed, hashed on the way).
    const dir = await mkdtemp(join(tmpdir(), 'plumb-import-'));
    const file = join(dir, 'export.zip');
    const digest = createHash('sha256');
    let result;
    try {
      await pipeline(body, new Transform({ transform: (chunk: Buffer, _e, done) => done(null, (digest.update(chunk), chunk)) }), createWriteStream(file));
      result = await importPlausibleZip(file, { siteId: site.id, importId: record.id, write: (rows) => events.writeImportedDays(rows) });
    } catch (err) {
      await events.deleteImportedDays(site.id, record.id);
      await meta.finishImport(record.id, { status: 'failed', digest: null, imported: 0, rejected: 0, firstHitAt: null, lastHitAt: null });
      if (err instanceof PlausibleFormatError) throw badRequest(err.message);
      throw err;
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
    const day = (d: string | null) => (d ? new Date(`${d}T00:00:00Z`) : null);
    const finished = await meta.finishImport(record.id, {
      status: 'done',
      digest: digest.digest('hex'),
      imported: result.imported,
      rejected: result.rejected,
      firstHitAt: day(result.firstDay),
      lastHitAt: day(result.lastDay),
    });
    const { replaced, overlaps } = await settle(finished);
    return reply.send({ ...presentImport(finished), errors: result.errors, read: result.read, skipped: result.skipped, replaced, overlaps });
  });

  app.get<{ Querystring: SiteQuery }>('/imports', async (request) => {
    const site = await siteOf(request.query.site_id);
    return { object: 'list', data: (await meta.listImports(site.id)).map(presentImport) };
  });

  app.delete<{ Params: { id: string } }>('/imports/:id', async (request) => {
    const id = request.params.id;
    const record = /^[0-9a-f-]{36}$/i.test(id) ? await meta.getImport(id) : undefined;
    if (!record) throw notFound('Import not found');
    await ingest.buffer.flush();
    await removeImported(record);
    await meta.deleteImport(record.id);
    return { id: record.id, object: 'import', deleted: true };
  });
}
