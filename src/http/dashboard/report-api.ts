// The report page's own API for what /v1 (SPEC.md, Fathom's word for word) has no words for: custom properties
// and funnel filters. `aggregations` is /v1/aggregations plus custom property filters and a funnel filter (the
// visits that continued or dropped at a step of one of the site's funnels, on every route here); `goal-properties` breaks a goal's completions
// down by one property; `goal-aggregations` is /v1/aggregations for every goal of the site at once (one request per
// period instead of one per goal), `page-goal-aggregations` the same for the site's pageview goals; `journeys` and
// `funnel-report` are /v1's journeys and a funnel's report with custom property filters (journeys with the funnel
// filter too). The same access
// checks as /v1 for a dashboard page (login or share session, the session's anti-CSRF value, the viewer's sites,
// the share page's own limit), and only for those: an API token is refused.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MAX_PROP_KEY_BYTES, MAX_PROP_VALUE_BYTES } from '../../domain/props.js';
import { notFound, unauthenticated, ValidationError } from '../../domain/errors.js';
import { isUuid } from '../../domain/ids.js';
import type { ReportEngine } from '../../report/engine.js';
import { PROP_OPERATORS, type PropOperator } from '../../report/fields.js';
import { parseEntity, parseReportRequest, type ReportRequest } from '../../report/parse.js';
import { FUNNEL_OUTCOMES } from '../../report/funnel-filter.js';
import type { FunnelFilter, PropFilter } from '../../report/query.js';
import type { MetaStore, Site } from '../../store/types.js';
import { installAccessControl, principalOf, readableSite, type AccessDeps } from '../v1/access.js';
import { funnelReport } from '../v1/funnels.js';
import { parseJourneyOptions, presentJourneys } from '../v1/journeys.js';
import { rangeQuery } from '../v1/range-query.js';
import { aggregateEveryGoal, aggregateEveryPageGoal, siteGoals } from './report-combined.js';

/** What journeys and funnels read besides the range and filters: the site, and the page's own filters. */
const REPORT_SCOPE = ['entity_id', 'props', 'funnel', 'funnel_step', 'funnel_outcome'];

export interface DashboardReportDeps extends AccessDeps {
  meta: MetaStore;
  reports: ReportEngine;
}

/** At most this many property filters, as a report's filters are bounded (a dashboard needs a handful). */
export const MAX_PROP_FILTERS = 20;
const DEFAULT_VALUES = 100;
const MAX_VALUES = 1000;

const utf8Length = (s: string) => Buffer.byteLength(s, 'utf8');
const own = (o: object, name: string): unknown => (Object.hasOwn(o, name) ? (o as Record<string, unknown>)[name] : undefined);

/** The `props` parameter: a JSON array of {key, operator, value}, every part checked and bounded; a 400 otherwise. */
export function parsePropFilters(text: unknown): PropFilter[] {
  if (text === undefined || text === '') return [];
  const refuse = (message: string) => ValidationError.of('props', message);
  if (typeof text !== 'string') throw refuse('must be given once');
  // Each filter is at most a key, a value and some syntax: longer text cannot be a valid list.
  if (text.length > MAX_PROP_FILTERS * (MAX_PROP_KEY_BYTES + MAX_PROP_VALUE_BYTES + 100) * 2) throw refuse('is too long');
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw refuse('must be a JSON array');
  }
  if (!Array.isArray(parsed)) throw refuse('must be a JSON array');
  if (parsed.length > MAX_PROP_FILTERS) throw refuse(`takes at most ${MAX_PROP_FILTERS} filters`);
  return parsed.map((f: unknown, i) => {
    if (!f || typeof f !== 'object' || Array.isArray(f)) throw refuse(`[${i}] must be an object {key, operator, value}`);
    const key = own(f, 'key');
    const operator = own(f, 'operator');
    const value = own(f, 'value');
    if (typeof key !== 'string' || key === '' || utf8Length(key) > MAX_PROP_KEY_BYTES) throw refuse(`[${i}].key must be 1 to ${MAX_PROP_KEY_BYTES} bytes of text`);
    if (typeof operator !== 'string' || !(PROP_OPERATORS as readonly string[]).includes(operator)) {
      throw refuse(`[${i}].operator must be one of ${PROP_OPERATORS.join(', ')}`);
    }
    if (typeof value !== 'string' || value === '' || utf8Length(value) > MAX_PROP_VALUE_BYTES) {
      throw refuse(`[${i}].value must be 1 to ${MAX_PROP_VALUE_BYTES} bytes of text`);
    }
    return { key, operator: operator as PropOperator, value };
  });
}

