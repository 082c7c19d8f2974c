// A report's range cut at UTC midnights, for counting visitors a day at a time: every visitor id is one UTC day's
// (StoredHit), so no visitor has pageviews in two slices and the slices' counts add up to the range's. Hits are stored
// in time order, so a slice reads only its own row groups.

import { DAY_MS, type Binder } from '../dialect.js';
import type { ReportQuery } from '../query.js';

/**
 * Most slices a range is cut into: a longer range takes several UTC days a slice. Each slice is a part of the
 * statement that DuckDB plans and starts on its own, about half a millisecond even where it reads nothing (334 empty
 * days: 133 ms; docs/benchmarks.md, "How reports are planned").
 */
export const MAX_TIME_SLICES = 62;

/**
 * Where [from, until) is cut: its two ends and, between them, UTC midnights (every one, or every k-th where there are
 * more than MAX_TIME_SLICES - 1), ascending.
 */
export function utcDayCuts(from: Date, until: Date, max = MAX_TIME_SLICES): Date[] {
  const start = from.getTime();
  const end = until.getTime();
  const firstMidnight = Math.floor(start / DAY_MS) * DAY_MS + DAY_MS;
  const midnights = end > firstMidnight ? Math.ceil((end - firstMidnight) / DAY_MS) : 0;
  // Days per slice: enough that at most `max` slices remain (one more than the cuts between the ends).
  const step = Math.max(1, Math.ceil(midnights / (max - 1)));
  const cuts = [from];
  for (let i = 0; i < midnights; i += step) cuts.push(new Date(firstMidnight + i * DAY_MS));
  cuts.push(until);
  return cuts;
}

/**
 * Per slice of `q`'s range (utcDayCuts), the conditions keeping its hits `h`, bound through `b`, and where the hits'
 * visits `v` are joined, the visits overlapping it (a slice's pageview is of such a visit), so that the visits table
 * too is read where its zone maps allow.
 */
export function daySlices(q: ReportQuery, b: Binder, visitsJoined: boolean): string[][] {
  const cuts = utcDayCuts(q.from, q.until);
  return cuts.slice(1).map((cut, i) => {
    const start = b.value(cuts[i]!);
    const end = b.value(cut);
    return [`h.ts >= ${start}`, `h.ts < ${end}`, ...(visitsJoined ? [`v.started_at < ${end}`, `v.last_seen_at >= ${start}`] : [])];
  });
}
