// The /v1 Management and Reporting API: access control, then every resource's routes.

import type { FastifyInstance } from 'fastify';
import { installAccessControl, type AccessDeps } from './access.js';
import { accountRoutes } from './account.js';
import { eventRoutes } from './events.js';
import { funnelRoutes } from './funnels.js';
import { importedDaysRoutes } from './imported-days.js';
import { journeyRoutes } from './journeys.js';
import { milestoneRoutes } from './milestones.js';
import { reportRoutes } from './reports.js';
import type { ReportEngine } from '../../report/engine.js';
import { siteRoutes } from './sites.js';

/** What the management routes must tell the analytics side: a site changed, or its data must go. */
export interface SiteDataHooks {
  changed(siteId: string): void;
  delete(siteId: string): Promise<void>;
}

export interface V1Options extends AccessDeps {
  siteData: SiteDataHooks;
  reports: ReportEngine;
}

export async function v1Api(app: FastifyInstance, deps: V1Options): Promise<void> {
  const { meta } = deps;
  installAccessControl(app, deps);
  accountRoutes(app);
  siteRoutes(app, meta, deps.siteData);
  eventRoutes(app, meta);
  milestoneRoutes(app, meta);
  importedDaysRoutes(app, meta);
  reportRoutes(app, meta, deps.sites, deps.reports);
  funnelRoutes(app, meta, deps.reports);
  journeyRoutes(app, deps.reports);
}
