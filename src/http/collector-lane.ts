// The collector's fast lane, in front of Fastify: a well-formed `GET /?…` hit (a pageview, or an event sent by name) is
// read, handed to the pipeline and answered with the collector route's own GIF and headers, without Fastify's request
// and reply objects, hooks and per-request logger, which cost the HTTP thread about 14 µs a hit (docs/benchmarks.md,
// "Collector: measurements behind the code"). Everything else (other paths and methods, a request with a body, legacy
// goal codes, any parameter the route would refuse, a full write buffer) goes to Fastify untouched, and the route
// answers it as it always did, errors included.

import type { IncomingMessage, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'fast-querystring';
import type { FastifyBaseLogger } from 'fastify';
import { InvalidHit } from '../ingest/pipeline.js';
import type { Ingest } from '../ingest/ingest.js';
import type { Metrics } from '../metrics.js';
import { hitFromParams, paramsOf, PIXEL } from './collector.js';
import { ANY_ORIGIN } from './security-headers.js';
import { isServiceOutage, ServiceUnavailable } from './service-outage.js';
import { clientAddress, type TrustProxy } from './trust-proxy.js';

/** Takes the request and answers it (true), or leaves it to Fastify (false) without having touched it. */
export type Lane = (req: IncomingMessage, res: ServerResponse) => boolean;

export interface LaneDeps {
  ingest: Ingest;
  metrics: Metrics;
  log: FastifyBaseLogger;
  /** The security headers of a beacon's answer (addSecurityHeaders). */
  beaconHeaders: Readonly<Record<string, string>>;
  /** Fastify's trustProxy, as the app gave it: the lane reads the client's address the way Fastify does. */
  trustProxy: TrustProxy;
}

export function collectorLane({ ingest, metrics, log, trustProxy, beaconHeaders }: LaneDeps): Lane {
  const gif = { ...beaconHeaders, ...ANY_ORIGIN, 'cache-control': 'no-store', 'content-type': 'image/gif', 'content-length': String(PIXEL.length) };
  const json = { ...beaconHeaders, ...ANY_ORIGIN, 'content-type': 'application/json; charset=utf-8' };
  const addressOf = clientAddress(trustProxy);

  /** Counted as the route's onResponse hook counts its answers (src/http/app.ts). */
  const answered = (status: number, started: number) => metrics.answered('GET', '/', status, (performance.now() - started) / 1000);

  const fail = (res: ServerResponse, status: number, message: string, started: number) => {
    const body = JSON.stringify({ error: message });
    res.writeHead(status, { ...json, 'content-length': String(Buffer.byteLength(body)) });
    res.end(body);
    answered(status, started);
  };

  return (req, res) => {
    const url = req.url ?? '';
    // A GET has no body unless it says so; one that does may carry parameters, which the route reads.
    if (req.method !== 'GET' || !url.startsWith('/?') || req.headers['content-length'] !== undefined || req.headers['transfer-encoding'] !== undefined) {
      return false;
    }
    const started = performance.now();
    let hit;
    try {
      // The route's query: what follows the first `?`, parsed by Fastify's own parser (fast-querystring).
      const params = paramsOf([parseQuery(url.slice(2))]);
      if (!params.sid || params.gcode !== undefined || ingest.isFull) return false;
      hit = hitFromParams(params, req.headers['user-agent'] ?? '', addressOf(req));
    } catch {
      // The route gives the malformed hit its error, and counts it.
      return false;
    }
    metrics.hitsFastLane.inc();
    ingest.collect(hit).then(
      () => {
        res.writeHead(200, gif);
        res.end(PIXEL);
        answered(200, started);
      },
      (err: unknown) => {
        if (err instanceof InvalidHit) {
          metrics.hitsInvalid.inc();
          return fail(res, 400, `Malformed hit: ${err.message}`, started);
        }
        if (isServiceOutage(err)) {
          log.warn({ err }, 'a storage service is unavailable');
          const outage = new ServiceUnavailable();
          res.setHeader('retry-after', String(outage.retryAfterSeconds));
          return fail(res, outage.status, outage.message, started);
        }
        log.error({ err }, 'request failed');
        fail(res, 500, 'Internal server error', started);
      },
    );
    return true;
  };
}
