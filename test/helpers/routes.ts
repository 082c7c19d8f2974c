// The app's routes as Fastify lists them (`printRoutes({ commonPrefix: false })`), for the suites that call every
// route with a path parameter (test/security/path-ids.test.ts, test/security/path-parameters.test.ts), and what
// they send there.

import assert from 'node:assert/strict';

/** One method of a route, and its path with `:name` parameters (`:kind|:id` where two routes share a node). */
export interface Target {
  method: string;
  path: string;
}

/** A path parameter in a listed path (the `g` flag: use with `replace` and `match`, never `exec`). */
export const PARAM = /:[A-Za-z_][\w|:]*/g;

/**
 * Every route of the app, from Fastify's own listing: a tree whose lines are indented four characters per level,
 * each naming the text it adds to its parent's path and its methods.
 */
export function listRoutes(printed: string): Target[] {
  const paths: string[] = [];
  const targets: Target[] = [];
  for (const line of printed.split('\n')) {
    const m = /^([│├└─\s]*)(\S.*?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!m) continue;
    const depth = m[1]!.length / 4;
    assert.ok(Number.isInteger(depth), `an indentation of ${m[1]!.length} in the route listing: ${line}`);
    paths.length = depth;
    const path = (paths[depth - 1] ?? '') + m[2]!;
    paths[depth] = path;
    for (const method of m[3]?.split(', ') ?? []) targets.push({ method, path });
  }
  return targets;
}

/** The JSON routes: the API's error shapes. The rest are the dashboard's pages (and the tracker's script paths). */
export const isJsonRoute = (path: string) => /^\/(admin|v1|dashboard\/api)\//.test(path);

/** A valid body for the JSON routes that read one, so that the parameter, not the body, is what gets judged. */
export const BODIES: Record<string, unknown> = {
  'POST /admin/accounts/:id': { name: 'Renamed' },
  'PUT /admin/accounts/:id/password': { password: 'a long enough password 1' },
  'POST /admin/accounts/:id/tokens': { name: 'Hostile', abilities: ['*'] },
  'POST /v1/sites/:site_id': { name: 'Renamed' },
  'POST /v1/sites/:site_id/events': { name: 'Signup' },
  'POST /v1/sites/:site_id/events/:event_id': { name: 'Signup' },
  'POST /v1/sites/:site_id/milestones': { name: 'Launch', milestone_date: '2026-01-01' },
  'POST /v1/sites/:site_id/milestones/:milestone_id': { name: 'Launch', milestone_date: '2026-01-01' },
  'POST /dashboard/api/members/:user_id': { role: 'viewer' },
  'PUT /dashboard/api/sites/:site_id/embedding': { embed_origins: [] },
};
