// Plausible's and Umami's script paths: Plumb's Plausible-compatible tracker at /js/script[.ext...].js (and the
// older /js/plausible[.ext...].js), one build per combination of extensions, the per-site script of Plausible's
// current snippet at /js/pa-<id>.js, and the Umami-compatible one at /js/umami.js. Built on first request,
// minified, cached, served compressed like /script.js.

import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import type { FastifyInstance } from 'fastify';
import { notFound } from '../../domain/errors.js';
import { PLAUSIBLE_SCRIPT_FILE_RE } from '../../domain/site-domains.js';
import { buildScript, sendScript, type TrackerScript } from '../tracker-script.js';

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

/** Stands for the script id in the per-site build, replaced by each id (ids are [A-Za-z0-9_-]: nothing to escape). */
const SCRIPT_ID_SLOT = '__PLUMB_SCRIPT_ID__';

/**
 * The per-site script's build: every behaviour compiled in and switched by plausible.init()'s options at run time
 * (reads of the configuration `c` in src/tracker/plausible.js), tagged events and revenue always on.
 */
const WEB_FLAGS: Record<string, string> = {
  PLUMB_WEB: 'true',
  PLUMB_SCRIPT_ID: JSON.stringify(SCRIPT_ID_SLOT),
  PLUMB_HASH: 'c.hashBasedRouting',
  PLUMB_OUTBOUND_LINKS: 'c.outboundLinks',
  PLUMB_FILE_DOWNLOADS: 'c.fileDownloads',
  PLUMB_TAGGED_EVENTS: 'true',
  PLUMB_REVENUE: 'true',
  PLUMB_MANUAL: 'c.manual',
  PLUMB_LOCAL: 'c.captureOnLocalhost',
  PLUMB_EXCLUSIONS: 'false',
  PLUMB_COMPAT: 'false',
  PLUMB_PAGEVIEW_PROPS: 'false',
};

/** Per-site scripts kept at most (each is a few KB); past this the cache starts again. */
const MAX_SITE_SCRIPTS = 1000;

/** The per-site build with `id` in its slot, compressed and tagged like a built script. */
function siteScript(build: TrackerScript, id: string): TrackerScript {
  const source = build.source.split(SCRIPT_ID_SLOT).join(id);
  return { source, gzipped: gzipSync(source, { level: 9 }), etag: `"${createHash('sha256').update(source).digest('base64url').slice(0, 16)}"` };
}

export async function peerScriptRoutes(app: FastifyInstance): Promise<void> {
  // At most one build per combination of known extensions (2^10), so the cache is bounded by the list above.
  const plausible = new Map<string, Promise<TrackerScript>>();
  let umami: Promise<TrackerScript> | undefined;
  let web: Promise<TrackerScript> | undefined;
  const sites = new Map<string, TrackerScript>();
  const quiet = { logLevel: 'warn' } as const;

  app.get<{ Params: { file: string } }>('/js/:file', quiet, async (request, reply) => {
    const file = request.params.file;
    if (file === 'umami.js') {
      umami ??= buildScript('umami.js');
      return sendScript(request, reply, await umami);
    }
    // Served for any well-formed id, as /js/script.js is for any data-domain: its events name the site by the id,
    // and those of an id no site has are dropped like those of an unknown domain (no probing which ids exist).
    const site = PLAUSIBLE_SCRIPT_FILE_RE.exec(file);
    if (site) {
      const id = site[1]!;
      if (!web) {
        const building = buildScript('plausible.js', WEB_FLAGS);
        building.catch(() => (web = undefined));
        web = building;
      }
      let script = sites.get(id);
      if (!script) {
        script = siteScript(await web, id);
        if (sites.size >= MAX_SITE_SCRIPTS) sites.clear();
        sites.set(id, script);
      }
      return sendScript(request, reply, script);
    }
    const extensions = plausibleExtensions(file);
    if (!extensions) throw notFound('No such script');
    const key = extensions.join('.');
    let script = plausible.get(key);
    if (!script) {
      const define = {
        ...Object.fromEntries([...EXTENSIONS].map(([ext, flag]) => [flag, String(extensions.includes(ext))])),
        PLUMB_WEB: 'false',
        PLUMB_SCRIPT_ID: '""',
      };
      script = buildScript('plausible.js', define);
      script.catch(() => plausible.delete(key));
      plausible.set(key, script);
    }
    return sendScript(request, reply, await script);
  });
}
