// The chart: the selected headline metric per hour, day, week or month (automatic or chosen), the comparison
// period as a dashed line, milestones as labelled lines, as an area or bars. Tooltips name the bucket in the
// site's time zone and the viewer's locale; buckets after now are not drawn. The same numbers are in a table
// under the chart for keyboards and screen readers.

import uPlot from 'uplot';
import { theme } from '../theme.js';
import { useStore } from '../store.js';
import { autoInterval, intervalsFor, nowIn, wallSeconds } from '../range.js';
import { Menu } from '../components/menu.js';
import { html, useEffect, useRef } from '../ui.js';
import { explainError, fetchSeries, goalOf, metricKeys, periodOf, usePanel, useSite } from './data.js';
import { METRICS, metricLabel } from './metrics.js';
import { setReport, useReportState } from './state.js';
import { bucketTicks } from './ticks.js';

const HOUR = 3600;
const DAY = 86_400;
/** Tick spacings for hours and days; weeks and months are labelled at their buckets' starts (ticks.js). */
const INCREMENTS = {
  hour: [HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY],
  day: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY],
};
const COUNT_INCREMENTS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1e3, 2e3, 2.5e3, 5e3, 1e4, 2e4, 2.5e4, 5e4, 1e5, 2e5, 5e5, 1e6, 2e6, 5e6, 1e7, 1e8, 1e9];
const INTERVAL_WORDS = { hour: 'Hour', day: 'Day', week: 'Week', month: 'Month' };
/** The plot's height in CSS pixels: tall on a wide screen, a little lower on a phone so the page below shows. */
const plotHeight = (width) => (width < 560 ? 240 : 300);
const FONT = '"Inter Variable", system-ui, sans-serif';

/**
 * The x scale's ends: the buckets' first and last starts (or the last milestone), widened by half a bucket on each
 * side when drawn as bars, so that the first and last bars, centred on their buckets, are drawn whole.
 */
export function xRange(xs, lastX, bars) {
  const first = xs[0] ?? 0;
  if (!bars) return [first, lastX];
  const step = xs.length > 1 ? (xs[xs.length - 1] - first) / (xs.length - 1) : DAY;
  return [first - step / 2, lastX + step / 2];
}

const locale = navigator.language || 'en-US';
// Bucket times are site wall-clock times read as UTC (range.js), so formatting them in UTC shows them unchanged.
const formats = {
  hour: new Intl.DateTimeFormat(locale, { timeZone: 'UTC', hour: 'numeric', minute: '2-digit' }),
  day: new Intl.DateTimeFormat(locale, { timeZone: 'UTC', day: 'numeric', month: 'short' }),
  month: new Intl.DateTimeFormat(locale, { timeZone: 'UTC', month: 'short', year: 'numeric' }),
  full: new Intl.DateTimeFormat(locale, { timeZone: 'UTC', weekday: 'short', day: 'numeric', month: 'short', year: 'numeric' }),
  fullHour: new Intl.DateTimeFormat(locale, { timeZone: 'UTC', weekday: 'short', day: 'numeric', month: 'short', year: 'numeric', hour: 'numeric', minute: '2-digit' }),
};
const at = (seconds) => new Date(seconds * 1000);

function tickLabel(seconds, interval) {
  if (interval === 'hour') {
    const d = at(seconds);
    return d.getUTCHours() === 0 ? formats.day.format(d) : formats.hour.format(d);
  }
  return (interval === 'month' ? formats.month : formats.day).format(at(seconds));
}

/** A bucket in words: "Mon, 23 Nov 2026, 14:00", "week of Mon, 16 Nov 2026", "November 2026". */
export function bucketWords(bucket, interval) {
  const seconds = wallSeconds(bucket.start);
  if (interval === 'hour') return formats.fullHour.format(at(seconds));
  if (interval === 'week') return `${formats.full.format(at(wallSeconds(`${bucket.from} 00:00:00`)))} to ${formats.full.format(at(wallSeconds(`${bucket.to} 00:00:00`)))}`;
  if (interval === 'month') return formats.month.format(at(seconds));
  return formats.full.format(at(seconds));
}

