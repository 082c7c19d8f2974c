// Browser, operating system and device type from a User-Agent header, and whether it is a bot.

import UAParser from 'ua-parser-js';
import { isbot } from 'isbot';
import { BoundedCache } from './cache.js';

export type DeviceType = 'Desktop' | 'Mobile' | 'Tablet';

export interface UserAgentFields {
  browser: string;
  operatingSystem: string;
  deviceType: DeviceType;
}

const UNKNOWN = 'Unknown';

// ua-parser-js names the same browser differently by platform or embedding; reports should count one
// browser once. Device type already says "mobile", and a WebView renders with the browser it is built on.
const BROWSER_NAMES: ReadonlyMap<string, string> = new Map([
  ['Mobile Safari', 'Safari'],
  ['Safari Mobile', 'Safari'],
  ['Mobile Chrome', 'Chrome'],
  ['Chrome Mobile', 'Chrome'],
  ['Chrome WebView', 'Chrome'],
  ['Chrome Headless', 'Chrome'],
  ['Mobile Firefox', 'Firefox'],
  ['Firefox Mobile', 'Firefox'],
  ['Opera Mobi', 'Opera'],
  ['Opera Touch', 'Opera'],
  ['Opera Tablet', 'Opera'],
]);

const OS_NAMES: ReadonlyMap<string, string> = new Map([
  ['Mac OS', 'macOS'],
  ['Chromium OS', 'Chrome OS'],
]);

// Distributions ua-parser-js reports by name; reports group them as Linux. Compared in lower case because
// ua-parser-js returns the spelling found in the header.
const LINUX_DISTRIBUTIONS = new Set([
  'linux', 'ubuntu', 'kubuntu', 'xubuntu', 'lubuntu', 'debian', 'fedora', 'mint', 'arch', 'manjaro', 'gentoo',
  'suse', 'opensuse', 'slackware', 'mandriva', 'mageia', 'centos', 'red hat', 'redhat', 'pclinuxos', 'zenwalk',
  'linpus', 'raspbian', 'deepin', 'elementary os', 'sabayon', 'linspire', 'vectorlinux', 'gnu',
]);

const cache = new BoundedCache<string, UserAgentFields>(2_000);
const botCache = new BoundedCache<string, boolean>(2_000);
// Longer headers are rare and not worth a cache slot; ua-parser-js itself only reads the first 500 characters.
const MAX_CACHED_LENGTH = 1_000;

/** Browser, operating system and device type of a User-Agent header; `Unknown`/`Desktop` when unrecognised. */
export function parseUserAgent(ua: string): UserAgentFields {
  const cached = cache.get(ua);
  if (cached) return cached;
  const result = new UAParser(ua).getResult();
  const fields: UserAgentFields = Object.freeze({
    browser: browserName(result.browser.name),
    operatingSystem: osName(result.os.name),
    deviceType: deviceType(result.device.type),
  });
  if (ua.length <= MAX_CACHED_LENGTH) cache.set(ua, fields);
  return fields;
}

/** True for crawlers, monitors, HTTP libraries and an empty or blank User-Agent. */
export function isBotUserAgent(ua: string): boolean {
  if (ua.trim() === '') return true;
  const cached = botCache.get(ua);
  if (cached !== undefined) return cached;
  const bot = isbot(ua);
  if (ua.length <= MAX_CACHED_LENGTH) botCache.set(ua, bot);
  return bot;
}

function browserName(name: string | undefined): string {
  if (!name) return UNKNOWN;
  return BROWSER_NAMES.get(name) ?? name;
}

function osName(name: string | undefined): string {
  if (!name) return UNKNOWN;
  if (LINUX_DISTRIBUTIONS.has(name.toLowerCase())) return 'Linux';
  return OS_NAMES.get(name) ?? name;
}

// Smart TVs, consoles, wearables and embedded devices are rare enough to count with desktops.
function deviceType(type: string | undefined): DeviceType {
  if (type === 'mobile') return 'Mobile';
  if (type === 'tablet') return 'Tablet';
  return 'Desktop';
}
