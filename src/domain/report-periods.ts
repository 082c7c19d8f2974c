// The periods of email reports, as calendar days in a site's time zone: the last complete week (Monday to Sunday)
// or month before a moment, and the period before it for comparison. No I/O.

import { zoneOffsetMs } from './zoned-time.js';

export type ReportFrequency = 'weekly' | 'monthly';

export interface ReportPeriod {
  frequency: ReportFrequency;
  /** First and last day, inclusive, `YYYY-MM-DD` in the site's zone. */
  from: string;
  to: string;
  /** The period before, for the change figures. */
  previousFrom: string;
  previousTo: string;
}

const DAY_MS = 86_400_000;
const day = (text: string) => Date.parse(`${text}T00:00:00Z`);
const text = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const addDays = (date: string, n: number) => text(day(date) + n * DAY_MS);

/** The calendar day a moment falls on in a time zone. */
export function localDate(zone: string, at: Date): string {
  return text(at.getTime() + zoneOffsetMs(zone, at.getTime()));
}

/** The newest period that has ended, in the zone, at `now` (it ended at the zone's midnight starting today's week or month). */
export function lastCompletePeriod(frequency: ReportFrequency, zone: string, now: Date): ReportPeriod {
  const today = localDate(zone, now);
  if (frequency === 'weekly') {
    const weekday = (new Date(day(today)).getUTCDay() + 6) % 7; // Monday 0 … Sunday 6
    const from = addDays(today, -weekday - 7);
    return { frequency, from, to: addDays(from, 6), previousFrom: addDays(from, -7), previousTo: addDays(from, -1) };
  }
  const [y, m] = today.split('-').map(Number) as [number, number];
  const monthStart = (year: number, month: number) => text(Date.UTC(year, month - 1, 1));
  const from = monthStart(m === 1 ? y - 1 : y, m === 1 ? 12 : m - 1);
  const previousFrom = monthStart(m <= 2 ? y - 1 : y, m <= 2 ? m + 10 : m - 2);
  return { frequency, from, to: addDays(monthStart(y, m), -1), previousFrom, previousTo: addDays(from, -1) };
}

/** The day after a period's last day: from then on it is complete. */
export const dayAfter = (p: ReportPeriod) => addDays(p.to, 1);
