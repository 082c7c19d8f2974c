// Timestamps and time zones as the API writes and reads them: UTC `YYYY-MM-DD HH:MM:SS`, IANA zone names.

const TIMESTAMP_RE = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT_RE = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d{1,9})?(?:[Zz]|([+\- ])(\d{2}):?(\d{2}))$/;
// IANA names are letters, digits, `_`, `-`, `+` and `/`; this rejects offsets like "+05:00" that Intl also accepts.
const ZONE_NAME_RE = /^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** A Date as the API's UTC timestamp string (seconds precision). */
export function formatTimestamp(date: Date): string {
  return (
    `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())}`
  );
}

/** A `YYYY-MM-DD` string as the API's timestamp at midnight. */
export function formatDateAsTimestamp(date: string): string {
  return `${date} 00:00:00`;
}

/** Parses `YYYY-MM-DD HH:MM:SS` as UTC; undefined when malformed or not a real calendar time. */
export function parseTimestamp(text: string): Date | undefined {
  const m = TIMESTAMP_RE.exec(text);
  if (!m) return undefined;
  const y = Number(m[1]), mo = Number(m[2]), d = Number(m[3]), h = Number(m[4]), mi = Number(m[5]), s = Number(m[6]);
  const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
  date.setUTCFullYear(y, mo - 1, d); // Date.UTC reads years 0 to 99 as 1900 to 1999
  // A time that does not exist (2024-02-30, 25:00:00) rolls over into another: its parts differ from the text's.
  // (Compared part by part, not by formatting the date again: imports parse a million of these.)
  const real =
    date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d &&
    date.getUTCHours() === h && date.getUTCMinutes() === mi && date.getUTCSeconds() === s;
  return real ? date : undefined;
}

/**
 * Parses an ISO 8601 instant with an explicit offset, as `Date.prototype.toISOString()` and most client libraries
 * write it: `YYYY-MM-DDTHH:MM:SS`, optional fraction (1 to 9 digits), then `Z`, `+HH:MM`, `-HH:MM`, `+HHMM` or
 * `-HHMM` (`T` and `Z` in either case). A `+` sent unencoded in a query string arrives as a space, so a space
 * before the offset reads as `+`. The fraction is dropped: the result is whole seconds. Undefined when malformed,
 * not a real calendar time, or the offset is over 23:59. `year` is the year as written (before the offset).
 */
export function parseInstant(text: string): { date: Date; year: number } | undefined {
  const m = INSTANT_RE.exec(text);
  if (!m) return undefined;
  const [, day, time, , sign, oh, om] = m as unknown as [string, string, string, string | undefined, string | undefined, string | undefined, string | undefined];
  const local = parseTimestamp(`${day} ${time}`);
  if (!local) return undefined;
  let offsetMinutes = 0;
  if (oh !== undefined && om !== undefined) {
    if (Number(oh) > 23 || Number(om) > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  }
  return { date: new Date(local.getTime() - offsetMinutes * 60_000), year: local.getUTCFullYear() };
}

/** True when `text` is a real `YYYY-MM-DD` calendar date. */
export function isCalendarDate(text: string): boolean {
  const m = DATE_RE.exec(text);
  if (!m) return false;
  return parseTimestamp(`${text} 00:00:00`) !== undefined;
}

const zoneCache = new Map<string, boolean>();

/** True when `name` is a time zone of the TZ database (as known to ICU, which DuckDB and Node share). */
export function isTimeZone(name: string): boolean {
  const cached = zoneCache.get(name);
  if (cached !== undefined) return cached;
  let ok = ZONE_NAME_RE.test(name) && name.length <= 64;
  if (ok) {
    try {
      new Intl.DateTimeFormat('en-US', { timeZone: name });
    } catch {
      ok = false;
    }
  }
  if (zoneCache.size < 10_000) zoneCache.set(name, ok);
  return ok;
}
