// Builds the Fastify application: parsers, validation, errors, the OpenAPI document, /v1, /admin and the dashboard.

import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import swagger from '@fastify/swagger';
import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { createServer } from 'node:http';
import { SessionManager } from '../auth/sessions.js';
import type { TokenAuthenticator } from '../auth/token-authenticator.js';
import { SiteCache } from './v1/site-cache.js';
import type { Ingest } from '../ingest/ingest.js';
import { SiteKeyDirectory } from '../ingest/site-directory.js';
import type { Limiter } from '../limits/limiter.js';
import type { LocalAdminKey } from '../local-admin-key.js';
import type { UsageMeter } from '../limits/usage-meter.js';
import type { Metrics } from '../metrics.js';
import type { ReportEngine } from '../report/engine.js';
import { NO_MAILER, type Mailer } from '../mail/mailer.js';
import type { TeamStore } from '../store/team-types.js';
import type { EventStore, MetaStore } from '../store/types.js';
import { adminApi } from './admin/index.js';
import { collector } from './collector.js';
import { collectorLane, type Lane } from './collector-lane.js';
import { trustProxyOption } from './trust-proxy.js';
import { dashboardImportRoutes } from './dashboard/imports.js';
import { dashboardReportApi } from './dashboard/report-api.js';
import { peerScriptRoutes } from './peers/peer-scripts.js';
import { plausibleEvents } from './peers/plausible-events.js';
import { umamiSend } from './peers/umami-send.js';
import { addSecurityHeaders } from './security-headers.js';
import { dashboard } from './dashboard/index.js';
import { trackerScriptRoute, type TrackerScript } from './tracker-script.js';
import { drainEarlyAnswers } from './early-answers.js';
import { clientErrorHandler, frameworkErrorHandler, installErrorHandling } from './errors.js';
import { installReadiness, type ReadinessChecks } from './readiness.js';
import type { ImportService } from './peers/import-service.js';
import { validatorCompiler } from './validation.js';
import { v1Api } from './v1/index.js';

export interface AppDeps {
  meta: MetaStore;
  team: TeamStore;
  /** Outgoing mail; absent or unconfigured, invitation links are only shown and mail-only features say so. */
  mailer?: Mailer;
  /** Where links in emails point (PLUMB_PUBLIC_URL). */
  publicUrl?: string | undefined;
  events: EventStore;
  ingest: Ingest;
  /** Other products' exports (/admin/imports and the dashboard's uploads): one service, this process's imports. */
  imports: ImportService;
  reports: ReportEngine;
  metrics: Metrics;
  trackerScript: TrackerScript;
  auth: TokenAuthenticator;
  limiter: Limiter;
  usage: UsageMeter;
  adminToken: string | undefined;
  localAdminKey?: LocalAdminKey | undefined;
  logger?: FastifyServerOptions['logger'];
  /** Fastify's trustProxy: which proxies' X-Forwarded-For to believe for the client IP (PLUMB_TRUST_PROXY). */
  trustProxy?: boolean | number | string;
  /** How long a client may take to send a whole request (slow clients are cut off with 408). */
  requestTimeoutMs?: number;
  version?: string;
  /** What GET /readyz asks: each service this process depends on (src/http/readiness.ts). */
  readiness?: ReadinessChecks;
}

const BODY_LIMIT = 1024 * 1024;

/** How long an idle kept-alive connection stays open (Fastify's default, given to the server made here). */
const KEEP_ALIVE_MS = 72_000;

