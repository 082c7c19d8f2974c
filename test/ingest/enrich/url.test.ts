// Page URL normalisation: hostnames with scheme, readable pathnames, hash routes, caps and rejections.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { normalizePage } from '../../../src/ingest/enrich/url.js';

describe('normalizePage', () => {
  const cases: Array<[string, string, string, string]> = [
    // [name, url, hostname, pathname]
    ['lower-cases scheme and host, keeps path case', 'HTTPS://Example.COM/About/Team', 'https://example.com', '/About/Team'],
    ['root path', 'https://example.com', 'https://example.com', '/'],
    ['root path with slash', 'https://example.com/', 'https://example.com', '/'],
    ['drops the default https port', 'https://example.com:443/a', 'https://example.com', '/a'],
    ['drops the default http port', 'http://example.com:80/a', 'http://example.com', '/a'],
    ['keeps a non-default port', 'http://localhost:3000/a', 'http://localhost:3000', '/a'],
    ['keeps https on port 80', 'https://example.com:80/', 'https://example.com:80', '/'],
    ['IPv6 host', 'http://[2001:DB8::1]:8080/x', 'http://[2001:db8::1]:8080', '/x'],
    ['IDN host in Unicode form', 'https://xn--caf-dma.example/menu', 'https://café.example', '/menu'],
    ['Unicode host stays Unicode', 'https://BÜCHER.de/', 'https://bücher.de', '/'],
    ['drops the trailing dot of a host', 'https://example.com./a', 'https://example.com', '/a'],
    ['drops credentials', 'https://user:secret@example.com/a', 'https://example.com', '/a'],
    ['removes a trailing slash', 'https://example.com/blog/', 'https://example.com', '/blog'],
    ['collapses repeated slashes', 'https://example.com//blog///post//', 'https://example.com', '/blog/post'],
    ['resolves dot segments', 'https://example.com/a/./b/../c', 'https://example.com', '/a/c'],
    ['drops the query', 'https://example.com/search?q=shoes', 'https://example.com', '/search'],
    ['decodes UTF-8 escapes', 'https://example.com/caf%C3%A9', 'https://example.com', '/café'],
    ['decodes lower-case escapes', 'https://example.com/caf%c3%a9', 'https://example.com', '/café'],
    ['decodes spaces', 'https://example.com/my%20page', 'https://example.com', '/my page'],
    ['raw Unicode path', 'https://example.com/日本語/', 'https://example.com', '/日本語'],
    ['emoji', 'https://example.com/%F0%9F%98%80', 'https://example.com', '/😀'],
    ['keeps an incomplete sequence encoded', 'https://example.com/x%E0%A4%A', 'https://example.com', '/x%E0%A4%A'],
    ['keeps invalid bytes, decodes valid ones', 'https://example.com/%FF%C3%A9%C3', 'https://example.com', '/%FFé%C3'],
    ['keeps an overlong encoding encoded', 'https://example.com/%C0%AF', 'https://example.com', '/%C0%AF'],
    ['upper-cases escapes it keeps', 'https://example.com/%ff', 'https://example.com', '/%FF'],
    ['keeps %2F, %3F, %23, %25 encoded', 'https://example.com/a%2fb%3Fc%23d%25e', 'https://example.com', '/a%2Fb%3Fc%23d%25e'],
    ['keeps controls and BOM encoded', 'https://example.com/a%00b%0Ac%EF%BB%BF', 'https://example.com', '/a%00b%0Ac%EF%BB%BF'],
    ['literal percent sign', 'https://example.com/100%', 'https://example.com', '/100%'],
    ['drops a plain fragment', 'https://example.com/docs#install', 'https://example.com', '/docs'],
    ['drops a fragment that is not a route', 'https://example.com/#settings', 'https://example.com', '/'],
    ['keeps a hash route', 'https://example.com/#/settings', 'https://example.com', '/#/settings'],
    ['keeps a hashbang route', 'https://example.com/#!/settings/profile', 'https://example.com', '/#!/settings/profile'],
    ['hash route under a path', 'https://example.com/app/#/users/42/', 'https://example.com', '/app#/users/42'],
    ['normalises a hash route', 'https://example.com/#//users//caf%C3%A9/', 'https://example.com', '/#/users/café'],
    ['an empty hash route is the page itself', 'https://example.com/app/#/', 'https://example.com', '/app'],
    ['drops a hash route query from the pathname', 'https://example.com/#/search?q=x', 'https://example.com', '/#/search'],
    ['trims surrounding whitespace', '  https://example.com/a  ', 'https://example.com', '/a'],
  ];
  for (const [name, url, hostname, pathname] of cases) {
    it(name, () => {
      const page = normalizePage(url);
      assert.ok(page, url);
      assert.equal(page.hostname, hostname);
      assert.equal(page.pathname, pathname);
    });
  }

  it('rejects anything but absolute http(s) URLs', () => {
    for (const url of [
      '', '/relative/path', 'example.com/a', '//example.com/a', 'javascript:alert(1)', 'ftp://example.com/a',
      'file:///etc/passwd', 'data:text/html,hi', 'mailto:a@example.com', 'chrome-extension://abc/x.html',
      'https://', 'https://exa mple.com/', 'http://[::1/', 'not a url',
    ]) {
      assert.equal(normalizePage(url), undefined, url);
    }
  });

  it('returns the query, with a hash route query after it', () => {
    assert.equal(normalizePage('https://example.com/a?utm_source=x&b=1#top')?.query.toString(), 'utm_source=x&b=1');
    assert.equal(
      normalizePage('https://example.com/?ref=a#/landing?utm_source=news&ref=b')?.query.toString(),
      'ref=a&utm_source=news&ref=b',
    );
    assert.equal(normalizePage('https://example.com/')?.query.toString(), '');
  });

  it('caps the pathname at 2,000 characters', () => {
    const page = normalizePage(`https://example.com/${'a'.repeat(5000)}`);
    assert.equal(page?.pathname, `/${'a'.repeat(1999)}`);
  });

  it('never ends a capped pathname in half a character or half an escape', () => {
    assert.equal(normalizePage(`https://example.com/${'a'.repeat(1998)}😀x`)?.pathname, `/${'a'.repeat(1998)}`);
    assert.equal(normalizePage(`https://example.com/${'a'.repeat(1997)}%FFx`)?.pathname, `/${'a'.repeat(1997)}`);
  });

  it('caps the hostname at 255 characters', () => {
    const label = 'a'.repeat(60);
    const host = [label, label, label, label, label].join('.');
    assert.equal(normalizePage(`https://${host}/`)?.hostname, `https://${host}`.slice(0, 255));
  });
});
