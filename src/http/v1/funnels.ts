// /v1/sites/{site_id}/funnels: a site's funnels (ordered page and event steps) and their reports (docs/reports.md,
// "Funnels"). A Plumb extension of SPEC.md with the events routes' scopes and windows; the report has
// /v1/aggregations's window, range and filters.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { badRequest, FieldErrorCollector, notFound, ValidationError } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import { pageGoalPathProblem } from '../../domain/page-goal-paths.js';
import { formatTimestamp } from '../../domain/time.js';
import type { ReportEngine } from '../../report/engine.js';
import { MAX_FUNNEL_STEPS, MIN_FUNNEL_STEPS } from '../../report/funnels.js';
import { parseReportRequest, type ReportRequest } from '../../report/parse.js';
import type { Funnel, FunnelPatch, FunnelStep, MetaStore, SegmentFilter, Site } from '../../store/types.js';
import { siteOf } from './access.js';
import { pageRequest } from './pagination.js';
import { presentDeleted, presentList } from './present.js';
import { localText, orderedFilters, rangeQuery } from './range-query.js';
import { deletedObject, paginationQuery, siteIdParams, type PaginationQuery } from './schemas.js';

/** A site keeps at most this many funnels (as pageview goals). */
export const MAX_FUNNELS = 100;
const MAX_NAME = 255;
/** As the API's event names. */
const MAX_EVENT_NAME = 255;
const BODY_LIMIT = 64 * 1024;

const tags = ['Funnels'];
const EXTENSION = 'A Plumb extension of the v1 API (docs/reports.md, "Funnels").';
type Body = Record<string, unknown>;
type FunnelParams = { site_id: string; funnel_id: string };

const timestamp = { type: 'string', description: 'UTC, `YYYY-MM-DD HH:MM:SS`' } as const;
const stepSchema = {
  type: 'object',
  properties: {
    type: { type: 'string', enum: ['page', 'event'] },
    value: { type: 'string', description: 'page: a path (/pricing) or pattern (* is any run of characters, / included); event: an event name' },
  },
  required: ['type', 'value'],
} as const;
const filterSchema = {
  type: 'object',
  properties: { property: { type: 'string' }, operator: { type: 'string' }, value: { type: 'string' } },
  required: ['property', 'operator', 'value'],
} as const;
const funnelObject = {
  type: 'object',
  description: `A funnel. ${EXTENSION}`,
  properties: {
    id: { type: 'string', format: 'uuid' },
    object: { type: 'string', enum: ['funnel'] },
    name: { type: 'string' },
    steps: { type: 'array', items: stepSchema },
    filters: { type: 'array', items: filterSchema, description: '/v1/aggregations filters on the whole funnel' },
    created_at: timestamp,
    updated_at: timestamp,
  },
  required: ['id', 'object', 'name', 'steps', 'filters', 'created_at', 'updated_at'],
} as const;
const funnelList = {
  type: 'object',
  properties: {
    object: { type: 'string', enum: ['list'] },
    url: { type: 'string' },
    has_more: { type: 'boolean' },
    data: { type: 'array', items: funnelObject },
  },
  required: ['object', 'url', 'has_more', 'data'],
} as const;
const funnelBody = {
  type: 'object',
  description:
    `${EXTENSION} JSON, or form-encoded with steps (and filters) as JSON text or nested: steps[0][type]=page&steps[0][value]=/x.`,
  properties: {
    name: { type: 'string', minLength: 1, maxLength: MAX_NAME },
    steps: { type: 'array', minItems: MIN_FUNNEL_STEPS, maxItems: MAX_FUNNEL_STEPS, items: stepSchema },
    filters: { type: 'array', items: filterSchema },
  },
} as const;
const funnelIdParams = {
  type: 'object',
  properties: { ...siteIdParams.properties, funnel_id: { type: 'string', format: 'uuid' } },
  required: ['site_id', 'funnel_id'],
} as const;
const reportQuery = {
  type: 'object',
  properties: {
    date_from: { type: 'string', description: 'First second counted, in any form /v1/aggregations accepts (default: the first pageview)' },
    date_to: { type: 'string', description: 'Last second counted (inclusive), in any form /v1/aggregations accepts (default: now)' },
    timezone: { type: 'string', description: "TZ database name overriding the site's time zone, as in /v1/aggregations" },
    filters: { type: 'string', description: "/v1/aggregations's filters (JSON or nested), added to the funnel's own" },
  },
} as const;
const reportAnswer = {
  type: 'object',
  description: `A funnel's numbers over a range. ${EXTENSION}`,
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    date_from: { type: 'string', description: 'First second counted, local `YYYY-MM-DD HH:MM:SS` in the reporting zone' },
    date_to: { type: 'string', description: 'Last second counted (inclusive), local `YYYY-MM-DD HH:MM:SS`' },
    steps: {
      type: 'array',
      items: {
        type: 'object',
        properties: {
          step: { type: 'string' },
          type: { type: 'string', enum: ['page', 'event'] },
          value: { type: 'string' },
          visits: { type: 'string', description: 'Visits that reached the step in order' },
          visitors: { type: 'string', description: 'Distinct visitor-days among them' },
          conversion_rate: { type: 'string', description: "visits / step 1's visits, 4 decimals" },
          step_conversion_rate: { type: 'string', description: "visits / the previous step's visits (step 1: 1)" },
          drop_off: { type: 'string', description: "The previous step's visits minus this step's (step 1: 0)" },
          median_seconds: { type: ['string', 'null'], description: 'Median seconds from the previous step (null for step 1 and unreached steps)' },
        },
        required: ['step', 'type', 'value', 'visits', 'visitors', 'conversion_rate', 'step_conversion_rate', 'drop_off', 'median_seconds'],
      },
    },
  },
  required: ['id', 'name', 'date_from', 'date_to', 'steps'],
} as const;

