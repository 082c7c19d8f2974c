// A service's first contact at start (PostgreSQL's migrations, ClickHouse's): while the service cannot be reached (a
// container still starting, a restart, a network not up yet) it is tried again, the pause growing to 5 s, and each
// wait is logged, so that services may start in any order; any other failure ends the start with one line that
// names the service (ServiceStartError), not a stack trace.

import { setTimeout as sleep } from 'node:timers/promises';
import { isServiceOutage } from '../http/service-outage.js';
import { NewerSchemaError } from './newer-schema.js';

/** Pauses between attempts; the last repeats. */
const PAUSES_MS = [500, 1000, 2000, 4000, 5000];

/** A service answered at start, but with a refusal that waiting will not change (credentials, a missing cluster...). */
export class ServiceStartError extends Error {
  override readonly name = 'ServiceStartError';
  constructor(service: string, address: string, cause: unknown) {
    super(`${service} at ${address}: ${messageOf(cause)}`, { cause });
  }
}

/** `url`'s scheme, host and port: what a log line may say of a service URL (no credentials, no path). */
export function serviceAddress(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}`;
  } catch {
    return '(an unreadable URL)';
  }
}

function messageOf(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown } | undefined;
  // Node's connect to several addresses (localhost: ::1 and 127.0.0.1) fails with an AggregateError of no message
  // but the code of its connections' failure.
  const message = typeof e?.message === 'string' && e.message !== '' ? e.message : typeof e?.code === 'string' ? e.code : String(err);
  return message.split('\n')[0]!.slice(0, 300);
}

export async function untilReachable<T>(
  service: string,
  url: string,
  contact: () => Promise<T>,
  log: (message: string) => void,
  pausesMs: readonly number[] = PAUSES_MS,
): Promise<T> {
  const address = serviceAddress(url);
  for (let attempt = 0; ; attempt++) {
    try {
      return await contact();
    } catch (err) {
      // A newer release's schema says what to do in its own words (main.ts).
      if (err instanceof NewerSchemaError) throw err;
      if (!isServiceOutage(err)) throw new ServiceStartError(service, address, err);
      const pause = pausesMs[Math.min(attempt, pausesMs.length - 1)]!;
      log(`Plumb is waiting for ${service} at ${address} (${messageOf(err)}); trying again in ${pause / 1000} s`);
      await sleep(pause);
    }
  }
}
