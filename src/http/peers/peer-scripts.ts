// Plausible's and Umami's script paths: Plumb's Plausible-compatible tracker at /js/script[.ext...].js (and the
// older /js/plausible[.ext...].js), one build per combination of extensions, and the Umami-compatible one at
// /js/umami.js. Built on first request, minified, cached, served compressed like /script.js.

import type { FastifyInstance } from 'fastify';
import { notFound } from '../../domain/errors.js';
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

export async function peerScriptRoutes(app: FastifyInstance): Promise<void> {
  // At most one build per combination of known extensions (2^10), so the cache is bounded by the list above.
  const plausible = new Map<string, Promise<TrackerScript>>();
  let umami: Promise<TrackerScript> | undefined;
  const quiet = { logLevel: 'warn' } as const;

  app.get<{ Params: { file: string } }>('/js/:file', quiet, async (request, reply) => {
    const file = request.params.file;
    if (file === 'umami.js') {
      umami ??= buildScript('umami.js');
      return sendScript(request, reply, await umami);
    }
    const extensions = plausibleExtensions(file);
    if (!extensions) throw notFound('No such script');
    const key = extensions.join('.');
    let script = plausible.get(key);
    if (!script) {
      const define = Object.fromEntries([...EXTENSIONS].map(([ext, flag]) => [flag, String(extensions.includes(ext))]));
      script = buildScript('plausible.js', define);
      script.catch(() => plausible.delete(key));
      plausible.set(key, script);
    }
    return sendScript(request, reply, await script);
  });
}