/**
 * `funnel`, `funnel_step` and `funnel_outcome`: one of the site's funnels (another site's or account's is unknown),
 * a step of it and what its visits did next; all three or none, each a 400 naming it when wrong. `continued` at
 * the last step is the visits that completed the funnel; `dropped` there is refused (no step follows).
 */
async function parseFunnelFilter(meta: MetaStore, site: Site, query: Record<string, unknown>): Promise<FunnelFilter | undefined> {
  const id = own(query, 'funnel');
  const step = own(query, 'funnel_step');
  const outcome = own(query, 'funnel_outcome');
  if (id === undefined && step === undefined && outcome === undefined) return undefined;
  if (typeof id !== 'string' || id === '') throw ValidationError.of('funnel', 'must be the id of one of the site\'s funnels, given once');
  const funnel = isUuid(id) ? await meta.getFunnel(site.id, id.toLowerCase()) : undefined;
  if (!funnel) throw ValidationError.of('funnel', 'is not one of the site\'s funnels');
  const last = funnel.steps.length;
  if (typeof step !== 'string' || !/^[1-9]$/.test(step) || Number(step) > last) {
    throw ValidationError.of('funnel_step', `must be a step of the funnel, 1 to ${last}`);
  }
  if (typeof outcome !== 'string' || !(FUNNEL_OUTCOMES as readonly string[]).includes(outcome)) {
    throw ValidationError.of('funnel_outcome', `must be one of ${FUNNEL_OUTCOMES.join(', ')}`);
  }
  if (outcome === 'dropped' && Number(step) === last) throw ValidationError.of('funnel_outcome', 'no step follows the last one: use continued (completed)');
  // The funnel's own filters, read as its report reads them (they were checked when saved).
  const filters = parseReportRequest({ entity: 'pageview', entity_id: site.id, aggregates: 'visits', filters: JSON.stringify(funnel.filters) }).filters;
  return { steps: funnel.steps, step: Number(step), outcome: outcome as FunnelFilter['outcome'], ...(filters.length > 0 ? { filters } : {}) };
}

function parseLimit(text: unknown): number {
  if (text === undefined || text === '') return DEFAULT_VALUES;
  if (typeof text !== 'string' || !/^\d{1,4}$/.test(text) || Number(text) < 1 || Number(text) > MAX_VALUES) {
    throw ValidationError.of('limit', `must be a whole number from 1 to ${MAX_VALUES}`);
  }
  return Number(text);
}

