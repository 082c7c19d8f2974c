// Umami's collection endpoint, `POST /api/send`: `{type: "event", payload: {website, hostname, url, referrer, title,
// screen, language, name, data}}` from Umami's script, `umami.track(...)` and server-side senders, recorded as Plumb
// hits of the site given that Umami website id (or named by its Plumb site id). Answers 200 JSON, as Umami does.

import type { FastifyInstance } from 'fastify';
import { badRequest } from '../../domain/errors.js';
import type { IncomingHit } from '../../domain/hits.js';
import { readProps, UMAMI_REVENUE_KEYS, type PropList } from '../../domain/props.js';
import { TRACKING_CODE_RE } from '../../domain/ids.js';
import type { Ingest } from '../../ingest/ingest.js';
import type { SiteKeyDirectory } from '../../ingest/site-directory.js';
import type { Metrics } from '../../metrics.js';
import type { Site } from '../../store/types.js';
import { ANY_ORIGIN, BEACON_ROUTE } from '../security-headers.js';
import { busy, centsOf, countUnknownSite, field, jsonObject, keepBodiesAsText, PeerHitRefused, sendHits } from './peer-hits.js';

/** CORS preflights: answers to hits carry only ANY_ORIGIN (as the collector's). */
const PREFLIGHT = {
  ...ANY_ORIGIN,
  'access-control-allow-methods': 'POST, OPTIONS',
  // What Umami's current script sends beside Content-Type (src/tracker/index.ts of umami-software/umami): the
  // website id and hostname on every hit, and the cache token it got back. Plumb reads none of them, but a browser
  // sends nothing unless the preflight allows each one.
  'access-control-allow-headers': 'Content-Type, x-umami-website-id, x-umami-hostname, x-umami-cache',
  'access-control-max-age': '86400',
};

/** Types Umami's script sends that are not page or event hits: accepted and not recorded. */
const UNRECORDED_TYPES = new Set(['identify', 'performance', 'error']);

const MAX_NAME = 255;
const MAX_TEXT = 8192;

export interface UmamiHit {
  website: string;
  type: IncomingHit['type'];
  /**
   * The page: an absolute URL, or (no hostname given) a path of the site's main domain, `/` when the hit named no
   * url at all (a server-side event). See `pageOf`.
   */
  url: string | { path: string };
  referrer: string;
  name: string | undefined;
  value: number | undefined;
  /** `data` without its revenue keys, flattened as Umami flattens event data. */
  props: PropList;
}

const malformed = (message: string) => badRequest(`Malformed hit: ${message}`);

/** Resolves a path without a host; never stored (`pageOf` puts the site's domain in its place). */
const PATH_BASE = 'https://path.invalid/';

/**
 * The absolute page URL of a hit of `site`, and its referrer resolved against it; undefined when the hit gave only a
 * path and the site has no domain to put it on.
 */
export function pageOf(hit: UmamiHit, site: Pick<Site, 'domains'>): { url: string; referrer: string } | undefined {
  let url: URL;
  if (typeof hit.url === 'string') url = new URL(hit.url);
  else {
    const domain = site.domains[0];
    if (domain === undefined) return undefined;
    url = new URL(hit.url.path, `https://${domain}`);
  }
  let referrer = '';
  if (hit.referrer !== '') {
    try {
      referrer = new URL(hit.referrer, url).href;
    } catch {
      referrer = '';
    }
  }
  return { url: url.href, referrer };
}

function optionalText(payload: Record<string, unknown>, name: string): string | undefined {
  const v = field(payload, name);
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw malformed(`payload.${name} must be a string`);
  if (v.length > MAX_TEXT) throw malformed(`payload.${name} is longer than ${MAX_TEXT} characters`);
  return v;
}

