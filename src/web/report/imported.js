// A line above the numbers when the report's period includes imported history (Plausible's, Fathom's or Umami's),
// so whoever reads the report (owners, viewers, share pages) knows which days were not recorded by Plumb, and a
// note on each panel showing a number the imported days in its period lack (ImportedGap), since that number then
// counts recorded hits only. It reads only which products and days (/v1/sites/{id}/imported_days), never the
// imports themselves.

import { api } from '../api.js';
import { describeImports, importsIn } from '../pages/imports.js';
import { html, useEffect, useState } from '../ui.js';
import { periodOf, useSite } from './data.js';
import { useReportState } from './state.js';

/** The site's imported days as the imports list writes them; [] when they cannot be had. */
async function fetchImportedDays(siteId) {
  try {
    const list = await api('GET', `/v1/sites/${encodeURIComponent(siteId)}/imported_days`);
    return list.data.map((d) => ({ status: 'done', kind: d.kind, first_hit_at: d.first_day, last_hit_at: d.last_day }));
  } catch {
    return [];
  }
}

/** One answer per site for the notice and every panel's note, asked again after a minute (an import may finish). */
const known = new Map();
function importedDays(siteId) {
  const hit = known.get(siteId);
  if (hit && Date.now() - hit.at < 60_000) return hit.days;
  const days = fetchImportedDays(siteId);
  known.set(siteId, { at: Date.now(), days });
  return days;
}

/** The imports whose days meet the report's period. */
function useImportsInPeriod() {
  const site = useSite();
  const state = useReportState();
  const [items, setItems] = useState([]);
  useEffect(() => {
    let live = true;
    importedDays(site.id).then((list) => live && setItems(list));
    return () => {
      live = false;
    };
  }, [site.id]);
  return importsIn(items, periodOf(state, site.timeZone));
}

const PRODUCT = { plausible: 'Plausible', fathom: 'Fathom' };

/**
 * The fields each product's daily figures have a table of (docs/reports.md, "Imported data"); a breakdown by any
 * other field counts recorded hits only over their days.
 */
const TABLES = {
  plausible: new Set(['pathname', 'entry_page', 'exit_page', 'referrer_source', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content', 'utm_term',
    'browser', 'operating_system', 'device_type', 'country_code']),
  fathom: new Set(['pathname', 'referrer_hostname', 'browser', 'country_code', 'device_type']),
};

/**
 * The numbers each product's daily figures lack, by where they are shown (docs/reports.md, "Imported data"):
 * `totals` (headline, chart: the site's or a goal's), `field` (a breakdown table's columns). Umami's history is
 * hits and lacks nothing.
 */
const LACKS = {
  plausible: { totals: ['unique_conversions', 'conversion_rate', 'value'], field: [] },
  // Fathom's hourly rows have no visitor count that adds up to a day's (Fathom counts visitor-days in UTC), and
  // by field pageviews only.
  fathom: { totals: ['visitors', 'unique_conversions', 'conversion_rate', 'value'], field: ['visitors', 'visits', 'bounce_rate', 'avg_duration'] },
};

const NAMES = {
  visitors: 'visitors', visits: 'visits', views_per_visit: 'views per visit', bounce_rate: 'bounce rate', avg_duration: 'visit duration',
  unique_conversions: 'unique completions', conversion_rate: 'conversion rate', value: 'value',
};
const words = (list) => (list.length < 2 ? list.join('') : `${list.slice(0, -1).join(', ')} and ${list[list.length - 1]}`);

/**
 * A note on a panel whose period includes daily imported figures lacking numbers it shows: those count what Plumb
 * recorded only, over the imported days too (never read as a drop to 0). `metrics`: the keys shown; `field`: the
 * breakdown's field (its table), or none for totals; `goal`: a goal's numbers (imported completions count in its
 * totals only).
 */
export function ImportedGap({ metrics, field, goal }) {
  const overlapping = useImportsInPeriod().filter((i) => LACKS[i.kind]);
  const notes = [];
  for (const kind of [...new Set(overlapping.map((i) => i.kind))]) {
    if (field !== undefined && (goal || !TABLES[kind].has(field))) {
      notes.push(`${PRODUCT[kind]}'s imported days are not in this table (${goal ? 'its goal completions are daily totals' : 'its export has no table by this field'}): it counts what Plumb recorded.`);
      continue;
    }
    const lacking = metrics.filter((m) => (field === undefined ? LACKS[kind].totals : LACKS[kind].field).includes(m));
    if (lacking.length) notes.push(`${PRODUCT[kind]}'s export has no ${words(lacking.map((m) => NAMES[m] ?? m))}${field === undefined ? '' : ' by this field'}: over its imported days ${lacking.length > 1 ? 'these count' : 'this counts'} what Plumb recorded only.`);
  }
  if (notes.length === 0) return null;
  return html`<p class="muted imported-gap" data-imported-gap=${[...new Set(overlapping.map((i) => i.kind))].join(' ')}>${notes.join(' ')}</p>`;
}

export function ImportedNotice() {
  const overlapping = useImportsInPeriod();
  if (overlapping.length === 0) return null;
  // Umami's events were imported as hits and count everywhere; Plausible's and Fathom's are daily figures that
  // only some reports can use (docs/reports.md, "Imported data").
  const daily = overlapping.some((i) => i.kind === 'plausible' || i.kind === 'fathom');
  return html`<p class="notice imported-notice" data-imported-notice="">
    This period includes imported history: ${describeImports(overlapping)}.${daily
      ? ' Daily figures from Plausible or Fathom count over whole days for each number they hold exactly (totals, and tables by one of their fields); a number they lack shows what Plumb recorded, as the panel says.'
      : ''}
  </p>`;
}
