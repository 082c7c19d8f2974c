// A site's domains (the hostnames Plausible's `data-domain` and Events API name it by), its Umami website id and its
// Plausible script id: how they are written, checked and compared. No I/O.

import { domainToASCII, domainToUnicode } from 'node:url';
import { isUuid } from './ids.js';

/** At most this many domains per site (Plausible's comma-separated `data-domain` rarely names more than a few). */
export const MAX_SITE_DOMAINS = 20;
/** The longest `domain` field accepted, all domains and commas together. */
export const MAX_DOMAIN_FIELD = 2048;

const LABEL = /^(?!-)[a-z0-9-]{1,63}(?<!-)$/;

/**
 * One domain in its stored form, or undefined when it is not a hostname. Written as Plausible's site settings take
 * it: a scheme and a trailing slash are dropped, case does not matter, internationalised names may be given in
 * either form and are kept in their Unicode form (as collected hostnames are). `www.` is kept: it is part of the
 * name the site owner chose.
 */
export function normalizeDomain(text: string): string | undefined {
  let d = text.trim().toLowerCase();
  d = d.replace(/^https?:\/\//, '').replace(/\/$/, '').replace(/\.$/, '');
  if (d === '' || d.length > 253) return undefined;
  const ascii = domainToASCII(d);
  if (ascii === '' || ascii.length > 253) return undefined;
  if (!ascii.split('.').every((label) => LABEL.test(label))) return undefined;
  // A dotted quad is an address, not a domain anyone tags a script with.
  if (/^\d+(\.\d+){3}$/.test(ascii)) return undefined;
  return domainToUnicode(ascii);
}

export type DomainListResult = { domains: string[] } | { error: string };

/**
 * A comma-separated `domain` field as a list of distinct stored domains (empty text: none), or what is wrong with
 * it. Order is kept (the first is the site's main domain), duplicates are dropped.
 */
export function parseDomainList(text: string): DomainListResult {
  if (text.length > MAX_DOMAIN_FIELD) return { error: `is too long (maximum is ${MAX_DOMAIN_FIELD} characters)` };
  const parts = text.split(',').map((p) => p.trim());
  if (parts.length === 1 && parts[0] === '') return { domains: [] };
  const domains: string[] = [];
  for (const part of parts) {
    const domain = normalizeDomain(part);
    if (domain === undefined) return { error: `"${part.slice(0, 100)}" is not a hostname (for example example.com or blog.example.com)` };
    if (!domains.includes(domain)) domains.push(domain);
  }
  if (domains.length > MAX_SITE_DOMAINS) return { error: `names more than ${MAX_SITE_DOMAINS} domains` };
  return { domains };
}

/** The domains as the API writes them: comma-separated, or null when the site has none. */
export const formatDomainList = (domains: readonly string[]): string | null => (domains.length === 0 ? null : domains.join(','));

/**
 * The stored domains a hit's domain may match, in order: itself, then the same name with or without `www.`, so a
 * tag written `www.example.com` finds the site set up as `example.com` and the other way round.
 */
export function domainCandidates(text: string): string[] {
  const d = normalizeDomain(text);
  if (d === undefined) return [];
  return [d, d.startsWith('www.') ? d.slice(4) : `www.${d}`];
}

/** An Umami website id in its stored form (lower case), or undefined when it is not a UUID. */
export function normalizeUmamiWebsiteId(text: string): string | undefined {
  const t = text.trim().toLowerCase();
  return isUuid(t) ? t : undefined;
}

/**
 * A Plausible script id: what follows `pa-` in the name of the per-site script of Plausible's current snippet
 * (`/js/pa-<id>.js`; Plausible draws 21 characters of A-Z a-z 0-9 _ -). Case matters.
 */
const PLAUSIBLE_SCRIPT_ID = '[A-Za-z0-9_-]{4,64}';
const PLAUSIBLE_SCRIPT_ID_RE = new RegExp(`^${PLAUSIBLE_SCRIPT_ID}$`);

/** The per-site script's file name; group 1 is the id. */
export const PLAUSIBLE_SCRIPT_FILE_RE = new RegExp(`^pa-(${PLAUSIBLE_SCRIPT_ID})\\.js$`);

/** How the per-site script names its site in an event's `d`: `pa-<id>`; group 1 is the id. */
const PLAUSIBLE_SCRIPT_DOMAIN_RE = new RegExp(`^pa-(${PLAUSIBLE_SCRIPT_ID})$`);

/**
 * A Plausible script id in its stored form, or undefined when the text is none. Taken as the snippet shows it: the
 * id, `pa-<id>`, `pa-<id>.js` or the script's whole URL (`https://plausible.io/js/pa-<id>.js`).
 */
export function normalizePlausibleScriptId(text: string): string | undefined {
  const t = text.trim();
  const file = t.slice(t.lastIndexOf('/') + 1);
  const named = PLAUSIBLE_SCRIPT_FILE_RE.exec(file) ?? PLAUSIBLE_SCRIPT_DOMAIN_RE.exec(file);
  if (named) return named[1];
  // A bare id: a URL or a path must name the script file.
  return !t.includes('/') && PLAUSIBLE_SCRIPT_ID_RE.test(t) ? t : undefined;
}

/** The script id an event's domain names when it came from a per-site script (`pa-<id>`), else undefined. */
export function plausibleScriptIdOfDomain(domain: string): string | undefined {
  return PLAUSIBLE_SCRIPT_DOMAIN_RE.exec(domain.trim())?.[1];
}
