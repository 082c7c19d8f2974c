// /v1/sites: list, create, get, update, delete, and the retired data wipe.

import type { FastifyInstance } from 'fastify';
import { gone } from '../../domain/errors.js';
import { siteSettings, type SiteBody } from '../../domain/resource-rules.js';
import { hashPassword } from '../../domain/secrets.js';
import type { MetaStore, Site } from '../../store/types.js';
import type { SiteDataHooks } from './index.js';
import { chosenSitesOf, principalOf, siteOf } from './access.js';
import { pageRequest } from './pagination.js';
import { presentDeleted, presentList, presentSite } from './present.js';
import {
  deletedObject, paginationQuery, siteCreateBody, siteIdParams, siteList, siteObject, siteUpdateBody,
  type PaginationQuery,
} from './schemas.js';

const tags = ['Sites'];

export function siteRoutes(app: FastifyInstance, meta: MetaStore, siteData: SiteDataHooks): void {
  app.get<{ Querystring: PaginationQuery }>('/sites', {
    config: { access: 'list-sites' },
    schema: { tags, summary: 'List sites', querystring: paginationQuery, response: { 200: siteList } },
    handler: async (request) => {
      const { account } = principalOf(request);
      const chosen = chosenSitesOf(request);
      if (chosen) {
        // A viewer of chosen sites (a dashboard session): those sites, in creation order, as one page.
        const sites = (await Promise.all(chosen.map((id) => meta.getSite(id)))).filter((s): s is Site => s?.accountId === account.id);
        sites.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
        return presentList(request.url, { items: sites, hasMore: false }, presentSite);
      }
      const page = await meta.listSites(account.id, pageRequest(request.query));
      return presentList(request.url, page, presentSite);
    },
  });

  app.post<{ Body: SiteBody }>('/sites', {
    config: { access: 'full' },
    schema: { tags, summary: 'Create a site', body: siteCreateBody, response: { 200: siteObject } },
    handler: async (request) => {
      const { account } = principalOf(request);
      const s = siteSettings(request.body, undefined, account.timezone);
      const site = await meta.createSite({
        accountId: account.id,
        name: s.name,
        sharing: s.sharing,
        sharePasswordHash: s.sharePassword ? await hashPassword(s.sharePassword) : null,
        timezone: s.timezone,
        multiDomain: s.multiDomain,
        multiDomainOption: s.multiDomainOption,
        domains: s.domains ?? [],
        umamiWebsiteId: s.umamiWebsiteId ?? null,
        plausibleScriptId: s.plausibleScriptId ?? null,
      });
      return presentSite(site);
    },
  });

  app.get('/sites/:site_id', {
    config: { access: 'read-site' },
    schema: { tags, summary: 'Get a site', params: siteIdParams, response: { 200: siteObject } },
    handler: async (request) => presentSite(siteOf(request)),
  });

  app.post<{ Body: SiteBody }>('/sites/:site_id', {
    config: { access: 'manage-site' },
    schema: { tags, summary: 'Update a site', params: siteIdParams, body: siteUpdateBody, response: { 200: siteObject } },
    handler: async (request) => {
      const current = siteOf(request);
      const s = siteSettings(request.body, current, current.timezone);
      const patch: Partial<Site> = {
        name: s.name,
        sharing: s.sharing,
        timezone: s.timezone,
        multiDomain: s.multiDomain,
        multiDomainOption: s.multiDomainOption,
      };
      if (s.domains !== undefined) patch.domains = s.domains;
      if (s.umamiWebsiteId !== undefined) patch.umamiWebsiteId = s.umamiWebsiteId;
      if (s.plausibleScriptId !== undefined) patch.plausibleScriptId = s.plausibleScriptId;
      if (s.sharePassword !== undefined) {
        patch.sharePasswordHash = s.sharePassword === null ? null : await hashPassword(s.sharePassword);
      }
      const updated = await meta.updateSite(current.id, patch);
      siteData.changed(current.id);
      return presentSite(updated);
    },
  });

  app.delete('/sites/:site_id', {
    config: { access: 'full-site' },
    schema: { tags, summary: 'Delete a site with its events, milestones and data', params: siteIdParams, response: { 200: deletedObject } },
    handler: async (request) => {
      const site = siteOf(request);
      await siteData.delete(site.id);
      await meta.deleteSite(site.id);
      return presentDeleted(site.id, 'site');
    },
  });

  app.delete('/sites/:site_id/data', {
    config: { access: 'public' },
    schema: { tags, summary: 'Retired: always 410', params: siteIdParams },
    handler: async () => {
      throw gone('Wiping site data through the API is no longer available');
    },
  });
}
