// The headline: the period's totals (visitors, visits, pageviews, views per visit, bounce rate, visit duration,
// conversions; a goal's completions, unique completions, conversion rate and value when the page is filtered to
// one), each with its change against the comparison period, and the period compared with in words (only the same
// part of its last day when today is not over). Clicking a metric draws it on the chart.

import { html } from '../ui.js';
import { explainError, fetchTotals, goalOf, metricKeys, usePanel, useSite } from './data.js';
import { ImportedGap } from './imported.js';
import { change, DEFINITIONS, METRICS, metricLabel } from './metrics.js';
import { setReport, useReportState } from './state.js';

const ARROWS = { up: '↑', down: '↓', flat: '→', none: '' };
const COMPARED = { previous: 'the previous period', year: 'the same period last year' };

/** A comparison period in words: "2026-12-04 until 14:05", "2026-11-01 to 2026-11-30". */
function periodWords({ from, to, until }) {
  const days = from === to ? from : `${from} to ${to}`;
  return until ? `${days} until ${until.slice(0, 5)}` : days;
}

/** A change as a screen reader says it, up to the period it is against ("up 12.5% from 1,204 in"). */
function changeWords(c, key, before) {
  if (c.direction === 'none') return `${c.text}: no ${key === 'conversion_rate' ? 'visitors' : 'visits'} to compare with in`;
  if (c.text === 'new') return 'new: none in';
  return `${c.direction === 'flat' ? 'no change' : `${c.direction} ${c.text}`} from ${before} in`;
}

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
        const c = data && previous ? change(key, data, previous) : null;
        const before = previous ? m.format(previous[key], goal) : '';
        const words = c ? `${changeWords(c, key, before)} ${COMPARED[state.compare]} (${periodWords(previousPeriod)})` : '';
        const definition = goal ? undefined : DEFINITIONS.get(key);
        return html`<li key=${key}>
          <button type="button" class="metric" data-metric=${key} aria-pressed=${key === selected ? 'true' : 'false'}
            title=${`${definition ? `${definition} ` : ''}Draw ${metricLabel(key, goal)} on the chart`} onClick=${() => setReport({ metric: key })}>
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
    ${data && previousPeriod
      ? html`<p class="compare-note muted small" data-compared-from=${previousPeriod.from} data-compared-to=${`${previousPeriod.to} ${previousPeriod.until ?? '23:59:59'}`}>
          ${`Compared with ${COMPARED[state.compare]}: ${periodWords(previousPeriod)}`}${previousPeriod.until ? ' (today is not over: the same part of the last day).' : '.'}</p>`
      : null}
    ${!goal && data && data.visitors > data.visits
      ? html`<p class="compare-note muted small" data-visitors-note>Visitors count people per day and Visits count sessions: one visit across
          midnight UTC is one visit but two visitor-days, so Visitors can be more than Visits.</p>`
      : null}
    <${ImportedGap} metrics=${keys} />
  </section>`;
}
