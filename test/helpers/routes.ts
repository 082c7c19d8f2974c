// The app's routes as Fastify lists them (`printRoutes({ commonPrefix: false })`), for the suites that call every
// route with a path parameter (test/security/path-ids.test.ts, test/security/path-parameters.test.ts).

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
