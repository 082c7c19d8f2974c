// The collector (DESIGN.md section 4): `GET /` records pageviews, `POST /` events and engagement (`e`, `sd`), in the
// wire format of the Fathom script, so existing sites switch by changing the script URL. Browsers on any origin may send.

import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_ENGAGED_MS, type HitType, type IncomingHit } from '../domain/hits.js';
import { readProps, type PropList } from '../domain/props.js';
import { GeneralError } from '../domain/errors.js';
import { InvalidHit } from '../ingest/pipeline.js';
import type { Ingest } from '../ingest/ingest.js';
import type { Metrics } from '../metrics.js';
import { ANY_ORIGIN, BEACON_ROUTE } from './security-headers.js';

// A transparent 1x1 GIF: what an <img> beacon expects back.
export const PIXEL = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** CORS preflights: answers to hits carry only ANY_ORIGIN. */
const PREFLIGHT = {
  ...ANY_ORIGIN,
  'access-control-allow-methods': 'GET, POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type',
  'access-control-max-age': '86400',
};

/** Longest value accepted per parameter; longer is a malformed hit. */
const MAX_LENGTH = new Map(Object.entries({ sid: 64, h: 2048, p: 4096, r: 4096, qs: 4096, name: 255, payload: 8192, gcode: 64, gval: 20, cid: 64, e: 20, sd: 20 }));

function invalid(message: string): GeneralError {
  return new GeneralError(400, `Malformed hit: ${message}`);
}

/** Reads the collector's parameters from the query string and, for beacons that send a body, the body. */
function readParams(request: FastifyRequest): Record<string, string> {
  return paramsOf([request.query, request.body]);
}

/** The collector's parameters from parsed query strings or bodies (later sources win); throws a 400 for bad ones. */
export function paramsOf(given: unknown[]): Record<string, string> {
  const sources = given.filter((s): s is Record<string, unknown> => !!s && typeof s === 'object');
  const params: Record<string, string> = {};
  for (const source of sources) {
    for (const [name, max] of MAX_LENGTH) {
      // Own properties only: a JSON body inherits `constructor` and the like from Object.prototype.
      const value = Object.hasOwn(source, name) ? source[name] : undefined;
      if (value === undefined) continue;
      if (typeof value !== 'string') throw invalid(`${name} must be given once, as text`);
      if (value.length > max) throw invalid(`${name} is longer than ${max} characters`);
      params[name] = value;
    }
  }
  return params;
}

