// Tabs that never wrap: as many as fit the row are tabs (role="tab", arrow keys move between them); the rest
// collapse into a "More" menu at the end of the row. The chosen tab is always one of the tabs shown: picked from
// the menu, it takes the place of the last tab that fits (which goes into the menu), so the panel is always
// labelled by a visible tab and the row says which one is open.
//
//   <${Tabs} label="Sources" tabs=${[['referrer_hostname', 'Referrers'], ['utm_source', 'UTM source'], ...]}
//     selected=${tab} onSelect=${setTab} idPrefix="bd-sources" panelId="bd-sources-panel" />
//
// Each tab is <button role="tab" id="{idPrefix}-{key}" data-tab="{key}" aria-controls="{panelId}">; the panel
// should carry role="tabpanel" id="{panelId}" aria-labelledby="{idPrefix}-{selected}". The menu is components/
// menu.js's (data-menu="more-tabs"), one menuitemradio per collapsed tab.

import { html, useLayoutEffect, useRef, useState } from '../ui.js';
import { Menu } from './menu.js';

/** Room kept for the "More" button when some tabs collapse, in CSS pixels. */
const MORE_PX = 96;

/**
 * The tabs shown, as indexes in their order: all when they fit `room` pixels (`widths`: each tab's, gap included);
 * otherwise as many from the start as fit beside the "More" button, with the selected one (index, or -1) kept among
 * them in place of those it needs room from. At least one.
 */
export function tabsShown(widths, room, selected) {
  if (widths.reduce((a, b) => a + b, 0) <= room) return widths.map((_, i) => i);
  const keep = selected >= 0 && selected < widths.length ? selected : -1;
  let used = MORE_PX + (keep >= 0 ? widths[keep] : 0);
  const shown = keep >= 0 ? [keep] : [];
  for (let i = 0; i < widths.length; i++) {
    if (i === keep) continue;
    if (used + widths[i] > room) break;
    used += widths[i];
    shown.push(i);
  }
  if (!shown.length) shown.push(0);
  return shown.sort((a, b) => a - b);
}

export function Tabs({ label, tabs, selected, onSelect, idPrefix, panelId }) {
  const row = useRef(null);
  const list = useRef(null);
  const measure = useRef(null);
  const focusChosen = useRef(false);
  const [layout, setLayout] = useState({ widths: null, room: Infinity });
  const keys = tabs.map(([k]) => k).join();
  useLayoutEffect(() => {
    const el = row.current;
    if (!el) return undefined;
    // Widths come from a hidden copy of every tab (in the selected tab's heavier weight), so they are known for the
    // tabs in the menu too, and again once the web font has loaded.
    const read = () => {
      const gap = parseFloat(getComputedStyle(list.current).columnGap) || 0;
      const widths = [...measure.current.children].map((t) => t.getBoundingClientRect().width + gap);
      setLayout({ widths, room: el.clientWidth });
    };
    read();
    const watch = new ResizeObserver(read);
    watch.observe(el);
    watch.observe(measure.current);
    return () => watch.disconnect();
  }, [keys]);
  const chosen = tabs.findIndex(([k]) => k === selected);
  const shownAt = layout.widths ? tabsShown(layout.widths, layout.room, chosen) : tabs.map((_, i) => i);
  const shown = shownAt.map((i) => tabs[i]);
  const rest = tabs.filter((_, i) => !shownAt.includes(i));
  useLayoutEffect(() => {
    // A tab picked from the menu: the keyboard goes on from that tab, now in the row, not from the menu button.
    if (!focusChosen.current) return;
    focusChosen.current = false;
    list.current?.querySelector(`[role=tab][aria-selected="true"]`)?.focus();
  }, [selected]);
  const onKey = (e) => {
    const i = shown.findIndex(([k]) => k === selected);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: shown.length - 1 }[e.key];
    if (to === undefined || !shown.length) return;
    e.preventDefault();
    const n = (to + shown.length) % shown.length;
    onSelect(shown[n][0]);
    list.current?.querySelectorAll('[role=tab]')[n]?.focus();
  };
  const pickFromMenu = (key) => {
    focusChosen.current = true;
    onSelect(key);
  };
  return html`<div class="tabs-row" ref=${row}>
    <div class="tabs" role="tablist" aria-label=${label} ref=${list} onKeyDown=${onKey}>
      ${shown.map(([k, title]) => html`<button type="button" role="tab" id=${`${idPrefix}-${k}`} data-tab=${k}
        aria-selected=${k === selected ? 'true' : 'false'} aria-controls=${panelId} tabindex=${k === selected || (chosen < 0 && k === shown[0][0]) ? '0' : '-1'}
        onClick=${() => onSelect(k)}>${title}</button>`)}
    </div>
    ${rest.length
      ? html`<${Menu} label=${label} name="more-tabs" class="tabs-more" value="" text="More" options=${rest} onSelect=${pickFromMenu} align="end" />`
      : null}
    <div class="tabs-measure" ref=${measure} aria-hidden="true">${tabs.map(([k, title]) => html`<span key=${k}>${title}</span>`)}</div>
  </div>`;
}
