// A site's report page (the owner's and the share page): totals, a time chart with milestones, breakdown tables
// whose rows add filters, and the live visitor count. Every number comes from /v1.

import { api, ApiError, listAll, query } from './api.js';
import { drawChart, chartSummary } from './chart.js';
import { field, fill, fmtDuration, fmtInt, fmtPercent, h, main, pageData, select } from './dom.js';
import { buckets, groupingFor, rangeDates, RANGES, todayIn } from './range.js';

const TOTALS = [
  ['visits', 'Visits', fmtInt],
  ['uniques', 'Unique pageviews', fmtInt],
  ['pageviews', 'Pageviews', fmtInt],
  ['avg_duration', 'Avg. visit duration', fmtDuration],
  ['bounce_rate', 'Bounce rate', fmtPercent],
];

/** [field, heading, column label, label of an empty value] */
const TABLES = [
  ['pathname', 'Top pages', 'Page', '(none)'],
  ['entry_page', 'Entry pages', 'Page', '(none)'],
  ['exit_page', 'Exit pages', 'Page', '(none)'],
  ['referrer_hostname', 'Referrers', 'Referrer', 'Direct / none'],
  ['referrer_source', 'Sources', 'Source', 'Direct / none'],
  ['utm_campaign', 'UTM campaigns', 'Campaign', '(no campaign)'],
  ['country_code', 'Countries', 'Country', 'Unknown'],
  ['browser', 'Browsers', 'Browser', 'Unknown'],
  ['operating_system', 'Operating systems', 'OS', 'Unknown'],
  ['device_type', 'Devices', 'Device', 'Unknown'],
];

const LIVE_EVERY_MS = 15_000;
const regionNames = typeof Intl.DisplayNames === 'function' ? new Intl.DisplayNames(['en'], { type: 'region' }) : undefined;

function display(fieldName, value) {
  if (fieldName === 'country_code' && value && regionNames) {
    try {
      return `${regionNames.of(value)} (${value})`;
    } catch {
      return value;
    }
  }
  return value;
}

/** Range and filters live in the address, so a reload or a shared link shows the same report. */
function readState(timeZone) {
  const params = new URLSearchParams(location.search);
  const range = RANGES.some(([k]) => k === params.get('range')) ? params.get('range') : '7d';
  let filters = [];
  try {
    const parsed = JSON.parse(params.get('filters') || '[]');
    if (Array.isArray(parsed)) filters = parsed.filter((f) => f && typeof f.property === 'string' && typeof f.value === 'string');
  } catch {
    filters = [];
  }
  const today = todayIn(timeZone);
  return { range, from: params.get('from') || today, to: params.get('to') || today, filters };
}

function writeState(state) {
  const params = new URLSearchParams();
  params.set('range', state.range);
  if (state.range === 'custom') {
    params.set('from', state.from);
    params.set('to', state.to);
  }
  if (state.filters.length) params.set('filters', JSON.stringify(state.filters));
  history.replaceState(null, '', `${location.pathname}?${params}`);
}

