// GET /v1/sites/{site_id}/journeys: the paths visits take through a site (docs/reports.md, "Journeys"). A Plumb
// extension of SPEC.md, with /v1/aggregations's token scopes, rate-limit window, range and filters.

import type { FastifyInstance } from 'fastify';
import { FieldErrorCollector, ValidationError, type FieldErrors } from '../../domain/errors.js';
import type { Journeys, ReportEngine } from '../../report/engine.js';
import { DEFAULT_JOURNEY_LIMIT, DEFAULT_STEPS, MAX_JOURNEY_LIMIT, MAX_STEPS, MIN_STEPS, type JourneyOptions } from '../../report/journeys.js';
import { parseReportRequest } from '../../report/parse.js';
import { siteOf } from './access.js';
import { localText, orderedFilters, rangeQuery } from './range-query.js';
import { journeysAnswer, journeysQuerySchema, siteIdParams } from './schemas.js';

/** A pathname is at most 2,000 characters (docs/collection.md), so a longer entry page can never match. */
export const MAX_ENTRY_PAGE_LENGTH = 2000;

type Query = Record<string, unknown>;

/** One parameter's text; a parameter given twice is an error under its name. */
function once(query: Query, name: string, errors: FieldErrorCollector): string | undefined {
  const v = Object.hasOwn(query, name) ? query[name] : undefined;
  if (v === undefined || typeof v === 'string') return v;
  errors.add(name, 'must be given once');
  return undefined;
}

/** A whole number from `min` to `max`, `fallback` when absent or empty. */
function wholeNumber(query: Query, name: string, min: number, max: number, fallback: number, errors: FieldErrorCollector): number {
  const raw = once(query, name, errors)?.trim();
  if (raw === undefined || raw === '') return fallback;
  const n = /^\d{1,4}$/.test(raw) ? Number(raw) : NaN;
  if (!(n >= min && n <= max)) {
    errors.add(name, `must be a whole number from ${min} to ${max}`);
    return fallback;
  }
  return n;
}

/** The journeys' own parameters (entry_page, steps, limit), every fault named at once. */
export function parseJourneyOptions(query: Query): JourneyOptions {
  const errors = new FieldErrorCollector();
  const steps = wholeNumber(query, 'steps', MIN_STEPS, MAX_STEPS, DEFAULT_STEPS, errors);
  const limit = wholeNumber(query, 'limit', 1, MAX_JOURNEY_LIMIT, DEFAULT_JOURNEY_LIMIT, errors);
  const entryPage = once(query, 'entry_page', errors);
  if (entryPage !== undefined && entryPage.length > MAX_ENTRY_PAGE_LENGTH) {
    errors.add('entry_page', `must be at most ${MAX_ENTRY_PAGE_LENGTH} characters (a pathname's longest)`);
  }
  errors.throwIfAny();
  return { steps, limit, ...(entryPage ? { entryPage } : {}) };
}

export function journeyRoutes(app: FastifyInstance, engine: ReportEngine): void {
  app.get('/sites/:site_id/journeys', {
    config: { access: 'read-site', limit: 'minute' },
    // As for /v1/aggregations, the schema documents; the parsers check, naming each parameter.
    schema: {
      tags: ['Reports'],
      summary: 'Journeys: the paths visits take through the site (a Plumb extension)',
      description:
        'A Plumb extension of the v1 API: within each visit, the sequence of pages viewed in the range (consecutive ' +
        'repeats collapsed), as the most frequent prefixes of each depth with how many journeys ended there.',
      params: siteIdParams,
      querystring: journeysQuerySchema,
      response: { 200: journeysAnswer },
    },
    attachValidation: true,
    handler: async (request) => {
      const site = siteOf(request);
      const query = request.query as Query;
      // The range and filters exactly as /v1/aggregations reads them (its entity and aggregate fixed here); the
      // raw query string keeps the order of the filters[][…] form.
      const forwarded = rangeQuery(query, { entity: 'pageview', entity_id: site.id, aggregates: 'visits' });
      const ordered = orderedFilters(request.raw.url);
      // Both parsers' faults in one answer.
      const faults: FieldErrors = {};
      const parsed = <T>(parse: () => T): T | undefined => {
        try {
          return parse();
        } catch (err) {
          if (!(err instanceof ValidationError)) throw err;
          for (const [field, messages] of Object.entries(err.fields)) faults[field] = [...(Object.hasOwn(faults, field) ? faults[field]! : []), ...messages];
          return undefined;
        }
      };
      const report = parsed(() => parseReportRequest(forwarded, ordered));
      const options = parsed(() => parseJourneyOptions(query));
      if (!report || !options) throw new ValidationError(faults);
      return presentJourneys(await engine.journeys(report, site, options), options);
    },
  });
}

/** The journeys answer as /v1 writes it (and the dashboard's route with its own filters: report-api.ts). */
export function presentJourneys(answer: Journeys, options: JourneyOptions) {
  return {
    date_from: localText(answer.from.getTime(), answer.timezone),
    date_to: localText(Math.max(answer.from.getTime(), answer.until.getTime() - 1000), answer.timezone),
    entry_page: options.entryPage ?? null,
    steps: options.steps,
    total_visits: String(answer.totalVisits),
    paths: answer.paths.map((p) => ({ pages: p.pages, visits: String(p.visits), ended: String(p.ended) })),
  };
}
