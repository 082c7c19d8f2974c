// "Export everything": a zip of CSV files for the report's range and filters: the totals, the chart's series,
// the goals, the pageview goals, and every breakdown (up to 1,000 rows each), asked of /v1 through the panels' own queries.

import { strToU8, zipSync } from 'fflate';
import { download, slug, toCsv } from '../download.js';
import { autoInterval } from '../range.js';
import { fetchSeries, fetchTotals, goalOf, metricKeys, periodOf } from './data.js';
import { BREAKDOWN_FIELDS, breakdownQuery, columnsOf, DETAILS_LIMIT } from './breakdowns.js';
import { fetchGoals } from './goals.js';

/** The files of the zip for a state: { name: csvText }. */
export async function exportFiles(site, state) {
  const period = periodOf(state, site.timeZone);
  const keys = metricKeys(site, state);
  const interval = autoInterval(period);
  const columnsFor = (field) => columnsOf(goalOf(site, state), field).map(([k]) => k);
  const [totals, series, goals, ...tables] = await Promise.all([
    fetchTotals(site, state, period),
    fetchSeries(site, state, period, interval),
    fetchGoals(site, state, period),
    ...BREAKDOWN_FIELDS.map(([field]) => breakdownQuery(site, state, period, field, { limit: DETAILS_LIMIT })),
  ]);
  const files = {
    'totals.csv': toCsv(['date_from', 'date_to', ...keys], [{ date_from: period.from, date_to: period.to, ...totals }]),
    [`chart-per-${interval}.csv`]: toCsv(['timestamp', ...keys], series.map((b) => ({ timestamp: b.start, ...b.values }))),
  };
  if (goals.rows.length) {
    files['goals.csv'] = toCsv(['goal', 'currency', 'conversions', 'unique_conversions', 'conversion_rate', 'value'],
      goals.rows.map((r) => ({ ...r, goal: r.goal.name, currency: r.goal.currency })));
  }
  // A goal not counted under the page's filters (see goals.js) has empty cells, not zeros.
  if (goals.pageRows.length) {
    files['page-goals.csv'] = toCsv(['goal', 'path', 'conversions', 'unique_conversions', 'conversion_rate'],
      goals.pageRows.map((r) => (r.unknown ? { goal: r.goal.name, path: r.goal.path } : { ...r, goal: r.goal.name, path: r.goal.path })));
  }
  BREAKDOWN_FIELDS.forEach(([field], i) => {
    files[`${field}.csv`] = toCsv([field, ...columnsFor(field)], tables[i]);
  });
  return files;
}

export async function exportEverything(site, state) {
  const period = periodOf(state, site.timeZone);
  const files = await exportFiles(site, state);
  const zip = zipSync(Object.fromEntries(Object.entries(files).map(([name, text]) => [name, strToU8(text)])), { level: 6 });
  download(`${slug(site.name)}-${period.from}-to-${period.to}.zip`, zip, 'application/zip');
}
