// Plausible's Events API, `POST /api/event`: what Plausible's script (and server-side senders) post, recorded as
// Plumb hits of the sites the event's domain(s) name (or, from the per-site script of Plausible's current snippet,
// its `pa-<id>`). Answers as Plausible does: 202 `ok`, 400 `{errors}`.

import type { FastifyInstance, FastifyRequest } from 'fastify';
import { MAX_ENGAGED_MS, type HitType, type IncomingHit } from '../../domain/hits.js';
import { ValidationError } from '../../domain/errors.js';
import { readProps, type PropList } from '../../domain/props.js';
import { plausibleScriptIdOfDomain } from '../../domain/site-domains.js';
import type { Ingest } from '../../ingest/ingest.js';
import type { SiteKeyDirectory } from '../../ingest/site-directory.js';
import type { Metrics } from '../../metrics.js';
import { ANY_ORIGIN, BEACON_ROUTE } from '../security-headers.js';
import { busy, centsOf, countUnknownSite, field, jsonObject, keepBodiesAsText, PeerHitRefused, sendHits } from './peer-hits.js';

/** CORS preflights: answers to hits carry only ANY_ORIGIN (as the collector's). */
const PREFLIGHT = {
  ...ANY_ORIGIN,
  'access-control-allow-methods': 'POST, OPTIONS',
  'access-control-allow-headers': 'Content-Type',
  'access-control-max-age': '86400',
};

const MAX_NAME = 255;
const MAX_URL = 8192;
const MAX_REFERRER = 4096;
const MAX_DOMAINS = 20;

/**
 * Engagement events (`n: "engagement"`, scroll depth `sd` in percent, engaged time `e` in ms since the page's
 * previous one) are stored as Plumb's engagement hits, never as pageviews or goals.
 */
const ENGAGEMENT = 'engagement';

/** A whole number from 0 to `max` from a number or numeric text, clamped into range as Plausible reads it; 0 otherwise. */
function clamped(v: unknown, max: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && /^\s*-?\d+(\.\d+)?\s*$/.test(v) ? Number(v) : NaN;
  return Number.isFinite(n) ? Math.min(max, Math.max(0, Math.round(n))) : 0;
}

export interface PlausibleEvent {
  name: string;
  url: string;
  domains: string[];
  referrer: string;
  /** Cents, for custom events with a revenue amount. */
  value: number | undefined;
  /** Custom properties (`m`, `meta`, `p` or `props`: the first given, as Plausible reads them), bounded. */
  props: PropList;
  /** Engagement events only: `sd` (0-100) and `e` (ms, up to MAX_ENGAGED_MS), clamped; 0 when unusable. */
  scrollDepth: number;
  engagedMs: number;
}

const text = (o: Record<string, unknown>, short: string, long: string): unknown => field(o, short) ?? field(o, long);

/**
 * Reads one Events API body (short keys as the script sends them, long ones as the API documents them), or throws
 * a ValidationError with Plausible's field names.
 */