const cssVar = (name) => getComputedStyle(document.documentElement).getPropertyValue(name).trim();

/** Dashed lines with names at the milestones inside the plot. */
function milestonePlugin(milestones, colour) {
  return {
    hooks: {
      draw: (u) => {
        const { ctx } = u;
        const { left, top, width, height } = u.bbox;
        const px = devicePixelRatio;
        ctx.save();
        ctx.strokeStyle = colour;
        ctx.fillStyle = colour;
        ctx.lineWidth = Math.max(1, px);
        ctx.setLineDash([4 * px, 4 * px]);
        ctx.font = `${11 * px}px ${FONT}`;
        // uPlot leaves its axis text settings on the context: set ours.
        ctx.textAlign = 'left';
        ctx.textBaseline = 'alphabetic';
        milestones.forEach((m, i) => {
          const x = Math.round(u.valToPos(wallSeconds(m.milestone_date), 'x', true));
          if (x < left - 1 || x > left + width + 1) return;
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x, top + height);
          ctx.stroke();
          const w = ctx.measureText(m.name).width;
          const tx = x + 4 * px + w > left + width ? x - 4 * px - w : x + 4 * px;
          ctx.fillText(m.name, tx, top + (12 + 13 * (i % 3)) * px);
        });
        ctx.restore();
      },
    },
  };
}

/** The tooltip: the bucket in words, the value, and the comparison bucket's value. */
function tooltipPlugin(tip, describe) {
  return {
    hooks: {
      setCursor: (u) => {
        const i = u.cursor.idx;
        if (i === null || i === undefined || u.cursor.left < 0) {
          tip.hidden = true;
          return;
        }
        const lines = describe(i);
        if (!lines) {
          tip.hidden = true;
          return;
        }
        tip.replaceChildren(...lines.map((text, n) => {
          const line = document.createElement(n === 0 ? 'strong' : 'div');
          line.textContent = text;
          return line;
        }));
        tip.hidden = false;
        const box = u.over.getBoundingClientRect();
        const host = tip.parentElement.getBoundingClientRect();
        const x = box.left - host.left + u.cursor.left;
        const wide = tip.offsetWidth;
        tip.style.left = `${Math.max(0, Math.min(host.width - wide, x - wide / 2))}px`;
        tip.style.top = `${box.top - host.top + Math.max(0, u.cursor.top - tip.offsetHeight - 12)}px`;
      },
    },
  };
}

