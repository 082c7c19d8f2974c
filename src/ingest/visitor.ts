// The anonymous visitor id: a salted hash of what the request carries, never the IP or agent themselves.

import { createHash } from 'node:crypto';

/**
 * 64 bits of SHA-256 over (salt, site, ip, user agent[, hostname]). `hostname` is given only for multi-domain
 * sites reporting domains separately, so each domain sees its own visitors.
 */
export function visitorHash(salt: string, siteId: string, ip: string, userAgent: string, hostname?: string): bigint {
  const h = createHash('sha256');
  // NUL separators: no field can run into the next (ip "1.2.3.4" + ua "5x" vs ip "1.2.3.45" + ua "x").
  h.update(salt).update('\0').update(siteId).update('\0').update(ip).update('\0').update(userAgent);
  if (hostname !== undefined) h.update('\0').update(hostname);
  return h.digest().readBigUInt64BE(0);
}
