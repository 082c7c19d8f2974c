// The report's one way to ask /v1: a panel's query parameters for a period (range, filters, goal), the headline
// metrics as totals or per chart bucket, every goal's conversions in one request, and the hook that runs a panel's
// loader for the period and, when the viewer compares, once more for the comparison period through the same code.

import { api, ApiError, query } from '../api.js';
import { buckets, comparisonDates, nowIn, rangeDates } from '../range.js';
import { createContext, useContext, useEffect, useState } from '../ui.js';
import { PROP_FILTER } from './properties.js';
import { report, useReportState } from './state.js';

/** The site the report is about: { id, name, timeZone, owner, goals: [{ id, name, currency }], milestones }. */
export const SiteContext = createContext(null);
export const useSite = () => useContext(SiteContext);

/**
 * /v1/aggregations, or, when the page filters on custom properties or a funnel step (which SPEC.md has no words
 * for), the same report from the dashboard's own API with the property filters as `props` and the funnel's
 * `funnel`, `funnel_step` and `funnel_outcome`.
 */
export const aggregate = (params, signal) =>
  api('GET', `${params.props || params.funnel ? '/dashboard/api/report/aggregations' : '/v1/aggregations'}?${query(params)}`, undefined, { signal });

/**
 * What /v1/aggregations answers for each goal of the site with `params` (an event report's, without entity_name),
 * in one request whatever the number of goals: [{ id, name, rows }].
 */
export const aggregateGoals = (params, signal) => {
  const { entity_name: _name, ...rest } = params;
  return api('GET', `/dashboard/api/report/goal-aggregations?${query(rest)}`, undefined, { signal });
};

/**
 * Every pageview goal of the site with its numbers for a pageview report's parameters, in one request:
 * [{ id, name, path, regex, rows: [{ conversions, unique_conversions }] or null }].
 */
export const aggregatePageGoals = (params, signal) => {
  const { entity: _entity, ...rest } = params;
  return api('GET', `/dashboard/api/report/page-goal-aggregations?${query(rest)}`, undefined, { signal });
};

/**
 * A goal's completions by one custom property (the most used when `key` is '' or not carried): { keys, key, total,
 * rows: [{ value, conversions, unique_conversions }] }, with the page's range and filters.
 */
export const fetchGoalProperties = (site, period, filters, goalName, key, limit, signal) => {
  const { entity: _entity, ...params } = baseParams(site, period, filters, goalName);
  return api('GET', `/dashboard/api/report/goal-properties?${query({ ...params, key: key || undefined, limit })}`, undefined, { signal });
};

/** The calendar dates the state's range covers, in the site's time zone. */
export const periodOf = (state, timeZone) => rangeDates(state.range, timeZone, { from: state.from, to: state.to });

/** The goal the page is filtered to, or undefined. */
export const goalOf = (site, state) => (state.goal ? site.goals.find((g) => g.id === state.goal) : undefined);

/**
 * The parameters every query of the page shares: the site, the period as site-time days (the last one up to
 * `until` when the period is the part of a comparison that today has only reached so far), the filters and the
 * page's funnel filter (the one the page has: panels hand over their filters, the funnel filter is read here so
 * that every report of the page honours it);
 * `goalName` asks for that goal's conversions instead of pageviews ('' for every goal, aggregateGoals).
 */
export function baseParams(site, period, filters, goalName) {
  const funnel = report.get().funnel;
  const spec = filters.filter((f) => f.property !== PROP_FILTER);
  const props = filters.filter((f) => f.property === PROP_FILTER).map(({ key, operator, value }) => ({ key, operator, value }));
  const common = {
    date_from: `${period.from} 00:00:00`,
    date_to: `${period.to} ${period.until ?? '23:59:59'}`,
    filters: spec.length ? JSON.stringify(spec) : undefined,
    props: props.length ? JSON.stringify(props) : undefined,
    funnel: funnel ? funnel.id : undefined,
    funnel_step: funnel ? String(funnel.step) : undefined,
    funnel_outcome: funnel ? funnel.outcome : undefined,
  };
  return goalName === undefined
    ? { entity: 'pageview', entity_id: site.id, ...common }
    : { entity: 'event', site_id: site.id, entity_name: goalName, ...common };
}

const num = (v) => Number(v) || 0;
const round2 = (x) => Math.round(x * 100) / 100;

/** The numbers a row of /v1 answers gives, with the two the page derives from them (views per visit, conversion rate). */
function derive(row) {
  const out = { ...row };
  if ('pageviews' in out) out.views_per_visit = out.visits ? round2(out.pageviews / out.visits) : 0;
  if ('unique_conversions' in out) out.conversion_rate = out.visitors ? out.unique_conversions / out.visitors : 0;
  return out;
}

/**
 * The headline metrics for a period, as a Map from bucket start (`date_grouping` rows) or 'total' to numbers.
 * Without a goal: visitors, visits, pageviews, bounce rate, duration, and conversions summed over the site's goals.
 * With one: its conversions, unique conversions and value, and the visitors they are a rate of.
 */
