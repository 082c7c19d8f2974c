// The dashboard's upload routes for imports (src/http/peers/import-service.ts): an owner or admin of the site's account
// uploads Umami's, Plausible's or Fathom's export, lists the site's imports and deletes one. Session plus
// anti-CSRF header, checked before any of the body is read.

import type { FastifyInstance } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import { notFound } from '../../domain/errors.js';
import { TRACKING_CODE_RE } from '../../domain/ids.js';
import type { ImportKind, MetaStore, Site } from '../../store/types.js';
import { holdConnection, importBody, streamedImportBodies, type ImportService } from '../peers/import-service.js';
import { memberForApi } from './guard.js';

export interface DashboardImportDeps {
  meta: MetaStore;
  imports: ImportService;
  sessions: SessionManager;
}

const KINDS = new Map<string, ImportKind>([['umami', 'umami'], ['plausible', 'plausible'], ['fathom', 'fathom']]);
const DEFAULT_NAMES: Record<ImportKind, string> = { umami: 'umami.csv', plausible: 'plausible.zip', fathom: 'fathom.zip' };

export async function dashboardImportRoutes(app: FastifyInstance, { meta, imports, sessions }: DashboardImportDeps): Promise<void> {
  streamedImportBodies(app);

  /** The site, when the session's member may manage it (owners and admins of its account); else 404. */
  const siteFor = async (request: Parameters<typeof memberForApi>[0], siteId: string): Promise<Site> => {
    const member = await memberForApi(request, sessions, { role: 'admin' });
    const site = TRACKING_CODE_RE.test(siteId) ? await meta.getSite(siteId) : undefined;
    if (!site || site.accountId !== member.account.id) throw notFound('Site not found');
    return site;
  };

  app.post<{ Params: { site_id: string; kind: string }; Querystring: { file_name?: string } }>(
    '/dashboard/api/sites/:site_id/imports/:kind',
    async (request, reply) => {
      const site = await siteFor(request, request.params.site_id);
      holdConnection(request, reply);
      const kind = KINDS.get(request.params.kind);
      if (kind === undefined) throw notFound('Imports are of kind umami, plausible or fathom');
      const body = importBody(request.body, kind);
      const fileName = (request.query.file_name ?? DEFAULT_NAMES[kind]).slice(0, 255);
      return kind === 'umami' ? imports.umami(site, body, fileName) : kind === 'plausible' ? imports.plausible(site, body, fileName) : imports.fathom(site, body, fileName);
    },
  );

  app.get<{ Params: { site_id: string } }>('/dashboard/api/sites/:site_id/imports', async (request) =>
    imports.list((await siteFor(request, request.params.site_id)).id),
  );

  app.delete<{ Params: { site_id: string; id: string } }>('/dashboard/api/sites/:site_id/imports/:id', async (request) => {
    const site = await siteFor(request, request.params.site_id);
    const record = await imports.get(request.params.id);
    if (!record || record.siteId !== site.id) throw notFound('Import not found');
    return imports.remove(record);
  });
}
