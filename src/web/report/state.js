// The report's shared state, in one place: range, comparison, filters, the goal it is filtered to, the funnel step
// it is filtered to, the chart's choices and the breakdown whose details are open. Every panel reads it with useReportState(); changes go through
// setReport(), which also writes the address, so a reload or a copied link shows the same view.

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

export const FUNNEL_OUTCOMES = ['continued', 'dropped'];
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The funnel filter the address names, { id, step, outcome }, or null (a funnel's steps are 1 to 8; whether the
 * funnel exists and has the step is the server's to say, a 400 the panels show).
 */
function readFunnel(params) {
  const id = params.get('funnel') ?? '';
  const step = Number(params.get('funnel_step'));
  const outcome = params.get('funnel_outcome');
  if (!UUID.test(id) || !Number.isInteger(step) || step < 1 || step > 8 || !FUNNEL_OUTCOMES.includes(outcome)) return null;
  return { id: id.toLowerCase(), step, outcome };
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
    // The visits of a funnel that continued or dropped at a step (docs/dashboard.md, "Funnels"), or null.
    funnel: readFunnel(params),
    // The custom property the goal's properties panel breaks down ('' : the most used one).
    propKey: (params.get('prop_key') || '').slice(0, 300),
    metric: params.get('metric') || DEFAULTS.metric,
    interval: pick('interval', INTERVALS),
    chart: pick('chart', CHART_TYPES),
    // The breakdown field whose details view is open ('' : none); breakdowns.js checks it is one it has.
    details: /^[a-z_]{1,40}$/.test(params.get('details') ?? '') ? params.get('details') : '',
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
  if (state.funnel) {
    params.set('funnel', state.funnel.id);
    params.set('funnel_step', String(state.funnel.step));
    params.set('funnel_outcome', state.funnel.outcome);
  }
  if (state.goal && state.propKey) params.set('prop_key', state.propKey);
  for (const key of ['compare', 'metric', 'interval', 'chart']) if (state[key] !== DEFAULTS[key]) params.set(key, state[key]);
  if (state.details) params.set('details', state.details);
  return `${location.pathname}?${params}`;
}

export const report = createStore(readAddress('UTC'));

let zone = 'UTC';

/** Reads the address once the site's time zone is known (custom ranges default to its today). */
export function startReportState(timeZone) {
  zone = timeZone;
  report.set(readAddress(timeZone));
  history.replaceState(null, '', addressOf(report.get()));
}

// Every change replaces the address but opening a details view, which adds one: Back then closes it, and the
// state follows whatever address Back or Forward lands on.
addEventListener('popstate', () => report.set(readAddress(zone)));

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

/** Filters and closes the details view in one step, so the address keeps the filter (Back then removes both). */
export function filterFromDetails(filter) {
  addFilter(filter);
  setReport((s) => ({ ...s, details: '' }));
}

// The address pushed when the details view opened: closing it while the address is still that one goes Back to
// where it was opened from; after anything else changed the address, closing replaces it instead.
let pushed = '';

/** Opens the details view of a breakdown field, as a new address (a copied link opens it; Back closes it). */
export function openDetails(field) {
  report.set((s) => ({ ...s, details: field }));
  pushed = addressOf(report.get());
  history.pushState({ details: field }, '', pushed);
}

export function closeDetails() {
  if (!report.get().details) return;
  if (pushed && `${location.pathname}${location.search}` === pushed) {
    pushed = '';
    history.back();
    return;
  }
  setReport((s) => ({ ...s, details: '' }));
}

export function removeFilter(index) {
  setReport((s) => ({ ...s, filters: s.filters.filter((_, i) => i !== index) }));
}

/** Filters the page to the visits of funnel `id` that continued after step `step` or dropped before the next one. */
export function setFunnelFilter(id, step, outcome) {
  setReport({ funnel: { id, step, outcome } });
}
