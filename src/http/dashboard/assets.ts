// The dashboard's script, stylesheet and font files (src/web/), bundled with esbuild and served from our own origin
// (uPlot and Inter included): no CDN, nothing fetched from elsewhere at run time. The compiled server (npm start)
// reads the bundle `npm run build` wrote into dist/web/; run from the sources (tests), each process bundles once.

import { createHash } from 'node:crypto';
import { readdir, readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { basename, join } from 'node:path';
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
  /** The stylesheet's font files by file name (`inter-latin-wght-normal-<hash>.woff2`), served under /dashboard/fonts/. */
  fonts: Map<string, FontFile>;
}

/** A woff2 file: already compressed, so served as it is. */
export interface FontFile {
  body: Buffer;
  type: string;
}

/** What bundleDashboard makes: the two texts and the font files the stylesheet points at. */
export interface DashboardBundle {
  js: string;
  css: string;
  fonts: { name: string; bytes: Uint8Array }[];
}

/** Where the stylesheet's url()s point: the font route below, names carrying their content hash. */
const FONT_PATH = '/dashboard/fonts/';

function asset(body: string, type: string): Asset {
  return { body, gzipped: gzipSync(body, { level: 9 }), etag: `"${createHash('sha256').update(body).digest('base64url').slice(0, 16)}"`, type };
}

/** The bundled script and stylesheet texts and font files (`npm run build` writes them to dist/web/). */
export async function bundleDashboard(): Promise<DashboardBundle> {
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
    // Fonts become files of their own (a woff2 inlined would weigh on every page's stylesheet), named by content.
    loader: { '.woff2': 'file' },
    assetNames: 'fonts/[name]-[hash]',
    publicPath: FONT_PATH.replace(/fonts\/$/, ''),
  });
  const js = result.outputFiles.find((f) => f.path.endsWith('.js'));
  const css = result.outputFiles.find((f) => f.path.endsWith('.css'));
  if (!js || !css) throw new Error('dashboard bundle is missing its script or stylesheet');
  const fonts = result.outputFiles.filter((f) => f.path.endsWith('.woff2')).map((f) => ({ name: basename(f.path), bytes: f.contents }));
  return { js: js.text, css: css.text, fonts };
}

/** The bundle the build wrote, when this is the compiled server (dist/src/...) and the build wrote one. */
async function prebuilt(): Promise<DashboardBundle | undefined> {
  if (!/[\\/]dist[\\/]src[\\/]/.test(fileURLToPath(import.meta.url))) return undefined;
  const dir = join(projectRoot(), 'dist', 'web');
  try {
    const names = (await readdir(join(dir, 'fonts')).catch(() => [])).filter((n) => n.endsWith('.woff2'));
    const fonts = await Promise.all(names.map(async (name) => ({ name, bytes: await readFile(join(dir, 'fonts', name)) })));
    return { js: await readFile(join(dir, 'app.js'), 'utf8'), css: await readFile(join(dir, 'app.css'), 'utf8'), fonts };
  } catch {
    return undefined;
  }
}

async function bundle(): Promise<DashboardAssets> {
  const web = join(projectRoot(), 'src', 'web');
  const { js, css, fonts } = (await prebuilt()) ?? (await bundleDashboard());
  const icon = await readFile(join(web, 'favicon.svg'), 'utf8');
  return {
    js: asset(js, 'application/javascript; charset=utf-8'),
    css: asset(css, 'text/css; charset=utf-8'),
    icon: asset(icon, 'image/svg+xml'),
    fonts: new Map(fonts.map((f) => [f.name, { body: Buffer.from(f.bytes), type: 'font/woff2' }])),
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
  // Fonts are named by their content's hash, so a browser may keep them for good.
  app.get<{ Params: { name: string } }>(`${FONT_PATH}:name`, { logLevel: 'warn' }, async (request, reply) => {
    const font = assets.fonts.get(request.params.name);
    if (!font) return reply.code(404).send({ error: 'Not found' });
    return reply.headers({ 'content-type': font.type, 'cache-control': 'public, max-age=31536000, immutable' }).send(font.body);
  });
}
