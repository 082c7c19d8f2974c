// The breakdown panels: pages (top, entry, exit, hostnames), sources (referrers, sources, UTM source, medium,
// campaign, content, term), locations (countries, regions, cities) and devices (browsers, operating systems,
// device types), each a row of tabs whose overflow collapses into a "More" menu (components/tabs.js). Each tab: its top rows with proportion bars, rows that filter the page when clicked, a details
// view of up to 1,000 rows (its own address) with search and sort whose rows filter too, and CSV of what it shows.
// Countries have their flag and a world map; regions and cities the country they are in. Rows without a value
// ("(no campaign)") come after the real ones, with their numbers unchanged.

import { download, slug, toCsv } from '../download.js';
import { fmtDuration, fmtInt } from '../format.js';
import { Field } from '../field.js';
import { html, useEffect, useRef, useState } from '../ui.js';
import { Tabs } from '../components/tabs.js';
import { aggregate, baseParams, explainError, goalOf, usePanel, useSite } from './data.js';
import { ImportedGap } from './imported.js';
import { countriesOfPlaces, CountriesOf, Flag, PLACE_FIELDS, placeText } from './place.js';
import { displayValue, isNoValue, PROPERTIES, propertyLabel } from './properties.js';
import { addFilter, closeDetails, filterFromDetails, openDetails, useReportState } from './state.js';
import { WorldMap } from './world-map.js';

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

/**
 * The columns of a breakdown: a goal's completions, or visitors and pageviews, and for pages how far they were
 * read (the tracker's engagement: mean deepest scroll and engaged time per visit to the page).
 */
export function columnsOf(goal, field) {
  if (goal) return [['conversions', 'Completions'], ['unique_conversions', 'Unique completions']];
  const counts = [['visitors', 'Visitors'], ['pageviews', 'Pageviews']];
  return field === 'pathname' ? [...counts, ['scroll_depth', 'Scroll depth'], ['time_on_page', 'Time on page']] : counts;
}

/** Engagement columns: a breakdown card shows them on wide screens only, the details view from 600 px (CSS). */
const ENGAGEMENT = new Set(['scroll_depth', 'time_on_page']);

/** A cell's text: a count, or an engagement mean ("—" where no page reported engagement). */
function cellText(key, value) {
  if (!ENGAGEMENT.has(key)) return fmtInt(value);
  if (value === null || value === undefined) return '—';
  return key === 'scroll_depth' ? `${Math.round(Number(value))}%` : fmtDuration(value);
}

function NumCell({ column, value }) {
  return html`<td class=${ENGAGEMENT.has(column) ? 'num engagement' : 'num'} data-column=${column}>${cellText(column, value)}</td>`;
}

