// Segments: a site's report filters saved under a name by one member, for themselves or shared with the members
// of the site's account who can see the site, and reapplied from the report's filter bar. JSON routes for a
// logged-in member with the anti-CSRF header (never a share page's session, never a token).

import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Member, SessionManager } from '../../auth/sessions.js';
import { badRequest, notFound, ValidationError } from '../../domain/errors.js';
import { parseReportRequest } from '../../report/parse.js';
import type { MetaStore, Segment, SegmentFilter, SegmentPatch, Site } from '../../store/types.js';
import { memberForApi } from './guard.js';
import { canSeeSite } from './pages.js';
import { parsePropFilters } from './report-api.js';

export interface SegmentDeps {
  meta: MetaStore;
  sessions: SessionManager;
}

/** Each person keeps at most this many segments per site (their own, shared or not). */
export const MAX_SEGMENTS_PER_PERSON = 100;
export const MAX_SEGMENT_NAME = 100;
/** As many as the report page's address carries (src/web/report/state.js). */
export const MAX_SEGMENT_FILTERS = 50;
/** A custom property filter on the report page (the dashboard's report API reads them). */
const PROP = 'prop';
// Bounds of the text a filter may hold, above any the report takes (a property name, a regular expression, a
// custom property's key and value): only so that a body's size is bounded before it is judged.
const MAX_FILTER_TEXT = 4000;
const BODY_LIMIT = 512 * 1024;

const own = (o: object, name: string): unknown => (Object.hasOwn(o, name) ? (o as Record<string, unknown>)[name] : undefined);

function parseName(value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name === '' || name.length > MAX_SEGMENT_NAME) throw ValidationError.of('name', `must be 1 to ${MAX_SEGMENT_NAME} characters`);
  return name;
}

function parseShared(value: unknown): boolean {
  if (typeof value !== 'boolean') throw ValidationError.of('shared', 'must be true or false');
  return value;
}

/** The messages of a refusal by the report's own checks, under `filters`. */
function asFilterError(err: unknown): unknown {
  if (!(err instanceof ValidationError)) return err;
  return new ValidationError({ filters: Object.values(err.fields).flat() });
}

/**
 * A segment's filters: the report page's filters, checked as a report checks them (SPEC.md's by /v1's parser, the
 * custom properties' by the dashboard's report API), and none empty: every one of them must be usable as saved.
 */
export function parseSegmentFilters(value: unknown, siteId: string): SegmentFilter[] {
  const refuse = (message: string) => ValidationError.of('filters', message);
  if (!Array.isArray(value) || value.length === 0) throw refuse('must be a non-empty array of filters');
  if (value.length > MAX_SEGMENT_FILTERS) throw refuse(`takes at most ${MAX_SEGMENT_FILTERS} filters`);
  // In the order given: the report page shows them as chips in that order.
  const all: SegmentFilter[] = [];
  value.forEach((f: unknown, i) => {
    if (!f || typeof f !== 'object' || Array.isArray(f)) throw refuse(`[${i}] must be an object {property, operator, value}`);
    const [property, operator, text, key] = ['property', 'operator', 'value', 'key'].map((k) => own(f, k));
    for (const [name, part] of [['property', property], ['operator', operator], ['value', text]] as const) {
      if (typeof part !== 'string' || part === '' || part.length > MAX_FILTER_TEXT) throw refuse(`[${i}].${name} must be 1 to ${MAX_FILTER_TEXT} characters of text`);
    }
    if (property === PROP) {
      if (typeof key !== 'string') throw refuse(`[${i}].key must be the custom property's name`);
      all.push({ property: PROP, key, operator: operator as string, value: text as string });
    } else {
      if (key !== undefined) throw refuse(`[${i}]: only a custom property ("prop") filter has a key`);
      all.push({ property: property as string, operator: operator as string, value: text as string });
    }
  });
  const spec = all.filter((f) => f.property !== PROP);
  const props = all.filter((f) => f.property === PROP).map(({ key, operator, value: v }) => ({ key, operator, value: v }));
  try {
    if (spec.length > 0) parseReportRequest({ entity: 'pageview', entity_id: siteId, aggregates: 'visitors', filters: JSON.stringify(spec) });
    if (props.length > 0) parsePropFilters(JSON.stringify(props));
  } catch (err) {
    throw asFilterError(err);
  }
  return all;
}

function bodyOf(request: FastifyRequest): object {
  const body = request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) throw badRequest('The body must be a JSON object');
  return body;
}

/** Who may change a segment: its creator; a shared one also the account's owners and admins. */
const mayChange = (m: Member, s: Segment) => s.userId === m.user.id || (s.shared && m.membership.role !== 'viewer');

