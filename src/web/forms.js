// Small components the owner's pages share: a labelled field, a status line, a copyable snippet, a button that
// asks once more in place, and the searchable time zone field.

import { browserZone, isListedZone, timeNowIn, zoneNames } from './time-zones.js';
import { html, useMemo, useRef, useState } from './ui.js';

/** Copies text, falling back to selecting it where the clipboard API is unavailable (plain http). */
async function copyText(text, input) {
  try {
    await navigator.clipboard.writeText(text);
    return true;
  } catch {
    if (input) {
      input.focus();
      input.select();
    }
    return false;
  }
}

let ids = 0;
/** An id that stays the same for the component's life, for label/control pairs. */
export function useId(prefix) {
  const ref = useRef('');
  if (!ref.current) ref.current = `${prefix}-${++ids}`;
  return ref.current;
}

/** A label, the control (rendered by `children(id)`), and an optional hint under it. */
export function Field({ label, hint, prefix = 'f', children }) {
  const id = useId(prefix);
  const hintId = hint ? `${id}-hint` : undefined;
  return html`<div class="field">
    <label for=${id}>${label}</label>
    ${children(id, hintId)}
    ${hint ? html`<small class="muted" id=${hintId}>${hint}</small>` : null}
  </div>`;
}

/** `{ kind: 'ok' | 'error', text }` or null, read out politely to screen readers. */
export function Status({ status }) {
  return html`<p class=${`status${status ? ` ${status.kind}` : ''}`} role="status" aria-live="polite">${status ? status.text : ''}</p>`;
}

export const ok = (text) => ({ kind: 'ok', text });
export const failed = (text) => ({ kind: 'error', text });

/** Read-only text (a script tag, a token) with a Copy button. */
export function Snippet({ label, text }) {
  const area = useRef(null);
  const [note, setNote] = useState('');
  const id = useId('snippet');
  const copy = async () => setNote((await copyText(text, area.current)) ? 'Copied' : 'Selected: press Ctrl+C to copy');
  return html`<div class="snippet">
    <div class="field">
      <label for=${id}>${label}</label>
      <textarea id=${id} ref=${area} readonly rows=${Math.min(4, Math.ceil(text.length / 60))} spellcheck="false" class="code" value=${text}></textarea>
    </div>
    <div class="row"><button type="button" class="secondary" onClick=${copy}>Copy</button><span class="muted" role="status" aria-live="polite">${note}</span></div>
  </div>`;
}

/** A danger button that asks once more in place ("Confirm delete") instead of a dialog */
export function ConfirmButton({ label, confirmLabel, what, onConfirm, className = 'danger small' }) {
  const [armed, setArmed] = useState(false);
  const [busy, setBusy] = useState(false);
  const click = async () => {
    if (!armed) return setArmed(true);
    setBusy(true);
    try {
      await onConfirm();
    } finally {
      setBusy(false);
      setArmed(false);
    }
  };
  // Quiet (red text, no fill) until armed: only the confirming click is a solid red button.
  return html`<button type="button" class=${`${className}${armed ? ' armed' : ''}`} disabled=${busy}
    aria-label=${armed ? `Confirm: ${label.toLowerCase()} ${what}` : `${label} ${what}`}
    onClick=${click}>${armed ? confirmLabel : label}</button>`;
}

/**
 * A time zone field: type to search the current TZ database names (a datalist), the browser's zone by default
 * on new sites. `value` and `onChange(zone)` as a controlled input; `keep` is a stored name to accept as is
 * (an old site's zone need not be in the list).
 */
export function ZoneField({ value, onChange, keep, label = 'Time zone' }) {
  const zones = zoneNames();
  const listId = useId('zones');
  const here = useMemo(() => browserZone(), []);
  const now = timeNowIn(value);
  const valid = value === keep || isListedZone(value);
  const hint = valid
    ? `${now ? `It is ${now} there now. ` : ''}Reports count days in this zone. Type to search: a city or a region.`
    : 'Choose a zone from the list: type a city, such as Berlin or New_York.';
  return html`<${Field} label=${label} hint=${hint} prefix="zone">
    ${(id, hintId) => html`<input id=${id} name="timezone" list=${listId} autocomplete="off" spellcheck="false" required
      aria-describedby=${hintId} aria-invalid=${valid ? 'false' : 'true'} value=${value}
      onInput=${(e) => onChange(e.currentTarget.value.trim())} />
      <datalist id=${listId}>${zones.map((z) => html`<option value=${z}>${z === here ? 'your time zone' : ''}</option>`)}</datalist>`}
  <//>`;
}

/** Whether a zone field's value may be sent. */
export const zoneAccepted = (value, keep) => value === keep || isListedZone(value);
