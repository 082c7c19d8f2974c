// Enricher end to end: full hits in, stored attributes out.

import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { HitAttributes, IncomingHit } from '../../../src/domain/hits.js';
import { Enricher, isBotUserAgent } from '../../../src/ingest/enrich/index.js';

const IPHONE =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

function hit(overrides: Partial<IncomingHit>): IncomingHit {
  return {
    type: 'pageview',
    siteId: 'ABCDEFGH',
    timestamp: new Date('2026-03-04T05:06:07Z'),
    url: 'https://example.com/',
    referrer: '',
    userAgent: CHROME_WINDOWS,
    ip: '8.8.8.8',
    ...overrides,
  };
}

describe('Enricher', () => {
  let enricher: Enricher;
  before(async () => {
    enricher = await Enricher.create();
  });

  it('enriches a pageview from a search engine on a phone', () => {
    const expected: HitAttributes = {
      hostname: 'https://example.com',
      pathname: '/blog/café',
      referrerHostname: 'https://www.google.co.uk',
      referrerPathname: '/',
      referrerSource: 'Google',
      utmCampaign: '',
      utmContent: '',
      utmMedium: '',
      utmSource: '',
      utmTerm: '',
      ref: '',
      keyword: '',
      browser: 'Safari',
      operatingSystem: 'iOS',
      deviceType: 'Mobile',
      countryCode: 'GB',
      region: 'England',
      state: 'England',
      city: 'London',
    };
    const actual = enricher.enrich(
      hit({
        url: 'https://Example.com/blog/caf%C3%A9/#comments',
        referrer: 'https://www.google.co.uk/',
        userAgent: IPHONE,
        ip: '::ffff:81.2.69.142',
      }),
    );
    assert.deepEqual(actual, expected);
  });

  it('enriches a campaign click in a hash-routed app on a desktop', () => {
    assert.deepEqual(
      enricher.enrich(
        hit({
          type: 'event',
          eventName: 'Signup',
          value: 1299,
          url:
            'http://localhost:3000/?utm_source=newsletter&utm_medium=email&utm_campaign=launch&ref=hn&kw=privacy' +
            '#/signup/',
          referrer: 'https://news.ycombinator.com/item?id=42',
        }),
      ),
      {
        hostname: 'http://localhost:3000',
        pathname: '/#/signup',
        referrerHostname: 'https://news.ycombinator.com',
        referrerPathname: '/item',
        referrerSource: 'Hacker News',
        utmCampaign: 'launch',
        utmContent: '',
        utmMedium: 'email',
        utmSource: 'newsletter',
        utmTerm: '',
        ref: 'hn',
        keyword: 'privacy',
        browser: 'Chrome',
        operatingSystem: 'Windows',
        deviceType: 'Desktop',
        countryCode: 'US',
        region: 'California',
        state: 'California',
        city: 'Mountain View',
      },
    );
  });

  it('drops same-site referrers, including the sameSiteHosts option', () => {
    const internal = enricher.enrich(hit({ url: 'https://www.example.com/b', referrer: 'https://example.com/a' }));
    assert.equal(internal?.referrerHostname, '');
    assert.equal(internal?.referrerSource, '');
    const other = hit({ url: 'https://example.com/b', referrer: 'https://shop.example.net/cart' });
    assert.equal(enricher.enrich(other)?.referrerSource, 'shop.example.net');
    assert.equal(enricher.enrich(other, { sameSiteHosts: ['shop.example.net'] })?.referrerSource, '');
  });

  it('gives a referrer seen before the same fields, per page host and whatever other sites sent before', () => {
    // Parsed referrers are remembered per (page host, referrer): a repeat, another page host and the sameSiteHosts
    // option must each get the answer a first parse gives.
    const from = (url: string, referrer: string, sameSiteHosts?: string[]) => {
      const a = enricher.enrich(hit({ url, referrer }), sameSiteHosts ? { sameSiteHosts } : {});
      return a && [a.referrerHostname, a.referrerPathname, a.referrerSource];
    };
    const shop = 'https://shop.example.net/cart/';
    assert.deepEqual(from('https://example.com/', shop), ['https://shop.example.net', '/cart', 'shop.example.net']);
    assert.deepEqual(from('https://example.com/x', shop), ['https://shop.example.net', '/cart', 'shop.example.net']);
    assert.deepEqual(from('https://example.com/', shop, ['shop.example.net']), ['', '', '']);
    assert.deepEqual(from('https://shop.example.net/', shop), ['', '', '']);
    assert.deepEqual(from('https://example.com/', shop), ['https://shop.example.net', '/cart', 'shop.example.net']);
    assert.deepEqual(from('https://www.shop.example.net/', shop), ['', '', '']);
  });

  it('leaves unknown places and devices empty or Unknown', () => {
    const attributes = enricher.enrich(hit({ ip: '10.1.2.3', userAgent: 'something/1.0' }));
    const { browser, operatingSystem, deviceType, countryCode, city } = attributes ?? {};
    assert.deepEqual(
      { browser, operatingSystem, deviceType, countryCode, city },
      { browser: 'Unknown', operatingSystem: 'Unknown', deviceType: 'Desktop', countryCode: '', city: '' },
    );
  });

  it('rejects hits whose page is not an absolute http(s) URL', () => {
    for (const url of ['', '/pricing', 'javascript:alert(1)', 'file:///index.html']) {
      assert.equal(enricher.enrich(hit({ url })), undefined, url);
    }
  });

  it('exports bot detection for the collector', () => {
    assert.equal(isBotUserAgent(''), true);
    assert.equal(isBotUserAgent(CHROME_WINDOWS), false);
  });
});
