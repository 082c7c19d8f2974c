// /v1/sites/{site_id}/events: a site's conversion goals, and the retired event data wipe.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { gone, notFound } from '../../domain/errors.js';
import type { GoalBody } from '../../domain/resource-rules.js';
import type { Goal, MetaStore } from '../../store/types.js';
import { siteOf } from './access.js';
import { pageRequest } from './pagination.js';
import { presentDeleted, presentEvent, presentList } from './present.js';
import {
  deletedObject, eventCreateBody, eventIdParams, eventList, eventObject, eventUpdateBody, paginationQuery,
  siteIdParams, type PaginationQuery,
} from './schemas.js';

const tags = ['Events'];
type EventParams = { site_id: string; event_id: string };

export function eventRoutes(app: FastifyInstance, meta: MetaStore): void {
  const findEvent = async (request: FastifyRequest<{ Params: EventParams }>): Promise<Goal> => {
    const goal = await meta.getGoal(siteOf(request).id, request.params.event_id);
    if (!goal) throw notFound('Event not found');
    return goal;
  };

  app.get<{ Querystring: PaginationQuery }>('/sites/:site_id/events', {
    config: { access: 'read-site' },
    schema: { tags, summary: "List a site's events", params: siteIdParams, querystring: paginationQuery, response: { 200: eventList } },
    handler: async (request) => {
      const page = await meta.listGoals(siteOf(request).id, pageRequest(request.query));
      return presentList(request.url, page, (g) => presentEvent(g, false));
    },
  });

  app.post<{ Body: GoalBody }>('/sites/:site_id/events', {
    config: { access: 'manage-site' },
    schema: { tags, summary: 'Create an event', params: siteIdParams, body: eventCreateBody, response: { 200: eventObject } },
    handler: async (request) => {
      const goal = await meta.createGoal({
        siteId: siteOf(request).id,
        name: request.body.name!,
        currency: request.body.currency ?? 'dollar',
      });
      return presentEvent(goal, true);
    },
  });

  app.get<{ Params: EventParams }>('/sites/:site_id/events/:event_id', {
    config: { access: 'read-site' },
    schema: { tags, summary: 'Get an event', params: eventIdParams, response: { 200: eventObject } },
    handler: async (request) => presentEvent(await findEvent(request), false),
  });

  app.post<{ Params: EventParams; Body: GoalBody }>('/sites/:site_id/events/:event_id', {
    config: { access: 'manage-site' },
    schema: { tags, summary: 'Update an event', params: eventIdParams, body: eventUpdateBody, response: { 200: eventObject } },
    handler: async (request) => {
      const goal = await findEvent(request);
      const updated = await meta.updateGoal(goal.siteId, goal.id, { name: request.body.name, currency: request.body.currency });
      return presentEvent(updated, true);
    },
  });

  app.delete<{ Params: EventParams }>('/sites/:site_id/events/:event_id', {
    config: { access: 'manage-site' },
    schema: { tags, summary: 'Delete an event', params: eventIdParams, response: { 200: deletedObject } },
    handler: async (request) => {
      const goal = await findEvent(request);
      await meta.deleteGoal(goal.siteId, goal.id);
      return presentDeleted(goal.id, 'event');
    },
  });

  app.delete('/sites/:site_id/events/:event_id/data', {
    config: { access: 'public' },
    schema: { tags, summary: 'Retired: always 410', params: eventIdParams },
    handler: async () => {
      throw gone('Wiping event data through the API is no longer available');
    },
  });
}
