// The origins allowed to embed a site's share page in an iframe: checked and normalised into CSP source
// expressions (scheme, host, optional port; `*.` for any subdomain), and the `frame-ancestors` they make.

import { ValidationError } from './errors.js';

export const MAX_EMBED_ORIGINS = 20;
const MAX_ORIGIN_LENGTH = 200;
const WILDCARD = 'plumb-any-subdomain.';
/** What a normalised origin looks like: nothing in it can end a CSP directive or start another source. */
const SAFE = /^https?:\/\/(\*\.)?[a-z0-9.-]+(:\d{1,5})?$|^https?:\/\/\[[0-9a-f:.]+\](:\d{1,5})?$/;

/** One origin as the owner typed it ("https://blog.example.com/" too) in the form CSP wants, or why not. */
export function normaliseOrigin(text: string): { origin: string } | { problem: string } {
  const typed = text.trim();
  if (typed.length === 0 || typed.length > MAX_ORIGIN_LENGTH) return { problem: 'must be an address like https://blog.example.com' };
  const m = /^(https?):\/\/(\*\.)?(.*)$/i.exec(typed);
  if (!m) return { problem: `"${typed}" must start with https:// (or http://)` };
  let url: URL;
  try {
    url = new URL(`${m[1]!.toLowerCase()}://${m[2] ? WILDCARD : ''}${m[3]}`);
  } catch {
    return { problem: `"${typed}" is not a web address` };
  }
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    return { problem: `"${typed}" must be just the site's address, without a path (like https://blog.example.com)` };
  }
  const origin = url.origin.replace(`://${WILDCARD}`, '://*.');
  if (!SAFE.test(origin) || origin.includes(WILDCARD)) return { problem: `"${typed}" is not a web address` };
  return { origin };
}

/** The whole list from a request body: normalised, duplicates dropped, or a 400 naming what is wrong. */
export function parseEmbedOrigins(value: unknown): string[] {
  if (!Array.isArray(value)) throw ValidationError.of('embed_origins', 'must be a list of addresses');
  if (value.length > MAX_EMBED_ORIGINS) throw ValidationError.of('embed_origins', `may name at most ${MAX_EMBED_ORIGINS} addresses`);
  const origins: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string') throw ValidationError.of('embed_origins', 'must be a list of addresses');
    const result = normaliseOrigin(item);
    if ('problem' in result) throw ValidationError.of('embed_origins', result.problem);
    if (!origins.includes(result.origin)) origins.push(result.origin);
  }
  return origins;
}

/** The CSP directive: only the listed origins may frame the page; with none, nobody may. */
export function frameAncestors(origins: readonly string[]): string {
  return `frame-ancestors ${origins.length === 0 ? "'none'" : origins.join(' ')}`;
}
