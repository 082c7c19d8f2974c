// User agents: browser, operating system and device type names as reports show them, and bot detection.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { isBotUserAgent, parseUserAgent } from '../../../src/ingest/enrich/user-agent.js';

const UA = {
  chromeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  firefoxWindows: 'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
  edgeWindows:
    'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
  safariMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
  chromeMac:
    'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  firefoxMac: 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0',
  firefoxLinux: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  firefoxUbuntu: 'Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  chromeLinux:
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  chromeOs:
    'Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  chromeAndroid:
    'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
  firefoxAndroid: 'Mozilla/5.0 (Android 14; Mobile; rv:133.0) Gecko/133.0 Firefox/133.0',
  webViewAndroid:
    'Mozilla/5.0 (Linux; Android 14; Pixel 8 Build/AP2A.240905.003; wv) AppleWebKit/537.36 (KHTML, like Gecko) Version/4.0 Chrome/131.0.6778.39 Mobile Safari/537.36',
  samsungAndroid:
    'Mozilla/5.0 (Linux; Android 14; SAMSUNG SM-S921B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36',
  safariIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
  chromeIphone:
    'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1',
  safariIpad:
    'Mozilla/5.0 (iPad; CPU OS 17_7 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.7 Mobile/15E148 Safari/604.1',
  chromeIpad:
    'Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1',
  galaxyTab:
    'Mozilla/5.0 (Linux; Android 13; SM-X710) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  smartTv:
    'Mozilla/5.0 (SMART-TV; LINUX; Tizen 6.0) AppleWebKit/537.36 (KHTML, like Gecko) 76.0.3809.146/6.0 TV Safari/537.36',
  googlebot:
    'Mozilla/5.0 (Linux; Android 6.0.1; Nexus 5X Build/MMB29P) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.6778.69 Mobile Safari/537.36 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  headlessChrome:
    'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
  curl: 'curl/8.5.0',
};

describe('parseUserAgent', () => {
  const cases: Array<[keyof typeof UA, string, string, string]> = [
    ['chromeWindows', 'Chrome', 'Windows', 'Desktop'],
    ['firefoxWindows', 'Firefox', 'Windows', 'Desktop'],
    ['edgeWindows', 'Edge', 'Windows', 'Desktop'],
    ['safariMac', 'Safari', 'macOS', 'Desktop'],
    ['chromeMac', 'Chrome', 'macOS', 'Desktop'],
    ['firefoxMac', 'Firefox', 'macOS', 'Desktop'],
    ['firefoxLinux', 'Firefox', 'Linux', 'Desktop'],
    ['firefoxUbuntu', 'Firefox', 'Linux', 'Desktop'],
    ['chromeLinux', 'Chrome', 'Linux', 'Desktop'],
    ['chromeOs', 'Chrome', 'Chrome OS', 'Desktop'],
    ['chromeAndroid', 'Chrome', 'Android', 'Mobile'],
    ['firefoxAndroid', 'Firefox', 'Android', 'Mobile'],
    ['webViewAndroid', 'Chrome', 'Android', 'Mobile'],
    ['samsungAndroid', 'Samsung Internet', 'Android', 'Mobile'],
    ['safariIphone', 'Safari', 'iOS', 'Mobile'],
    ['chromeIphone', 'Chrome', 'iOS', 'Mobile'],
    ['safariIpad', 'Safari', 'iOS', 'Tablet'],
    ['chromeIpad', 'Chrome', 'iOS', 'Tablet'],
    ['galaxyTab', 'Chrome', 'Android', 'Tablet'],
    ['smartTv', 'Safari', 'Tizen', 'Desktop'],
    ['curl', 'Unknown', 'Unknown', 'Desktop'],
  ];
  for (const [name, browser, operatingSystem, deviceType] of cases) {
    it(name, () => assert.deepEqual(parseUserAgent(UA[name]), { browser, operatingSystem, deviceType }));
  }

  it('is Unknown on Desktop for an empty or meaningless header', () => {
    for (const ua of ['', 'hello', '()']) {
      assert.deepEqual(parseUserAgent(ua), { browser: 'Unknown', operatingSystem: 'Unknown', deviceType: 'Desktop' });
    }
  });

  it('answers repeated and very long headers the same', () => {
    assert.deepEqual(parseUserAgent(UA.safariIphone), parseUserAgent(UA.safariIphone));
    const long = `${UA.chromeWindows} ${'x'.repeat(5000)}`;
    assert.deepEqual(parseUserAgent(long), { browser: 'Chrome', operatingSystem: 'Windows', deviceType: 'Desktop' });
  });
});

describe('isBotUserAgent', () => {
  it('knows crawlers, headless browsers and HTTP clients', () => {
    for (const name of ['googlebot', 'headlessChrome', 'curl'] as const) assert.equal(isBotUserAgent(UA[name]), true, name);
    for (const ua of ['python-requests/2.32.3', 'Wget/1.21.4', 'UptimeRobot/2.0']) assert.equal(isBotUserAgent(ua), true, ua);
  });

  it('treats an empty or blank header as a bot', () => {
    assert.equal(isBotUserAgent(''), true);
    assert.equal(isBotUserAgent('   '), true);
  });

  it('lets real browsers through', () => {
    for (const name of ['chromeWindows', 'safariIphone', 'firefoxLinux', 'galaxyTab', 'webViewAndroid'] as const) {
      assert.equal(isBotUserAgent(UA[name]), false, name);
      assert.equal(isBotUserAgent(UA[name]), false, `${name} (cached)`);
    }
  });
});
