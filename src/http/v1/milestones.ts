// /v1/sites/{site_id}/milestones: dated annotations shown on a site's reports.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { isUuid } from '../../domain/ids.js';
import { notFound } from '../../domain/errors.js';
import { milestoneFields, type MilestoneBody } from '../../domain/resource-rules.js';
import type { MetaStore, Milestone } from '../../store/types.js';
import { siteOf } from './access.js';
import { pageRequest } from './pagination.js';
import { presentDeleted, presentList, presentMilestone } from './present.js';
import {
  deletedObject, milestoneBody, milestoneIdParams, milestoneList, milestoneObject, paginationQuery, siteIdParams,
  type PaginationQuery,
} from './schemas.js';

const tags = ['Milestones'];
type MilestoneParams = { site_id: string; milestone_id: string };

export function milestoneRoutes(app: FastifyInstance, meta: MetaStore): void {
  const findMilestone = async (request: FastifyRequest<{ Params: MilestoneParams }>): Promise<Milestone> => {
    const id = request.params.milestone_id;
    const milestone = isUuid(id) ? await meta.getMilestone(siteOf(request).id, id.toLowerCase()) : undefined;
    if (!milestone) throw notFound('Milestone not found');
    return milestone;
  };

  app.get<{ Querystring: PaginationQuery }>('/sites/:site_id/milestones', {
    config: { access: 'read-site' },
    schema: { tags, summary: "List a site's milestones", params: siteIdParams, querystring: paginationQuery, response: { 200: milestoneList } },
    handler: async (request) => {
      const page = await meta.listMilestones(siteOf(request).id, pageRequest(request.query));
      return presentList(request.url, page, presentMilestone);
    },
  });

  app.post<{ Body: Required<MilestoneBody> }>('/sites/:site_id/milestones', {
    config: { access: 'manage-site' },
    schema: { tags, summary: 'Create a milestone', params: siteIdParams, body: milestoneBody, response: { 201: milestoneObject } },
    handler: async (request, reply) => {
      const fields = milestoneFields(request.body);
      const milestone = await meta.createMilestone({ siteId: siteOf(request).id, ...fields });
      return reply.code(201).send(presentMilestone(milestone));
    },
  });

  app.get<{ Params: MilestoneParams }>('/sites/:site_id/milestones/:milestone_id', {
    config: { access: 'read-site' },
    schema: { tags, summary: 'Get a milestone', params: milestoneIdParams, response: { 200: milestoneObject } },
    handler: async (request) => presentMilestone(await findMilestone(request)),
  });

  app.post<{ Params: MilestoneParams; Body: Required<MilestoneBody> }>('/sites/:site_id/milestones/:milestone_id', {
    config: { access: 'manage-site' },
    schema: { tags, summary: 'Update a milestone', params: milestoneIdParams, body: milestoneBody, response: { 200: milestoneObject } },
    handler: async (request) => {
      const milestone = await findMilestone(request);
      const fields = milestoneFields(request.body);
      return presentMilestone(await meta.updateMilestone(milestone.siteId, milestone.id, fields));
    },
  });

  app.delete<{ Params: MilestoneParams }>('/sites/:site_id/milestones/:milestone_id', {
    config: { access: 'manage-site' },
    schema: { tags, summary: 'Delete a milestone', params: milestoneIdParams, response: { 200: deletedObject } },
    handler: async (request) => {
      const milestone = await findMilestone(request);
      await meta.deleteMilestone(milestone.siteId, milestone.id);
      return presentDeleted(milestone.id, 'milestone');
    },
  });
}
