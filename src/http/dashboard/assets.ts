// The dashboard's script and stylesheet (src/web/), bundled with esbuild and served from our own origin (uPlot
// included): no CDN, nothing fetched from elsewhere at run time. The compiled server (npm start) reads the bundle
// `npm run build` wrote into dist/web/; run from the sources (tests), each process bundles once.

import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import type { FastifyInstance } from 'fastify';
import { projectRoot } from '../../project-root.js';

export interface Asset {
  body: string;
  gzipped: Buffer;
  etag: string;
  type: string;
}

export interface DashboardAssets {
  js: Asset;
  css: Asset;
  icon: Asset;
}

function asset(body: string, type: string): Asset {
  return { body, gzipped: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`, type };
}

/** The bundled script and stylesheet texts (`npm run build` writes them to dist/web/). */
export async function bundleDashboard(): Promise<{ js: string; css: string }> {
  const web = join(projectRoot(), 'src', 'web');
  const result = await build({
    entryPoints: [join(web, 'main.js'), join(web, 'style.css')],
    bundle: true,
    format: 'iife',
    minify: true,
    target: 'es2020',
    write: false,
    outdir: 'out',
    legalComments: 'eof',
    logLevel: 'silent',
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!js || !css) throw new Error('dashboard bundle is missing its script or stylesheet');
  return { js: js.text, css: css.text };
}

/** The bundle the build wrote, when this is the compiled server (dist/src/...) and the build wrote one. */
async function prebuilt(): Promise<{ js: string; css: string } | undefined> {
  if (!/[\\/]dist[\\/]src[\\/]/.test(fileURLToPath(import.meta.url))) return undefined;
  const dir = join(projectRoot(), 'dist', 'web');
  try {
    return { js: await readFile(join(dir, 'app.js'), 'utf8'), css: await readFile(join(dir, 'app.css'), 'utf8') };
  } catch {
    return undefined;
  }
}

async function bundle(): Promise<DashboardAssets> {
  const web = join(projectRoot(), 'src', 'web');
  const { js, css } = (await prebuilt()) ?? (await bundleDashboard());
  const icon = await readFile(join(web, 'favicon.svg'), 'utf8');
  return {
    js: asset(js, 'application/javascript; charset=utf-8'),
    css: asset(css, 'text/css; charset=utf-8'),
    icon: asset(icon, 'image/svg+xml'),
  };
}

// Every app built in this process (tests build many) shares one bundle; a failed build is retried next time.
let cached: Promise<DashboardAssets> | undefined;
export function dashboardAssets(): Promise<DashboardAssets> {
  cached ??= bundle().catch((err: unknown) => {
    cached = undefined;
    throw err;
  });
  return cached;
}

export function assetRoutes(app: FastifyInstance, assets: DashboardAssets): void {
  const serve = (a: Asset) => ({
    logLevel: 'warn' as const,
    handler: async (request: import('fastify').FastifyRequest, reply: import('fastify').FastifyReply) => {
      // Revalidated on every load (cheap with the ETag), so a server update reaches open browsers at once.
      void reply.headers({ 'content-type': a.type, 'cache-control': 'no-cache', etag: a.etag, vary: 'Accept-Encoding' });
      if (request.headers['if-none-match'] === a.etag) return reply.code(304).send();
      if (/\bgzip\b/.test(request.headers['accept-encoding'] ?? '')) return reply.header('content-encoding', 'gzip').send(a.gzipped);
      return reply.send(a.body);
    },
  });
  app.get('/dashboard/app.js', serve(assets.js));
  app.get('/dashboard/app.css', serve(assets.css));
  app.get('/dashboard/favicon.svg', serve(assets.icon));
}
