// The report's toolbar: the date range (named or custom, in the site's time zone), what to compare with, and
// the "export everything" button.

import { RANGES } from '../range.js';
import { Field } from '../field.js';
import { html, useState } from '../ui.js';
import { periodOf, useSite } from './data.js';
import { exportEverything } from './export.js';
import { COMPARISONS, setReport, useReportState } from './state.js';

export function Toolbar() {
  const site = useSite();
  const state = useReportState();
  const period = periodOf(state, site.timeZone);
  const [from, setFrom] = useState(period.from);
  const [to, setTo] = useState(period.to);
  const [exporting, setExporting] = useState('');
  const onRange = (e) => {
    const range = e.currentTarget.value;
    if (range === 'custom') {
      setFrom(period.from);
      setTo(period.to);
      setReport({ range, from: period.from, to: period.to });
    } else setReport({ range });
  };
  const exportAll = async () => {
    setExporting('Preparing the zip…');
    try {
      await exportEverything(site, state);
      setExporting('');
    } catch {
      setExporting('The export could not be made. Try again in a moment.');
    }
  };
  return html`<div class="toolbar">
    <${Field} label="Date range"><select name="range" value=${state.range} onChange=${onRange} aria-describedby="range-note">
        ${RANGES.map(([k, text]) => html`<option value=${k}>${text}</option>`)}
      </select><//>
    ${state.range === 'custom'
      ? html`<form class="row custom" onSubmit=${(e) => {
          e.preventDefault();
          setReport({ from, to });
        }}>
          <${Field} label="From"><input type="date" name="from" value=${from} onInput=${(e) => setFrom(e.currentTarget.value)} required /><//>
          <${Field} label="To"><input type="date" name="to" value=${to} onInput=${(e) => setTo(e.currentTarget.value)} required /><//>
          <button type="submit">Apply</button>
        </form>`
      : null}
    <${Field} label="Compare with"><select name="compare" value=${state.compare} onChange=${(e) => setReport({ compare: e.currentTarget.value })}>
        ${COMPARISONS.map(([k, text]) => html`<option value=${k}>${text}</option>`)}
      </select><//>
    <button type="button" class="secondary" onClick=${exportAll} disabled=${exporting === 'Preparing the zip…'}>Export everything (zip)</button>
    <span class="muted small" role="status" aria-live="polite">${exporting}</span>
    <small id="range-note" class="muted range-note">${`${period.from} to ${period.to}, in the site's time zone (${site.timeZone}).`}</small>
  </div>`;
}