function Plot({ series, previous, metric, goal, interval, type, milestones, timeZone, previousPeriod }) {
  const box = useRef(null);
  const tip = useRef(null);
  const said = useRef(null);
  const { dark } = useStore(theme);
  useEffect(() => {
    const el = box.current;
    const m = METRICS.get(metric);
    const now = nowIn(timeZone);
    const xs = series.map((b) => wallSeconds(b.start));
    // Buckets that have not begun are not drawn at all (null), rather than drawn as zero.
    const ys = series.map((b) => (b.start <= now ? b.values[metric] : null));
    const prev = previous ? series.map((_, i) => (previous[i] ? previous[i].values[metric] : null)) : null;
    const stroke = cssVar('--chart-line');
    const fill = cssVar('--chart-fill');
    const muted = cssVar('--muted');
    const grid = cssVar('--grid');
    const counts = ['visitors', 'visits', 'pageviews', 'conversions', 'unique_conversions'].includes(metric);
    const font = `12px ${FONT}`;
    const inPlot = milestones.map((mm) => wallSeconds(mm.milestone_date));
    const xMax = Math.max(xs[xs.length - 1] ?? 0, ...inPlot, (xs[0] ?? 0) + 1);
    const bars = type === 'bar' ? uPlot.paths.bars({ size: [0.7, 60], align: 0 }) : undefined;
    const width = () => Math.max(200, el.clientWidth || 600);
    const plot = new uPlot(
      {
        width: width(),
        height: plotHeight(width()),
        padding: [12, 32, 0, 4],
        cursor: { drag: { x: false, y: false }, points: { size: 8 } },
        legend: { show: false },
        scales: {
          x: { time: true, range: () => xRange(xs, xMax, type === 'bar') },
          y: { range: (_u, _min, max) => [0, Math.max(counts ? 4 : 0.0001, (max || 0) * 1.15)] },
        },
        axes: [
          {
            stroke: muted, font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid },
            ...(interval in INCREMENTS ? { incrs: INCREMENTS[interval] } : { splits: (u) => bucketTicks(xs, u.bbox.width / devicePixelRatio) }),
            values: (_u, splits) => splits.map((s) => tickLabel(s, interval)),
          },
          {
            stroke: muted, font, grid: { stroke: grid, width: 1 }, ticks: { stroke: grid },
            ...(counts ? { incrs: COUNT_INCREMENTS } : {}),
            values: (_u, splits) => splits.map((s) => m.format(s, goal)),
            // As wide as its longest label, so no label is ever cut at the left edge.
            size: (u, values) => {
              if (!values) return 40;
              u.ctx.font = `${12 * devicePixelRatio}px ${FONT}`;
              const widest = Math.max(...values.map((v) => u.ctx.measureText(String(v)).width)) / devicePixelRatio;
              return Math.ceil(widest) + 18;
            },
          },
        ],
        series: [
          {},
          { label: metricLabel(metric, goal), stroke, width: 2, fill: type === 'bar' ? stroke : fill, paths: bars, points: { show: type !== 'bar' && xs.length <= 62 } },
          ...(prev ? [{ label: 'Comparison', stroke: muted, width: 1.5, dash: [5, 4], points: { show: false }, ...(type === 'bar' ? { paths: uPlot.paths.linear() } : {}) }] : []),
        ],
        plugins: [
          milestonePlugin(milestones, cssVar('--milestone')),
          tooltipPlugin(tip.current, (i) => {
            const lines = [`${bucketWords(series[i], interval)} (${timeZone})`];
            if (ys[i] !== null) lines.push(`${metricLabel(metric, goal)}: ${m.format(ys[i], goal)}`);
            else lines.push('Not yet');
            if (prev && previous[i]) lines.push(`Compared with ${bucketWords(previous[i], interval)}: ${m.format(prev[i], goal)}`);
            if (document.activeElement === el && said.current) said.current.textContent = lines.join('. ');
            return lines;
          }),
        ],
      },
      prev ? [xs, ys, prev] : [xs, ys],
      el,
    );
    el.dataset.ready = String(xs.length);
    const resize = () => plot.setSize({ width: width(), height: plotHeight(width()) });
    window.addEventListener('resize', resize);
    // From the keyboard: arrows move the tooltip from bucket to bucket (Home and End to the ends), Escape hides it.
    let at = -1;
    const keys = (e) => {
      const last = xs.length - 1;
      const next = { ArrowRight: Math.min(last, at + 1), ArrowLeft: Math.max(0, at < 0 ? last : at - 1), Home: 0, End: last }[e.key];
      if (e.key === 'Escape') {
        at = -1;
        plot.setCursor({ left: -10, top: -10 });
        return;
      }
      if (next === undefined || last < 0) return;
      e.preventDefault();
      at = next;
      const value = ys[at] ?? prev?.[at] ?? 0;
      plot.setCursor({ left: plot.valToPos(xs[at], 'x'), top: plot.valToPos(value, 'y') });
    };
    const leave = () => {
      at = -1;
      plot.setCursor({ left: -10, top: -10 });
    };
    el.addEventListener('keydown', keys);
    el.addEventListener('blur', leave);
    return () => {
      window.removeEventListener('resize', resize);
      el.removeEventListener('keydown', keys);
      el.removeEventListener('blur', leave);
      plot.destroy();
    };
  }, [series, previous, metric, interval, type, milestones, dark, previousPeriod]);
  return html`<div class="chart-host">
    <div class="chart" ref=${box} role="application" aria-roledescription="chart" tabindex="0"
      aria-label=${`${metricLabel(metric, goal)} per ${interval}: arrow keys read the chart bucket by bucket; the numbers are also in the table below`}></div>
    <p class="visually-hidden" aria-live="polite" ref=${said}></p>
    <div class="chart-tip" ref=${tip} hidden role="presentation"></div>
  </div>`;
}

