// The dashboard: login, the members' pages, people and account security, API settings and share pages, with
// their script and styles.

import csrfProtection from '@fastify/csrf-protection';
import type { FastifyError, FastifyInstance } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import type { TokenAuthenticator } from '../../auth/token-authenticator.js';
import type { Limiter } from '../../limits/limiter.js';
import type { Mailer } from '../../mail/mailer.js';
import type { ReportEngine } from '../../report/engine.js';
import type { TeamStore } from '../../store/team-types.js';
import type { MetaStore } from '../../store/types.js';
import { accountRoutes } from './account.js';
import { assetRoutes, dashboardAssets } from './assets.js';
import { embeddingRoutes } from './embedding.js';
import { geoAssetRoutes } from './geo-assets.js';
import { FORM_COOKIE, field, refusedForm } from './guard.js';
import { inviteRoutes } from './invite.js';
import { loginRoutes } from './login.js';
import { pageGoalRoutes } from './page-goals.js';
import { pageRoutes } from './pages.js';
import { peopleRoutes } from './people.js';
import { recoveryRoutes } from './recovery.js';
import { segmentRoutes } from './segments.js';
import { shareRoutes } from './share.js';
import { siteSummaryRoutes } from './site-summaries.js';
import { subscriptionRoutes } from './subscriptions.js';
import { tokenRoutes } from './tokens.js';

export interface DashboardOptions {
  meta: MetaStore;
  team: TeamStore;
  auth: TokenAuthenticator;
  sessions: SessionManager;
  limiter: Limiter;
  mailer: Mailer;
  publicUrl: string | undefined;
  /** For email reports sent now (subscriptions.ts). */
  reports?: ReportEngine;
}

const FORM_COOKIE_SECONDS = 3600;

export async function dashboard(app: FastifyInstance, deps: DashboardOptions): Promise<void> {
  // Anonymous forms: a secret in the SameSite=Strict form cookie, a token derived from it in the form's hidden
  // `csrf` field (docs/dashboard.md, "CSRF").
  await app.register(csrfProtection, {
    cookieKey: FORM_COOKIE,
    cookieOpts: { path: '/', sameSite: 'strict', httpOnly: true, secure: 'auto', maxAge: FORM_COOKIE_SECONDS },
    getToken: (request) => field(request.body, 'csrf'),
  });
  // A refused form value is a page, not JSON; every other error goes on to the app's handler.
  app.setErrorHandler((err: FastifyError, _request, reply) => {
    if (err.code === 'FST_CSRF_MISSING_SECRET' || err.code === 'FST_CSRF_INVALID_TOKEN') return refusedForm(reply);
    throw err;
  });
  assetRoutes(app, await dashboardAssets());
  await geoAssetRoutes(app);
  loginRoutes(app, deps);
  pageRoutes(app, deps);
  shareRoutes(app, deps);
  tokenRoutes(app, deps);
  peopleRoutes(app, deps);
  inviteRoutes(app, deps);
  embeddingRoutes(app, deps);
  accountRoutes(app, deps);
  recoveryRoutes(app, deps);
  subscriptionRoutes(app, deps);
  segmentRoutes(app, deps);
  pageGoalRoutes(app, deps);
  siteSummaryRoutes(app, deps);
}
