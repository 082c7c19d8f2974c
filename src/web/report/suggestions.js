// Value suggestions in the filter menu: as the value is typed, the site's values of the chosen property over the
// report's period, with their visitors from /v1/aggregations, offered in an accessible combobox (arrow keys, Enter,
// Escape); and countries found by their name ("Germany" is DE).

import { fmtInt } from '../format.js';
import { html, useEffect, useMemo, useRef, useState } from '../ui.js';
import { aggregate, baseParams, periodOf, useSite } from './data.js';
import { displayValue, PROPERTIES } from './properties.js';
import { useReportState } from './state.js';

const SHOWN = 10;
/** Properties the API cannot search ("is like" is not theirs): their values are few, searched among these. */
const FEW_VALUES = 1000;
const DEBOUNCE_MS = 200;

let englishNames;
try {
  englishNames = new Intl.DisplayNames(['en'], { type: 'region', fallback: 'none' });
} catch {
  englishNames = undefined;
}
let localNames;
try {
  localNames = new Intl.DisplayNames([navigator.language || 'en'], { type: 'region', fallback: 'none' });
} catch {
  localNames = undefined;
}

/** Whether a region code is the one in use (a retired one, as DD, is made the current one by canonicalisation). */
function isCurrentCode(code) {
  try {
    return Intl.getCanonicalLocales(`und-${code}`)[0] === `und-${code}`;
  } catch {
    return false;
  }
}

/** Every two-letter region code the browser has a name for, with its English and local names (lower case). */
const COUNTRIES = (() => {
  const out = [];
  if (!englishNames) return out;
  const A = 65;
  for (let i = 0; i < 26; i++) {
    for (let j = 0; j < 26; j++) {
      const code = String.fromCharCode(A + i, A + j);
      const english = englishNames.of(code);
      // Old codes have names too ("DD" reads "Germany" in some browsers): only the codes in use, as recorded.
      if (!english || !isCurrentCode(code)) continue;
      out.push({ code, names: [english.toLowerCase(), (localNames?.of(code) ?? english).toLowerCase()] });
    }
  }
  return out;
})();

/**
 * The country code a person means by `text`: a code as typed in any case ("de"), or a country's English or local
 * name ("Germany", "germany"); undefined when it names none.
 */
export function countryCodeOf(text) {
  const typed = text.trim().toLowerCase();
  if (typed === '') return undefined;
  if (/^[a-z]{2}$/.test(typed)) {
    // A code in any case, a retired one as the one in use ("uk" is GB).
    let code = typed.toUpperCase();
    try {
      code = Intl.getCanonicalLocales(`und-${code}`)[0].slice(4);
    } catch {
      // Not a region code: a name, perhaps.
    }
    if (COUNTRIES.some((c) => c.code === code)) return code;
  }
  return COUNTRIES.find((c) => c.names.includes(typed))?.code;
}

/** Whether a country (its code) is one `typed` can mean: its code starts so, or one of its names contains it. */
const countryMatches = (code, typed) => {
  if (code.toLowerCase().startsWith(typed)) return true;
  const names = COUNTRIES.find((c) => c.code === code)?.names ?? [];
  return names.some((n) => n.includes(typed));
};

/** Whether the API searches this property itself (it takes "is like"), rather than the page among its top values. */
const searchedByApi = (property) => property === 'domain' || PROPERTIES.get(property)?.operators.includes('is like');

/**
 * One /v1 query for the values of `property` in the period, with the page's filters on other properties (those on
 * the same property would be ORed with the search, docs/reports.md) and, where the API can, `is like` the text.
 * `domain` has no grouping of its own: its values are the hostnames' without the scheme.
 */
