// POST /admin/report-emails: one site's email report of its last complete week or month, sent now to an address
// the administrator gives (to try mail on a fresh server, or to send someone a report without a login); the
// dashboard's "send me this report now" for instances run from the command line. Registered inside /admin, so
// behind its token.

import type { FastifyInstance } from 'fastify';
import { notFound } from '../../domain/errors.js';
import { RateLimited, type Limiter } from '../../limits/limiter.js';
import type { Mailer } from '../../mail/mailer.js';
import { checkReportMail, noReportMail, REPORT_NOW_PERIODS, sendReportNow, type ReportNowPeriod } from '../../mail/report-now.js';
import type { ReportEngine } from '../../report/engine.js';
import type { MetaStore } from '../../store/types.js';

export interface AdminReportEmailDeps {
  reports: ReportEngine;
  mailer: Mailer;
  publicUrl: string | undefined;
  limiter: Limiter;
}

/** Reports the administrator may send in a minute, to any addresses: a typo'd loop should not become a mail flood. */
export const ADMIN_REPORTS_NOW_PER_MINUTE = 10;

export async function adminReportEmailRoutes(app: FastifyInstance, o: { meta: MetaStore; reportEmails?: AdminReportEmailDeps | undefined }): Promise<void> {
  app.post<{ Body: { site_id: string; period: ReportNowPeriod; to: string } }>('/report-emails', {
    schema: {
      body: {
        type: 'object',
        properties: {
          site_id: { type: 'string', minLength: 1, maxLength: 64 },
          period: { type: 'string', enum: Object.keys(REPORT_NOW_PERIODS) },
          to: { type: 'string', minLength: 3, maxLength: 255, pattern: '^[^\\s@]+@[^\\s@]+$' },
        },
        required: ['site_id', 'period', 'to'],
        additionalProperties: false,
      },
    },
    handler: async (request) => {
      const { site_id: siteId, period, to } = request.body;
      const site = await o.meta.getSite(siteId);
      if (!site) throw notFound('Site not found');
      const deps = o.reportEmails;
      if (!deps) throw noReportMail();
      checkReportMail(deps);
      const allowed = await deps.limiter.attempt('report-now:admin', 60_000, ADMIN_REPORTS_NOW_PER_MINUTE);
      if (!allowed.allowed) {
        const seconds = Math.max(1, Math.ceil(allowed.retryAfterMs / 1000));
        throw new RateLimited(`${ADMIN_REPORTS_NOW_PER_MINUTE} reports were sent in the last minute. Retry in ${seconds} s.`, seconds);
      }
      const sent = await sendReportNow({ engine: deps.reports, meta: o.meta, mailer: deps.mailer, publicUrl: deps.publicUrl }, site, period, to);
      return { object: 'report_email', site_id: site.id, period, date_from: sent.from, date_to: sent.to, sent_to: to };
    },
  });
}