export async function dashboardReportApi(app: FastifyInstance, deps: DashboardReportDeps): Promise<void> {
  const { meta, reports, sites } = deps;
  // Before the access hooks: these routes are the dashboard's, not an API a token may use.
  app.addHook('onRequest', async (request) => {
    if (request.headers.authorization !== undefined) throw unauthenticated('This is the dashboard\'s own API: use /v1 with a token');
  });
  installAccessControl(app, deps);

  /** The request's report (SPEC.md's parameters, as /v1 reads them) and its site, after the access checks. */
  const reportOf = async (request: FastifyRequest, query: Record<string, unknown>): Promise<{ report: ReportRequest; site: Site }> => {
    const { siteId } = parseEntity(query);
    const site = await readableSite(sites, principalOf(request), siteId);
    const url = request.raw.url ?? '';
    const at = url.indexOf('?');
    const report = parseReportRequest(query, new URLSearchParams(at < 0 ? '' : url.slice(at + 1)));
    const props = parsePropFilters(query.props);
    const funnel = await parseFunnelFilter(meta, site, query);
    if (report.entity === 'event' && !(await meta.findGoalByName(site.id, report.eventName!))) throw notFound('Event not found');
    return { report: { ...report, ...(props.length > 0 ? { props } : {}), ...(funnel ? { funnel } : {}) }, site };
  };

  const config = { access: 'token', limit: 'minute' } as const;

  app.get('/aggregations', { config }, async (request) => {
    const { report, site } = await reportOf(request, request.query as Record<string, unknown>);
    return reports.aggregate(report, site);
  });

  // SPEC.md's event parameters without entity_name: each goal's rows are what /v1 answers with its name.
  app.get('/goal-aggregations', { config }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const { siteId } = parseEntity({ ...query, entity: 'event', entity_name: 'every goal' });
    const site = await readableSite(sites, principalOf(request), siteId);
    const goals = await siteGoals(meta, site.id);
    if (goals.length === 0) return [];
    const { report } = await reportOf(request, { ...query, entity: 'event', entity_name: goals[0]!.name });
    return aggregateEveryGoal(reports, site, goals, report);
  });

  // SPEC.md's pageview parameters (without aggregates): every pageview goal of the site with its numbers.
  app.get('/page-goal-aggregations', { config }, async (request) => {
    const { report, site } = await reportOf(request, { ...(request.query as Record<string, unknown>), entity: 'pageview', aggregates: 'pageviews,visits' });
    return aggregateEveryPageGoal(reports, site, await meta.listPageGoals(site.id), report);
  });

  /** The range, filters, custom property filters and funnel filter of `query`: what journeys and funnels read. */
  const rangeOf = (request: FastifyRequest, query: Record<string, unknown>) => {
    return reportOf(request, rangeQuery(query, { entity: 'pageview', aggregates: 'visits' }, REPORT_SCOPE));
  };

  // Journeys and a funnel's report with the page's custom property filters (and, for journeys, its funnel filter),
  // which /v1's routes do not take: the same parameters otherwise, answered as /v1 answers.
  app.get('/journeys', { config }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const options = parseJourneyOptions(query);
    const { report, site } = await rangeOf(request, query);
    return presentJourneys(await reports.journeys(report, site, options), options);
  });

  app.get('/funnel-report', { config }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const { report, site } = await rangeOf(request, query);
    // The panel shows a funnel whole; a funnel's visits narrowed to another funnel's step is not offered.
    if (report.funnel) throw ValidationError.of('funnel', "does not apply to a funnel's report, which shows the funnel whole");
    const id = query.funnel_id;
    const funnel = typeof id === 'string' && isUuid(id) ? await meta.getFunnel(site.id, id.toLowerCase()) : undefined;
    if (!funnel) throw notFound('Funnel not found');
    return funnelReport(reports, site, funnel, report);
  });

  app.get('/goal-properties', { config }, async (request) => {
    const query = request.query as Record<string, unknown>;
    const key = query.key;
    if (key !== undefined && (typeof key !== 'string' || utf8Length(key) > MAX_PROP_KEY_BYTES)) {
      throw ValidationError.of('key', `must be at most ${MAX_PROP_KEY_BYTES} bytes of text`);
    }
    const limit = parseLimit(query.limit);
    // A goal's report: SPEC.md's event parameters, whatever else was sent.
    const { report, site } = await reportOf(request, { ...query, entity: 'event', aggregates: 'conversions' });
    return reports.propertyBreakdown(report, site, key === '' ? undefined : (key as string | undefined), limit);
  });
}
