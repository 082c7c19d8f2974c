// A labelled control for components: <${Field} label="Per"><select>…</select><//> gives the control an id and a
// <label for> of its own, so its accessible name is exactly the label (a wrapping label would add the control's
// contents to it).

import { cloneElement } from 'preact';
import { html, useMemo } from './ui.js';

let count = 0;

export function Field({ label, class: extra = '', children }) {
  const id = useMemo(() => `field-${++count}`, []);
  return html`<div class=${`inline-field ${extra}`}><label for=${id}>${label}</label>${cloneElement(children, { id })}</div>`;
}
