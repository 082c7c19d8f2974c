// Days and times as the peers' exports write them, read by one rule for the three importers: a day or time that is
// not on the calendar (2025-02-29, 2024-04-31, 24:00) is refused, where Date's own parser rolls it over to the next
// day and the row would be stored on a day it never had. The calendar is src/domain/time.ts's.

import { timestampMsAt } from '../../domain/time.js';

/**
 * `2024-03-01 12:34:56.789+00` and its relatives: a `T` or a space; seconds optional, a fraction (1 to 9 digits)
 * only after them; then `Z`, `UTC`, an offset `±HH`, `±HHMM` or `±HH:MM`, or nothing (UTC). Case does not matter.
 */
const TIME_RE = /^(\d{4}-\d\d-\d\d)[ T](\d\d):(\d\d)(?::(\d\d)(?:\.(\d{1,9}))?)?(?:(Z| ?UTC)|([+-])(\d\d)(?::?(\d\d))?)?$/i;

export interface ExportTime {
  /** The instant, ms since the epoch (a fraction kept to the millisecond). */
  ms: number;
  /** The offset the text was written with, minutes east of UTC (0 without one). */
  offsetMinutes: number;
}

/** A time of an export (TIME_RE), or undefined when malformed or not a real calendar time. */
export function parseExportTime(text: string): ExportTime | undefined {
  const m = TIME_RE.exec(text.trim());
  if (!m) return undefined;
  const [, day, hours, minutes, seconds = '00', fraction = '', , sign, oh, om = '00'] = m as unknown as string[];
  const local = timestampMsAt(`${day} ${hours}:${minutes}:${seconds}`, 0);
  if (local === undefined) return undefined;
  let offsetMinutes = 0;
  if (sign !== undefined) {
    if (Number(oh) > 23 || Number(om) > 59) return undefined;
    offsetMinutes = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  }
  return { ms: local + Number(fraction.slice(0, 3).padEnd(3, '0')) - offsetMinutes * 60_000, offsetMinutes };
}

/** A day `YYYY-MM-DD` of an export, as given, or undefined when it is not one of the calendar. */
export function parseExportDay(text: string): string | undefined {
  return /^\d{4}-\d\d-\d\d$/.test(text) && timestampMsAt(`${text} 00:00:00`, 0) !== undefined ? text : undefined;
}