async function loadValues(site, state, property, typed, signal) {
  const others = state.filters.filter((f) => f.property !== property && !(property === 'domain' && f.property === 'hostname'));
  const search = typed !== '' && searchedByApi(property) ? [{ property, operator: 'is like', value: typed }] : [];
  const field = property === 'domain' ? 'hostname' : property;
  const rows = await aggregate({
    ...baseParams(site, periodOf(state, site.timeZone), [...others, ...search]),
    aggregates: 'visitors',
    field_grouping: field,
    sort_by: 'visitors:desc',
    limit: searchedByApi(property) ? SHOWN : FEW_VALUES,
  }, signal);
  const values = rows
    .map((r) => ({ value: String(r[field] ?? ''), visitors: Number(r.visitors) || 0 }))
    // An empty value cannot be a filter (the API takes non-empty values only).
    .filter((r) => r.value !== '');
  if (property !== 'domain') return values;
  const byDomain = new Map();
  for (const r of values) {
    const domain = r.value.replace(/^[a-z][a-z0-9+.-]*:\/\//i, '');
    const seen = byDomain.get(domain);
    // Two hostnames of one domain (http and https): their visitors cannot be added up, so none is shown.
    byDomain.set(domain, seen ? { value: domain, visitors: undefined } : { value: domain, visitors: r.visitors });
  }
  return [...byDomain.values()];
}

/** The suggestions for what is typed: [{ value, label, visitors }], at most SHOWN, most visitors first. */
function useSuggestions(property, typed, enabled) {
  const site = useSite();
  const state = useReportState();
  const [result, setResult] = useState({ items: [], loading: false, error: false });
  // A property the page searches is loaded once per menu and period, then searched as typed.
  const few = useRef(new Map());
  const key = `${property}|${state.range}|${state.from}|${state.to}|${JSON.stringify(state.filters)}`;
  useEffect(() => {
    if (!enabled) return undefined;
    const calls = new AbortController();
    const needle = typed.trim().toLowerCase();
    const api = searchedByApi(property);
    const timer = setTimeout(async () => {
      setResult((r) => ({ ...r, loading: true }));
      try {
        let rows;
        if (api) rows = await loadValues(site, state, property, typed.trim(), calls.signal);
        else {
          // Not aborted with the keystroke that asked first: the next keystrokes search the same list.
          if (!few.current.has(key)) few.current.set(key, loadValues(site, state, property, ''));
          rows = await few.current.get(key);
        }
        if (calls.signal.aborted) return;
        const items = rows
          .map((r) => ({ ...r, label: displayValue(property, r.value) }))
          .filter((r) => api || needle === '' || r.label.toLowerCase().includes(needle) || r.value.toLowerCase().includes(needle) ||
            (property === 'country_code' && countryMatches(r.value, needle)))
          .slice(0, SHOWN);
        setResult({ items, loading: false, error: false });
      } catch (err) {
        if (calls.signal.aborted) return;
        few.current.delete(key);
        setResult({ items: [], loading: false, error: Boolean(err) });
      }
    // The first list (nothing typed yet) comes at once; typing waits for a pause.
    }, typed === '' ? 0 : DEBOUNCE_MS);
    return () => {
      clearTimeout(timer);
      calls.abort();
    };
  }, [property, typed, enabled, key]);
  return result;
}

let count = 0;

/**
 * The filter menu's value field: a combobox (ARIA 1.2) whose list suggests the property's values. `onChange`
 * gets what is typed or picked (a picked value is the recorded one: "DE" for Germany).
 */
export function ValueField({ property, value, onChange, enabled, placeholder }) {
  const id = useMemo(() => `value-${++count}`, []);
  const [open, setOpen] = useState(false);
  const [active, setActiveState] = useState(-1);
  // The choice also in a ref, set at once: two keys pressed before the next render each move it one step.
  const chosen = useRef(-1);
  const setActive = (i) => {
    chosen.current = i;
    setActiveState(i);
  };
  const { items, loading, error } = useSuggestions(property, value, enabled && open);
  const shown = enabled && open && items.length > 0;
  useEffect(() => setActive(-1), [property, value]);
  const pick = (item) => {
    onChange(item.value);
    setOpen(false);
  };
  const onKeyDown = (e) => {
    if (e.key === 'ArrowDown' || e.key === 'ArrowUp') {
      e.preventDefault();
      if (!open) return setOpen(true);
      if (items.length === 0) return undefined;
      // Down from the field to the first suggestion and on to the last; up back to the field (-1: none chosen).
      const a = chosen.current;
      return setActive(e.key === 'ArrowDown' ? Math.min(a + 1, items.length - 1) : Math.max(a - 1, -1));
    }
    if (e.key === 'Enter' && shown && active >= 0 && active < items.length) {
      // Enter on a suggestion picks it; without one it submits the form as usual.
      e.preventDefault();
      return pick(items[active]);
    }
    if (e.key === 'Escape' && shown) {
      // The list closes first; the next Escape closes the menu.
      e.stopPropagation();
      return setOpen(false);
    }
    return undefined;
  };
  const status = !enabled || !open ? '' : loading ? 'Looking for values…' : error ? 'No suggestions: the server could not be asked.'
    : items.length === 0 ? 'No value of this period matches.' : `${items.length} suggestion${items.length === 1 ? '' : 's'}: use the arrow keys to choose.`;
  return html`<div class="inline-field grow value-field">
    <label for=${id}>Value</label>
    <input id=${id} name="value" required autocomplete="off" maxlength="1000" value=${value} placeholder=${placeholder}
      role=${enabled ? 'combobox' : undefined} aria-autocomplete=${enabled ? 'list' : undefined} aria-expanded=${enabled ? (shown ? 'true' : 'false') : undefined}
      aria-controls=${enabled ? `${id}-list` : undefined} aria-activedescendant=${shown && active >= 0 && active < items.length ? `${id}-${active}` : undefined}
      onInput=${(e) => {
        onChange(e.currentTarget.value);
        setOpen(true);
      }}
      onFocus=${() => setOpen(true)} onClick=${() => setOpen(true)} onBlur=${() => setOpen(false)} onKeyDown=${onKeyDown} />
    ${enabled
      ? html`<ul id=${`${id}-list`} role="listbox" aria-label="Suggestions" class="suggestions" hidden=${!shown}>
          ${items.map((item, i) => html`<li id=${`${id}-${i}`} role="option" aria-selected=${i === active ? 'true' : 'false'} data-value=${item.value}
              class=${i === active ? 'active' : ''} onMouseDown=${(e) => e.preventDefault()} onClick=${() => pick(item)}>
              <span class="suggestion-label">${item.label}${item.label !== item.value ? html` <span class="muted">${item.value}</span>` : null}</span>
              ${item.visitors === undefined ? null : html`<span class="num muted" title="Visitors in the period">${fmtInt(item.visitors)}</span>`}
            </li>`)}
        </ul>
        <span class="visually-hidden" aria-live="polite">${status}</span>`
      : null}
  </div>`;
}
