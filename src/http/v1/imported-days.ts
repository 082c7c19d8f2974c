// /v1/sites/{site_id}/imported_days: which days of a site hold imported history, and from which product, for
// anyone who may read its reports (share pages and viewers too), so a report can say which of its days were not
// recorded by Plumb. Only kinds and days: an import's id, file, row counts and times stay with owners and admins
// (/dashboard/api/sites/{id}/imports, /admin/imports). An extension of SPEC.md.

import type { FastifyInstance } from 'fastify';
import type { MetaStore } from '../../store/types.js';
import { siteOf } from './access.js';
import { siteIdParams } from './schemas.js';

const day = (d: Date | null) => (d ? d.toISOString().slice(0, 10) : null);

export function importedDaysRoutes(app: FastifyInstance, meta: MetaStore): void {
  app.get('/sites/:site_id/imported_days', {
    config: { access: 'read-site' },
    schema: { tags: ['Sites'], summary: 'Days of the site holding imported history (extension)', params: siteIdParams },
    handler: async (request) => {
      const imports = await meta.listImports(siteOf(request).id);
      const data = imports
        .filter((i) => i.status === 'done' && i.firstHitAt && i.lastHitAt)
        .map((i) => ({ kind: i.kind, first_day: day(i.firstHitAt), last_day: day(i.lastHitAt) }));
      return { object: 'list', data };
    },
  });
}