const own = (o: Body, name: string): unknown => (Object.hasOwn(o, name) ? o[name] : undefined);

export const presentFunnel = (f: Funnel) => ({
  id: f.id,
  object: 'funnel',
  name: f.name,
  steps: f.steps.map((s) => ({ type: s.type, value: s.value })),
  filters: f.filters.map((x) => ({ property: x.property, operator: x.operator, value: x.value })),
  created_at: formatTimestamp(f.createdAt),
  updated_at: formatTimestamp(f.updatedAt),
});

/** JSON text (the form-encoded way to send a list) read as JSON, other values as they are; undefined when unreadable. */
function listValue(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return undefined;
  }
}

const STEP_KEY_RE = /^steps\[(0|[1-9]\d{0,2})\]\[(type|value)\]$/;

/** `steps[0][type]=…&steps[0][value]=…` of a form body as a list; undefined when the body has no such key. */
function nestedSteps(body: Body, errors: FieldErrorCollector): unknown[] | undefined {
  const keys = Object.keys(body).filter((k) => k.startsWith('steps['));
  if (keys.length === 0) return undefined;
  const steps: Record<string, unknown>[] = [];
  for (const key of keys) {
    const m = STEP_KEY_RE.exec(key);
    const index = m ? Number(m[1]) : NaN;
    if (!m || index >= MAX_FUNNEL_STEPS) {
      errors.add('steps', `${JSON.stringify(key.slice(0, 80))} is not a step parameter: use steps[0][type] and steps[0][value], numbered from 0`);
      continue;
    }
    for (let i = steps.length; i <= index; i++) steps.push({});
    steps[index]![m[2]!] = own(body, key);
  }
  return steps;
}

function parseName(value: unknown, errors: FieldErrorCollector): string | undefined {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || name.length > MAX_NAME) {
    errors.add('name', `must be 1 to ${MAX_NAME} characters`);
    return undefined;
  }
  return name;
}

