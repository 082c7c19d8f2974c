// /admin/imports: other products' exports imported into any site (src/http/peers/import-service.ts), listed and
// deleted.

import type { FastifyInstance } from 'fastify';
import { notFound, ValidationError } from '../../domain/errors.js';
import { TRACKING_CODE_RE } from '../../domain/ids.js';
import type { ImportKind, MetaStore, Site } from '../../store/types.js';
import { holdConnection, importBody, streamedImportBodies, type ImportService } from '../peers/import-service.js';

export interface ImportRoutesOptions {
  meta: MetaStore;
  imports: ImportService;
}

interface SiteQuery {
  site_id?: string;
  file_name?: string;
}

const DEFAULT_NAMES: Record<ImportKind, string> = { umami: 'umami.csv', plausible: 'plausible.zip', fathom: 'fathom.zip' };

export async function importRoutes(app: FastifyInstance, { meta, imports }: ImportRoutesOptions): Promise<void> {
  streamedImportBodies(app);

  const siteOf = async (id: unknown): Promise<Site> => {
    if (typeof id !== 'string' || id === '') throw ValidationError.of('site_id', 'is required');
    const site = TRACKING_CODE_RE.test(id) ? await meta.getSite(id) : undefined;
    if (!site) throw notFound('Site not found');
    return site;
  };

  for (const kind of ['umami', 'plausible', 'fathom'] as const) {
    app.post<{ Querystring: SiteQuery }>(`/imports/${kind}`, async (request, reply) => {
      const site = await siteOf(request.query.site_id);
      holdConnection(request, reply);
      const body = importBody(request.body, kind);
      const fileName = (request.query.file_name ?? DEFAULT_NAMES[kind]).slice(0, 255);
      return kind === 'umami' ? imports.umami(site, body, fileName) : kind === 'plausible' ? imports.plausible(site, body, fileName) : imports.fathom(site, body, fileName);
    });
  }

  app.get<{ Querystring: SiteQuery }>('/imports', async (request) => imports.list((await siteOf(request.query.site_id)).id));

  app.delete<{ Params: { id: string } }>('/imports/:id', async (request) => {
    const record = await imports.get(request.params.id);
    if (!record) throw notFound('Import not found');
    return imports.remove(record);
  });
}
