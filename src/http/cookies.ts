// Reading the Cookie header and writing Set-Cookie values (the few cookies the dashboard needs; no plugin).

/** name -> value; the first of duplicate names wins, malformed pairs are skipped. */
export function parseCookies(header: string | undefined): Map<string, string> {
  const cookies = new Map<string, string>();
  if (!header) return cookies;
  for (const part of header.split(';')) {
    const eq = part.indexOf('=');
    if (eq <= 0) continue;
    const name = part.slice(0, eq).trim();
    let value = part.slice(eq + 1).trim();
    if (value.startsWith('"') && value.endsWith('"') && value.length >= 2) value = value.slice(1, -1);
    if (!cookies.has(name)) {
      try {
        cookies.set(name, decodeURIComponent(value));
      } catch {
        // a value that is not valid percent-encoding was not set by Plumb
      }
    }
  }
  return cookies;
}

export interface CookieOptions {
  /** Seconds; 0 deletes the cookie. Omitted: a browser-session cookie. */
  maxAge?: number;
  secure: boolean;
  sameSite: 'Strict' | 'Lax';
  path?: string;
}

/** Always HttpOnly: no Plumb cookie is for scripts to read. */
export function serializeCookie(name: string, value: string, o: CookieOptions): string {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${o.path ?? '/'}`, 'HttpOnly', `SameSite=${o.sameSite}`];
  if (o.maxAge !== undefined) parts.push(`Max-Age=${o.maxAge}`);
  if (o.secure) parts.push('Secure');
  return parts.join('; ');
}