export async function reportPage() {
  const root = main();
  const siteId = pageData('site');
  const timeZone = pageData('timezone') || 'UTC';
  const owner = pageData('mode') === 'owner';
  const state = readState(timeZone);
  let generation = 0;
  let resize = () => {};

  // ---- the page's fixed parts
  const heading = h('h1', {}, pageData('siteName'));
  const links = owner
    ? h('p', { class: 'links' }, h('a', { href: `/sites/${siteId}/settings` }, 'Site settings'), ' · ', h('a', { href: `/sites/${siteId}/goals` }, 'Goals and milestones'))
    : h('p', { class: 'muted' }, 'A read-only report shared by the site owner.');
  const live = h('p', { class: 'live', role: 'status', 'aria-live': 'polite', 'data-live': '' }, 'Current visitors: …');
  const rangeSelect = select('range', RANGES, state.range, { 'aria-describedby': 'range-note' });
  const fromInput = h('input', { type: 'date', name: 'from', value: state.from });
  const toInput = h('input', { type: 'date', name: 'to', value: state.to });
  const custom = h('div', { class: 'row custom', hidden: state.range !== 'custom' }, field('From', fromInput), field('To', toInput),
    h('button', { type: 'button', onclick: () => apply() }, 'Apply'));
  const note = h('small', { id: 'range-note', class: 'muted' }, `Dates in the site's time zone, ${timeZone}.`);
  const toolbar = h('div', { class: 'toolbar' }, field('Date range', rangeSelect), custom, note);
  const filterBar = h('div', { class: 'filters', 'aria-live': 'polite' });
  const totals = h('dl', { class: 'totals' });
  const chartBox = h('div', { class: 'chart', role: 'img', 'aria-label': 'Visits and pageviews over the chosen range' });
  const chartNotes = h('div');
  const error = h('p', { class: 'status error', role: 'alert', hidden: true });
  const tables = h('div', { class: 'tables' });
  fill(root, heading, links, live, toolbar, filterBar, error, h('section', { 'aria-label': 'Totals' }, totals),
    h('section', { class: 'card' }, h('h2', {}, 'Over time'), chartBox, chartNotes), tables);

  rangeSelect.addEventListener('change', () => {
    custom.hidden = rangeSelect.value !== 'custom';
    if (rangeSelect.value !== 'custom') apply();
  });
  window.addEventListener('resize', () => resize());

  function apply() {
    state.range = rangeSelect.value;
    state.from = fromInput.value || state.from;
    state.to = toInput.value || state.to;
    void load();
  }

  function addFilter(property, value) {
    if (!state.filters.some((f) => f.property === property && f.value === value)) {
      state.filters.push({ property, operator: 'is', value });
    }
    void load();
  }

  function removeFilter(index) {
    state.filters.splice(index, 1);
    void load();
  }

  function renderFilters() {
    if (state.filters.length === 0) {
      fill(filterBar);
      return;
    }
    fill(
      filterBar,
      h('span', { class: 'muted' }, 'Filtered by: '),
      state.filters.map((f, i) =>
        h('span', { class: 'chip', 'data-filter': f.property },
          `${f.property.replace(/_/g, ' ')} is ${f.value}`,
          h('button', { type: 'button', class: 'link', 'aria-label': `Remove filter ${f.property} is ${f.value}`, onclick: () => removeFilter(i) }, '×')),
      ),
      h('button', { type: 'button', class: 'link', onclick: () => { state.filters = []; void load(); } }, 'Clear all'),
    );
  }

  const base = (range) => ({
    entity: 'pageview',
    entity_id: siteId,
    date_from: `${range.from} 00:00:00`,
    date_to: `${range.to} 23:59:59`,
    filters: state.filters.length ? JSON.stringify(state.filters) : undefined,
  });
  const aggregate = (params) => api('GET', `/v1/aggregations?${query(params)}`);

  async function load() {
    const mine = ++generation;
    const range = rangeDates(state.range, timeZone, { from: state.from, to: state.to });
    writeState(state);
    renderFilters();
    error.hidden = true;
    root.setAttribute('aria-busy', 'true');
    const grouping = groupingFor(range);
    const failed = (err) => {
      if (mine !== generation) return;
      error.hidden = false;
      error.textContent = err instanceof ApiError ? `Could not load the report: ${err.message}` : 'Could not load the report.';
    };
    const totalsJob = aggregate({ ...base(range), aggregates: TOTALS.map(([k]) => k).join(',') }).then((rows) => {
      if (mine !== generation) return;
      const row = rows[0] || {};
      fill(totals, TOTALS.map(([key, label, format]) =>
        h('div', { class: 'metric', 'data-metric': key }, h('dt', {}, label), h('dd', { 'data-value': '' }, format(row[key] ?? '0')))));
    }, failed);
    const milestonesJob = listAll(`/v1/sites/${siteId}/milestones`).catch(() => []);
    const chartJob = Promise.all([
      aggregate({ ...base(range), aggregates: 'visits,pageviews', date_grouping: grouping, sort_by: 'timestamp:asc' }),
      milestonesJob,
    ]).then(([rows, milestones]) => {
      if (mine !== generation) return;
      const inRange = milestones.filter((m) => m.milestone_date.slice(0, 10) >= range.from && m.milestone_date.slice(0, 10) <= range.to);
      resize = drawChart(chartBox, { rows, allBuckets: buckets(range, grouping), grouping, milestones: inRange });
      fill(chartNotes, chartSummary(inRange));
    }, failed);
    const tableJobs = TABLES.map(([fieldName, title, column, empty]) => {
      const section = tableSection(fieldName, title, column);
      return aggregate({ ...base(range), aggregates: 'visits,pageviews', field_grouping: fieldName, sort_by: 'visits:desc', limit: 10 }).then(
        (rows) => mine === generation && fillTable(section, fieldName, column, empty, rows),
        failed,
      );
    });
    await Promise.all([totalsJob, chartJob, ...tableJobs]);
    if (mine === generation) root.removeAttribute('aria-busy');
  }

  const sections = new Map();
  function tableSection(fieldName, title) {
    let section = sections.get(fieldName);
    if (!section) {
      section = h('section', { class: 'card table', 'data-table': fieldName }, h('h2', {}, title), h('div', { class: 'body' }, h('p', { class: 'muted' }, 'Loading…')));
      sections.set(fieldName, section);
      tables.append(section);
    }
    return section;
  }

  function fillTable(section, fieldName, column, empty, rows) {
    const body = section.querySelector('.body');
    if (rows.length === 0) {
      fill(body, h('p', { class: 'muted' }, 'No data for this range.'));
      return;
    }
    const filtered = state.filters.some((f) => f.property === fieldName);
    fill(
      body,
      h('table', {},
        h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, column), h('th', { scope: 'col', class: 'num' }, 'Visits'), h('th', { scope: 'col', class: 'num' }, 'Pageviews'))),
        h('tbody', {}, rows.map((row) => {
          const value = row[fieldName] ?? '';
          const label = value === '' ? empty : display(fieldName, value);
          // An empty value cannot be a filter (the API takes non-empty values only); neither can one already applied.
          const cell = value === '' || filtered
            ? h('span', {}, label)
            : h('button', { type: 'button', class: 'row-filter', title: `Show only ${label}`, 'aria-label': `Filter by ${column}: ${label}`, onclick: () => addFilter(fieldName, value) }, label);
          return h('tr', { 'data-value': value }, h('td', { class: 'label' }, cell), h('td', { class: 'num' }, fmtInt(row.visits)), h('td', { class: 'num' }, fmtInt(row.pageviews)));
        })),
      ),
    );
  }

  // ---- live visitor count, refreshed while the page is visible
  async function refreshLive() {
    if (!document.hidden) {
      try {
        const current = await api('GET', `/v1/current_visitors?${query({ site_id: siteId })}`);
        live.textContent = `Current visitors: ${current.total}`;
        live.dataset.total = String(current.total);
      } catch {
        live.textContent = 'Current visitors: unavailable';
      }
    }
    setTimeout(refreshLive, LIVE_EVERY_MS);
  }

  await Promise.all([load(), refreshLive()]);
}
