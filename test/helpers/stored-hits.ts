// Stored hits for EventStore tests: every attribute filled (so every column is written and read back), the
// largest visitor id, a new visit id and pathname per hit unless overridden.

import type { StoredHit } from '../../src/domain/hits.js';

let n = 0;
export function storedHit(siteId: string, at: string, overrides: Partial<StoredHit> = {}): StoredHit {
  n++;
  return {
    siteId,
    type: 'pageview',
    timestamp: new Date(at),
    visitorId: 18_446_744_073_709_551_615n, // 2^64 - 1: every bit of the UBIGINT must survive
    visitId: BigInt(n),
    hostname: 'https://example.com',
    pathname: `/p${n}`,
    referrerHostname: 'https://www.google.com',
    referrerPathname: '/search',
    referrerSource: 'Google',
    utmCampaign: 'c',
    utmContent: 'ct',
    utmMedium: 'm',
    utmSource: 's',
    utmTerm: 't',
    ref: 'r',
    keyword: 'k',
    browser: 'Firefox',
    operatingSystem: 'Linux',
    deviceType: 'Desktop',
    countryCode: 'DE',
    region: 'Berlin',
    state: 'BE',
    city: 'Berlin',
    eventName: '',
    value: 0,
    firstView: true,
    ...overrides,
  };
}