function present(m: Member, s: Segment) {
  return {
    object: 'segment',
    id: s.id,
    site_id: s.siteId,
    name: s.name,
    shared: s.shared,
    filters: s.filters,
    mine: s.userId === m.user.id,
    can_change: mayChange(m, s),
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
  };
}

export function segmentRoutes(app: FastifyInstance, { meta, sessions }: SegmentDeps): void {
  /** The member and a site of their account they can see; any other site is a 404, as everywhere. */
  const access = async (request: FastifyRequest<{ Params: { site_id: string } }>): Promise<{ m: Member; site: Site }> => {
    const m = await memberForApi(request, sessions);
    const site = await meta.getSite(request.params.site_id);
    if (!site || site.accountId !== m.account.id || !canSeeSite(m, site.id)) throw notFound('Site not found');
    return { m, site };
  };

  /** A segment the member may use: their own or a shared one (another's personal segment is not theirs to know of). */
  const usable = async (m: Member, site: Site, id: string): Promise<Segment> => {
    const segment = await meta.getSegment(site.id, id);
    if (!segment || !(segment.shared || segment.userId === m.user.id)) throw notFound('Segment not found');
    return segment;
  };

  const changeable = async (m: Member, site: Site, id: string): Promise<Segment> => {
    const segment = await usable(m, site, id);
    if (!mayChange(m, segment)) throw badRequest('Only its creator, or an owner or admin for a shared one, may change this segment');
    return segment;
  };

  /** Sharing makes a segment the account's: a viewer changes nothing for others, so keeps personal ones only. */
  const checkSharing = (m: Member, shared: boolean) => {
    if (shared && m.membership.role === 'viewer') throw ValidationError.of('shared', 'viewers keep personal segments only');
  };

  app.get<{ Params: { site_id: string } }>('/dashboard/api/sites/:site_id/segments', async (request) => {
    const { m, site } = await access(request);
    const segments = await meta.listSegments(site.id, m.user.id);
    return { object: 'list', can_share: m.membership.role !== 'viewer', max_per_person: MAX_SEGMENTS_PER_PERSON, data: segments.map((s) => present(m, s)) };
  });

  app.post<{ Params: { site_id: string } }>('/dashboard/api/sites/:site_id/segments', { bodyLimit: BODY_LIMIT }, async (request, reply) => {
    // Who is asking is settled before the body is judged, so a stranger learns nothing from validation errors.
    const { m, site } = await access(request);
    const body = bodyOf(request);
    const name = parseName(own(body, 'name'));
    const shared = own(body, 'shared') === undefined ? false : parseShared(own(body, 'shared'));
    checkSharing(m, shared);
    const filters = parseSegmentFilters(own(body, 'filters'), site.id);
    const segment = await meta.createSegment({ siteId: site.id, userId: m.user.id, name, shared, filters }, MAX_SEGMENTS_PER_PERSON);
    if (!segment) throw badRequest(`You already have ${MAX_SEGMENTS_PER_PERSON} segments of this site: delete one first`);
    return reply.code(201).send(present(m, segment));
  });

  app.patch<{ Params: { site_id: string; id: string } }>('/dashboard/api/sites/:site_id/segments/:id', { bodyLimit: BODY_LIMIT }, async (request) => {
    const { m, site } = await access(request);
    const segment = await changeable(m, site, request.params.id);
    const body = bodyOf(request);
    const patch: SegmentPatch = {};
    if (own(body, 'name') !== undefined) patch.name = parseName(own(body, 'name'));
    // Owners and admins may rename or delete a shared segment, not make another's filters or audience theirs.
    const creator = segment.userId === m.user.id;
    if (own(body, 'shared') !== undefined) {
      if (!creator) throw ValidationError.of('shared', 'only the creator may change who sees this segment');
      patch.shared = parseShared(own(body, 'shared'));
      checkSharing(m, patch.shared);
    }
    if (own(body, 'filters') !== undefined) {
      if (!creator) throw ValidationError.of('filters', "only the creator may change this segment's filters");
      patch.filters = parseSegmentFilters(own(body, 'filters'), site.id);
    }
    const updated = await meta.updateSegment(site.id, segment.id, patch);
    if (!updated) throw notFound('Segment not found');
    return present(m, updated);
  });

  app.delete<{ Params: { site_id: string; id: string } }>('/dashboard/api/sites/:site_id/segments/:id', async (request) => {
    const { m, site } = await access(request);
    const segment = await changeable(m, site, request.params.id);
    await meta.deleteSegment(site.id, segment.id);
    return { object: 'segment', id: segment.id, deleted: true };
  });
}