export function Chart() {
  const site = useSite();
  const state = useReportState();
  const goal = goalOf(site, state);
  const keys = metricKeys(site, state);
  const metric = keys.includes(state.metric) ? state.metric : keys[0];
  const result = usePanel(
    async (p, signal) => {
      const allowed = intervalsFor(p);
      const interval = state.interval !== 'auto' && allowed.includes(state.interval) ? state.interval : autoInterval(p);
      return { interval, metric, series: await fetchSeries(site, state, p, interval, metric, signal) };
    },
    [state.interval, metric],
  );
  const { loading, error, data, previous, period: shown, previousPeriod } = result;
  // The comparison period uses the same granularity as the period itself.
  const prevSeries = previous && data && previous.interval === data.interval ? previous.series : null;
  const inRange = shown ? site.milestones.filter((m) => m.milestone_date.slice(0, 10) >= shown.from && m.milestone_date.slice(0, 10) <= shown.to) : [];
  const shownMetric = METRICS.get(data ? data.metric : metric);
  return html`<section class="card chart-card" aria-labelledby="chart-h" aria-busy=${loading ? 'true' : 'false'}>
    <div class="chart-head">
      <h2 id="chart-h">${metricLabel(metric, goal)} over time</h2>
      <div class="row wrap chart-controls">
        <${Menu} label="Per" name="interval" value=${state.interval} align="end" onSelect=${(interval) => setReport({ interval })}
          options=${[['auto', `Auto${data ? ` (${INTERVAL_WORDS[data.interval].toLowerCase()})` : ''}`],
            ...intervalsFor(periodOf(state, site.timeZone)).map((i) => [i, `Per ${INTERVAL_WORDS[i].toLowerCase()}`])]} />
        <div class="segmented" role="group" aria-label="Chart type">
          ${['area', 'bar'].map((t) => html`<button type="button" class="secondary small" aria-pressed=${state.chart === t ? 'true' : 'false'}
            onClick=${() => setReport({ chart: t })}>${t === 'area' ? 'Area' : 'Bars'}</button>`)}
        </div>
      </div>
    </div>
    ${error ? html`<p class="status error" role="alert">${explainError(error)}</p>` : null}
    ${data
      ? html`<p class="chart-legend muted small">
          <span class="key current" aria-hidden="true"></span>${`${shown.from} to ${shown.to}`}
          ${prevSeries ? html`<span class="key previous" aria-hidden="true"></span>${`compared with ${previousPeriod.from} to ${previousPeriod.to}`}` : null}
        </p>`
      : null}
    ${data
      ? html`<${Plot} series=${data.series} previous=${prevSeries} metric=${data.metric} goal=${goal} interval=${data.interval} type=${state.chart}
          milestones=${inRange} timeZone=${site.timeZone} previousPeriod=${previousPeriod} />`
      : html`<div class="chart placeholder"><p class="muted">Loading…</p></div>`}
    ${inRange.length
      ? html`<p class="muted milestones">Milestones: ${inRange.map((mm, i) => html`${i ? ', ' : ''}<span class="milestone">${`${mm.name} (${mm.milestone_date.slice(0, 10)})`}</span>`)}</p>`
      : null}
    ${data
      ? html`<details class="chart-table">
          <summary>The chart's numbers as a table</summary>
          <table data-chart-table>
            <thead><tr><th scope="col">${INTERVAL_WORDS[data.interval]} (${site.timeZone})</th><th scope="col" class="num">${metricLabel(data.metric, goal)}</th>
              ${prevSeries ? html`<th scope="col" class="num">Comparison</th>` : null}</tr></thead>
            <tbody>
              ${data.series.map((b, i) => html`<tr data-bucket=${b.start}>
                <td>${bucketWords(b, data.interval)}</td>
                <td class="num" data-value>${b.start <= nowIn(site.timeZone) ? shownMetric.format(b.values[data.metric], goal) : 'not yet'}</td>
                ${prevSeries ? html`<td class="num">${prevSeries[i] ? shownMetric.format(prevSeries[i].values[data.metric], goal) : ''}</td>` : null}
              </tr>`)}
            </tbody>
          </table>
        </details>`
      : null}
  </section>`;
}
