// The /v1 Management and Reporting API: access control, then every resource's routes.

import type { FastifyInstance } from 'fastify';
import { installAccessControl, type AccessDeps } from './access.js';
import { accountRoutes } from './account.js';
import { eventRoutes } from './events.js';
import { milestoneRoutes } from './milestones.js';
import { siteRoutes } from './sites.js';

export type V1Options = AccessDeps;

export async function v1Api(app: FastifyInstance, deps: V1Options): Promise<void> {
  const { meta } = deps;
  installAccessControl(app, deps);
  accountRoutes(app);
  siteRoutes(app, meta);
  eventRoutes(app, meta);
  milestoneRoutes(app, meta);
}
