// Tabs that never wrap: as many as fit the row are tabs (role="tab", arrow keys move between them); the rest
// collapse into a "More" menu at the end of the row, which shows the chosen tab's name when it is one of them.
//
//   <${Tabs} label="Sources" tabs=${[['referrer_hostname', 'Referrers'], ['utm_source', 'UTM source'], ...]}
//     selected=${tab} onSelect=${setTab} idPrefix="bd-sources" panelId="bd-sources-panel" />
//
// Each tab is <button role="tab" id="{idPrefix}-{key}" data-tab="{key}" aria-controls="{panelId}">; the panel
// should carry role="tabpanel" id="{panelId}" aria-labelledby="{idPrefix}-{selected}" (a collapsed choice has
// no tab element, so give the panel aria-label instead when the selected key is not a tab).

import { html, useLayoutEffect, useRef, useState } from '../ui.js';
import { Menu } from './menu.js';

/** Room kept for the "More" button when some tabs collapse, in CSS pixels. */
const MORE_PX = 96;

/** How many of the tabs (their widths, in order, gap included) fit `room` pixels. */
export function tabsThatFit(widths, room) {
  const all = widths.reduce((a, b) => a + b, 0);
  if (all <= room) return widths.length;
  let used = MORE_PX;
  let n = 0;
  while (n < widths.length && used + widths[n] <= room) used += widths[n++];
  return Math.max(1, n);
}

export function Tabs({ label, tabs, selected, onSelect, idPrefix, panelId }) {
  const row = useRef(null);
  const widths = useRef(null);
  const [fit, setFit] = useState(tabs.length);
  useLayoutEffect(() => {
    const el = row.current;
    if (!el) return undefined;
    // Measured once, all tabs shown (the first render shows them all): a tab's width never changes after.
    const gap = parseFloat(getComputedStyle(el).columnGap) || 0;
    widths.current = [...el.querySelectorAll('[role=tab]')].map((t) => t.getBoundingClientRect().width + gap);
    const measure = () => setFit(tabsThatFit(widths.current, el.parentElement.clientWidth));
    measure();
    const watch = new ResizeObserver(measure);
    watch.observe(el.parentElement);
    return () => watch.disconnect();
  }, [tabs.map(([k]) => k).join()]);
  const shown = tabs.slice(0, fit);
  const rest = tabs.slice(fit);
  const onKey = (e) => {
    const i = shown.findIndex(([k]) => k === selected);
    const to = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: shown.length - 1 }[e.key];
    if (to === undefined || !shown.length) return;
    e.preventDefault();
    const n = (to + shown.length) % shown.length;
    onSelect(shown[n][0]);
    row.current?.querySelectorAll('[role=tab]')[n]?.focus();
  };
  const inRest = rest.some(([k]) => k === selected);
  return html`<div class="tabs-row">
    <div class="tabs" role="tablist" aria-label=${label} ref=${row} onKeyDown=${onKey}>
      ${shown.map(([k, title]) => html`<button type="button" role="tab" id=${`${idPrefix}-${k}`} data-tab=${k}
        aria-selected=${k === selected ? 'true' : 'false'} aria-controls=${panelId} tabindex=${k === selected || (inRest && k === shown[0][0]) ? '0' : '-1'}
        onClick=${() => onSelect(k)}>${title}</button>`)}
    </div>
    ${rest.length
      ? html`<${Menu} label=${`More ${label.toLowerCase()}`} name="more-tabs" class=${`tabs-more${inRest ? ' selected' : ''}`} value=${inRest ? selected : ''}
          text=${inRest ? rest.find(([k]) => k === selected)[1] : 'More'} options=${rest} onSelect=${onSelect} align="end" />`
      : null}
  </div>`;
}
