// Timestamps and time zones as the API writes and reads them: UTC `YYYY-MM-DD HH:MM:SS`, IANA zone names.

const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const INSTANT_RE = /^(\d{4}-\d{2}-\d{2})[Tt](\d{2}:\d{2}:\d{2})(\.\d{1,9})?(?:[Zz]|([+\- ])(\d{2}):?(\d{2}))$/;
// IANA names are letters, digits, `_`, `-`, `+` and `/`; this rejects offsets like "+05:00" that Intl also accepts.
const ZONE_NAME_RE = /^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/;

const pad = (n: number, width = 2) => String(n).padStart(width, '0');

/** The UTC day (`YYYY-MM-DD`) of an instant: the day a visitor id belongs to (its salt's), and a day rollup's. */
export const utcDay = (at: Date | number): string => (typeof at === 'number' ? new Date(at) : at).toISOString().slice(0, 10);

/** The first instant (epoch ms) of the UTC day `day` (`YYYY-MM-DD`). */
export const utcDayStart = (day: string): number => Date.parse(`${day}T00:00:00Z`);

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

/** The number written in `width` ASCII digits of `text` from `at`; -1 if any is not a digit. */
function digits(text: string, at: number, width: number): number {
  let n = 0;
  for (let i = at; i < at + width; i++) {
    const d = text.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

const isLeapYear = (y: number) => y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0);
const MONTH_DAYS = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];
const DAY_MS = 86_400_000;

/**
 * Days from 1970-01-01 to a date of the proleptic Gregorian calendar (month 1-12), as Date.UTC counts them, any
 * year from 0 on: 400-year eras of 146,097 days, years counted from March so that February's leap day comes last.
 */
function daysSinceEpoch(y: number, mo: number, d: number): number {
  const year = mo <= 2 ? y - 1 : y;
  const era = Math.floor(year / 400);
  const yearOfEra = year - era * 400;
  const dayOfYear = Math.floor((153 * ((mo + 9) % 12) + 2) / 5) + d - 1;
  const dayOfEra = yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear;
  return era * 146_097 + dayOfEra - 719_468;
}

/**
 * The UTC time written as `YYYY-MM-DD HH:MM:SS` in the 19 characters of `text` from `at`, in ms since the epoch;
 * undefined when malformed or not a real calendar time (2024-02-30, 25:00:00). Read character by character and
 * counted in integers: imports read a million of these (the CLI's index from a file block, the reader from each
 * line), and a regular expression, six numbers and a Date checked part by part cost about 1 µs a line (Date.UTC
 * alone was a sixth of indexing a file).
 */
export function timestampMsAt(text: string, at: number): number | undefined {
  if (at < 0 || at + 19 > text.length) return undefined;
  const dash = 45, space = 32, colon = 58;
  if (text.charCodeAt(at + 4) !== dash || text.charCodeAt(at + 7) !== dash || text.charCodeAt(at + 10) !== space) return undefined;
  if (text.charCodeAt(at + 13) !== colon || text.charCodeAt(at + 16) !== colon) return undefined;
  const y = digits(text, at, 4), mo = digits(text, at + 5, 2), d = digits(text, at + 8, 2);
  const h = digits(text, at + 11, 2), mi = digits(text, at + 14, 2), s = digits(text, at + 17, 2);
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59) return undefined;
  if (d > (mo === 2 && isLeapYear(y) ? 29 : MONTH_DAYS[mo - 1]!)) return undefined;
  return daysSinceEpoch(y, mo, d) * DAY_MS + ((h * 60 + mi) * 60 + s) * 1000;
}

/** Parses `YYYY-MM-DD HH:MM:SS` as UTC (timestampMsAt of the whole text). */
export function parseTimestamp(text: string): Date | undefined {
  if (text.length !== 19) return undefined;
  const ms = timestampMsAt(text, 0);
  return ms === undefined ? undefined : new Date(ms);
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