/** 2 to 8 steps, each a page path or pattern or an event name; every fault named. */
export function parseSteps(raw: unknown, errors: FieldErrorCollector): FunnelStep[] | undefined {
  const list = listValue(raw);
  if (!Array.isArray(list)) {
    errors.add('steps', 'must be a list of steps, each {"type": "page" or "event", "value": a path or an event name}');
    return undefined;
  }
  if (list.length < MIN_FUNNEL_STEPS || list.length > MAX_FUNNEL_STEPS) {
    errors.add('steps', `must have ${MIN_FUNNEL_STEPS} to ${MAX_FUNNEL_STEPS} steps`);
    return undefined;
  }
  const steps: FunnelStep[] = [];
  let failed = false;
  list.forEach((item: unknown, i) => {
    const at = `step ${i + 1}`;
    const fail = (message: string) => {
      failed = true;
      errors.add('steps', `${at} ${message}`);
    };
    if (!item || typeof item !== 'object' || Array.isArray(item)) return fail('must be an object with type and value');
    const type = own(item as Body, 'type');
    const value = own(item as Body, 'value');
    if (type !== 'page' && type !== 'event') return fail('must have type page or event');
    if (typeof value !== 'string') return fail('must have a value: a path for a page, a name for an event');
    const text = value.trim();
    if (type === 'page') {
      const problem = pageGoalPathProblem(text);
      if (problem) return fail(`value ${problem}`);
    } else if (text === '' || text.length > MAX_EVENT_NAME) {
      return fail(`value must be an event name of 1 to ${MAX_EVENT_NAME} characters`);
    }
    steps.push({ type, value: text });
  });
  return failed ? undefined : steps;
}

/**
 * A funnel's own filters, checked exactly as /v1/aggregations checks its `filters` (a JSON list in JSON bodies, JSON
 * text or nested filters[0][…] keys in form bodies); none when absent.
 */
function parseFilters(body: Body, errors: FieldErrorCollector): SegmentFilter[] | undefined {
  const raw = own(body, 'filters');
  const nested = Object.keys(body).filter((k) => k.startsWith('filters['));
  const query: Body = { entity: 'pageview', entity_id: 'funnel', aggregates: 'visits' };
  if (raw !== undefined) query.filters = typeof raw === 'string' ? raw : JSON.stringify(raw);
  for (const k of nested) query[k] = typeof own(body, k) === 'string' ? own(body, k) : JSON.stringify(own(body, k));
  try {
    return parseReportRequest(query).filters.map((f) => ({ property: f.property, operator: f.operator, value: f.value }));
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    for (const messages of Object.values(err.fields)) for (const m of messages) errors.add('filters', m);
    return undefined;
  }
}

function bodyOf(request: FastifyRequest): Body {
  const body = request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The body must be a JSON object or a form');
  return body as Body;
}

/** A body's changes: on create name and steps are required, on update every field is optional. */
function parseBody(body: Body, create: boolean): FunnelPatch {
  const errors = new FieldErrorCollector();
  const patch: FunnelPatch = {};
  const name = own(body, 'name');
  if (name !== undefined || create) patch.name = parseName(name, errors);
  const stepsRaw = nestedSteps(body, errors) ?? own(body, 'steps');
  if (stepsRaw !== undefined || create) {
    if (stepsRaw === undefined) errors.add('steps', 'is required');
    else patch.steps = parseSteps(stepsRaw, errors);
  }
  if (own(body, 'filters') !== undefined || Object.keys(body).some((k) => k.startsWith('filters['))) patch.filters = parseFilters(body, errors);
  errors.throwIfAny();
  return patch;
}

