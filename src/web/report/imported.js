// A line above the numbers when the report's period includes imported history (Plausible's, Fathom's or Umami's),
// so whoever reads the report (owners, viewers, share pages) knows which days were not recorded by Plumb. It reads
// only which products and days (/v1/sites/{id}/imported_days), never the imports themselves.

import { api } from '../api.js';
import { describeImports, importsIn } from '../pages/imports.js';
import { html, useEffect, useState } from '../ui.js';
import { periodOf, useSite } from './data.js';
import { useReportState } from './state.js';

/** The site's imported days as the imports list writes them; [] when they cannot be had. */
async function importedDays(siteId) {
  try {
    const list = await api('GET', `/v1/sites/${encodeURIComponent(siteId)}/imported_days`);
    return list.data.map((d) => ({ status: 'done', kind: d.kind, first_hit_at: d.first_day, last_hit_at: d.last_day }));
  } catch {
    return [];
  }
}

export function ImportedNotice() {
  const site = useSite();
  const state = useReportState();
  const [items, setItems] = useState([]);
  useEffect(() => {
    importedDays(site.id).then(setItems);
  }, [site.id]);
  const overlapping = importsIn(items, periodOf(state, site.timeZone));
  if (overlapping.length === 0) return null;
  // Umami's events were imported as hits and count everywhere; Plausible's and Fathom's are daily figures that
  // only some reports can use (docs/reports.md, "Imported data").
  const daily = overlapping.some((i) => i.kind === 'plausible' || i.kind === 'fathom');
  return html`<p class="notice imported-notice" data-imported-notice="">
    This period includes imported history: ${describeImports(overlapping)}.${daily
      ? ' Daily figures from Plausible or Fathom count over whole days where they answer a number exactly (totals, and tables by one of their fields); other numbers show what Plumb recorded.'
      : ''}
  </p>`;
}