/** One breakdown query: `field` grouped, sorted, limited, with the page's filters (and an extra search filter). */
export function breakdownQuery(site, state, period, field, { limit = TOP, sort, extraFilters = [], signal } = {}) {
  const goal = goalOf(site, state);
  const columns = columnsOf(goal, field);
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

/** The rows in /v1's order, those without a value after the rest (their order among themselves kept). */
export function noValueLast(field, rows) {
  return [...rows.filter((r) => !isNoValue(field, r[field])), ...rows.filter((r) => isNoValue(field, r[field]))];
}

/**
 * A row's label: the value in words (a country with its flag, a place with its country), on one line cut with an
 * ellipsis when too long (the whole of it in its title); a button that filters the page when the value can be one.
 */
function Label({ field, value, countries, canFilter, onPick }) {
  const text = displayValue(field, value);
  const codes = PLACE_FIELDS.has(field) && value !== '' ? countries?.get(value) : undefined;
  const whole = placeText(text, codes);
  const flag = field === 'country_code' ? html`<${Flag} code=${value} />` : null;
  // An empty value cannot be a filter (the API takes non-empty values only); neither can one already applied.
  const cell = value === '' || !canFilter
    ? html`<span class="bar-label" title=${whole}>${flag}${text}</span>`
    : html`<button type="button" class="row-filter bar-label" title=${`Show only ${whole}`} aria-label=${`Filter by ${propertyLabel(field)}: ${text}`}
        onClick=${() => onPick({ property: field, operator: 'is', value })}>${flag}${text}</button>`;
  return html`<span class="label-line">${cell}<${CountriesOf} codes=${codes} /></span>`;
}

/** Whether rows of `field` can filter the page: a property of SPEC.md not already filtered to one value. */
function canFilterBy(field, filters) {
  return PROPERTIES.has(field) && !filters.some((f) => f.property === field && f.operator === 'is');
}

function Rows({ field, rows, columns, label, countries }) {
  const state = useReportState();
  const shown = noValueLast(field, rows);
  // Bars are shares of the largest real value: a "(no campaign)" at 93% would flatten every campaign to a sliver.
  const real = rows.filter((r) => !isNoValue(field, r[field]));
  const max = Math.max(1, ...(real.length ? real : rows).map((r) => Number(r[columns[0][0]]) || 0));
  const canFilter = canFilterBy(field, state.filters);
  return html`<table class="breakdown">
    <thead><tr><th scope="col">${label}</th>${columns.map(([k, title]) => html`<th scope="col" class=${ENGAGEMENT.has(k) ? 'num engagement' : 'num'}>${title}</th>`)}</tr></thead>
    <tbody>
      ${shown.map((row) => {
        const value = row[field] ?? '';
        const none = isNoValue(field, value);
        const share = `${Math.min(100, ((Number(row[columns[0][0]]) || 0) / max) * 100)}%`;
        return html`<tr data-value=${value} class=${none ? 'no-value' : ''}>
          <td class="label">${none ? null : html`<span class="bar" style=${{ width: share }} aria-hidden="true"></span>`}<${Label} field=${field} value=${value}
            countries=${countries} canFilter=${canFilter} onPick=${addFilter} /></td>
          ${columns.map(([k]) => html`<${NumCell} column=${k} value=${row[k]} />`)}
        </tr>`;
      })}
    </tbody>
  </table>`;
}

function Details({ field, label }) {
  const site = useSite();
  const state = useReportState();
  const goal = goalOf(site, state);
  const columns = columnsOf(goal, field);
  const dialog = useRef(null);
  const [search, setSearch] = useState('');
  const [typed, setTyped] = useState('');
  const [sort, setSort] = useState(`${columns[0][0]}:desc`);
  // Properties that take "is like" are searched by the API (over everything, not only the rows shown); the others
  // (countries, browsers: few values) are searched among the rows.
  const serverSearch = PROPERTIES.get(field)?.operators.includes('is like');
  const extraFilters = serverSearch && search ? [{ property: field, operator: 'is like', value: search }] : [];
  const { loading, error, data: answer, period } = usePanel(
    (p, signal) => Promise.all([
      breakdownQuery(site, state, p, field, { limit: DETAILS_LIMIT, sort, extraFilters, signal }),
      PLACE_FIELDS.has(field) ? countriesOfPlaces(site, state, p, field, { goalName: goal?.name, extraFilters, signal }) : undefined,
    ]),
    [field, sort, search],
    { compare: false },
  );
  const [data, countries] = answer ?? [];
  const canFilter = canFilterBy(field, state.filters);
  useEffect(() => {
    dialog.current.showModal();
  }, []);
  useEffect(() => {
    const t = setTimeout(() => setSearch(typed.trim()), 250);
    return () => clearTimeout(t);
  }, [typed]);
  const needle = search.toLowerCase();
  const rows = noValueLast(field, (data ?? []).filter((r) => serverSearch || !needle || String(r[field]).toLowerCase().includes(needle) ||
    placeText(displayValue(field, r[field]), countries?.get(r[field])).toLowerCase().includes(needle)));
  const [sortKey, sortDir] = sort.split(':');
  const header = (key, title, numeric) => {
    const active = sortKey === key;
    const next = active && sortDir === 'desc' ? 'asc' : active ? 'desc' : numeric ? 'desc' : 'asc';
    return html`<th scope="col" class=${[numeric ? 'num' : '', ENGAGEMENT.has(key) ? 'engagement' : ''].join(' ').trim()} aria-sort=${active ? (sortDir === 'asc' ? 'ascending' : 'descending') : 'none'}>
      <button type="button" class="link sort" onClick=${() => setSort(`${key}:${next}`)}>${title}${active ? (sortDir === 'asc' ? ' ▲' : ' ▼') : ''}</button></th>`;
  };
  return html`<dialog ref=${dialog} class="details" data-details=${field} aria-labelledby="details-h" onClose=${closeDetails}>
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
          ${rows.map((row) => html`<tr data-value=${row[field] ?? ''} class=${isNoValue(field, row[field]) ? 'no-value' : ''}>
            <td class="label"><${Label} field=${field} value=${row[field] ?? ''} countries=${countries} canFilter=${canFilter} onPick=${filterFromDetails} /></td>
            ${columns.map(([k]) => html`<${NumCell} column=${k} value=${row[k]} />`)}
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
  // The details view the address names, when it is one of this card's tabs (opening it shows that tab too).
  const details = group.tabs.find(([f]) => f === state.details);
  useEffect(() => {
    if (details) setTab(details[0]);
  }, [details?.[0]]);
  const label = group.tabs.find(([f]) => f === tab)[1];
  const goal = goalOf(site, state);
  const columns = columnsOf(goal, tab);
  const { loading, error, data: answer, period } = usePanel(async (p, signal) => {
    // The map shades every country, not only the top ten of the list: one query for both, the list its first rows
    // (the API orders rows the same whatever the limit).
    const map = tab === 'country_code';
    const [rows, countries] = await Promise.all([
      breakdownQuery(site, state, p, tab, { limit: map ? DETAILS_LIMIT : TOP, signal }),
      PLACE_FIELDS.has(tab) ? countriesOfPlaces(site, state, p, tab, { goalName: goal?.name, signal }) : undefined,
    ]);
    return [map ? rows.slice(0, TOP) : rows, countries, map ? rows : undefined];
  }, [tab], { compare: false });
  const [data, countries, everyCountry] = answer ?? [];
  const id = `bd-${slug(group.title)}`;
  return html`<section class="card breakdown-card" aria-labelledby=${`${id}-h`}>
    <div class="breakdown-head">
      <h2 id=${`${id}-h`}>${group.title}</h2>
      <${Tabs} label=${group.title} tabs=${group.tabs} selected=${tab} onSelect=${setTab} idPrefix=${id} panelId=${`${id}-panel`} />
    </div>
    <div class="body" role="tabpanel" id=${`${id}-panel`} aria-labelledby=${`${id}-${tab}`} data-table=${tab} aria-busy=${loading ? 'true' : 'false'}>
      ${error ? html`<p class="status error" role="alert">${explainError(error)}</p>` : null}
      ${everyCountry?.length ? html`<${WorldMap} rows=${everyCountry} metric=${columns[0][0]} metricLabel=${columns[0][1]}
        onPick=${canFilterBy('country_code', state.filters) ? (code) => addFilter({ property: 'country_code', operator: 'is', value: code }) : undefined} />` : null}
      ${!data ? html`<p class="muted">Loading…</p>` : data.length === 0 ? html`<p class="muted">No data for this range.</p>`
        : html`<${Rows} field=${tab} rows=${data} columns=${columns} label=${propertyLabel(tab)} countries=${countries} />`}
      <${ImportedGap} metrics=${columns.map(([k]) => k)} field=${tab} goal=${goal} />
    </div>
    <div class="row card-foot">
      <button type="button" class="secondary small" onClick=${() => openDetails(tab)} aria-label=${`Details: ${label}`}>Details</button>
      <button type="button" class="secondary small" disabled=${!data} aria-label=${`Export ${label} as CSV`}
        onClick=${() => download(csvName(site, tab, period), toCsv([tab, ...columns.map(([k]) => k)], data), 'text/csv;charset=utf-8')}>CSV</button>
    </div>
    ${details ? html`<${Details} key=${details[0]} field=${details[0]} label=${details[1]} />` : null}
  </section>`;
}

export function Breakdowns() {
  return html`<div class="tables">${GROUPS.map((g) => html`<${BreakdownCard} key=${g.title} group=${g} />`)}</div>`;
}

