// Referrer parsing: same-site detection, hostnames and pathnames, and known sources from Plumb's list.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseReferrer } from '../../../src/ingest/enrich/referrer.js';
import { knownReferrerSource } from '../../../src/ingest/enrich/referrer-sources.js';

const PAGE = 'https://example.com';
const none = { referrerHostname: '', referrerPathname: '', referrerSource: '' };

describe('parseReferrer', () => {
  it('is empty for no referrer, garbage and non-http(s) referrers', () => {
    for (const referrer of [
      '', '   ', 'garbage', '/relative', 'google.com', 'android-app://com.google.android.gm/', 'ftp://files.example.org/',
      'javascript:void(0)', 'about:blank', 'https://', 'http://exa mple.org/',
    ]) {
      assert.deepEqual(parseReferrer(referrer, PAGE), none, referrer);
    }
  });

  it('is empty for the same site, ignoring scheme, port, case and a leading www.', () => {
    for (const [referrer, page] of [
      ['https://example.com/pricing', PAGE],
      ['https://www.example.com/pricing', PAGE],
      ['http://EXAMPLE.com:8080/', PAGE],
      ['https://example.com/', 'https://www.example.com'],
      ['https://www.example.com/', 'https://www.example.com'],
      ['http://localhost:3000/a', 'http://localhost:3000'],
      ['https://xn--caf-dma.example/', 'https://café.example'],
    ]) {
      assert.deepEqual(parseReferrer(referrer!, page!), none, `${referrer} on ${page}`);
    }
  });

  it('counts sameSiteHosts as the same site, written with or without scheme, port or www.', () => {
    const hosts = ['shop.example.com', 'https://www.example.org', 'Example.NET:8443'];
    for (const referrer of [
      'https://shop.example.com/cart', 'https://www.shop.example.com/', 'http://example.org/', 'https://www.example.net/',
    ]) {
      assert.deepEqual(parseReferrer(referrer, PAGE, hosts), none, referrer);
    }
    assert.equal(parseReferrer('https://blog.example.com/', PAGE, hosts).referrerSource, 'blog.example.com');
  });

  it('treats subdomains of the page host as other sites', () => {
    assert.deepEqual(parseReferrer('https://blog.example.com/post/1?x=1#c', PAGE), {
      referrerHostname: 'https://blog.example.com',
      referrerPathname: '/post/1',
      referrerSource: 'blog.example.com',
    });
  });

  const cases: Array<[string, string, string, string]> = [
    // [referrer, referrerHostname, referrerPathname, referrerSource]
    ['https://www.google.com/', 'https://www.google.com', '/', 'Google'],
    ['https://www.google.co.uk/search?q=plumb', 'https://www.google.co.uk', '/search', 'Google'],
    ['https://www.google.de/', 'https://www.google.de', '/', 'Google'],
    ['https://www.google.com.au/', 'https://www.google.com.au', '/', 'Google'],
    ['https://google.com/', 'https://google.com', '/', 'Google'],
    ['https://news.google.com/articles/abc', 'https://news.google.com', '/articles/abc', 'Google News'],
    ['https://mail.google.com/mail/u/0/', 'https://mail.google.com', '/mail/u/0', 'Gmail'],
    ['https://gemini.google.com/app', 'https://gemini.google.com', '/app', 'Gemini'],
    ['https://www.bing.com/search?q=x', 'https://www.bing.com', '/search', 'Bing'],
    ['https://cn.bing.com/', 'https://cn.bing.com', '/', 'Bing'],
    ['https://duckduckgo.com/', 'https://duckduckgo.com', '/', 'DuckDuckGo'],
    ['https://search.yahoo.com/search', 'https://search.yahoo.com', '/search', 'Yahoo!'],
    ['https://uk.search.yahoo.com/', 'https://uk.search.yahoo.com', '/', 'Yahoo!'],
    ['https://search.yahoo.co.jp/search', 'https://search.yahoo.co.jp', '/search', 'Yahoo Japan'],
    ['https://mail.yahoo.com/d/folders/1', 'https://mail.yahoo.com', '/d/folders/1', 'Yahoo Mail'],
    ['https://yandex.ru/search/', 'https://yandex.ru', '/search', 'Yandex'],
    ['https://yandex.com.tr/', 'https://yandex.com.tr', '/', 'Yandex'],
    ['https://www.baidu.com/link?url=x', 'https://www.baidu.com', '/link', 'Baidu'],
    ['https://www.ecosia.org/', 'https://www.ecosia.org', '/', 'Ecosia'],
    ['https://search.brave.com/search', 'https://search.brave.com', '/search', 'Brave Search'],
    ['https://www.qwant.com/', 'https://www.qwant.com', '/', 'Qwant'],
    ['https://www.startpage.com/', 'https://www.startpage.com', '/', 'Startpage'],
    ['https://search.naver.com/search.naver', 'https://search.naver.com', '/search.naver', 'Naver'],
    ['https://search.seznam.cz/', 'https://search.seznam.cz', '/', 'Seznam'],
    ['https://kagi.com/search', 'https://kagi.com', '/search', 'Kagi'],
    ['https://t.co/AbCdEf123', 'https://t.co', '/AbCdEf123', 'Twitter'],
    ['https://x.com/someone/status/1', 'https://x.com', '/someone/status/1', 'Twitter'],
    ['https://mobile.twitter.com/', 'https://mobile.twitter.com', '/', 'Twitter'],
    ['https://m.facebook.com/', 'https://m.facebook.com', '/', 'Facebook'],
    ['https://l.facebook.com/l.php?u=x', 'https://l.facebook.com', '/l.php', 'Facebook'],
    ['https://lm.facebook.com/', 'https://lm.facebook.com', '/', 'Facebook'],
    ['https://l.instagram.com/', 'https://l.instagram.com', '/', 'Instagram'],
    ['https://www.linkedin.com/feed/', 'https://www.linkedin.com', '/feed', 'LinkedIn'],
    ['https://lnkd.in/abc', 'https://lnkd.in', '/abc', 'LinkedIn'],
    ['https://out.reddit.com/t3_x', 'https://out.reddit.com', '/t3_x', 'Reddit'],
    ['https://old.reddit.com/r/node/', 'https://old.reddit.com', '/r/node', 'Reddit'],
    ['https://www.pinterest.co.uk/pin/1/', 'https://www.pinterest.co.uk', '/pin/1', 'Pinterest'],
    ['https://www.youtube.com/', 'https://www.youtube.com', '/', 'YouTube'],
    ['https://news.ycombinator.com/item?id=1', 'https://news.ycombinator.com', '/item', 'Hacker News'],
    ['https://bsky.app/profile/a', 'https://bsky.app', '/profile/a', 'Bluesky'],
    ['https://www.threads.net/', 'https://www.threads.net', '/', 'Threads'],
    ['https://github.com/owner/repo', 'https://github.com', '/owner/repo', 'GitHub'],
    ['https://stackoverflow.com/questions/1', 'https://stackoverflow.com', '/questions/1', 'Stack Overflow'],
    ['https://dev.to/someone', 'https://dev.to', '/someone', 'Dev.to'],
    ['https://www.producthunt.com/posts/x', 'https://www.producthunt.com', '/posts/x', 'Product Hunt'],
    ['https://chatgpt.com/', 'https://chatgpt.com', '/', 'ChatGPT'],
    ['https://chat.openai.com/c/1', 'https://chat.openai.com', '/c/1', 'ChatGPT'],
    ['https://www.perplexity.ai/search', 'https://www.perplexity.ai', '/search', 'Perplexity'],
    ['https://claude.ai/chat/1', 'https://claude.ai', '/chat/1', 'Claude'],
    ['https://copilot.microsoft.com/', 'https://copilot.microsoft.com', '/', 'Copilot'],
    ['https://outlook.live.com/mail/0/', 'https://outlook.live.com', '/mail/0', 'Outlook'],
    // Unknown hosts: the host without www.
    ['https://www.some-blog.org/2024/01/post/', 'https://www.some-blog.org', '/2024/01/post', 'some-blog.org'],
    ['http://Blog.Example.ORG:8080//a//b/', 'http://blog.example.org:8080', '/a/b', 'blog.example.org:8080'],
    ['https://notgoogle.com/', 'https://notgoogle.com', '/', 'notgoogle.com'],
    ['https://google.evil.com/', 'https://google.evil.com', '/', 'google.evil.com'],
    ['https://wwwhatever.com/', 'https://wwwhatever.com', '/', 'wwwhatever.com'],
    ['https://xn--caf-dma.example/men%C3%BC#/route', 'https://café.example', '/menü', 'café.example'],
  ];
  for (const [referrer, referrerHostname, referrerPathname, referrerSource] of cases) {
    it(`parses ${referrer}`, () => {
      assert.deepEqual(parseReferrer(referrer, PAGE), { referrerHostname, referrerPathname, referrerSource });
    });
  }

  it('caps the referrer pathname at 2,000 characters', () => {
    assert.equal(parseReferrer(`https://other.org/${'b'.repeat(3000)}`, PAGE).referrerPathname.length, 2000);
  });
});

describe('knownReferrerSource', () => {
  it('prefers the longest matching suffix, exact keys over wildcards', () => {
    assert.equal(knownReferrerSource('mail.google.com'), 'Gmail');
    assert.equal(knownReferrerSource('mail.google.de'), 'Google');
    assert.equal(knownReferrerSource('docs.google.com'), 'Google');
    assert.equal(knownReferrerSource('yahoo.co.jp'), 'Yahoo Japan');
    assert.equal(knownReferrerSource('yahoo.co.uk'), 'Yahoo!');
  });

  it('matches whole labels only', () => {
    for (const host of ['facebook.com.evil.net', 'myfacebook.com', 'google', 'co.uk', 'com', '', 'tt.co']) {
      assert.equal(knownReferrerSource(host), undefined, host);
    }
  });
});
