// The filter bar: every filter as a chip in words ("Country is Germany", "Goal is Signup", "Funnel Checkout:
// dropped after step 2 (/pricing)"), each removable; the
// filter menu offering every operator SPEC.md allows on every filterable property (with the site's values
// suggested as the value is typed, ./suggestions.js), and custom properties; and saved segments (./segments.js).

import { api } from '../api.js';
import { Field } from '../field.js';
import { html, useEffect, useRef, useState } from '../ui.js';
import { goalOf, useSite } from './data.js';
import { describeFilter, OPERATOR_CHOICES, PROP_FILTER, PROP_OPERATORS, PROPERTIES } from './properties.js';
import { SegmentPanel, SegmentsButton } from './segments.js';
import { addFilter, removeFilter, setReport, useReportState } from './state.js';
import { countryCodeOf, ValueField } from './suggestions.js';

/** Operators whose value is a pattern, not a recorded value: nothing to suggest. */
const PATTERNS = ['matching', 'not matching'];

/** The funnel filter in words: "Funnel Checkout: dropped after step 2 (/pricing)"; the steps once the funnel is read. */
export function describeFunnelFilter(filter, funnel) {
  const name = funnel ? `Funnel ${funnel.name}` : 'Funnel';
  const step = funnel?.steps?.[filter.step - 1];
  const what = step ? ` (${step.value})` : '';
  if (funnel && filter.step === funnel.steps.length) return `${name}: completed step ${filter.step}${what}`;
  return `${name}: ${filter.outcome === 'dropped' ? 'dropped' : 'continued'} after step ${filter.step}${what}`;
}

/** The funnel the page is filtered by, read for its name and steps (null until read, or when it is gone). */
function useFilterFunnel(site, id) {
  const [funnel, setFunnel] = useState(null);
  useEffect(() => {
    setFunnel(null);
    if (!id) return undefined;
    let live = true;
    api('GET', `/v1/sites/${encodeURIComponent(site.id)}/funnels/${encodeURIComponent(id)}`).then(
      (f) => live && setFunnel(f),
      () => live && setFunnel(null),
    );
    return () => {
      live = false;
    };
  }, [site.id, id]);
  return funnel && funnel.id === id ? funnel : null;
}

function FilterMenu({ onDone }) {
  const [property, setProperty] = useState('pathname');
  const custom = property === PROP_FILTER;
  const allowed = custom ? PROP_OPERATORS : PROPERTIES.get(property).operators;
  const [operator, setOperator] = useState('is');
  const [key, setKey] = useState('');
  const [value, setValue] = useState('');
  const op = allowed.includes(operator) ? operator : allowed[0];
  const form = useRef(null);
  // Opened from the keyboard, the menu takes the focus where its first choice is.
  useEffect(() => form.current?.querySelector('select')?.focus(), []);
  const submit = (e) => {
    e.preventDefault();
    if (!value || (custom && !key)) return;
    // Countries are recorded as codes: "Germany" (or "de") is DE; a name that is no country stays as typed.
    const recorded = property === 'country_code' ? countryCodeOf(value) ?? value : value;
    addFilter(custom ? { property, key, operator: op, value } : { property, operator: op, value: recorded });
    onDone();
  };
  return html`<form class="card filter-menu row wrap" aria-label="Add a filter" onSubmit=${submit} ref=${form}
    onKeyDown=${(e) => e.key === 'Escape' && onDone()}>
    <${Field} label="Property"><select name="property" value=${property} onChange=${(e) => setProperty(e.currentTarget.value)}>
        ${[...PROPERTIES].map(([name, p]) => html`<option value=${name}>${p.label}</option>`)}
        <option value=${PROP_FILTER}>Custom property</option>
      </select><//>
    ${custom
      ? html`<${Field} label="Property name"><input name="key" required autocomplete="off" maxlength="300" value=${key} onInput=${(e) => setKey(e.currentTarget.value)}
          placeholder="e.g. plan" /><//>`
      : null}
    <${Field} label="Operator"><select name="operator" value=${op} onChange=${(e) => setOperator(e.currentTarget.value)}>
        ${allowed.map((o) => html`<option value=${o}>${OPERATOR_CHOICES.get(o)}</option>`)}
      </select><//>
    <${ValueField} property=${property} value=${value} onChange=${setValue} enabled=${!custom && !PATTERNS.includes(op)}
      placeholder=${property === 'country_code' ? 'a country, e.g. Germany or DE' : PATTERNS.includes(op) ? 'a regular expression' : 'type to see the values'} />
    <button type="submit">Apply filter</button>
    <button type="button" class="secondary" onClick=${onDone}>Cancel</button>
  </form>`;
}

export function FilterBar() {
  const site = useSite();
  const state = useReportState();
  // One panel at a time under the bar: the filter menu or the segments.
  const [open, setOpen] = useState('');
  const goal = goalOf(site, state);
  const funnel = useFilterFunnel(site, state.funnel?.id);
  const funnelWords = state.funnel ? describeFunnelFilter(state.funnel, funnel) : '';
  const any = state.filters.length > 0 || goal || state.funnel;
  return html`<div class="filter-area">
    <div class="filters" aria-live="polite">
      ${any ? html`<span class="muted">Filtered by:</span>` : null}
      ${goal
        ? html`<span class="chip" data-filter="goal">${`Goal is ${goal.name}`}
            <button type="button" class="link" aria-label=${`Remove filter Goal is ${goal.name}`} onClick=${() => setReport({ goal: '' })}>×</button></span>`
        : null}
      ${state.funnel
        ? html`<span class="chip" data-filter="funnel" data-operator=${state.funnel.outcome}>${funnelWords}
            <button type="button" class="link" aria-label=${`Remove filter ${funnelWords}`} onClick=${() => setReport({ funnel: null })}>×</button></span>`
        : null}
      ${state.filters.map((f, i) => {
        const words = describeFilter(f);
        return html`<span class="chip" data-filter=${f.property} data-operator=${f.operator}>${words}
          <button type="button" class="link" aria-label=${`Remove filter ${words}`} onClick=${() => removeFilter(i)}>×</button></span>`;
      })}
      <button type="button" class="secondary small" aria-expanded=${open === 'filter' ? 'true' : 'false'} onClick=${() => setOpen(open === 'filter' ? '' : 'filter')}>+ Add filter</button>
      <${SegmentsButton} open=${open === 'segments'} onToggle=${() => setOpen(open === 'segments' ? '' : 'segments')} />
      ${any ? html`<button type="button" class="link" onClick=${() => setReport({ filters: [], goal: '', funnel: null })}>Clear all</button>` : null}
    </div>
    ${open === 'filter' ? html`<${FilterMenu} onDone=${() => setOpen('')} />` : null}
    ${open === 'segments' ? html`<${SegmentPanel} onDone=${() => setOpen('')} />` : null}
  </div>`;
}
