// GET /script.js: Plumb's tracker (src/tracker/tracker.js), minified once at start, served compressed and cached,
// and GET /script.ext.js, its extensions (src/tracker/extensions.js), which only tags asking for them load; the
// building and serving of tracker scripts, shared with the peers' script paths (./peers/peer-scripts.ts).

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { transform } from 'esbuild';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { projectRoot } from '../project-root.js';

export interface TrackerScript {
  source: string;
  gzipped: Buffer;
  etag: string;
}

/** A script of src/tracker/ minified (with build flags as `define`), gzipped and tagged for caching. */
export async function buildScript(file: string, define: Record<string, string> = {}): Promise<TrackerScript> {
  const raw = await readFile(join(projectRoot(), 'src', 'tracker', file), 'utf8');
  const { code } = await transform(raw, { minify: true, target: 'es2017', legalComments: 'none', define });
  return {
    source: code,
    gzipped: gzipSync(code, { level: 9 }),
    etag: `"${createHash('sha256').update(code).digest('base64url').slice(0, 16)}"`,
  };
}

export function buildTrackerScript(): Promise<TrackerScript> {
  return buildScript('tracker.js');
}

/** A tracker script as an answer: compressed when the client takes gzip, 304 when it has this version. */
export function sendScript(request: FastifyRequest, reply: FastifyReply, script: TrackerScript): FastifyReply {
  void reply.headers({
    'content-type': 'application/javascript; charset=utf-8',
    // Sites embed the script from anywhere; an hour of caching keeps tracker updates reasonably quick.
    'cache-control': 'public, max-age=3600',
    'access-control-allow-origin': '*',
    etag: script.etag,
    vary: 'Accept-Encoding',
  });
  if (request.headers['if-none-match'] === script.etag) return reply.code(304).send();
  if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) return reply.header('content-encoding', 'gzip').send(script.gzipped);
  return reply.send(script.source);
}

export async function trackerScriptRoute(app: FastifyInstance, script: TrackerScript): Promise<void> {
  app.get('/script.js', { logLevel: 'warn' }, async (request, reply) => sendScript(request, reply, script));
  // Built on its first request: most sites never ask for it, and the start need not wait for it.
  let extensions: Promise<TrackerScript> | undefined;
  app.get('/script.ext.js', { logLevel: 'warn' }, async (request, reply) => {
    if (!extensions) {
      const building = buildScript('extensions.js');
      // A failed build is tried again by the next request rather than remembered.
      building.catch(() => (extensions = undefined));
      extensions = building;
    }
    return sendScript(request, reply, await extensions);
  });
}
