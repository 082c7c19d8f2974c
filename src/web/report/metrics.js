// The headline metrics: name in words, format, and which way is better (for the colour of a change).

import { fmtDecimal, fmtDuration, fmtInt, fmtPercent, fmtValue } from '../format.js';

/** key -> { label, format(value, goal), better: 'up' | 'down', change: 'relative' | 'points' } */
export const METRICS = new Map([
  ['visitors', { label: 'Visitors', format: fmtInt, better: 'up', change: 'relative' }],
  ['visits', { label: 'Visits', format: fmtInt, better: 'up', change: 'relative' }],
  ['pageviews', { label: 'Pageviews', format: fmtInt, better: 'up', change: 'relative' }],
  ['views_per_visit', { label: 'Views per visit', format: fmtDecimal, better: 'up', change: 'relative' }],
  ['bounce_rate', { label: 'Bounce rate', format: fmtPercent, better: 'down', change: 'points' }],
  ['avg_duration', { label: 'Avg. visit duration', format: fmtDuration, better: 'up', change: 'relative' }],
  ['conversions', { label: 'Conversions', goalLabel: 'Completions', format: fmtInt, better: 'up', change: 'relative' }],
  ['unique_conversions', { label: 'Unique completions', format: fmtInt, better: 'up', change: 'relative' }],
  ['conversion_rate', { label: 'Conversion rate', format: fmtPercent, better: 'up', change: 'points' }],
  ['value', { label: 'Value', format: (v, goal) => fmtValue(v, goal?.currency ?? 'dollar'), better: 'up', change: 'relative' }],
]);

export const metricLabel = (key, goal) => (goal && METRICS.get(key)?.goalLabel) || METRICS.get(key)?.label || key;

/**
 * The change from `previous` to `current` in words and direction: { text, direction: 'up' | 'down' | 'flat',
 * good: true | false | null }. Rates change in percentage points, everything else relative to before.
 */
export function change(key, current, previous) {
  const m = METRICS.get(key);
  const cur = Number(current) || 0;
  const prev = Number(previous) || 0;
  let text;
  let delta;
  if (m.change === 'points') {
    delta = Math.round((cur - prev) * 1000) / 10;
    text = `${Math.abs(delta).toFixed(1)} pp`;
  } else if (prev === 0) {
    delta = cur === 0 ? 0 : 1;
    text = cur === 0 ? '0%' : 'new';
  } else {
    delta = Math.round(((cur - prev) / prev) * 100);
    text = `${Math.abs(delta)}%`;
  }
  const direction = delta > 0 ? 'up' : delta < 0 ? 'down' : 'flat';
  const good = direction === 'flat' ? null : (direction === 'up') === (m.better === 'up');
  return { text, direction, good };
}
