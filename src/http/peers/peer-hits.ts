// What the Plausible and Umami endpoints share: JSON bodies read as text whatever their declared type, and one hit
// handed to the same ingest as the collector's, with the same refusals, drops and metrics.

import type { FastifyInstance, FastifyReply } from 'fastify';
import type { IncomingHit } from '../../domain/hits.js';
import type { Ingest } from '../../ingest/ingest.js';
import { InvalidHit } from '../../ingest/pipeline.js';
import type { Metrics } from '../../metrics.js';

/** Bodies of both formats are a few hundred bytes; anything near this is not a browser's hit. */
export const PEER_BODY_LIMIT = 64 * 1024;

/**
 * In this plugin's scope only: every body is kept as text, so a JSON body sent as `text/plain` (Plausible's script
 * does, to avoid a CORS preflight) or with no type at all is read the same as `application/json`.
 */
export function keepBodiesAsText(app: FastifyInstance): void {
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: PEER_BODY_LIMIT }, (_request, body, done) => done(null, body));
}

/** The body as a JSON object, or undefined when it is not one. */
export function jsonObject(body: unknown): Record<string, unknown> | undefined {
  if (typeof body !== 'string') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return undefined;
  }
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
}

/** An own property of a parsed body (a body's `constructor` or `__proto__` is just a missing field). */
export const field = (o: Record<string, unknown>, name: string): unknown => (Object.hasOwn(o, name) ? o[name] : undefined);

/** Cents from an amount in currency units (`12.99` or `"12.99"`), or undefined when it is not a usable amount. */
export function centsOf(amount: unknown): number | undefined {
  const n = typeof amount === 'number' ? amount : typeof amount === 'string' && /^\s*\d+(\.\d+)?\s*$/.test(amount) ? Number(amount) : NaN;
  if (!Number.isFinite(n) || n < 0) return undefined;
  const cents = Math.round(n * 100);
  return Number.isSafeInteger(cents) ? cents : undefined;
}

/** Thrown when a hit cannot be understood: the endpoint answers 400 with its own shape. */
export class PeerHitRefused extends Error {}

export type SendResult = 'sent' | 'busy';

/**
 * Hands hits to the ingest (one per site a request names), counting what the collector counts. `busy` when the
 * write buffer is full (nothing was taken); an InvalidHit from the pipeline becomes PeerHitRefused.
 */
export async function sendHits(ingest: Ingest, metrics: Metrics, hits: readonly IncomingHit[]): Promise<SendResult> {
  if (ingest.isFull) {
    metrics.hitsRefused.inc();
    return 'busy';
  }
  try {
    await Promise.all(hits.map((hit) => ingest.collect(hit)));
  } catch (err) {
    if (err instanceof InvalidHit) {
      metrics.hitsInvalid.inc();
      throw new PeerHitRefused(err.message);
    }
    throw err;
  }
  return 'sent';
}

/** A hit naming no known site: counted like the collector's `unknown-site` drop, answered like a recorded one. */
export function countUnknownSite(metrics: Metrics, type: IncomingHit['type']): void {
  metrics.hitsReceived.inc({ type });
  metrics.drop('unknown-site');
}

export function busy(reply: FastifyReply): FastifyReply {
  return reply.code(503).header('retry-after', '1').send({ error: 'Plumb is busy writing; retry shortly' });
}
