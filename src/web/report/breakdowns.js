// The breakdown panels: pages (top, entry, exit, hostnames), sources (referrers, sources, UTM source, medium,
// campaign, content, term), locations (countries, regions, cities) and devices (browsers, operating systems,
// device types). Each tab: its top rows with proportion bars, rows that filter the page when clicked, a details
// view of up to 1,000 rows with search and sort, and CSV of what it shows.

import { download, slug, toCsv } from '../download.js';
import { fmtInt } from '../format.js';
import { Field } from '../field.js';
import { html, useEffect, useRef, useState } from '../ui.js';
import { aggregate, baseParams, explainError, goalOf, usePanel, useSite } from './data.js';
import { ImportedGap } from './imported.js';
import { displayValue, PROPERTIES, propertyLabel } from './properties.js';
import { addFilter, useReportState } from './state.js';

export const GROUPS = [
  { title: 'Pages', tabs: [['pathname', 'Top pages'], ['entry_page', 'Entry pages'], ['exit_page', 'Exit pages'], ['hostname', 'Hostnames']] },
  {
    title: 'Sources',
    tabs: [['referrer_hostname', 'Referrers'], ['referrer_source', 'Sources'], ['utm_source', 'UTM source'], ['utm_medium', 'UTM medium'],
      ['utm_campaign', 'UTM campaign'], ['utm_content', 'UTM content'], ['utm_term', 'UTM term']],
  },
  { title: 'Locations', tabs: [['country_code', 'Countries'], ['region', 'Regions'], ['city', 'Cities']] },
  { title: 'Devices', tabs: [['browser', 'Browsers'], ['operating_system', 'Operating systems'], ['device_type', 'Devices']] },
];
export const BREAKDOWN_FIELDS = GROUPS.flatMap((g) => g.tabs);

const TOP = 10;
export const DETAILS_LIMIT = 1000;

/** The columns of a breakdown: a goal's completions, or visitors and pageviews. */
export function columnsOf(goal) {
  return goal
    ? [['conversions', 'Completions'], ['unique_conversions', 'Unique completions']]
    : [['visitors', 'Visitors'], ['pageviews', 'Pageviews']];
}

/** One breakdown query: `field` grouped, sorted, limited, with the page's filters (and an extra search filter). */
export function breakdownQuery(site, state, period, field, { limit = TOP, sort, extraFilters = [], signal } = {}) {
  const goal = goalOf(site, state);
  const columns = columnsOf(goal);
  return aggregate({
    ...baseParams(site, period, [...state.filters, ...extraFilters], goal?.name),
    aggregates: columns.map(([k]) => k).join(','),
    field_grouping: field,
    sort_by: sort ?? `${columns[0][0]}:desc`,
    limit,
  }, signal);
}

function csvName(site, field, period) {
  return `${slug(site.name)}-${field}-${period.from}-to-${period.to}.csv`;
}

function Rows({ field, rows, columns, label }) {
  const state = useReportState();
  const max = Math.max(1, ...rows.map((r) => Number(r[columns[0][0]]) || 0));
  const applied = state.filters.some((f) => f.property === field && f.operator === 'is');
  const filterable = PROPERTIES.has(field);
  return html`<table class="breakdown">
    <thead><tr><th scope="col">${label}</th>${columns.map(([, title]) => html`<th scope="col" class="num">${title}</th>`)}</tr></thead>
    <tbody>
      ${rows.map((row) => {
        const value = row[field] ?? '';
        const text = displayValue(field, value);
        const share = `${((Number(row[columns[0][0]]) || 0) / max) * 100}%`;
        // An empty value cannot be a filter (the API takes non-empty values only); neither can one already applied.
        const cell = value === '' || applied || !filterable
          ? html`<span class="bar-label">${text}</span>`
          : html`<button type="button" class="row-filter bar-label" title=${`Show only ${text}`} aria-label=${`Filter by ${propertyLabel(field)}: ${text}`}
              onClick=${() => addFilter({ property: field, operator: 'is', value })}>${text}</button>`;
        return html`<tr data-value=${value}>
          <td class="label"><span class="bar" style=${{ width: share }} aria-hidden="true"></span>${cell}</td>
          ${columns.map(([k]) => html`<td class="num" data-column=${k}>${fmtInt(row[k])}</td>`)}
        </tr>`;
      })}
    </tbody>
  </table>`;
}

