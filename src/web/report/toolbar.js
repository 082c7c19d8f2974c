// The report's toolbar: the date range (named or custom, ISO dates in the site's time zone), what to compare with,
// the live count (which opens the realtime view) and the "export everything" button.

import { DateRangePicker } from '../components/date-range-picker.js';
import { Menu } from '../components/menu.js';
import { Icon } from '../icons.js';
import { RANGES } from '../range.js';
import { html, useState } from '../ui.js';
import { periodOf, useSite } from './data.js';
import { exportEverything } from './export.js';
import { Realtime } from './realtime.js';
import { COMPARISONS, setReport, useReportState } from './state.js';

export function Toolbar() {
  const site = useSite();
  const state = useReportState();
  const period = periodOf(state, site.timeZone);
  const [exporting, setExporting] = useState('');
  const exportAll = async () => {
    setExporting('Preparing the zip…');
    try {
      await exportEverything(site, state);
      setExporting('');
    } catch {
      setExporting('The export could not be made. Try again in a moment.');
    }
  };
  return html`<div class="toolbar report-toolbar">
    <${DateRangePicker} ranges=${RANGES} range=${state.range} from=${period.from} to=${period.to} describedBy="range-note"
      onRange=${(range) => setReport({ range })} onCustom=${({ from, to }) => setReport({ range: 'custom', from, to })} />
    <${Menu} label="Compare with" name="compare" value=${state.compare} options=${COMPARISONS} onSelect=${(compare) => setReport({ compare })} />
    <span class="toolbar-end">
      <${Realtime} />
      <button type="button" class="secondary export-all" onClick=${exportAll} disabled=${exporting === 'Preparing the zip…'}
        title="A zip of CSV files: totals, the chart, goals and every breakdown"><${Icon} name="download" /><span class="label">Export everything (zip)</span></button>
    </span>
    <span class="muted small export-status" role="status" aria-live="polite">${exporting}</span>
    <small id="range-note" class="muted range-note visually-hidden">${`${period.from} to ${period.to}, in the site's time zone (${site.timeZone}).`}</small>
  </div>`;
}