async function metricRows(site, state, period, grouping, metric, signal) {
  const extra = grouping ? { date_grouping: grouping, sort_by: 'timestamp:asc' } : {};
  const out = new Map();
  const add = (rows, fields, sum = false) => {
    for (const r of rows) {
      const key = grouping ? r.timestamp : 'total';
      const row = out.get(key) ?? {};
      for (const f of fields) row[f] = (sum ? row[f] ?? 0 : 0) + num(r[f]);
      out.set(key, row);
    }
  };
  const goal = goalOf(site, state);
  if (goal) {
    const [events, pages] = await Promise.all([
      aggregate({ ...baseParams(site, period, state.filters, goal.name), aggregates: 'conversions,unique_conversions,value', ...extra }, signal),
      aggregate({ ...baseParams(site, period, state.filters), aggregates: 'visitors', ...extra }, signal),
    ]);
    add(events, ['conversions', 'unique_conversions', 'value']);
    add(pages, ['visitors']);
  } else {
    // Every goal's conversions in one request, asked only when they are shown.
    const wanted = site.goals.length > 0 && (metric === undefined || metric === 'conversions');
    const [pages, perGoal] = await Promise.all([
      aggregate({ ...baseParams(site, period, state.filters), aggregates: 'visitors,visits,pageviews,bounce_rate,avg_duration', ...extra }, signal),
      wanted ? aggregateGoals({ ...baseParams(site, period, state.filters, ''), aggregates: 'conversions', ...extra }, signal) : [],
    ]);
    add(pages, ['visitors', 'visits', 'pageviews', 'bounce_rate', 'avg_duration']);
    for (const { rows } of perGoal) add(rows, ['conversions'], true);
  }
  return out;
}

/** The metric names a row has, given the page's state. */
export function metricKeys(site, state) {
  if (goalOf(site, state)) return ['conversions', 'unique_conversions', 'conversion_rate', 'value'];
  return ['visitors', 'visits', 'pageviews', 'views_per_visit', 'bounce_rate', 'avg_duration', ...(site.goals.length ? ['conversions'] : [])];
}

const zeros = (site, state) => derive(Object.fromEntries([...metricKeys(site, state), 'visitors', 'visits', 'pageviews', 'unique_conversions'].map((k) => [k, 0])));

/** The headline totals of a period (`metric`: only what that one metric needs; `signal` drops the calls, api()). */
export async function fetchTotals(site, state, period, metric, signal) {
  const rows = await metricRows(site, state, period, undefined, metric, signal);
  return derive({ ...zeros(site, state), ...rows.get('total') });
}

/**
 * The headline metrics (or those `metric` needs) per chart bucket: [{ start, from, to, values }]. Hours, days and months are one query
 * (`date_grouping`); the API has no weeks, so a week is a query of its own over its days.
 */
export async function fetchSeries(site, state, period, interval, metric, signal) {
  const list = buckets(period, interval);
  if (interval === 'week') {
    // The last week of a comparison that today has only partly reached ends where the period does.
    const cut = (b) => (b.to === period.to && period.until ? { until: period.until } : {});
    const totals = await Promise.all(list.map((b) => fetchTotals(site, state, { from: b.from, to: b.to, ...cut(b) }, metric, signal)));
    return list.map((b, i) => ({ ...b, values: totals[i] }));
  }
  const rows = await metricRows(site, state, period, interval, metric, signal);
  return list.map((b) => ({ ...b, values: derive({ ...zeros(site, state), ...rows.get(b.start) }) }));
}

/**
 * Runs `load(period, signal)` for the report's period and, unless `compare` is false or the viewer compares with
 * nothing, for the comparison period too; again whenever `deps` change. The signal aborts when the answers are no
 * longer wanted (the state changed again): a year of weeks is a hundred calls, which the next range must not wait
 * behind.
 * Returns { loading, error, data, previous, period, previousPeriod }.
 */
export function usePanel(load, deps, { compare = true } = {}) {
  const site = useSite();
  const state = useReportState();
  const [result, setResult] = useState({ loading: true });
  useEffect(() => {
    let live = true;
    const calls = new AbortController();
    const period = periodOf(state, site.timeZone);
    const previousPeriod = compare ? comparisonDates(period, state.compare, state.range, nowIn(site.timeZone)) : null;
    setResult((r) => ({ ...r, loading: true }));
    Promise.all([load(period, calls.signal), previousPeriod ? load(previousPeriod, calls.signal) : null]).then(
      ([data, previous]) => live && setResult({ loading: false, data, previous, period, previousPeriod }),
      (error) => live && setResult({ loading: false, error }),
    );
    return () => {
      live = false;
      calls.abort();
    };
  }, [state.range, state.from, state.to, state.compare, state.goal, JSON.stringify(state.filters), JSON.stringify(state.funnel), compare, ...deps]);
  return result;
}

/** What went wrong, in words a site owner understands. */
export function explainError(err) {
  if (err instanceof ApiError) {
    if (err.status === 400 && err.body && err.body.errors && ['filters', 'props'].some((k) => Object.hasOwn(err.body.errors, k))) {
      return 'One of the filters cannot be used (a regular expression that does not read, perhaps). Change or remove it.';
    }
    if (err.status === 400 && err.body && err.body.errors && ['funnel', 'funnel_step', 'funnel_outcome'].some((k) => Object.hasOwn(err.body.errors, k))) {
      return 'The funnel filter no longer fits its funnel (deleted, or its steps changed). Remove it.';
    }
    if (err.status === 401) return 'Your session has ended. Log in again to see the report.';
    if (err.status === 404) return 'This site is gone, or no longer shared.';
    if (err.status === 429 || err.status === 503) return 'The server is busy. Try again in a moment.';
    return `The report could not be loaded (the server answered ${err.status}). Try again in a moment.`;
  }
  return 'The server could not be reached. Check the connection and reload the page.';
}