export function funnelRoutes(app: FastifyInstance, meta: MetaStore, engine: ReportEngine): void {
  const findFunnel = async (request: FastifyRequest<{ Params: FunnelParams }>): Promise<Funnel> => {
    const id = request.params.funnel_id;
    const funnel = isUuid(id) ? await meta.getFunnel(siteOf(request).id, id.toLowerCase()) : undefined;
    if (!funnel) throw notFound('Funnel not found');
    return funnel;
  };
  // The body schemas document; parseBody checks (form bodies carry steps as text or nested keys the schema cannot see).
  const documented = { attachValidation: true, bodyLimit: BODY_LIMIT } as const;

  app.get<{ Querystring: PaginationQuery }>('/sites/:site_id/funnels', {
    config: { access: 'read-site' },
    schema: { tags, summary: "List a site's funnels", description: EXTENSION, params: siteIdParams, querystring: paginationQuery, response: { 200: funnelList } },
    handler: async (request) => {
      const page = await meta.listFunnels(siteOf(request).id, pageRequest(request.query));
      return presentList(request.url, page, presentFunnel);
    },
  });

  app.post('/sites/:site_id/funnels', {
    config: { access: 'manage-site' },
    ...documented,
    schema: { tags, summary: 'Create a funnel', description: EXTENSION, params: siteIdParams, body: { ...funnelBody, required: ['name', 'steps'] }, response: { 200: funnelObject } },
    handler: async (request) => {
      const patch = parseBody(bodyOf(request), true);
      const funnel = await meta.createFunnel({ siteId: siteOf(request).id, name: patch.name!, steps: patch.steps!, filters: patch.filters ?? [] }, MAX_FUNNELS);
      if (!funnel) throw badRequest(`This site already has ${MAX_FUNNELS} funnels: delete one first`);
      return presentFunnel(funnel);
    },
  });

  app.get<{ Params: FunnelParams }>('/sites/:site_id/funnels/:funnel_id', {
    config: { access: 'read-site' },
    schema: { tags, summary: 'Get a funnel', description: EXTENSION, params: funnelIdParams, response: { 200: funnelObject } },
    attachValidation: true,
    handler: async (request) => presentFunnel(await findFunnel(request)),
  });

  app.post<{ Params: FunnelParams }>('/sites/:site_id/funnels/:funnel_id', {
    config: { access: 'manage-site' },
    ...documented,
    schema: { tags, summary: 'Update a funnel', description: EXTENSION, params: funnelIdParams, body: funnelBody, response: { 200: funnelObject } },
    handler: async (request) => {
      const funnel = await findFunnel(request);
      const updated = await meta.updateFunnel(funnel.siteId, funnel.id, parseBody(bodyOf(request), false));
      if (!updated) throw notFound('Funnel not found');
      return presentFunnel(updated);
    },
  });

  app.delete<{ Params: FunnelParams }>('/sites/:site_id/funnels/:funnel_id', {
    config: { access: 'manage-site' },
    schema: { tags, summary: 'Delete a funnel', description: EXTENSION, params: funnelIdParams, response: { 200: deletedObject } },
    attachValidation: true,
    handler: async (request) => {
      const funnel = await findFunnel(request);
      if (!(await meta.deleteFunnel(funnel.siteId, funnel.id))) throw notFound('Funnel not found');
      return presentDeleted(funnel.id, 'funnel');
    },
  });

  app.get<{ Params: FunnelParams }>('/sites/:site_id/funnels/:funnel_id/report', {
    config: { access: 'read-site', limit: 'minute' },
    // As for /v1/aggregations, the schema documents; the parser checks, naming each parameter.
    schema: { tags, summary: "A funnel's numbers over a range", description: EXTENSION, params: funnelIdParams, querystring: reportQuery, response: { 200: reportAnswer } },
    attachValidation: true,
    handler: async (request) => {
      const site = siteOf(request);
      const funnel = await findFunnel(request);
      const query = request.query as Body;
      const report = parseReportRequest(rangeQuery(query, { entity: 'pageview', entity_id: site.id, aggregates: 'visits' }), orderedFilters(request.raw.url));
      return funnelReport(engine, site, funnel, report);
    },
  });
}

/**
 * A funnel's report as /v1 writes it, over `report`'s range and filters (and, from the dashboard's route, its custom
 * property filters: report-api.ts). The funnel's own filters and the request's together: per property ORed
 * (positives) and ANDed (negatives), properties ANDed, exactly as one /v1 filter list.
 */
export async function funnelReport(engine: ReportEngine, site: Site, funnel: Funnel, report: ReportRequest) {
  const saved = parseReportRequest({ entity: 'pageview', entity_id: site.id, aggregates: 'visits', filters: JSON.stringify(funnel.filters) }).filters;
  const answer = await engine.funnel({ ...report, filters: [...saved, ...report.filters] }, site, funnel.steps);
  return {
    id: funnel.id,
    name: funnel.name,
    date_from: localText(answer.from.getTime(), answer.timezone),
    date_to: localText(Math.max(answer.from.getTime(), answer.until.getTime() - 1000), answer.timezone),
    steps: answer.steps,
  };
}
