// The /v1 Management and Reporting API: access control, then every resource's routes.

import type { FastifyInstance } from 'fastify';
import type { TokenAuthenticator } from '../../auth/token-authenticator.js';
import type { MetaStore } from '../../store/types.js';
import { installAccessControl } from './access.js';
import { accountRoutes } from './account.js';
import { eventRoutes } from './events.js';
import { milestoneRoutes } from './milestones.js';
import { siteRoutes } from './sites.js';

export interface V1Options {
  meta: MetaStore;
  auth: TokenAuthenticator;
}

export async function v1Api(app: FastifyInstance, { meta, auth }: V1Options): Promise<void> {
  installAccessControl(app, meta, auth);
  accountRoutes(app);
  siteRoutes(app, meta);
  eventRoutes(app, meta);
  milestoneRoutes(app, meta);
}
