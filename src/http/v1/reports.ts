// GET /v1/aggregations and GET /v1/current_visitors: the reporting half of the API (rules: docs/reports.md).

import type { FastifyInstance } from 'fastify';
import { notFound, ValidationError } from '../../domain/errors.js';
import type { ReportEngine } from '../../report/engine.js';
import { parseEntity, parseReportRequest } from '../../report/parse.js';
import type { MetaStore } from '../../store/types.js';
import { principalOf, readableSite } from './access.js';

const tags = ['Reports'];
const text = { type: 'string' } as const;

const aggregationQuery = {
  type: 'object',
  properties: {
    entity: { type: 'string', enum: ['pageview', 'event'] },
    entity_id: { ...text, description: 'The site id (entity=pageview)' },
    site_id: { ...text, description: 'The site id (entity=event)' },
    entity_name: { ...text, description: 'The event name (entity=event)' },
    aggregates: { ...text, description: 'Comma-separated: visits, uniques, pageviews, avg_duration, bounce_rate, visitors (distinct visitor-days, an extension: docs/reports.md); or conversions, unique_conversions, value' },
    date_grouping: { ...text, description: 'hour, day, month or year' },
    field_grouping: { ...text, description: 'Comma-separated fields' },
    sort_by: { ...text, description: 'field:asc or field:desc' },
    date_from: { ...text, description: 'YYYY-MM-DD HH:MM:SS in the reporting time zone' },
    date_to: { ...text, description: 'YYYY-MM-DD HH:MM:SS in the reporting time zone' },
    timezone: { ...text, description: 'Deprecated: TZ database name overriding the site time zone' },
    limit: { ...text, description: '1 to 1000' },
    filters: { ...text, description: 'JSON array of {property, operator, value}' },
  },
  required: ['entity', 'aggregates'],
} as const;

const aggregationRows = {
  type: 'array',
  items: { type: 'object', additionalProperties: { type: 'string' } },
} as const;

const currentVisitorsQuery = {
  type: 'object',
  properties: {
    site_id: text,
    detailed: { type: 'string', description: 'true adds content and referrers' },
  },
  required: ['site_id'],
} as const;

export function reportRoutes(app: FastifyInstance, meta: MetaStore, engine: ReportEngine): void {
  app.get('/aggregations', {
    config: { access: 'token', limit: 'minute' },
    // The query schema documents the parameters; checking them is parseReportRequest's job, with messages
    // that name each parameter (a schema would coerce or reject before those rules could speak).
    schema: { tags, summary: 'An aggregation report', querystring: { ...aggregationQuery, required: [] }, response: { 200: aggregationRows } },
    attachValidation: true,
    handler: async (request) => {
      const query = request.query as Record<string, unknown>;
      const { siteId } = parseEntity(query);
      const site = await readableSite(meta, principalOf(request), siteId);
      const report = parseReportRequest(query);
      if (report.entity === 'event' && !(await meta.findGoalByName(site.id, report.eventName!))) {
        throw notFound('Event not found');
      }
      return engine.aggregate(report, site);
    },
  });

  app.get('/current_visitors', {
    config: { access: 'token', limit: 'minute' },
    schema: { tags, summary: 'Visitors in the last five minutes', querystring: { ...currentVisitorsQuery, required: [] } },
    attachValidation: true,
    handler: async (request) => {
      const query = request.query as Record<string, unknown>;
      const siteId = query.site_id;
      if (typeof siteId !== 'string' || siteId === '') throw ValidationError.of('site_id', 'is required');
      const detailedText = query.detailed ?? 'false';
      if (typeof detailedText !== 'string' || !['true', 'false', '1', '0', ''].includes(detailedText)) {
        throw ValidationError.of('detailed', 'must be true or false');
      }
      const site = await readableSite(meta, principalOf(request), siteId);
      return engine.currentVisitors(site.id, detailedText === 'true' || detailedText === '1');
    },
  });
}
