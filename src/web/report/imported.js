// A line above the numbers when the report's period includes imported history (Plausible's or Umami's), so an
// owner knows which days were not recorded by Plumb. Owners and admins see it: they are who may list imports.

import { describeImports, importsIn, siteImports } from '../imports.js';
import { html, useEffect, useState } from '../ui.js';
import { periodOf, useSite } from './data.js';
import { useReportState } from './state.js';

export function ImportedNotice() {
  const site = useSite();
  const state = useReportState();
  const [items, setItems] = useState([]);
  useEffect(() => {
    if (site.owner) siteImports(site.id).then(setItems);
  }, [site.id]);
  const overlapping = importsIn(items, periodOf(state, site.timeZone));
  if (overlapping.length === 0) return null;
  // Umami's events were imported as hits and count everywhere; Plausible's are daily figures that only some
  // reports can use (docs/reports.md, "Imported data").
  const daily = overlapping.some((i) => i.kind === 'plausible');
  return html`<p class="notice imported-notice" data-imported-notice="">
    This period includes imported history: ${describeImports(overlapping)}.${daily
      ? ' Daily figures from Plausible count over whole days where they answer a number exactly (totals, and tables by one of their fields); other numbers show what Plumb recorded.'
      : ''}
  </p>`;
}
