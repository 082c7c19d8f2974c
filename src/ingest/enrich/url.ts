// Page URLs as Plumb records them: a hostname with scheme, a readable normalised pathname, and the query.
// The rules are listed in docs/collection.md ("Normalisation and enrichment"); keep the two in step.

import { domainToUnicode } from 'node:url';
import { truncate } from './text.js';

export const MAX_HOSTNAME_LENGTH = 255;
export const MAX_PATHNAME_LENGTH = 2000;

export interface NormalizedPage {
  /** Scheme and host, e.g. `https://example.com`, `http://localhost:3000`. */
  hostname: string;
  /** Always starts with `/`; may end in a hash route such as `/#/settings`. */
  pathname: string;
  /** The page's query, plus the query of a hash route (after the real query's parameters). */
  query: URLSearchParams;
}

/** Normalises a page URL; undefined for anything that is not an absolute http(s) URL. */
export function normalizePage(url: string): NormalizedPage | undefined {
  const parsed = parseHttpUrl(url);
  if (!parsed) return undefined;
  const query = new URLSearchParams(parsed.search);
  let pathname = normalizePathname(parsed.pathname);
  const route = hashRoute(parsed.hash);
  if (route) {
    pathname = `${pathname}${route.prefix}${route.path}`; // `/#/settings`, `/app#/settings`
    for (const [key, value] of new URLSearchParams(route.query)) query.append(key, value);
  }
  return { hostname: originOf(parsed), pathname: capPathname(pathname), query };
}

/** Parses an absolute http: or https: URL; undefined for relative URLs, other schemes and garbage. */
export function parseHttpUrl(text: string): URL | undefined {
  let url: URL;
  try {
    url = new URL(text.trim());
  } catch {
    return undefined;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined;
  if (url.hostname === '') return undefined;
  return url;
}

/** `https://example.com` from a parsed URL: lower-case scheme and host, a non-default port kept. */
export function originOf(url: URL): string {
  const port = url.port === '' ? '' : `:${url.port}`;
  return truncate(`${url.protocol}//${displayHostname(url.hostname)}${port}`, MAX_HOSTNAME_LENGTH);
}

/**
 * A WHATWG hostname (lower-case, punycode) as shown in reports: internationalised labels in their Unicode form
 * (`xn--caf-dma.com` -> `café.com`) and without the trailing dot of a fully qualified name.
 */
export function displayHostname(hostname: string): string {
  let host = hostname.endsWith('.') ? hostname.slice(0, -1) : hostname;
  if (host.includes('xn--')) {
    const unicode = domainToUnicode(host);
    if (unicode !== '') host = unicode; // '' means invalid punycode: keep the ASCII form
  }
  return host;
}

/**
 * Normalises a URL path (as WHATWG `URL.pathname` gives it): percent-escapes decoded where they form valid
 * UTF-8, repeated slashes collapsed, a trailing slash removed except for the root. Not length-capped.
 */
export function normalizePathname(path: string): string {
  let result = decodePercentEscapes(path).replace(/\/{2,}/g, '/');
  if (!result.startsWith('/')) result = `/${result}`;
  if (result.length > 1 && result.endsWith('/')) result = result.slice(0, -1);
  return result;
}

/** Caps a normalised pathname, without leaving a partial percent-escape or half a character at the end. */
export function capPathname(pathname: string): string {
  if (pathname.length <= MAX_PATHNAME_LENGTH) return pathname;
  return truncate(pathname, MAX_PATHNAME_LENGTH).replace(/%[0-9A-F]?$/, '');
}

interface HashRoute {
  prefix: '#' | '#!';
  path: string;
  query: string;
}

// SPA routers in hash mode (Vue, Angular, React Router's HashRouter) put the route in `#/...` or `#!/...`.
// Any other fragment is an in-page anchor and is not part of the page's identity.
function hashRoute(hash: string): HashRoute | undefined {
  let prefix: HashRoute['prefix'];
  if (hash.startsWith('#/')) prefix = '#';
  else if (hash.startsWith('#!/')) prefix = '#!';
  else return undefined;
  const route = hash.slice(prefix.length);
  const q = route.indexOf('?');
  const path = normalizePathname(q === -1 ? route : route.slice(0, q));
  // `#/` is the router's home, the same page as the URL without a fragment.
  if (path === '/') return undefined;
  return { prefix, path, query: q === -1 ? '' : route.slice(q + 1) };
}

const ESCAPE_RUN = /(?:%[0-9A-Fa-f]{2})+/g;
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Decodes runs of percent-escapes byte sequence by byte sequence, keeping what is not valid UTF-8 encoded. */
function decodePercentEscapes(text: string): string {
  return text.replace(ESCAPE_RUN, (run) => {
    const bytes = Uint8Array.from(run.slice(1).split('%'), (hex) => Number.parseInt(hex, 16));
    let out = '';
    let i = 0;
    while (i < bytes.length) {
      const length = utf8SequenceLength(bytes[i]!);
      const sequence = bytes.subarray(i, i + Math.max(length, 1));
      const decoded = length > 0 && i + length <= bytes.length ? tryDecode(sequence) : undefined;
      if (decoded !== undefined && !mustStayEncoded(decoded)) out += decoded;
      else if (decoded !== undefined) out += encodeBytes(sequence);
      else out += encodeBytes(bytes.subarray(i, i + 1));
      i += decoded !== undefined ? length : 1;
    }
    return out;
  });
}

function utf8SequenceLength(lead: number): number {
  if (lead < 0x80) return 1;
  if (lead >= 0xc2 && lead <= 0xdf) return 2;
  if (lead >= 0xe0 && lead <= 0xef) return 3;
  if (lead >= 0xf0 && lead <= 0xf4) return 4;
  return 0; // a continuation byte or a byte that never starts UTF-8
}

function tryDecode(bytes: Uint8Array): string | undefined {
  try {
    return utf8.decode(bytes); // fatal: rejects overlong forms, surrogates and bad continuation bytes
  } catch {
    return undefined;
  }
}

// Decoding these would change what the path means (`%2F` is not a separator, `%25` not an escape) or put
// invisible characters into reports.
function mustStayEncoded(char: string): boolean {
  if (char === '%' || char === '/' || char === '?' || char === '#') return true;
  const code = char.codePointAt(0)!;
  return code < 0x20 || (code >= 0x7f && code <= 0x9f) || code === 0xfeff;
}

function encodeBytes(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  return out;
}
