// The headline: the period's totals (visitors, visits, pageviews, views per visit, bounce rate, visit duration,
// conversions; a goal's completions, unique completions, conversion rate and value when the page is filtered to
// one), each with its change against the comparison period. Clicking a metric draws it on the chart.

import { html } from '../ui.js';
import { explainError, fetchTotals, goalOf, metricKeys, usePanel, useSite } from './data.js';
import { ImportedGap } from './imported.js';
import { change, METRICS, metricLabel } from './metrics.js';
import { setReport, useReportState } from './state.js';

const ARROWS = { up: '↑', down: '↓', flat: '→' };
const COMPARED = { previous: 'the previous period', year: 'the same period last year' };

export function Headline() {
  const site = useSite();
  const state = useReportState();
  const goal = goalOf(site, state);
  const { loading, error, data, previous, previousPeriod } = usePanel((period, signal) => fetchTotals(site, state, period, undefined, signal), []);
  const keys = metricKeys(site, state);
  const selected = keys.includes(state.metric) ? state.metric : keys[0];
  if (error) return html`<p class="status error" role="alert">${explainError(error)}</p>`;
  return html`<section aria-label="Totals" class="headline" aria-busy=${loading ? 'true' : 'false'}>
    <ul class="totals">
      ${keys.map((key) => {
        const m = METRICS.get(key);
        const value = data ? m.format(data[key], goal) : '…';
        const c = data && previous ? change(key, data[key], previous[key]) : null;
        const before = previous ? m.format(previous[key], goal) : '';
        const words = c
          ? `${c.direction === 'flat' ? 'no change' : `${c.direction} ${c.text}`} from ${before} in ${COMPARED[state.compare]} (${previousPeriod.from} to ${previousPeriod.to})`
          : '';
        return html`<li key=${key}>
          <button type="button" class="metric" data-metric=${key} aria-pressed=${key === selected ? 'true' : 'false'}
            title=${`Draw ${metricLabel(key, goal)} on the chart`} onClick=${() => setReport({ metric: key })}>
            <span class="metric-label">${metricLabel(key, goal)}</span>
            <span class="metric-value" data-value>${value}</span>
            ${c
              ? html`<span class=${`change ${c.direction} ${c.good === null ? 'neutral' : c.good ? 'good' : 'bad'}`} data-change=${c.direction}
                  data-previous=${String(previous[key])} title=${words}>
                  <span aria-hidden="true">${ARROWS[c.direction]} </span><span data-change-text>${c.text}</span><span class="visually-hidden">${`, ${words}`}</span></span>`
              : null}
          </button>
        </li>`;
      })}
    </ul>
    <${ImportedGap} metrics=${keys} />
  </section>`;
}
