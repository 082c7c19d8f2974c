// What can be filtered and broken down (SPEC.md's tables), in words: property names, operators, and how a
// recorded value reads ("DE" reads "Germany").

export const ALL_OPERATORS = ['is', 'is not', 'is like', 'is not like', 'matching', 'not matching'];
const EXACT = ['is', 'is not'];

/** How a chip says an operator: "Page contains /blog". */
export const OPERATOR_WORDS = new Map([
  ['is', 'is'],
  ['is not', 'is not'],
  ['is like', 'contains'],
  ['is not like', 'does not contain'],
  ['matching', 'matches'],
  ['not matching', 'does not match'],
]);

/** How the filter menu offers them (the API's name in brackets, for those who know it). */
export const OPERATOR_CHOICES = new Map([
  ['is', 'is'],
  ['is not', 'is not'],
  ['is like', 'contains (is like, * for any text)'],
  ['is not like', 'does not contain (is not like)'],
  ['matching', 'matches the regular expression'],
  ['not matching', 'does not match the regular expression'],
]);

/** Every filterable property of SPEC.md with its name in words and the operators it allows. */
export const PROPERTIES = new Map([
  ['pathname', { label: 'Page', operators: ALL_OPERATORS }],
  ['entry_page', { label: 'Entry page', operators: ALL_OPERATORS }],
  ['exit_page', { label: 'Exit page', operators: ALL_OPERATORS }],
  ['hostname', { label: 'Hostname', operators: ALL_OPERATORS }],
  ['domain', { label: 'Domain', operators: ALL_OPERATORS }],
  ['referrer_hostname', { label: 'Referrer', operators: ALL_OPERATORS }],
  ['referrer_pathname', { label: 'Referrer path', operators: ALL_OPERATORS }],
  ['referrer_source', { label: 'Source', operators: ALL_OPERATORS }],
  ['ref', { label: 'Ref', operators: ALL_OPERATORS }],
  ['utm_source', { label: 'UTM source', operators: ALL_OPERATORS }],
  ['utm_medium', { label: 'UTM medium', operators: ALL_OPERATORS }],
  ['utm_campaign', { label: 'UTM campaign', operators: ALL_OPERATORS }],
  ['utm_content', { label: 'UTM content', operators: ALL_OPERATORS }],
  ['utm_term', { label: 'UTM term', operators: ALL_OPERATORS }],
  ['country_code', { label: 'Country', operators: EXACT }],
  ['state', { label: 'State', operators: EXACT }],
  ['region', { label: 'Region', operators: EXACT }],
  ['city', { label: 'City', operators: EXACT }],
  ['browser', { label: 'Browser', operators: EXACT }],
  ['operating_system', { label: 'Operating system', operators: EXACT }],
  ['device_type', { label: 'Device', operators: EXACT }],
]);

export const propertyLabel = (property) => PROPERTIES.get(property)?.label ?? property.replace(/_/g, ' ');

/**
 * A filter on a custom property: { property: 'prop', key, operator, value }. It is no filter of SPEC.md: the page
 * asks the dashboard's own API for reports that have one (./data.js).
 */
export const PROP_FILTER = 'prop';
export const PROP_OPERATORS = ['is', 'is not', 'is like', 'is not like'];
/** The server's limits (src/domain/props.ts), in UTF-8 bytes. */
const MAX_KEY_BYTES = 300;
const MAX_VALUE_BYTES = 2000;
const bytes = (s) => new TextEncoder().encode(s).length;

/** Whether { property, operator, value } (with `key` for a custom property) is a filter the server takes. */
export function validFilter(f) {
  if (f === null || typeof f !== 'object' || typeof f.property !== 'string' || typeof f.operator !== 'string' || typeof f.value !== 'string' || f.value === '') {
    return false;
  }
  if (f.property === PROP_FILTER) {
    return typeof f.key === 'string' && f.key !== '' && bytes(f.key) <= MAX_KEY_BYTES && bytes(f.value) <= MAX_VALUE_BYTES && PROP_OPERATORS.includes(f.operator);
  }
  return PROPERTIES.has(f.property) && PROPERTIES.get(f.property).operators.includes(f.operator);
}

let regionNames;
try {
  // English, as the rest of the dashboard.
  regionNames = new Intl.DisplayNames(['en'], { type: 'region' });
} catch {
  regionNames = undefined;
}

/** A recorded value as a person reads it: country codes as names, '' as what it means for that property. */
export function displayValue(property, value) {
  if (value === '' || value === undefined || value === null) return EMPTY.get(property) ?? '(none)';
  // Hostnames are recorded with their scheme; the https:// every one of them has says nothing.
  if ((property === 'hostname' || property === 'referrer_hostname') && value.startsWith('https://')) return value.slice(8);
  if (property === 'country_code' && regionNames && /^[A-Z]{2}$/.test(value)) {
    try {
      return regionNames.of(value) ?? value;
    } catch {
      return value;
    }
  }
  return value;
}

const EMPTY = new Map([
  ['referrer_hostname', 'Direct / none'],
  ['referrer_pathname', 'Direct / none'],
  ['referrer_source', 'Direct / none'],
  ['utm_source', '(no UTM source)'],
  ['utm_medium', '(no UTM medium)'],
  ['utm_campaign', '(no campaign)'],
  ['utm_content', '(no UTM content)'],
  ['utm_term', '(no UTM term)'],
  ['country_code', 'Unknown'],
  ['region', 'Unknown'],
  ['state', 'Unknown'],
  ['city', 'Unknown'],
  ['browser', 'Unknown'],
  ['operating_system', 'Unknown'],
  ['device_type', 'Unknown'],
]);

// Referrers' '' is a real source (people typing the address, bookmarks), not a missing value.
const DIRECT = new Set(['referrer_hostname', 'referrer_pathname', 'referrer_source']);

/** Whether a recorded value is no value at all ("(no campaign)", an unknown country): listed after the real ones. */
export const isNoValue = (property, value) => (value === '' || value === undefined || value === null) && !DIRECT.has(property);

// The anchored expression a pageview goal's path becomes (src/domain/page-goal-paths.ts): literals escaped, each
// run of `*` as `.*`.
const GOAL_REGEX = /^\^((?:\\[\\^$.|?*+()[\]{}]|\.\*|[^\\^$.|?*+()[\]{}])*)\$$/;
const GOAL_REGEX_PART = /\\(.)|\.\*/g;

/** A pageview goal's path (`/blog/*`) from its expression, or undefined for any other regular expression. */
export function goalPathOf(regex) {
  const inner = GOAL_REGEX.exec(regex)?.[1];
  return inner === undefined ? undefined : inner.replace(GOAL_REGEX_PART, (_part, escaped) => escaped ?? '*');
}

/** "Country is Germany", "Property plan is pro", "Page matches /blog/*": a filter in words. */
export const describeFilter = (f) => {
  if (f.property === PROP_FILTER) return `Property ${f.key} ${OPERATOR_WORDS.get(f.operator) ?? f.operator} ${f.value}`;
  const path = f.property === 'pathname' && f.operator === 'matching' ? goalPathOf(f.value) : undefined;
  if (path !== undefined) return `${propertyLabel(f.property)} matches ${path}`;
  return `${propertyLabel(f.property)} ${OPERATOR_WORDS.get(f.operator) ?? f.operator} ${f.property === 'country_code' && (f.operator === 'is' || f.operator === 'is not') ? displayValue(f.property, f.value) : f.value}`;
};