export function parsePlausibleEvent(body: unknown): PlausibleEvent {
  const o = jsonObject(body);
  if (!o) throw ValidationError.of('request', 'Unable to parse request body as json');
  const errors: Record<string, string[]> = {};
  const fail = (name: string, message: string) => void Object.defineProperty(errors, name, { value: [message], enumerable: true });

  let name = text(o, 'n', 'name');
  // Plausible takes a whole number as a name too (its docs' 404 tracking once sent `plausible(404)`).
  if (typeof name === 'number' && Number.isSafeInteger(name)) name = String(name);
  if (typeof name !== 'string' || name.trim() === '') fail('event_name', "can't be blank");
  else if (name.length > MAX_NAME) fail('event_name', `should be at most ${MAX_NAME} character(s)`);

  const rawUrl = text(o, 'u', 'url');
  let url: URL | undefined;
  if (rawUrl === undefined || rawUrl === null) fail('url', 'is required');
  else if (typeof rawUrl !== 'string') fail('url', 'must be a string');
  else if (rawUrl.length > MAX_URL) fail('url', `should be at most ${MAX_URL} character(s)`);
  else {
    try {
      url = new URL(rawUrl.trim());
    } catch {
      url = undefined;
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) fail('url', 'must be an absolute http(s) URL');
  }

  const rawDomain = text(o, 'd', 'domain');
  let domains: string[] = [];
  if (rawDomain === undefined || rawDomain === null) domains = url ? [url.hostname] : [];
  else if (typeof rawDomain !== 'string') fail('domain', 'must be a string');
  else if (rawDomain.length > 2048) fail('domain', 'should be at most 2048 character(s)');
  else {
    domains = rawDomain.split(',').map((d) => d.trim()).filter((d) => d !== '');
    if (domains.length === 0) fail('domain', "can't be blank");
    else if (domains.length > MAX_DOMAINS) fail('domain', `names more than ${MAX_DOMAINS} domains`);
  }

  const rawReferrer = text(o, 'r', 'referrer');
  if (rawReferrer !== undefined && rawReferrer !== null && typeof rawReferrer !== 'string') fail('referrer', 'must be a string');
  else if (typeof rawReferrer === 'string' && rawReferrer.length > MAX_REFERRER) fail('referrer', `should be at most ${MAX_REFERRER} character(s)`);

  if (Object.keys(errors).length > 0) throw new ValidationError(errors);

  // Without hash mode the fragment is no part of the page, as in Plausible.
  const hash = text(o, 'h', 'hashMode');
  if (hash !== 1 && hash !== true && hash !== '1') url!.hash = '';
  // Revenue (`$` from the script, `revenue` from servers): `{amount, currency}`; an unusable amount is ignored, as
  // Plausible ignores it. Plumb keeps cents, whatever the currency.
  const revenue = text(o, '$', 'revenue');
  const amount = revenue && typeof revenue === 'object' && !Array.isArray(revenue) ? field(revenue as Record<string, unknown>, 'amount') : undefined;
  return {
    name: (name as string).trim(),
    url: url!.href,
    domains: [...new Set(domains)],
    referrer: typeof rawReferrer === 'string' ? rawReferrer : '',
    value: centsOf(amount),
    // Pageviews too (the pageview-props script); unusable props are dropped, never the event (docs/collection.md).
    props: readProps(['m', 'meta', 'p', 'props'].map((k) => field(o, k)).find((v) => v !== undefined && v !== null)),
    scrollDepth: clamped(field(o, 'sd'), 100),
    engagedMs: clamped(field(o, 'e'), MAX_ENGAGED_MS),
  };
}

export interface PlausibleEventsDeps {
  ingest: Ingest;
  metrics: Metrics;
  siteKeys: SiteKeyDirectory;
}

export async function plausibleEvents(app: FastifyInstance, { ingest, metrics, siteKeys }: PlausibleEventsDeps): Promise<void> {
  keepBodiesAsText(app);
  // Counted on /metrics like the collector's hits, not logged one by one; a beacon's security headers.
  const beacon = { ...BEACON_ROUTE, logLevel: 'warn' } as const;

  app.options('/api/event', beacon, async (_request, reply) => reply.code(204).headers(PREFLIGHT).send());

  app.post('/api/event', beacon, async (request: FastifyRequest, reply) => {
    void reply.headers(ANY_ORIGIN);
    let event: PlausibleEvent;
    try {
      event = parsePlausibleEvent(request.body);
    } catch (err) {
      if (err instanceof ValidationError) metrics.hitsInvalid.inc();
      throw err;
    }
    const type: HitType = event.name === 'pageview' ? 'pageview' : event.name === ENGAGEMENT ? 'engagement' : 'event';
    const hits: IncomingHit[] = [];
    const seen = new Set<string>();
    for (const domain of event.domains) {
      // The per-site script names its site `pa-<id>`; a site with that id wins over a domain of that spelling.
      const scriptId = plausibleScriptIdOfDomain(domain);
      const site = (scriptId !== undefined ? await siteKeys.siteByPlausibleScriptId(scriptId) : undefined) ?? (await siteKeys.siteByDomain(domain));
      if (!site) {
        countUnknownSite(metrics, type);
        continue;
      }
      // Two domains of one site (a rollup tag naming both) are one hit.
      if (seen.has(site.id)) continue;
      seen.add(site.id);
      hits.push({
        type,
        siteId: site.id,
        timestamp: new Date(),
        url: event.url,
        referrer: event.referrer,
        userAgent: request.headers['user-agent'] ?? '',
        ip: request.ip,
        ...(type === 'event' ? { eventName: event.name, value: event.value ?? 0 } : {}),
        ...(type === 'engagement' ? { scrollDepth: event.scrollDepth, engagedMs: event.engagedMs } : {}),
        ...(type !== 'engagement' && event.props.length > 0 ? { props: event.props } : {}),
      });
    }
    try {
      if (hits.length > 0 && (await sendHits(ingest, metrics, hits)) === 'busy') return busy(reply);
    } catch (err) {
      if (err instanceof PeerHitRefused) throw ValidationError.of('request', err.message);
      throw err;
    }
    // Dropped and recorded events get the same answer (Plausible's x-plausible-dropped header is not sent: a client
    // cannot probe which domains have a site).
    return reply.code(202).header('cache-control', 'no-store').type('text/plain; charset=utf-8').send('ok');
  });
}