/** One `/api/send` body: the hit it describes, `undefined` for a type that records nothing; a 400 when malformed. */
export function parseUmamiSend(body: unknown): UmamiHit | undefined {
  const o = jsonObject(body);
  if (!o) throw malformed('the body must be a JSON object');
  const type = field(o, 'type');
  if (typeof type !== 'string') throw malformed('type is required');
  if (UNRECORDED_TYPES.has(type)) return undefined;
  if (type !== 'event') throw malformed('type must be "event" or "identify"');
  const payload = field(o, 'payload');
  if (!payload || typeof payload !== 'object' || Array.isArray(payload)) throw malformed('payload must be an object');
  const p = payload as Record<string, unknown>;
  const website = optionalText(p, 'website');
  if (!website) throw malformed('payload.website is required');
  const hostname = optionalText(p, 'hostname')?.trim();
  // Umami's /api/send takes url and hostname as optional (its Node client sends neither with a named event):
  // older scripts send the path only, the page then being on `hostname` (https, as Umami assumes); with no
  // hostname either, the page is on the site's main domain (`pageOf`, once the site is known).
  const rawUrl = optionalText(p, 'url') || '/';
  let url: URL | { path: string };
  try {
    url = hostname ? new URL(rawUrl, `https://${hostname}`) : URL.canParse(rawUrl) ? new URL(rawUrl) : { path: new URL(rawUrl, PATH_BASE).href };
  } catch {
    throw malformed('payload.url must be a URL or a path');
  }
  if (url instanceof URL && url.protocol !== 'http:' && url.protocol !== 'https:') throw malformed('payload.url must be an http(s) URL');
  if (!(url instanceof URL) && !url.path.startsWith(PATH_BASE)) throw malformed('payload.url must be an http(s) URL or a path');
  const referrer = optionalText(p, 'referrer') ?? '';
  const name = optionalText(p, 'name');
  if (name !== undefined && (name.trim() === '' || name.length > MAX_NAME)) throw malformed(`payload.name must be 1 to ${MAX_NAME} characters`);
  // Umami's revenue reports read `revenue` (and `currency`) from the event's data; Plumb keeps the cents.
  const data = field(p, 'data');
  const revenue = data && typeof data === 'object' && !Array.isArray(data) ? field(data as Record<string, unknown>, 'revenue') : undefined;
  return {
    website: website.trim(),
    type: name === undefined ? 'pageview' : 'event',
    url: url instanceof URL ? url.href : { path: url.path.slice(PATH_BASE.length - 1) },
    referrer,
    name: name?.trim(),
    value: name === undefined ? undefined : centsOf(revenue),
    props: readProps(data, { skip: UMAMI_REVENUE_KEYS, flatten: true }),
  };
}

export interface UmamiSendDeps {
  ingest: Ingest;
  metrics: Metrics;
  siteKeys: SiteKeyDirectory;
}

export async function umamiSend(app: FastifyInstance, { ingest, metrics, siteKeys }: UmamiSendDeps): Promise<void> {
  keepBodiesAsText(app);
  const beacon = { ...BEACON_ROUTE, logLevel: 'warn' } as const;

  /** The site an Umami website id was given to, or (for new tags) the site with this Plumb id. */
  const siteOf = (website: string): Promise<Site | undefined> =>
    TRACKING_CODE_RE.test(website) ? ingest.sites.site(website) : siteKeys.siteByUmamiId(website);

  app.options('/api/send', beacon, async (_request, reply) => reply.code(204).headers(PREFLIGHT).send());

  app.post('/api/send', beacon, async (request, reply) => {
    void reply.headers(ANY_ORIGIN);
    let hit: UmamiHit | undefined;
    try {
      hit = parseUmamiSend(request.body);
    } catch (err) {
      metrics.hitsInvalid.inc();
      throw err;
    }
    if (hit) {
      const site = await siteOf(hit.website);
      const page = site && pageOf(hit, site);
      if (!site) countUnknownSite(metrics, hit.type);
      else if (!page) {
        metrics.hitsInvalid.inc();
        throw malformed('payload.hostname is required: the site has no domain to put a path-only url on (give the site its domain)');
      } else {
        const incoming: IncomingHit = {
          type: hit.type,
          siteId: site.id,
          timestamp: new Date(),
          url: page.url,
          referrer: page.referrer,
          userAgent: request.headers['user-agent'] ?? '',
          ip: request.ip,
          ...(hit.type === 'event' ? { eventName: hit.name!, value: hit.value ?? 0 } : {}),
          ...(hit.props.length > 0 ? { props: hit.props } : {}),
        };
        try {
          if ((await sendHits(ingest, metrics, [incoming])) === 'busy') return busy(reply);
        } catch (err) {
          if (err instanceof PeerHitRefused) throw malformed(err.message);
          throw err;
        }
      }
    }
    // Umami answers with a cache token its script sends back; Plumb keeps no session, so there is none to give.
    // Recorded and dropped hits get the same answer.
    return reply.header('cache-control', 'no-store').send({});
  });
}
