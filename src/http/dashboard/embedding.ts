// The site settings page's JSON route for embedding: which origins may frame the site's share page
// (`/share/{id}?embed=true`). A session of the account's owner or an admin, with the anti-CSRF header.

import type { FastifyInstance } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import { parseEmbedOrigins } from '../../domain/embed-origins.js';
import { notFound } from '../../domain/errors.js';
import type { MetaStore } from '../../store/types.js';
import { memberForApi } from './guard.js';

export interface EmbeddingDeps {
  meta: MetaStore;
  sessions: SessionManager;
}

const present = (siteId: string, origins: string[]) => ({ object: 'embedding', site_id: siteId, embed_origins: origins });

export function embeddingRoutes(app: FastifyInstance, { meta, sessions }: EmbeddingDeps): void {
  const ownSite = async (accountId: number, siteId: string) => {
    const site = await meta.getSite(siteId);
    if (!site || site.accountId !== accountId) throw notFound('Site not found');
    return site;
  };

  app.get<{ Params: { site_id: string } }>('/dashboard/api/sites/:site_id/embedding', async (request) => {
    const { account } = await memberForApi(request, sessions, { role: 'admin' });
    const site = await ownSite(account.id, request.params.site_id);
    return present(site.id, await meta.getEmbedOrigins(site.id));
  });

  app.put<{ Params: { site_id: string }; Body: unknown }>('/dashboard/api/sites/:site_id/embedding', async (request) => {
    // Who is asking is settled before the body is judged, so a stranger learns nothing from validation errors.
    const { account } = await memberForApi(request, sessions, { role: 'admin' });
    const site = await ownSite(account.id, request.params.site_id);
    const body = request.body;
    const value = body && typeof body === 'object' && Object.hasOwn(body, 'embed_origins') ? (body as Record<string, unknown>).embed_origins : undefined;
    const origins = parseEmbedOrigins(value);
    await meta.setEmbedOrigins(site.id, origins);
    return present(site.id, origins);
  });
}
