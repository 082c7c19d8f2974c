// Small DOM helpers for the dashboard pages: element building (text only, never HTML strings) and number formats.

/**
 * h('button', { class: 'x', onclick: fn, 'aria-label': 'Remove' }, 'text', child, [more]) -> element.
 * Strings become text nodes, so data from the API can never turn into markup.
 */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith('on') && typeof value === 'function') el.addEventListener(key.slice(2), value);
    else if (key === 'class') el.className = value;
    else if (key === 'for') el.htmlFor = value;
    else if (key === 'value') el.value = value;
    else if (key === 'checked' || key === 'disabled' || key === 'required' || key === 'selected') el[key] = Boolean(value);
    else el.setAttribute(key, value === true ? '' : String(value));
  }
  append(el, children);
  return el;
}

function append(el, children) {
  for (const child of children) {
    if (child === undefined || child === null || child === false) continue;
    if (Array.isArray(child)) append(el, child);
    else el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
}

/** Replaces an element's children. */
export function fill(el, ...children) {
  el.replaceChildren();
  append(el, children);
  return el;
}

export const main = () => document.getElementById('app');
export const pageData = (name) => main().dataset[name] || '';

let ids = 0;
/** A unique id for label/control pairs. */
export const uid = (prefix) => `${prefix}-${++ids}`;

/** A labelled control: <div class="field"><label for=id>text</label><control id=id></div>. */
export function field(label, control, hint) {
  control.id = control.id || uid('f');
  return h('div', { class: 'field' }, h('label', { for: control.id }, label), control, hint ? h('small', { class: 'muted' }, hint) : null);
}

export function select(name, options, selected, attrs = {}) {
  return h(
    'select',
    { name, ...attrs },
    options.map(([value, text]) => h('option', { value, selected: value === selected }, text)),
  );
}

/** A polite live region for results of actions ("Saved", errors). */
export function statusLine() {
  const el = h('p', { class: 'status', role: 'status', 'aria-live': 'polite' });
  return {
    el,
    ok(text) {
      el.className = 'status ok';
      el.textContent = text;
    },
    error(text) {
      el.className = 'status error';
      el.textContent = text;
    },
    clear() {
      el.className = 'status';
      el.textContent = '';
    },
  };
}

const integer = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });
export const fmtInt = (text) => integer.format(Number(text) || 0);

export function fmtDuration(seconds) {
  const s = Math.round(Number(seconds) || 0);
  if (s < 60) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${s % 60}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}

export const fmtPercent = (rate) => `${Math.round((Number(rate) || 0) * 1000) / 10}%`;

/** Copies text, falling back to selecting it where the clipboard API is unavailable (plain http). */
export async function copyText(text, input) {
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

/** A read-only snippet with a copy button. */
export function snippet(label, text) {
  const area = h('textarea', { readonly: true, rows: Math.min(4, Math.ceil(text.length / 60)), spellcheck: 'false', class: 'code' }, text);
  const note = h('span', { class: 'muted', role: 'status', 'aria-live': 'polite' });
  const button = h(
    'button',
    {
      type: 'button',
      class: 'secondary',
      onclick: async () => {
        note.textContent = (await copyText(text, area)) ? 'Copied' : 'Selected: press Ctrl+C to copy';
      },
    },
    'Copy',
  );
  return h('div', { class: 'snippet' }, field(label, area), h('div', { class: 'row' }, button, note));
}
