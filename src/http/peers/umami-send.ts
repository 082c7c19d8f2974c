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
  // Umami's script sends its cache token back in this header; Plumb needs none but must let it through.
  'access-control-allow-headers': 'Content-Type, x-umami-cache',
  'access-control-max-age': '86400',
};

/** Types Umami's script sends that are not page or event hits: accepted and not recorded. */
const UNRECORDED_TYPES = new Set(['identify', 'performance', 'error']);

const MAX_NAME = 255;
const MAX_TEXT = 8192;

export interface UmamiHit {
  website: string;
  type: IncomingHit['type'];
  url: string;
  referrer: string;
  name: string | undefined;
  value: number | undefined;
  /** `data` without its revenue keys, flattened as Umami flattens event data. */
  props: PropList;
}

const malformed = (message: string) => badRequest(`Malformed hit: ${message}`);

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
  const hostname = optionalText(p, 'hostname');
  const rawUrl = optionalText(p, 'url');
  if (rawUrl === undefined || rawUrl === '') throw malformed('payload.url is required');
  // Older scripts send the path only: the page is on `hostname` (https, as Umami assumes).
  let url: URL;
  try {
    url = new URL(rawUrl, hostname ? `https://${hostname}` : undefined);
  } catch {
    throw malformed('payload.url must be a URL, or a path with payload.hostname');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw malformed('payload.url must be an http(s) URL');
  let referrer = optionalText(p, 'referrer') ?? '';
  if (referrer !== '') {
    try {
      referrer = new URL(referrer, url).href;
    } catch {
      referrer = '';
    }
  }
  const name = optionalText(p, 'name');
  if (name !== undefined && (name.trim() === '' || name.length > MAX_NAME)) throw malformed(`payload.name must be 1 to ${MAX_NAME} characters`);
  // Umami's revenue reports read `revenue` (and `currency`) from the event's data; Plumb keeps the cents.
  const data = field(p, 'data');
  const revenue = data && typeof data === 'object' && !Array.isArray(data) ? field(data as Record<string, unknown>, 'revenue') : undefined;
  return {
    website: website.trim(),
    type: name === undefined ? 'pageview' : 'event',
    url: url.href,
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
      if (!site) countUnknownSite(metrics, hit.type);
      else {
        const incoming: IncomingHit = {
          type: hit.type,
          siteId: site.id,
          timestamp: new Date(),
          url: hit.url,
          referrer: hit.referrer,
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
