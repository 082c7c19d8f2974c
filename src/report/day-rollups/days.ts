// Which UTC days of a report's range its day rollups may answer, the date bucket each falls in, the parts of the
// range left to the hits, and where a day's crossing visits have their hits in it. A UTC day is answered whole or
// not at all: it must lie inside the range and inside one of the report's date buckets (a bucket cut by the zone's
// midnight mid-day leaves that day to the hits); by hour, each of its hours inside one of the zone's hours.

import { utcDay, utcDayStart } from '../../domain/time.js';
import { zoneOffsetMs } from '../../domain/zoned-time.js';
import { DAY_MS } from '../dialect.js';
import type { DateGrouping } from '../fields.js';


/** The UTC days wholly inside `[fromMs, untilMs)`, as `[first, afterLast)` (equal when there are none). */
export function wholeDays(fromMs: number, untilMs: number): { first: string; afterLast: string } {
  const first = Math.ceil(fromMs / DAY_MS) * DAY_MS;
  const afterLast = Math.max(first, Math.floor(untilMs / DAY_MS) * DAY_MS);
  return { first: utcDay(first), afterLast: utcDay(afterLast) };
}

/** The start of the bucket holding local time `localMs`, as reports write a bucket's `timestamp`. */
function bucketStart(grouping: Exclude<DateGrouping, 'hour'>, localMs: number): string {
  const day = new Date(localMs).toISOString().slice(0, 10);
  if (grouping === 'day') return `${day} 00:00:00`;
  if (grouping === 'month') return `${day.slice(0, 7)}-01 00:00:00`;
  return `${day.slice(0, 4)}-01-01 00:00:00`;
}

/** The bucket UTC day `day` lies wholly in for `grouping` in `zone`, or undefined when one of its boundaries cuts it. */
export function bucketOfDay(day: string, grouping: Exclude<DateGrouping, 'hour'>, zone: string): string | undefined {
  const start = utcDayStart(day);
  const last = start + DAY_MS - 1;
  const first = bucketStart(grouping, start + zoneOffsetMs(zone, start));
  return first === bucketStart(grouping, last + zoneOffsetMs(zone, last)) ? first : undefined;
}

const HOUR_MS = 3_600_000;

/**
 * Whether UTC day `day`'s hours are the zone's hours one for one (each lies in one hour bucket, and no two in the
 * same): the zone's offset is of whole hours and stays so all day (a day its clocks change on is left to the hits).
 */
export function hoursAlign(day: string, zone: string): boolean {
  const start = utcDayStart(day);
  const offset = zoneOffsetMs(zone, start);
  if (offset % HOUR_MS !== 0) return false;
  for (let at = start; at < start + DAY_MS; at += HOUR_MS) {
    if (zoneOffsetMs(zone, at) !== offset || zoneOffsetMs(zone, at + HOUR_MS - 1) !== offset) return false;
  }
  return true;
}

/** The zone's hour bucket (`YYYY-MM-DD HH:00:00`, as reports write it) of the UTC hour starting at `utcHour` (the same form, UTC). */
export function localHourBucket(utcHour: string, zone: string): string {
  const utcMs = Date.parse(`${utcHour.slice(0, 10)}T${utcHour.slice(11, 13)}:00:00Z`);
  const local = new Date(utcMs + zoneOffsetMs(zone, utcMs)).toISOString();
  return `${local.slice(0, 10)} ${local.slice(11, 13)}:00:00`;
}

/**
 * `[fromMs, untilMs)` without the UTC days `covered` (sorted, each inside the range): the intervals the hits
 * answer, in order (days limitIntervals gave back are among them).
 */
export function uncoveredIntervals(fromMs: number, untilMs: number, covered: readonly string[]): [number, number][] {
  const out: [number, number][] = [];
  let at = fromMs;
  for (const day of covered) {
    const start = utcDayStart(day);
    if (start > at) out.push([at, start]);
    at = start + DAY_MS;
  }
  if (untilMs > at) out.push([at, untilMs]);
  return out;
}

/**
 * Covered days trimmed so that at most `maxIntervals` intervals are left to the hits (each is a query of its own):
 * while there are more, the shortest run of covered days between two intervals is given back to the hits.
 */
export function limitIntervals(fromMs: number, untilMs: number, covered: readonly string[], maxIntervals: number): string[] {
  let days = [...covered];
  for (;;) {
    const intervals = uncoveredIntervals(fromMs, untilMs, days);
    if (intervals.length <= maxIntervals) return days;
    // Runs of consecutive covered days that have an interval on both sides.
    let best: { from: number; to: number } | undefined;
    let runStart = 0;
    for (let i = 1; i <= days.length; i++) {
      if (i < days.length && utcDayStart(days[i]!) === utcDayStart(days[i - 1]!) + DAY_MS) continue;
      const inside = utcDayStart(days[runStart]!) > fromMs && utcDayStart(days[i - 1]!) + DAY_MS < untilMs;
      if (inside && (!best || i - runStart < best.to - best.from)) best = { from: runStart, to: i };
      runStart = i;
    }
    if (!best) return days;
    days = [...days.slice(0, best.from), ...days.slice(best.to)];
  }
}

/** A visit of a day with hits outside it (its first and last hit, epoch ms). */
export interface CrossingVisit {
  visitId: bigint;
  startedMs: number;
  lastSeenMs: number;
}

/**
 * Where the day `[start, end)`'s crossing visits have their hits in it: before `headUntil` (just after the last
 * hit of those that began before the day) and from `tailFrom` (the first hit of those that go on after it).
 */
export function crossingBounds(start: number, end: number, visits: readonly CrossingVisit[]): { headUntil: number; tailFrom: number } {
  let headUntil = start;
  let tailFrom = end;
  for (const v of visits) {
    if (v.startedMs < start) headUntil = Math.max(headUntil, Math.min(v.lastSeenMs + 1, end));
    if (v.lastSeenMs >= end) tailFrom = Math.min(tailFrom, Math.max(v.startedMs, start));
  }
  return { headUntil, tailFrom };
}

/** crossingBounds as at most two time windows of the day, none empty (one, the whole day, where they meet). */
export function crossingWindows(start: number, end: number, { headUntil, tailFrom }: { headUntil: number; tailFrom: number }): [Date, Date][] {
  if (headUntil >= tailFrom) return [[new Date(start), new Date(end)]];
  const windows: [Date, Date][] = [];
  if (headUntil > start) windows.push([new Date(start), new Date(headUntil)]);
  if (tailFrom < end) windows.push([new Date(tailFrom), new Date(end)]);
  return windows;
}

/** Time windows in order, those that meet or overlap as one (a day's tail and the next day's head meet at midnight). */
export function mergedWindows(windows: readonly (readonly [Date, Date])[]): [Date, Date][] {
  const out: [Date, Date][] = [];
  for (const [from, until] of [...windows].sort((a, b) => a[0].getTime() - b[0].getTime())) {
    const last = out.at(-1);
    if (last && from.getTime() <= last[1].getTime()) {
      if (until.getTime() > last[1].getTime()) last[1] = until;
    } else {
      out.push([from, until]);
    }
  }
  return out;
}
