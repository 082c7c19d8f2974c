// The dashboard: owner login, the owner's pages, API settings and share pages, with their script and styles.

import type { FastifyInstance } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import type { TokenAuthenticator } from '../../auth/token-authenticator.js';
import type { Limiter } from '../../limits/limiter.js';
import type { MetaStore } from '../../store/types.js';
import { assetRoutes, dashboardAssets } from './assets.js';
import { loginRoutes } from './login.js';
import { pageRoutes } from './pages.js';
import { shareRoutes } from './share.js';
import { tokenRoutes } from './tokens.js';

export interface DashboardOptions {
  meta: MetaStore;
  auth: TokenAuthenticator;
  sessions: SessionManager;
  limiter: Limiter;
}

export async function dashboard(app: FastifyInstance, deps: DashboardOptions): Promise<void> {
  assetRoutes(app, await dashboardAssets());
  loginRoutes(app, deps);
  pageRoutes(app, deps);
  shareRoutes(app, deps);
  tokenRoutes(app, deps);
}
