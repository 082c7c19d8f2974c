// A hit's referrer as Plumb records it: where the visitor came from, '' when from nowhere or from the same site.

import { knownReferrerSource } from './referrer-sources.js';
import { capPathname, displayHostname, normalizePathname, originOf, parseHttpUrl } from './url.js';
import { truncate } from './text.js';

export interface ReferrerFields {
  /** With scheme, like page hostnames: `https://www.google.com`. */
  referrerHostname: string;
  /** Normalised like page pathnames; hash routes are not kept and the query is dropped. */
  referrerPathname: string;
  /** A known source's display name (`Google`), else the referrer's host without `www.` (`blog.example.org`). */
  referrerSource: string;
}

const NO_REFERRER: ReferrerFields = Object.freeze({ referrerHostname: '', referrerPathname: '', referrerSource: '' });

/**
 * Parses a hit's referrer. Empty fields for no referrer, one that is not an absolute http(s) URL, and one from
 * the page's own site: the same host ignoring scheme, port and a leading `www.` on either side, or one of
 * `sameSiteHosts` (host names, optionally with scheme or port).
 */
export function parseReferrer(referrer: string, pageHostname: string, sameSiteHosts: string[] = []): ReferrerFields {
  if (referrer === '') return { ...NO_REFERRER };
  const url = parseHttpUrl(referrer);
  if (!url) return { ...NO_REFERRER };
  const host = displayHostname(url.hostname);
  const site = siteKey(host);
  if (site === siteKeyOf(pageHostname) || sameSiteHosts.some((h) => siteKeyOf(h) === site)) return { ...NO_REFERRER };
  const referrerHostname = originOf(url);
  const hostAndPort = referrerHostname.slice(url.protocol.length + 2);
  return {
    referrerHostname,
    referrerPathname: capPathname(normalizePathname(url.pathname)),
    referrerSource: knownReferrerSource(host) ?? truncate(stripWww(hostAndPort), 255),
  };
}

function stripWww(host: string): string {
  return host.startsWith('www.') ? host.slice(4) : host;
}

function siteKey(host: string): string {
  return stripWww(host);
}

/** The comparable site of `https://www.example.com:8080`, `example.com` or `WWW.Example.com.`: `example.com`. */
function siteKeyOf(hostOrOrigin: string): string {
  const text = hostOrOrigin.trim();
  const url = parseHttpUrl(/^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `http://${text}`);
  return url ? siteKey(displayHostname(url.hostname)) : '';
}
