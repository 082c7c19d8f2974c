// The files the dashboard's "where visitors are" panel draws with, served from Plumb itself: country flags
// (flag-icons' SVGs, one request per flag shown, only for ISO country codes the package lists) and the world map's
// outlines (world-atlas' countries-110m TopoJSON). Both read from node_modules once, then kept in memory.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { GeneralError } from '../../domain/errors.js';

interface GeoFile {
  body: Buffer;
  gzipped: Buffer;
  etag: string;
  type: string;
}

const require = createRequire(import.meta.url);
const packageDir = (name: string) => dirname(require.resolve(`${name}/package.json`));

function geoFile(body: Buffer, type: string): GeoFile {
  return { body, gzipped: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`, type };
}

/** The flag codes a request may ask for: the two-letter codes flag-icons lists (ISO 3166-1, and XK for Kosovo, as geo databases record it). */
async function flagCodes(): Promise<Set<string>> {
  const list = JSON.parse(await readFile(join(packageDir('flag-icons'), 'country.json'), 'utf8')) as { code: string }[];
  return new Set(list.filter((c) => /^[a-z]{2}$/.test(c.code)).map((c) => c.code));
}

// A flag or the map changes only with an npm update, so browsers may keep them a day without asking again.
const CACHE = 'public, max-age=86400';

function send(request: FastifyRequest, reply: FastifyReply, file: GeoFile) {
  void reply.headers({ 'content-type': file.type, 'cache-control': CACHE, etag: file.etag, vary: 'Accept-Encoding' });
  if (request.headers['if-none-match'] === file.etag) return reply.code(304).send();
  if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) return reply.header('content-encoding', 'gzip').send(file.gzipped);
  return reply.send(file.body);
}

export async function geoAssetRoutes(app: FastifyInstance): Promise<void> {
  const codes = await flagCodes();
  const flagsDir = join(packageDir('flag-icons'), 'flags', '4x3');
  const flags = new Map<string, Promise<GeoFile>>();
  const world = geoFile(await readFile(join(packageDir('world-atlas'), 'countries-110m.json')), 'application/json; charset=utf-8');

  app.get<{ Params: { file: string } }>('/dashboard/flags/:file', { logLevel: 'warn' }, async (request, reply) => {
    const code = /^([a-z]{2})\.svg$/.exec(request.params.file)?.[1];
    // Only names from the allow-list reach the file system: nothing else can be read through this route.
    if (!code || !codes.has(code)) throw new GeneralError(404, 'No flag for that country code');
    let file = flags.get(code);
    if (!file) {
      file = readFile(join(flagsDir, `${code}.svg`)).then((body) => geoFile(body, 'image/svg+xml'));
      flags.set(code, file);
    }
    return send(request, reply, await file);
  });
  app.get('/dashboard/world-110m.json', { logLevel: 'warn' }, async (request, reply) => send(request, reply, world));
}
