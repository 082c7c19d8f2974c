// The report's date range: a button naming the range and its ISO dates ("Last 7 days · 2026-11-29 – 2026-12-05")
// that opens a panel of named ranges and a custom range typed as ISO dates (the site's date format everywhere).
// Keyboard: Enter/Space/ArrowDown open it on the chosen range; ArrowUp/ArrowDown move between ranges; in a date
// field ArrowUp/ArrowDown move the date a day and PageUp/PageDown a month; Enter applies; Escape closes.
//
//   <${DateRangePicker} ranges=${RANGES} range=${state.range} from=${period.from} to=${period.to}
//     onRange=${(name) => ...} onCustom=${({ from, to }) => ...} describedBy="range-note" />

import { Icon } from '../icons.js';
import { addDays } from '../range.js';
import { html, useEffect, useLayoutEffect, useRef, useState } from '../ui.js';
import { useId } from '../forms.js';

/** A real calendar date written `YYYY-MM-DD` (not 2026-02-30). */
export const isIsoDate = (text) => /^\d{4}-\d{2}-\d{2}$/.test(text) && addDays(text, 0) === text;

/** The same day `n` months away, kept inside the month (31 January + 1 month is 28 or 29 February). */
export function addMonths(date, n) {
  const [y, m, d] = date.split('-').map(Number);
  const first = new Date(Date.UTC(y, m - 1 + n, 1));
  const last = new Date(Date.UTC(first.getUTCFullYear(), first.getUTCMonth() + 1, 0)).getUTCDate();
  return `${first.toISOString().slice(0, 8)}${String(Math.min(d, last)).padStart(2, '0')}`;
}

const STEPS = { ArrowUp: [addDays, 1], ArrowDown: [addDays, -1], PageUp: [addMonths, 1], PageDown: [addMonths, -1] };

/**
 * A date typed as `YYYY-MM-DD` (the site's format everywhere, where a native date input shows the browser's own),
 * ArrowUp/ArrowDown a day and PageUp/PageDown a month; `id` ties it to its label.
 */
export function IsoDateInput({ id, name, value, onChange }) {
  const onKey = (e) => {
    const step = STEPS[e.key];
    if (!step || !isIsoDate(value)) return;
    e.preventDefault();
    onChange(step[0](value, step[1]));
  };
  return html`<input id=${id} name=${name} class="date-input" inputmode="numeric" autocomplete="off" spellcheck="false" placeholder="YYYY-MM-DD"
    pattern="\\d{4}-\\d{2}-\\d{2}" maxlength="10" required value=${value} aria-invalid=${value === '' || isIsoDate(value) ? 'false' : 'true'}
    onInput=${(e) => onChange(e.currentTarget.value.trim())} onKeyDown=${onKey} />`;
}

function DateInput({ label, name, value, onChange }) {
  const id = useId('date');
  return html`<div class="field">
    <label for=${id}>${label}</label>
    <${IsoDateInput} id=${id} name=${name} value=${value} onChange=${onChange} />
  </div>`;
}

export function DateRangePicker({ ranges, range, from, to, onRange, onCustom, describedBy }) {
  const [open, setOpen] = useState(false);
  const [draft, setDraft] = useState({ from, to });
  const [problem, setProblem] = useState('');
  const button = useRef(null);
  const panel = useRef(null);
  const id = useId('range');
  const name = ranges.find(([k]) => k === range)?.[1] ?? range;
  const dates = from === to ? from : `${from} – ${to}`;
  const close = (refocus = true) => {
    setOpen(false);
    if (refocus) button.current?.focus();
  };
  // Focus moves into the panel in the render that draws it, not a frame later: a key pressed right after the one
  // that opened it already goes to the chosen range.
  useLayoutEffect(() => {
    if (open) panel.current?.querySelector('[aria-pressed=true]')?.focus();
  }, [open]);
  useEffect(() => {
    if (!open) return undefined;
    setDraft({ from, to });
    setProblem('');
    const outside = (e) => {
      if (!panel.current?.contains(e.target) && !button.current?.contains(e.target)) setOpen(false);
    };
    // Escape closes wherever focus is: a key pressed as the panel opens, before focus moves into it, counts too.
    const escape = (e) => {
      if (e.key !== 'Escape') return;
      e.preventDefault();
      e.stopPropagation();
      close();
    };
    document.addEventListener('pointerdown', outside);
    document.addEventListener('keydown', escape, true);
    return () => {
      document.removeEventListener('pointerdown', outside);
      document.removeEventListener('keydown', escape, true);
    };
  }, [open]);
  const onPanelKey = (e) => {
    const presets = [...panel.current.querySelectorAll('[data-range-option]')];
    const i = presets.indexOf(document.activeElement);
    if (i < 0 || !(e.key === 'ArrowDown' || e.key === 'ArrowUp')) return;
    e.preventDefault();
    presets[(i + (e.key === 'ArrowDown' ? 1 : -1) + presets.length) % presets.length].focus();
  };
  const pick = (key) => {
    if (key === 'custom') {
      panel.current?.querySelector('input[name=from]')?.focus();
      return;
    }
    close();
    onRange(key);
  };
  const apply = (e) => {
    e.preventDefault();
    if (!isIsoDate(draft.from) || !isIsoDate(draft.to)) return setProblem('Write both dates as YYYY-MM-DD, such as 2026-03-31.');
    if (draft.from > draft.to) return setProblem('The first date comes after the last one.');
    close();
    onCustom(draft);
  };
  return html`<div class="date-range" data-range=${range}>
    <button type="button" class="menu-button date-range-button" ref=${button} aria-haspopup="dialog" aria-expanded=${open ? 'true' : 'false'}
      aria-controls=${id} aria-label=${`Date range: ${name}, ${from === to ? from : `${from} to ${to}`}`} aria-describedby=${describedBy}
      onClick=${() => setOpen(!open)} onKeyDown=${(e) => e.key === 'ArrowDown' && (e.preventDefault(), setOpen(true))}>
      <${Icon} name="calendar" /><span class="range-name">${name}</span><span class="range-dates">${dates}</span><${Icon} name="chevron-down" size=${14} />
    </button>
    <div class="popover date-range-panel" id=${id} ref=${panel} role="dialog" aria-label="Choose the date range" hidden=${!open} onKeyDown=${onPanelKey}>
      <ul class="range-options" aria-label="Ranges">
        ${ranges.map(([k, text]) => html`<li><button type="button" class="range-option" data-range-option=${k}
          aria-pressed=${k === range ? 'true' : 'false'} onClick=${() => pick(k)}>
          <span class="menu-check">${k === range ? html`<${Icon} name="check" size=${14} />` : null}</span>${text}</button></li>`)}
      </ul>
      <form class="custom-range" onSubmit=${apply} aria-label="Custom range">
        <p class="small muted">Custom range, in the site's time zone. Arrow keys move a day, Page Up and Page Down a month.</p>
        <div class="row">
          <${DateInput} label="From" name="from" value=${draft.from} onChange=${(v) => setDraft((d) => ({ ...d, from: v }))} />
          <${DateInput} label="To" name="to" value=${draft.to} onChange=${(v) => setDraft((d) => ({ ...d, to: v }))} />
        </div>
        ${problem ? html`<p class="status error" role="alert">${problem}</p>` : null}
        <button type="submit" class="primary">Apply</button>
      </form>
    </div>
  </div>`;
}
