// Security headers on every answer (helmet's set), computed once at start: helmet builds its middleware and
// header values per call, which cost the collector about 16 µs a hit; the values never change, so every request
// gets the same precomputed headers. A route may still override one (the dashboard sets its own CSP). Beacon
// routes (the collectors, which answer a GIF, a 204 or a JSON error to a page's script) get the two of them that
// apply to such answers: the rest govern documents, and setting them cost a hit 6-11 µs of the HTTP thread
// (docs/benchmarks.md, "Collector: measurements behind the code").

import type { FastifyInstance } from 'fastify';
import helmet, { type HelmetOptions } from 'helmet';
import type { IncomingMessage, ServerResponse } from 'node:http';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The route answers beacons: a few security headers instead of the full set (addSecurityHeaders). */
    beacon?: boolean;
  }
}

/** Route options of a beacon route (spread into the route's options). */
export const BEACON_ROUTE = { config: { beacon: true } } as const;

/**
 * The CORS a beacon's answer carries: any page may send it and read the answer. The rest of CORS (methods, headers,
 * max-age) is each collector's preflight's.
 */
export const ANY_ORIGIN = { 'access-control-allow-origin': '*' } as const;

/**
 * What of the set a beacon's answer carries: never sniffed into something else, and readable by pages that require
 * cross-origin resources to opt in. Framing, CSP, HSTS and the like govern documents; a site's visitors get them
 * with /script.js, which keeps the full set.
 */
const BEACON_HEADER_NAMES = ['x-content-type-options', 'cross-origin-resource-policy'];

/** The headers helmet sets with `options`, read once by running its middleware against a recording response. */
export function securityHeaders(options: HelmetOptions): Record<string, string> {
  const headers: Record<string, string> = {};
  const recorder = {
    setHeader: (name: string, value: string | number | readonly string[]) => {
      headers[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : String(value);
    },
    removeHeader: (name: string) => {
      delete headers[name.toLowerCase()];
    },
  };
  let failure: unknown;
  helmet(options)({} as IncomingMessage, recorder as unknown as ServerResponse, (err?: unknown) => (failure = err));
  if (failure) throw failure;
  return headers;
}

/** The precomputed sets: every answer's, and a beacon's few. */
export interface SecurityHeaderSets {
  document: Readonly<Record<string, string>>;
  beacon: Readonly<Record<string, string>>;
}

/**
 * Sets the precomputed security headers on every reply of `app` (call it on the root instance), the beacon's few on
 * beacon routes. Returns both sets: the full one for a beacon route's answers that are not a beacon's, the beacon's
 * for answers given outside Fastify (collector-lane.ts).
 */
export function addSecurityHeaders(app: FastifyInstance, options: HelmetOptions): SecurityHeaderSets {
  const headers = securityHeaders(options);
  const beacon = Object.fromEntries(BEACON_HEADER_NAMES.flatMap((name) => (name in headers ? [[name, headers[name]!]] : [])));
  app.addHook('onRequest', (request, reply, done) => {
    void reply.headers(request.routeOptions.config.beacon === true ? beacon : headers);
    done();
  });
  return { document: headers, beacon };
}
