// GET /readyz: whether this process can do its work now, each service it depends on asked with a trivial request
// (PostgreSQL, ClickHouse, Redis in scale-out; the DuckDB file embedded). /healthz says only that the process runs.

import type { FastifyInstance } from 'fastify';
import { OUTAGE_RETRY_AFTER_SECONDS } from './service-outage.js';

/** A service's check: resolves when it answered. */
export type ReadinessChecks = Record<string, () => Promise<unknown>>;

/** Longest a check may take: a service slower than this is as good as away for a request. */
const CHECK_TIMEOUT_MS = 2000;

function withinTimeout(check: () => Promise<unknown>): Promise<'ok' | 'unavailable'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'unavailable'>((resolve) => (timer = setTimeout(() => resolve('unavailable'), CHECK_TIMEOUT_MS)));
  const answered = Promise.resolve()
    .then(check)
    .then(() => 'ok' as const, () => 'unavailable' as const);
  return Promise.race([answered, late]).finally(() => clearTimeout(timer));
}

/**
 * 200 `{status: "ready", services: {name: "ok"}}` when every service answered in time, else 503 with Retry-After
 * and `{status: "unavailable", services: {...}}` naming which did not (no error details: they are for the log).
 */
export function installReadiness(app: FastifyInstance, checks: ReadinessChecks): void {
  app.get('/readyz', { logLevel: 'warn' }, async (_request, reply) => {
    const names = Object.keys(checks);
    const states = await Promise.all(names.map((name) => withinTimeout(checks[name]!)));
    const services = Object.fromEntries(names.map((name, i) => [name, states[i]]));
    const ready = states.every((s) => s === 'ok');
    if (!ready) void reply.code(503).header('retry-after', String(OUTAGE_RETRY_AFTER_SECONDS));
    return reply.header('cache-control', 'no-store').send({ status: ready ? 'ready' : 'unavailable', services });
  });
}
