// Plausible's and Umami's script paths: Plumb's Plausible-compatible tracker at /js/script[.ext...].js (and the
// older /js/plausible[.ext...].js), one build per combination of extensions, and the Umami-compatible one at
// /js/umami.js. Built on first request, minified, cached, served compressed like /script.js.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { transform } from 'esbuild';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { notFound } from '../domain/errors.js';
import { projectRoot } from '../project-root.js';
import type { TrackerScript } from './tracker-script.js';

/** Plausible's script extensions, each a build flag of src/tracker/plausible.js. */
const EXTENSIONS = new Map([
  ['hash', 'PLUMB_HASH'],
  ['outbound-links', 'PLUMB_OUTBOUND_LINKS'],
  ['file-downloads', 'PLUMB_FILE_DOWNLOADS'],
  ['tagged-events', 'PLUMB_TAGGED_EVENTS'],
  ['revenue', 'PLUMB_REVENUE'],
  ['manual', 'PLUMB_MANUAL'],
  ['local', 'PLUMB_LOCAL'],
  ['exclusions', 'PLUMB_EXCLUSIONS'],
  ['compat', 'PLUMB_COMPAT'],
  ['pageview-props', 'PLUMB_PAGEVIEW_PROPS'],
]);

/** The sorted extensions a script file name asks for, or undefined when it is no Plausible script name. */
export function plausibleExtensions(file: string): string[] | undefined {
  const m = /^(?:script|plausible)((?:\.[a-z-]+)*)\.js$/.exec(file);
  if (!m) return undefined;
  const parts = m[1] === '' ? [] : m[1]!.slice(1).split('.');
  if (parts.length > EXTENSIONS.size || !parts.every((p) => EXTENSIONS.has(p))) return undefined;
  return [...new Set(parts)].sort();
}

async function build(file: string, define: Record<string, string>): Promise<TrackerScript> {
  const raw = await readFile(join(projectRoot(), 'src', 'tracker', file), 'utf8');
  const { code } = await transform(raw, { minify: true, target: 'es2017', legalComments: 'none', define });
  return {
    source: code,
    gzipped: gzipSync(code, { level: 9 }),
    etag: `"${createHash('sha256').update(code).digest('base64url').slice(0, 16)}"`,
  };
}

function send(request: FastifyRequest, reply: FastifyReply, script: TrackerScript): FastifyReply {
  void reply.headers({
    'content-type': 'application/javascript; charset=utf-8',
    'cache-control': 'public, max-age=3600',
    'access-control-allow-origin': '*',
    etag: script.etag,
    vary: 'Accept-Encoding',
  });
  if (request.headers['if-none-match'] === script.etag) return reply.code(304).send();
  if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) return reply.header('content-encoding', 'gzip').send(script.gzipped);
  return reply.send(script.source);
}

export async function peerScriptRoutes(app: FastifyInstance): Promise<void> {
  // At most one build per combination of known extensions (2^10), so the cache is bounded by the list above.
  const plausible = new Map<string, Promise<TrackerScript>>();
  let umami: Promise<TrackerScript> | undefined;
  const quiet = { logLevel: 'warn' } as const;

  app.get<{ Params: { file: string } }>('/js/:file', quiet, async (request, reply) => {
    const file = request.params.file;
    if (file === 'umami.js') {
      umami ??= build('umami.js', {});
      return send(request, reply, await umami);
    }
    const extensions = plausibleExtensions(file);
    if (!extensions) throw notFound('No such script');
    const key = extensions.join('.');
    let script = plausible.get(key);
    if (!script) {
      const define = Object.fromEntries([...EXTENSIONS].map(([ext, flag]) => [flag, String(extensions.includes(ext))]));
      script = build('plausible.js', define);
      script.catch(() => plausible.delete(key));
      plausible.set(key, script);
    }
    return send(request, reply, await script);
  });
}
