// The settings pages' layout: a side menu of the page's sections (and of the pages beside it) next to them, the
// section in view marked; below 760 px the menu becomes a select above the sections, so nothing scrolls sideways.
// Every section stays on the page (a find in page, a form half filled, and the tests reach all of it): the menu
// scrolls to one and puts its key in the address (#general), so a copied link or a reload opens it again.
//
//   <${SettingsLayout} label="Site settings" ready=${site !== null} groups=${[{ title: 'Site', items: [
//       { key: 'general', title: 'General' },                     // a section of this page, <${Section} id="general">
//       { href: '/sites/ABC/goals#goals', title: 'Goals' },        // a section of another page
//     ] }]}>
//     <${Section} id="general">…<//>
//   <//>
//
// `ready`: the sections are rendered (pages load their data first); an address naming a section scrolls to it then.

import { html, useEffect, useRef, useState } from '../ui.js';
import { useId } from '../forms.js';

/** How far below the window's top a section's heading counts as the one being read, in CSS pixels. */
const READING_LINE_PX = 120;
/** How long an address's section is kept in view while the sections above it finish loading (their heights change). */
const SETTLE_MS = 2500;

const keyOfHash = () => decodeURIComponent(location.hash.slice(1));

/**
 * The section being read: the last whose top is above the reading line; at the bottom of the page, the one the
 * address names when it is in view (a short last section can never reach the line).
 */
export function sectionInView(keys) {
  const tops = keys.map((k) => document.getElementById(k)?.getBoundingClientRect().top ?? Infinity);
  let current = keys[0];
  tops.forEach((top, i) => {
    if (top <= READING_LINE_PX) current = keys[i];
  });
  const atBottom = innerHeight + scrollY >= document.documentElement.scrollHeight - 2;
  const named = keys.indexOf(keyOfHash());
  if (atBottom && named >= 0 && tops[named] < innerHeight) current = keys[named];
  return current;
}

/** Keeps the address's section at the top while content above it loads, until the viewer scrolls themselves. */
function settleOn(key) {
  const target = document.getElementById(key);
  if (!target) return () => {};
  target.scrollIntoView();
  const stop = () => {
    watch.disconnect();
    clearTimeout(timer);
    for (const e of ['wheel', 'touchstart', 'keydown', 'pointerdown']) removeEventListener(e, stop);
  };
  const watch = new ResizeObserver(() => target.scrollIntoView());
  watch.observe(document.body);
  const timer = setTimeout(stop, SETTLE_MS);
  for (const e of ['wheel', 'touchstart', 'keydown', 'pointerdown']) addEventListener(e, stop, { passive: true });
  return stop;
}

function SectionNav({ label, groups, current }) {
  const selectId = useId('section');
  const go = (value) => {
    const item = groups.flatMap((g) => g.items).find((i) => (i.key ?? i.href) === value);
    if (!item) return;
    if (item.href) return location.assign(item.href);
    // The same key again does not scroll by itself.
    if (keyOfHash() === item.key) document.getElementById(item.key)?.scrollIntoView();
    else location.hash = item.key;
  };
  const link = (item) => item.key
    ? html`<a href=${`#${item.key}`} data-section-link=${item.key} aria-current=${item.key === current ? 'location' : undefined}>${item.title}</a>`
    : html`<a href=${item.href}>${item.title}</a>`;
  return html`<nav class="section-nav" aria-label=${label}>
    <div class="section-nav-select field">
      <label for=${selectId}>Section</label>
      <select id=${selectId} value=${current} onChange=${(e) => go(e.currentTarget.value)}>
        ${groups.map((g) => html`<optgroup label=${g.title}>
          ${g.items.map((i) => html`<option value=${i.key ?? i.href}>${i.title}</option>`)}
        </optgroup>`)}
      </select>
    </div>
    <div class="section-nav-list">
      ${groups.map((g) => html`<div class="section-nav-group">
        <p class="section-nav-title">${g.title}</p>
        <ul>${g.items.map((i) => html`<li>${link(i)}</li>`)}</ul>
      </div>`)}
    </div>
  </nav>`;
}

export function SettingsLayout({ label, groups, ready = true, children }) {
  const keys = groups.flatMap((g) => g.items).filter((i) => i.key).map((i) => i.key);
  const joined = keys.join();
  const [current, setCurrent] = useState(() => (keys.includes(keyOfHash()) ? keyOfHash() : keys[0]));
  const settled = useRef(false);
  useEffect(() => {
    if (!ready || settled.current) return undefined;
    settled.current = true;
    return keys.includes(keyOfHash()) ? settleOn(keyOfHash()) : undefined;
  }, [ready, joined]);
  useEffect(() => {
    let frame = 0;
    const spy = () => {
      frame = 0;
      setCurrent(sectionInView(keys));
    };
    const soon = () => {
      if (!frame) frame = requestAnimationFrame(spy);
    };
    addEventListener('scroll', soon, { passive: true });
    addEventListener('resize', soon);
    addEventListener('hashchange', spy);
    soon();
    return () => {
      cancelAnimationFrame(frame);
      removeEventListener('scroll', soon);
      removeEventListener('resize', soon);
      removeEventListener('hashchange', spy);
    };
  }, [joined, ready]);
  return html`<div class="settings-layout">
    <${SectionNav} label=${label} groups=${groups} current=${current} />
    <div class="settings-sections">${children}</div>
  </div>`;
}

/** One section of a settings page: the target of its menu entry (its cards inside). */
export function Section({ id, children }) {
  return html`<div class="settings-section" id=${id} data-section=${id}>${children}</div>`;
}