function Details({ field, label, onClose }) {
  const site = useSite();
  const state = useReportState();
  const goal = goalOf(site, state);
  const columns = columnsOf(goal);
  const dialog = useRef(null);
  const [search, setSearch] = useState('');
  const [typed, setTyped] = useState('');
  const [sort, setSort] = useState(`${columns[0][0]}:desc`);
  // Properties that take "is like" are searched by the API (over everything, not only the rows shown); the others
  // (countries, browsers: few values) are searched among the rows.
  const serverSearch = PROPERTIES.get(field)?.operators.includes('is like');
  const { loading, error, data, period } = usePanel(
    (p, signal) => breakdownQuery(site, state, p, field, {
      limit: DETAILS_LIMIT, sort, extraFilters: serverSearch && search ? [{ property: field, operator: 'is like', value: search }] : [], signal,
    }),
    [field, sort, search],
    { compare: false },
  );
  useEffect(() => {
    dialog.current.showModal();
  }, []);
  useEffect(() => {
    const t = setTimeout(() => setSearch(typed.trim()), 250);
    return () => clearTimeout(t);
  }, [typed]);
  const needle = search.toLowerCase();
  const rows = (data ?? []).filter((r) => serverSearch || !needle || String(r[field]).toLowerCase().includes(needle) ||
    displayValue(field, r[field]).toLowerCase().includes(needle));
  const [sortKey, sortDir] = sort.split(':');
  const header = (key, title, numeric) => {
    const active = sortKey === key;
    const next = active && sortDir === 'desc' ? 'asc' : active ? 'desc' : numeric ? 'desc' : 'asc';
    return html`<th scope="col" class=${numeric ? 'num' : ''} aria-sort=${active ? (sortDir === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" class="link sort" onClick=${() => setSort(`${key}:${next}`)}>${title}${active ? (sortDir === 'asc' ? ' ▲' : ' ▼') : ''}</button></th>`;
  };
  return html`<dialog ref=${dialog} class="details" data-details=${field} aria-labelledby="details-h" onClose=${onClose}>
    <div class="details-head">
      <h2 id="details-h">${label}</h2>
      <button type="button" class="secondary small" onClick=${() => dialog.current.close()}>Close</button>
    </div>
    <div class="row wrap details-tools">
      <${Field} label="Search" class="grow"><input type="search" name="search" value=${typed} onInput=${(e) => setTyped(e.currentTarget.value)} autocomplete="off" />
      <//>
      <button type="button" class="secondary small" disabled=${!data}
        onClick=${() => download(csvName(site, field, period), toCsv([field, ...columns.map(([k]) => k)], rows), 'text/csv;charset=utf-8')}>Export CSV</button>
    </div>
    <p class="muted small" role="status" aria-live="polite">${loading ? 'Loading…' : `${rows.length} row${rows.length === 1 ? '' : 's'}${(data ?? []).length === DETAILS_LIMIT ? ` (the first ${DETAILS_LIMIT})` : ''}`}</p>
    ${error ? html`<p class="status error" role="alert">${explainError(error)}</p>` : null}
    <div class="details-body">
      <table class="breakdown">
        <thead><tr>${header(field, propertyLabel(field), false)}${columns.map(([k, title]) => header(k, title, true))}</tr></thead>
        <tbody>
          ${rows.map((row) => html`<tr data-value=${row[field] ?? ''}>
            <td class="label">${displayValue(field, row[field] ?? '')}</td>
            ${columns.map(([k]) => html`<td class="num" data-column=${k}>${fmtInt(row[k])}</td>`)}
          </tr>`)}
        </tbody>
      </table>
    </div>
  </dialog>`;
}

function BreakdownCard({ group }) {
  const site = useSite();
  const state = useReportState();
  const [tab, setTab] = useState(group.tabs[0][0]);
  const [details, setDetails] = useState(false);
  const label = group.tabs.find(([f]) => f === tab)[1];
  const goal = goalOf(site, state);
  const columns = columnsOf(goal);
  const { loading, error, data, period } = usePanel((p, signal) => breakdownQuery(site, state, p, tab, { signal }), [tab], { compare: false });
  const tabs = useRef(null);
  const onKey = (e) => {
    const i = group.tabs.findIndex(([f]) => f === tab);
    const next = e.key === 'ArrowRight' ? i + 1 : e.key === 'ArrowLeft' ? i - 1 : null;
    if (next === null) return;
    const n = (next + group.tabs.length) % group.tabs.length;
    setTab(group.tabs[n][0]);
    tabs.current?.querySelectorAll('[role=tab]')[n]?.focus();
  };
  const id = `bd-${slug(group.title)}`;
  return html`<section class="card breakdown-card" aria-labelledby=${`${id}-h`}>
    <div class="breakdown-head">
      <h2 id=${`${id}-h`}>${group.title}</h2>
      <div class="tabs" role="tablist" aria-label=${group.title} ref=${tabs} onKeyDown=${onKey}>
        ${group.tabs.map(([f, title]) => html`<button type="button" role="tab" id=${`${id}-${f}`} aria-selected=${f === tab ? 'true' : 'false'}
          aria-controls=${`${id}-panel`} tabindex=${f === tab ? '0' : '-1'} data-tab=${f} onClick=${() => setTab(f)}>${title}</button>`)}
      </div>
    </div>
    <div class="body" role="tabpanel" id=${`${id}-panel`} aria-labelledby=${`${id}-${tab}`} data-table=${tab} aria-busy=${loading ? 'true' : 'false'}>
      ${error ? html`<p class="status error" role="alert">${explainError(error)}</p>` : null}
      ${!data ? html`<p class="muted">Loading…</p>` : data.length === 0 ? html`<p class="muted">No data for this range.</p>`
        : html`<${Rows} field=${tab} rows=${data} columns=${columns} label=${propertyLabel(tab)} />`}
      <${ImportedGap} metrics=${columns.map(([k]) => k)} field=${tab} goal=${goal} />
    </div>
    <div class="row card-foot">
      <button type="button" class="secondary small" onClick=${() => setDetails(true)} aria-label=${`Details: ${label}`}>Details</button>
      <button type="button" class="secondary small" disabled=${!data} aria-label=${`Export ${label} as CSV`}
        onClick=${() => download(csvName(site, tab, period), toCsv([tab, ...columns.map(([k]) => k)], data), 'text/csv;charset=utf-8')}>CSV</button>
    </div>
    ${details ? html`<${Details} field=${tab} label=${label} onClose=${() => setDetails(false)} />` : null}
  </section>`;
}

export function Breakdowns() {
  return html`<div class="tables">${GROUPS.map((g) => html`<${BreakdownCard} key=${g.title} group=${g} />`)}</div>`;
}

