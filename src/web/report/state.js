// The report's shared state, in one place: range, comparison, filters, the goal it is filtered to and the chart's
// choices. Every panel reads it with useReportState(); changes go through setReport(), which also writes the
// address, so a reload or a copied link shows the same view.

import { isRange, todayIn } from '../range.js';
import { createStore, useStore } from '../store.js';
import { PROP_FILTER, validFilter } from './properties.js';

export const COMPARISONS = [
  ['previous', 'Previous period'],
  ['year', 'Same period last year'],
  ['off', 'No comparison'],
];
export const INTERVALS = ['auto', 'hour', 'day', 'week', 'month'];
export const CHART_TYPES = ['area', 'bar'];

const DEFAULTS = { range: '7d', compare: 'previous', metric: 'visitors', interval: 'auto', chart: 'area' };
const MAX_FILTERS = 50;

function readFilters(text) {
  try {
    const parsed = JSON.parse(text || '[]');
    if (!Array.isArray(parsed)) return [];
    return parsed
      .filter(validFilter)
      .slice(0, MAX_FILTERS)
      .map(({ property, key, operator, value }) => (property === PROP_FILTER ? { property, key, operator, value } : { property, operator, value }));
  } catch {
    return [];
  }
}

/** The state the address describes (anything unknown in it falls back to the default). */
export function readAddress(timeZone, search = location.search) {
  const params = new URLSearchParams(search);
  const pick = (key, allowed) => (allowed.includes(params.get(key)) ? params.get(key) : DEFAULTS[key]);
  const today = todayIn(timeZone);
  return {
    range: isRange(params.get('range')) ? params.get('range') : DEFAULTS.range,
    from: params.get('from') || today,
    to: params.get('to') || today,
    compare: pick('compare', COMPARISONS.map(([k]) => k)),
    filters: readFilters(params.get('filters')),
    goal: params.get('goal') || '',
    // The custom property the goal's properties panel breaks down ('' : the most used one).
    propKey: (params.get('prop_key') || '').slice(0, 300),
    metric: params.get('metric') || DEFAULTS.metric,
    interval: pick('interval', INTERVALS),
    chart: pick('chart', CHART_TYPES),
  };
}

/** The address of a state: only what differs from the defaults. */
export function addressOf(state) {
  const params = new URLSearchParams();
  params.set('range', state.range);
  if (state.range === 'custom') {
    params.set('from', state.from);
    params.set('to', state.to);
  }
  if (state.filters.length) params.set('filters', JSON.stringify(state.filters));
  if (state.goal) params.set('goal', state.goal);
  if (state.goal && state.propKey) params.set('prop_key', state.propKey);
  for (const key of ['compare', 'metric', 'interval', 'chart']) if (state[key] !== DEFAULTS[key]) params.set(key, state[key]);
  return `${location.pathname}?${params}`;
}

export const report = createStore(readAddress('UTC'));

/** Reads the address once the site's time zone is known (custom ranges default to its today). */
export function startReportState(timeZone) {
  report.set(readAddress(timeZone));
  history.replaceState(null, '', addressOf(report.get()));
}

export function setReport(change) {
  report.set(change);
  history.replaceState(null, '', addressOf(report.get()));
}

export const useReportState = () => useStore(report);

/** Adds a filter (once) and keeps the rest. */
export function addFilter(filter) {
  setReport((s) =>
    s.filters.some((f) => f.property === filter.property && f.key === filter.key && f.operator === filter.operator && f.value === filter.value) ||
      s.filters.length >= MAX_FILTERS
      ? s
      : { ...s, filters: [...s.filters, filter] });
}

export function removeFilter(index) {
  setReport((s) => ({ ...s, filters: s.filters.filter((_, i) => i !== index) }));
}