export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const requestTimeout = deps.requestTimeoutMs ?? 30_000;
  const connectionTimeout = 2 * requestTimeout;
  // Node cuts a request off at its first look past both the headers timeout (60 s unless set) and the request
  // timeout, and looks every 30 s whatever they are: a 30 s timeout gave its 408 after 60-90 s. Headers get the
  // request's timeout, and Node looks four times per timeout: a slow request is cut off within 1.25 times it.
  const http = { headersTimeout: requestTimeout, connectionsCheckingInterval: Math.ceil(requestTimeout / 4) };
  // The collector's fast lane sees each request first (collector-lane.ts); it exists once the app's headers do.
  let lane: Lane | undefined;
  const trustProxy = trustProxyOption(deps.trustProxy ?? false);
  const app = Fastify({
    logger: deps.logger ?? false,
    trustProxy,
    bodyLimit: BODY_LIMIT,
    // Slow or stalled clients must not hold a connection open forever.
    requestTimeout,
    connectionTimeout,
    keepAliveTimeout: KEEP_ALIVE_MS,
    http,
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 200 },
    frameworkErrors: frameworkErrorHandler,
    // Requests Node's parser refuses (431, malformed request lines) also answer in the `{error}` shape.
    clientErrorHandler,
    // The server Fastify would make (its lib/server.js, with the options above), each request offered to the lane.
    serverFactory: (handler) => {
      const server = createServer(http, (req, res) => {
        if (!lane?.(req, res)) handler(req, res);
      });
      server.keepAliveTimeout = KEEP_ALIVE_MS;
      server.requestTimeout = requestTimeout;
      server.setTimeout(connectionTimeout);
      return server;
    },
  });
  app.setValidatorCompiler(validatorCompiler);
  installErrorHandling(app);
  drainEarlyAnswers(app);

  // Real clients send `Content-Type: application/json` with an empty body on GET and DELETE: that is no body.
  // Fastify's own parser (with its prototype-poisoning guard) does the rest.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser(['application/json', 'text/plain']);
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, text, done) => {
    if (String(text).trim() === '') return done(null, undefined);
    parseJson(request, String(text), done);
  });
  await app.register(formbody);
  // Cookies (the dashboard's sessions and form values) are read and written by @fastify/cookie everywhere.
  await app.register(cookie);
  // Security headers on every answer. Resources may be loaded cross-origin (sites embed /script.js and send to
  // the collector from anywhere), so CORP is cross-origin; nothing here is meant to be framed or sniffed.
  const securityHeaders = addSecurityHeaders(app, {
    crossOriginResourcePolicy: { policy: 'cross-origin' },
    crossOriginEmbedderPolicy: false,
    contentSecurityPolicy: { directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  });

  await app.register(swagger, {
    hideUntagged: true,
    openapi: {
      openapi: '3.0.3',
      info: {
        title: 'Plumb Management and Reporting API',
        version: deps.version ?? '1',
        description: 'The v1 API of a Plumb analytics server. Authenticate with `Authorization: Bearer <token>`.',
      },
      components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
      security: [{ bearer: [] }],
    },
  });

  app.get('/openapi.json', async () => app.swagger());
  app.get('/healthz', async () => ({ status: 'ok' }));
  installReadiness(app, deps.readiness ?? {});

  const { meta, events, ingest, metrics, auth, limiter, usage, adminToken } = deps;
  app.addHook('onResponse', async (request, reply) => {
    metrics.answered(request.method, request.routeOptions.url ?? 'unknown', reply.statusCode, reply.elapsedTime / 1000);
  });
  app.get('/metrics', async (_request, reply) => {
    metrics.bufferPending.set(ingest.pending);
    const gate = deps.reports.queueStats;
    metrics.reportsRunning.set(gate.running);
    metrics.reportsQueued.set(gate.queued);
    return reply.type(metrics.registry.contentType).send(await metrics.registry.metrics());
  });

  // Sites by domain and Umami website id, for the Plausible and Umami formats.
  const siteKeys = new SiteKeyDirectory(meta);
  const sites = new SiteCache(meta, auth.cacheMs);
  const siteData = {
    changed: (siteId: string) => {
      sites.forget(siteId);
      ingest.forgetSite(siteId);
      siteKeys.forget();
    },
    // Hits of the site still in the write buffer are written first, so none outlive the deletion.
    delete: async (siteId: string) => {
      sites.forget(siteId);
      ingest.forgetSite(siteId);
      siteKeys.forget();
      await ingest.flush();
      await events.deleteSite(siteId);
    },
  };
  await app.register(collector, { ingest, metrics, documentHeaders: securityHeaders.document });
  lane = collectorLane({ ingest, metrics, log: app.log, trustProxy, beaconHeaders: securityHeaders.beacon });
  // A closing server answers new requests 503 (Fastify's return503OnClosing): the lane steps aside for it.
  app.addHook('preClose', (done) => {
    lane = undefined;
    done();
  });
  await app.register(trackerScriptRoute, deps.trackerScript);
  // Plausible's and Umami's trackers and collection endpoints (switching without re-tagging; docs/collection.md).
  await app.register(peerScriptRoutes);
  await app.register(plausibleEvents, { ingest, metrics, siteKeys });
  await app.register(umamiSend, { ingest, metrics, siteKeys });
  // Dashboard sessions live in the MetaStore, so every process of a scale-out deployment knows them.
  const sessions = new SessionManager(meta, deps.team);
  await app.register(v1Api, { prefix: '/v1', meta, sites, auth, limiter, usage, siteData, reports: deps.reports, sessions });
  await app.register(adminApi, {
    prefix: '/admin', meta, auth, usage, adminToken, localAdminKey: deps.localAdminKey, ingest, events, imports: deps.imports,
    reportEmails: { reports: deps.reports, mailer: deps.mailer ?? NO_MAILER, publicUrl: deps.publicUrl, limiter },
  });
  // Import uploads from the dashboard (the same imports as /admin/imports, for the site's own owners and admins).
  await app.register(dashboardImportRoutes, { meta, imports: deps.imports, sessions });
  // The report page's custom properties, which /v1 (SPEC.md) has no words for: the same access checks as /v1.
  await app.register(dashboardReportApi, { prefix: '/dashboard/api/report', meta, sites, auth, limiter, usage, sessions, reports: deps.reports });
  await app.register(dashboard, {
    meta, team: deps.team, auth, sessions, limiter, mailer: deps.mailer ?? NO_MAILER, publicUrl: deps.publicUrl, reports: deps.reports,
  });
  return app;
}
