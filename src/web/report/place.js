// Where a row's visitors are: a country's flag (an SVG Plumb serves, loaded only when it scrolls into view) and,
// for a region or a city, the country it is in. /v1 groups a breakdown by the region or city alone, so the
// countries come from a second query grouped on the pair; the row's numbers stay those of the first.

import { html } from '../ui.js';
import { aggregate, baseParams } from './data.js';
import { displayValue } from './properties.js';

/** The fields whose rows are places inside a country. */
export const PLACE_FIELDS = new Set(['region', 'city', 'state']);

/** A country's flag, decorative (its name is always written beside it); nothing for an unknown country. */
export function Flag({ code }) {
  if (!/^[A-Z]{2}$/.test(code ?? '')) return null;
  return html`<img class="flag" src=${`/dashboard/flags/${code.toLowerCase()}.svg`} alt="" width="20" height="15" loading="lazy" decoding="async" />`;
}

/**
 * The countries each place of `field` is in, most visitors first: Map(place -> ['IE', 'US']). One /v1 query
 * grouped on the place and the country, with the page's filters (and the details view's search), as many pairs as
 * the API gives (1,000): a place whose pairs fall beyond that shows no country rather than a guessed one.
 */
export async function countriesOfPlaces(site, state, period, field, { goalName, extraFilters = [], signal } = {}) {
  const rows = await aggregate({
    ...baseParams(site, period, [...state.filters, ...extraFilters], goalName),
    aggregates: goalName === undefined ? 'visitors' : 'conversions',
    field_grouping: `${field},country_code`,
    sort_by: `${goalName === undefined ? 'visitors' : 'conversions'}:desc`,
    limit: 1000,
  }, signal);
  const out = new Map();
  for (const row of rows) {
    const place = row[field] ?? '';
    const code = row.country_code ?? '';
    if (place === '' || code === '') continue;
    if (!out.has(place)) out.set(place, []);
    out.get(place).push(code);
  }
  return out;
}

/** "Ireland" with its flag; several for a name that is a place in more than one country ("Dublin"). */
export function CountriesOf({ codes }) {
  if (!codes?.length) return null;
  return html`<span class="place-country">${codes.map((code, i) => html`${i ? ', ' : ''}<${Flag} code=${code} />${displayValue('country_code', code)}`)}</span>`;
}

/** The words a place's row says, for its title and for search: "Dublin, Ireland". */
export const placeText = (text, codes) => (codes?.length ? `${text}, ${codes.map((c) => displayValue('country_code', c)).join(', ')}` : text);
