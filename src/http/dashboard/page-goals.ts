// Pageview goals: a site's goals reached by viewing a page (an exact path or a pattern), managed from the goals page
// by the account's owners and admins and listed for every member who can see the site. JSON routes for a
// logged-in member with the anti-CSRF header (never a share page's session, never a token). Their numbers come
// from the report API's `page-goal-aggregations` (report-api.ts).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Member, SessionManager } from '../../auth/sessions.js';
import { badRequest, notFound, ValidationError } from '../../domain/errors.js';
import { pageGoalPathProblem, pageGoalPathRegex } from '../../domain/page-goal-paths.js';
import type { MetaStore, PageGoal, PageGoalPatch, Site } from '../../store/types.js';
import { memberForApi } from './guard.js';
import { canSeeSite } from './pages.js';

export interface PageGoalDeps {
  meta: MetaStore;
  sessions: SessionManager;
}

/** A site keeps at most this many pageview goals (the report answers all of them in one request). */
export const MAX_PAGE_GOALS = 100;
/** As the API's event goal names. */
export const MAX_PAGE_GOAL_NAME = 255;
const BODY_LIMIT = 16 * 1024;

const own = (o: object, name: string): unknown => (Object.hasOwn(o, name) ? (o as Record<string, unknown>)[name] : undefined);

function parseName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || name.length > MAX_PAGE_GOAL_NAME) throw ValidationError.of('name', `must be 1 to ${MAX_PAGE_GOAL_NAME} characters`);
  return name;
}

function parsePath(value: unknown): string {
  if (typeof value !== 'string') throw ValidationError.of('path', 'must be a path such as /signup or /blog/*');
  const path = value.trim();
  const problem = pageGoalPathProblem(path);
  if (problem) throw ValidationError.of('path', problem);
  return path;
}

function bodyOf(request: FastifyRequest): object {
  const body = request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The body must be a JSON object');
  return body;
}

/** A pageview goal as the dashboard reads it; `regex` is the `pathname` filter that selects its pages. */
export function presentPageGoal(g: PageGoal) {
  return {
    object: 'page_goal',
    id: g.id,
    site_id: g.siteId,
    name: g.name,
    path: g.path,
    regex: pageGoalPathRegex(g.path),
    created_at: g.createdAt.toISOString(),
    updated_at: g.updatedAt.toISOString(),
  };
}

const mayChange = (m: Member) => m.membership.role !== 'viewer';

export function pageGoalRoutes(app: FastifyInstance, { meta, sessions }: PageGoalDeps): void {
  /** The member and a site of their account they can see; any other site is a 404, as everywhere. */
  const access = async (request: FastifyRequest<{ Params: { site_id: string } }>): Promise<{ m: Member; site: Site }> => {
    const m = await memberForApi(request, sessions);
    const site = await meta.getSite(request.params.site_id);
    if (!site || site.accountId !== m.account.id || !canSeeSite(m, site.id)) throw notFound('Site not found');
    return { m, site };
  };
  /** Owners and admins change goals, as they do the API's event goals; a viewer is told so. */
  const changer = async (request: FastifyRequest<{ Params: { site_id: string } }>) => {
    const found = await access(request);
    if (!mayChange(found.m)) throw badRequest("Only the account's owners and admins may change goals");
    return found;
  };

  app.get<{ Params: { site_id: string } }>('/dashboard/api/sites/:site_id/page-goals', async (request) => {
    const { m, site } = await access(request);
    const goals = await meta.listPageGoals(site.id);
    return { object: 'list', can_change: mayChange(m), max: MAX_PAGE_GOALS, data: goals.map(presentPageGoal) };
  });

  app.post<{ Params: { site_id: string } }>('/dashboard/api/sites/:site_id/page-goals', { bodyLimit: BODY_LIMIT }, async (request, reply) => {
    // Who is asking is settled before the body is judged, so a stranger learns nothing from validation errors.
    const { site } = await changer(request);
    const body = bodyOf(request);
    const errors: Record<string, string[]> = {};
    let name = '';
    let path = '';
    try {
      name = parseName(own(body, 'name'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(errors, err.fields);
    }
    try {
      path = parsePath(own(body, 'path'));
    } catch (err) {
      if (!(err instanceof ValidationError)) throw err;
      Object.assign(errors, err.fields);
    }
    if (Object.keys(errors).length > 0) throw new ValidationError(errors);
    const goal = await meta.createPageGoal({ siteId: site.id, name, path }, MAX_PAGE_GOALS);
    if (!goal) throw badRequest(`This site already has ${MAX_PAGE_GOALS} pageview goals: delete one first`);
    return reply.code(201).send(presentPageGoal(goal));
  });

  app.patch<{ Params: { site_id: string; id: string } }>('/dashboard/api/sites/:site_id/page-goals/:id', { bodyLimit: BODY_LIMIT }, async (request) => {
    const { site } = await changer(request);
    const body = bodyOf(request);
    const patch: PageGoalPatch = {};
    if (own(body, 'name') !== undefined) patch.name = parseName(own(body, 'name'));
    if (own(body, 'path') !== undefined) patch.path = parsePath(own(body, 'path'));
    const updated = await meta.updatePageGoal(site.id, request.params.id, patch);
    if (!updated) throw notFound('Goal not found');
    return presentPageGoal(updated);
  });

  app.delete<{ Params: { site_id: string; id: string } }>('/dashboard/api/sites/:site_id/page-goals/:id', async (request) => {
    const { site } = await changer(request);
    if (!(await meta.deletePageGoal(site.id, request.params.id))) throw notFound('Goal not found');
    return { object: 'page_goal', id: request.params.id, deleted: true };
  });
}