/** `qs` is a JSON object of the page's query parameters (Fathom's format), or a plain query string. */
function queryFrom(qs: string | undefined): URLSearchParams {
  const out = new URLSearchParams();
  if (!qs) return out;
  if (/^\s*[[{]/.test(qs)) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(qs);
    } catch {
      throw invalid('qs is not valid JSON');
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('qs must be a JSON object');
    for (const [k, v] of Object.entries(parsed)) {
      if (typeof v === 'string' || typeof v === 'number') out.set(k, String(v));
    }
    return out;
  }
  return new URLSearchParams(qs.startsWith('?') ? qs.slice(1) : qs);
}

function cents(text: string, what: string): number {
  if (!/^\d{1,15}$/.test(text.trim())) throw invalid(`${what} must be a whole, non-negative number of cents`);
  return Number(text.trim());
}

/** An engagement's `e` (engaged ms) or `sd` (scroll percent): a whole number from 0 to `max`; absent is 0. */
function wholeUpTo(text: string | undefined, name: string, max: number): number {
  if (text === undefined || text === '') return 0;
  const n = /^\d{1,15}$/.test(text.trim()) ? Number(text.trim()) : NaN;
  if (!(n <= max)) throw invalid(`${name} must be a whole number from 0 to ${max}`);
  return n;
}

const VALUE_KEY: ReadonlySet<string> = new Set(['_value']);

/** An event's `payload`: `_value` (cents) is its value, every other key a custom property (docs/collection.md). */
function eventPayload(payload: string | undefined): { value: number; props: PropList } {
  if (!payload) return { value: 0, props: [] };
  let parsed: unknown;
  try {
    parsed = JSON.parse(payload);
  } catch {
    throw invalid('payload is not valid JSON');
  }
  if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw invalid('payload must be a JSON object');
  const props = readProps(parsed, { skip: VALUE_KEY });
  const value = Object.hasOwn(parsed, '_value') ? (parsed as { _value?: unknown })._value : undefined;
  if (value === undefined || value === null || value === '') return { value: 0, props };
  if (typeof value === 'number' && Number.isSafeInteger(value) && value >= 0) return { value, props };
  if (typeof value === 'string') return { value: cents(value, '_value'), props };
  throw invalid('_value must be a whole, non-negative number of cents');
}

/** The page URL the hit describes: origin `h`, path `p` and the query parameters of `qs`. */
function pageUrl(h: string | undefined, p: string | undefined, qs: URLSearchParams): string {
  if (!h) throw invalid('h (the page origin, e.g. https://example.com) is required');
  let url: URL;
  try {
    url = new URL(p && p !== '' ? p : '/', h);
  } catch {
    throw invalid('h and p do not form a URL');
  }
  if (p && !p.startsWith('/')) throw invalid('p must start with /');
  for (const [k, v] of qs) url.searchParams.append(k, v);
  return url.href;
}

/** What a hit is, where the parameters alone do not tell (a legacy goal code's event is looked up first). */
interface HitKind {
  type: HitType;
  eventName: string | undefined;
  value: number | undefined;
  props: PropList;
  scrollDepth?: number;
  engagedMs?: number;
}

/**
 * A pageview, or an event named by `name` (with its `payload`), from the collector's parameters; throws a 400 for
 * a malformed one. Synchronous: the fast lane (collector-lane.ts) takes only hits this reads alone.
 */
export function hitFromParams(params: Record<string, string>, userAgent: string, ip: string): IncomingHit {
  return incomingHit(params, userAgent, ip, kindOf(params));
}

/** Whether the parameters describe an engagement: `e` (engaged ms) or `sd` (scroll depth) is given. */
const isEngagement = (params: Record<string, string>) => params.e !== undefined || params.sd !== undefined;

/**
 * A pageview, an event named by `name` with its payload's value and properties (a 400 for a bad payload), or an
 * engagement with its scroll depth and engaged time (docs/collection.md, "Engagement").
 */
function kindOf(params: Record<string, string>): HitKind {
  if (isEngagement(params)) {
    if (params.name !== undefined || params.gcode !== undefined) throw invalid('an engagement (e, sd) cannot be an event (name, gcode) too');
    return {
      type: 'engagement', eventName: undefined, value: undefined, props: [],
      scrollDepth: wholeUpTo(params.sd, 'sd (the scroll depth, percent)', 100),
      engagedMs: wholeUpTo(params.e, 'e (the engaged time, ms)', MAX_ENGAGED_MS),
    };
  }
  if (params.name === undefined) return { type: 'pageview', eventName: undefined, value: undefined, props: [] };
  return { type: 'event', eventName: params.name, ...eventPayload(params.payload) };
}

function incomingHit(params: Record<string, string>, userAgent: string, ip: string, { type, eventName, value, props, scrollDepth, engagedMs }: HitKind): IncomingHit {
  return {
    type,
    siteId: params.sid!,
    timestamp: new Date(),
    url: pageUrl(params.h, params.p, queryFrom(params.qs)),
    referrer: params.r ?? '',
    userAgent,
    ip,
    ...(eventName !== undefined ? { eventName } : {}),
    ...(value !== undefined ? { value } : {}),
    ...(props.length > 0 ? { props } : {}),
    ...(type === 'engagement' ? { scrollDepth: scrollDepth ?? 0, engagedMs: engagedMs ?? 0 } : {}),
  };
}

export interface CollectorDeps {
  ingest: Ingest;
  metrics: Metrics;
  /** The security headers of answers that are not a beacon's (addSecurityHeaders). */
  documentHeaders: Readonly<Record<string, string>>;
}

export async function collector(app: FastifyInstance, { ingest, metrics, documentHeaders }: CollectorDeps): Promise<void> {
  // Beacons send whatever body type the browser picks (often none, sometimes text/plain): parameters may come
  // as a query-string-style body, anything else in the body is ignored.
  app.addContentTypeParser(['text/plain', '*'], { parseAs: 'string', bodyLimit: 16 * 1024 }, (_request, body, done) => {
    const text = String(body);
    done(null, text.includes('=') && !text.trimStart().startsWith('{') ? Object.fromEntries(new URLSearchParams(text)) : undefined);
  });

  const collect = async (request: FastifyRequest, reply: FastifyReply) => {
    void reply.headers(ANY_ORIGIN);
    try {
      const params = readParams(request);
      if (request.method === 'GET' && Object.keys(params).length === 0) {
        // Not a hit: someone opened the server's root. A browser goes to the dashboard, anything else learns
        // where the API is, with the headers of any other page (security scanners look here first).
        void reply.headers(documentHeaders);
        if (/\btext\/html\b/.test(request.headers.accept ?? '')) return reply.redirect('/sites', 302);
        return reply.send({ name: 'Plumb', api: '/v1', openapi: '/openapi.json', script: '/script.js', dashboard: '/sites' });
      }
      if (!params.sid) throw invalid('sid (the site id) is required');
      let kind: HitKind;
      if (params.name === undefined && params.gcode !== undefined && !isEngagement(params)) {
        // Legacy goals: the code is the event's tracking code; its name is what gets recorded.
        const goal = await ingest.sites.goalByCode(params.sid, params.gcode);
        const value = params.gval ? cents(params.gval, 'gval') : 0;
        if (!goal) {
          metrics.hitsReceived.inc({ type: 'event' });
          metrics.drop('unknown-goal');
          return answer(request, reply);
        }
        kind = { type: 'event', eventName: goal.name, value, props: [] };
      } else kind = kindOf(params);
      if (ingest.isFull) {
        metrics.hitsRefused.inc();
        return reply.code(503).header('retry-after', '1').send({ error: 'Plumb is busy writing; retry shortly' });
      }
      await ingest.collect(incomingHit(params, request.headers['user-agent'] ?? '', request.ip, kind));
    } catch (err) {
      const problem = err instanceof InvalidHit ? invalid(err.message) : err;
      if (problem instanceof GeneralError && problem.status === 400) metrics.hitsInvalid.inc();
      throw problem;
    }
    return answer(request, reply);
  };

  // Hits are counted on /metrics, not logged one by one: at thousands a second, a log line each would cost
  // more than the hit (warnings and errors are still logged). Answers carry a beacon's security headers.
  const beacon = { ...BEACON_ROUTE, logLevel: 'warn' } as const;
  app.get('/', beacon, collect);
  app.post('/', beacon, collect);
  app.options('/', beacon, async (_request, reply) => reply.code(204).headers(PREFLIGHT).send());
}

/** Dropped and recorded hits get the same answer: a client cannot tell which (and need not). */
function answer(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  void reply.header('cache-control', 'no-store');
  if (request.method === 'GET') return reply.type('image/gif').send(PIXEL);
  return reply.code(204).send();
}
