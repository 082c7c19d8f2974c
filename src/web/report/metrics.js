// The headline metrics: name in words, what each counts, format, and which way is better (for the colour of a change).

import { fmtChange, fmtDecimal, fmtDuration, fmtInt, fmtPercent, fmtValue, roundTenth } from '../format.js';

/**
 * key -> { label, format(value, goal), better: 'up' | 'down', change: 'relative' | 'points', base }; `base` is the count
 * a rate or an average is over: with none of it in a period, the number is not 0 but unknown.
 */
export const METRICS = new Map([
  ['visitors', { label: 'Visitors', format: fmtInt, better: 'up', change: 'relative' }],
  ['visits', { label: 'Visits', format: fmtInt, better: 'up', change: 'relative' }],
  ['pageviews', { label: 'Pageviews', format: fmtInt, better: 'up', change: 'relative' }],
  ['views_per_visit', { label: 'Views per visit', format: fmtDecimal, better: 'up', change: 'relative', base: 'visits' }],
  ['bounce_rate', { label: 'Bounce rate', format: fmtPercent, better: 'down', change: 'points', base: 'visits' }],
  ['avg_duration', { label: 'Visit duration', format: fmtDuration, better: 'up', change: 'relative', base: 'visits' }],
  ['conversions', { label: 'Conversions', goalLabel: 'Completions', format: fmtInt, better: 'up', change: 'relative' }],
  ['unique_conversions', { label: 'Unique completions', format: fmtInt, better: 'up', change: 'relative' }],
  ['conversion_rate', { label: 'Conversion rate', format: fmtPercent, better: 'up', change: 'points', base: 'visitors' }],
  ['value', { label: 'Value', format: (v, goal) => fmtValue(v, goal?.currency ?? 'dollar'), better: 'up', change: 'relative' }],
]);

export const metricLabel = (key, goal) => (goal && METRICS.get(key)?.goalLabel) || METRICS.get(key)?.label || key;

/** What Visitors and Visits count (docs/reports.md, "Visitors"): they differ by definition, and a reader should know how. */
export const DEFINITIONS = new Map([
  ['visitors', 'Visitors: people per day. Someone who comes on two days counts twice; twice on one day, once.'],
  ['visits', 'Visits: sessions, each ending after 30 minutes without a page view. One visit across midnight UTC is two visitor-days.'],
  ['avg_duration', 'Visit duration: the average time from the first to the last page view of a visit.'],
]);

/**
 * The change from the `previous` row to the `current` one for a metric: { text, direction: 'up' | 'down' | 'flat' |
 * 'none', good: true | false | null }. Rates change in percentage points, everything else relative to before, both
 * with one decimal. Nothing before is "new" and a rate with nothing to be a share of is "no data": neither is good
 * or bad news (good is null), so neither is coloured.
 */
export function change(key, current, previous) {
  const m = METRICS.get(key);
  const cur = Number(current[key]) || 0;
  const prev = Number(previous[key]) || 0;
  if (m.base && (!Number(current[m.base]) || !Number(previous[m.base]))) return { text: 'no data', direction: 'none', good: null };
  let text;
  let delta;
  if (m.change === 'points') {
    delta = roundTenth((cur - prev) * 100);
    text = fmtChange(delta, true);
  } else if (prev === 0) {
    if (cur !== 0) return { text: 'new', direction: 'up', good: null };
    delta = 0;
    text = fmtChange(0);
  } else {
    delta = roundTenth(((cur - prev) / prev) * 100);
    text = fmtChange(delta);
  }
  const direction = delta > 0 ? 'up' : delta < 0 ? 'down' : 'flat';
  const good = direction === 'flat' ? null : (direction === 'up') === (m.better === 'up');
  return { text, direction, good };
}
