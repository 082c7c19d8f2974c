// GET /v1/aggregations and GET /v1/current_visitors: the reporting half of the API (rules: docs/reports.md).

import type { FastifyInstance } from 'fastify';
import { notFound, ValidationError } from '../../domain/errors.js';
import type { ReportEngine } from '../../report/engine.js';
import { parseEntity, parseReportRequest } from '../../report/parse.js';
import type { MetaStore } from '../../store/types.js';
import { principalOf, readableSite } from './access.js';
import type { SiteLookup } from './site-cache.js';

const tags = ['Reports'];
const text = { type: 'string' } as const;

const aggregationQuery = {
  type: 'object',
  properties: {
    entity: { type: 'string', enum: ['pageview', 'event'] },
    entity_id: { ...text, description: 'The site id (entity=pageview). Empty is the same as absent: required for pageview, ignored for event' },
    site_id: { ...text, description: 'The site id (entity=event)' },
    entity_name: { ...text, description: 'The event name (entity=event)' },
    aggregates: {
      ...text,
      description:
        'Comma-separated: visits, uniques, pageviews, avg_duration, bounce_rate, and the extensions (docs/reports.md) visitors ' +
        '(distinct visitor-days), scroll_depth and time_on_page (engagement: null without any); or conversions, unique_conversions, value',
    },
    date_grouping: { ...text, description: 'hour, day, month or year' },
    field_grouping: { ...text, description: 'Comma-separated fields' },
    sort_by: { ...text, description: 'field:asc or field:desc' },
    date_from: {
      ...text,
      description:
        'First second counted: YYYY-MM-DD HH:MM:SS or YYYY-MM-DD (00:00:00) in the reporting time zone, or an ISO 8601 ' +
        'instant with an offset (2026-10-01T00:00:00.000Z, 2026-10-01T00:00:00+02:00; fraction dropped). Years 2000 to 2099 as written',
    },
    date_to: {
      ...text,
      description:
        'Last second counted (inclusive): YYYY-MM-DD HH:MM:SS or YYYY-MM-DD (until 23:59:59) in the reporting time zone, or an ' +
        'ISO 8601 instant with an offset (fraction dropped; its whole second counts). Years 2000 to 2099 as written',
    },
    timezone: { ...text, description: 'Deprecated: TZ database name overriding the site time zone' },
    limit: { ...text, description: '1 to 1000' },
    filters: {
      ...text,
      description:
        'JSON array of {property, operator, value}. Or, as nested parameters instead: filters[0][property], ' +
        'filters[0][operator], filters[0][value], filters[1][…] (numbered from 0 without gaps), or ' +
        'filters[][property], filters[][operator], filters[][value] repeated in order. Any other filters… key is a 400',
    },
  },
  // Not `additionalProperties: false`: the nested filters[…] keys must reach parseReportRequest, which refuses
  // the ones it does not know (other unknown parameters are ignored, as Fathom does).
  required: ['entity', 'aggregates'],
} as const;

const aggregationRows = {
  type: 'array',
  // Engagement aggregates are null for a group without engagement; every other value is a string.
  items: { type: 'object', additionalProperties: { type: 'string', nullable: true } },
} as const;

const currentVisitorsQuery = {
  type: 'object',
  properties: {
    site_id: text,
    detailed: { type: 'string', description: 'true adds content and referrers' },
  },
  required: ['site_id'],
} as const;

export function reportRoutes(app: FastifyInstance, meta: MetaStore, sites: SiteLookup, engine: ReportEngine): void {
  app.get('/aggregations', {
    config: { access: 'token', limit: 'minute' },
    // The query schema documents the parameters; checking them is parseReportRequest's job, with messages
    // that name each parameter (a schema would coerce or reject before those rules could speak).
    schema: { tags, summary: 'An aggregation report', querystring: { ...aggregationQuery, required: [] }, response: { 200: aggregationRows } },
    attachValidation: true,
    handler: async (request) => {
      const query = request.query as Record<string, unknown>;
      const { siteId } = parseEntity(query);
      const site = await readableSite(sites, principalOf(request), siteId);
      // The raw query string too: the order of the filters[][…] form is lost in the parsed object.
      const url = request.raw.url ?? '';
      const at = url.indexOf('?');
      const report = parseReportRequest(query, new URLSearchParams(at < 0 ? '' : url.slice(at + 1)));
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
      const site = await readableSite(sites, principalOf(request), siteId);
      return engine.currentVisitors(site.id, detailedText === 'true' || detailedText === '1');
    },
  });
}
