// The report's time chart: uPlot (served from our own origin), visits and pageviews per bucket, with the
// site's milestones drawn as labelled vertical lines.

import uPlot from 'uplot';
import { h } from './dom.js';
import { wallSeconds } from './range.js';

const HOUR = 3600;
const DAY = 86_400;
const INCREMENTS = {
  hour: [HOUR, 2 * HOUR, 3 * HOUR, 6 * HOUR, 12 * HOUR, DAY],
  day: [DAY, 2 * DAY, 7 * DAY, 14 * DAY, 28 * DAY],
  month: [31 * DAY, 92 * DAY, 366 * DAY],
};

function label(seconds, grouping) {
  const iso = new Date(seconds * 1000).toISOString();
  if (grouping === 'hour') return iso.slice(11, 13) === '00' ? `${iso.slice(5, 10)} 00:00` : `${iso.slice(11, 13)}:00`;
  if (grouping === 'month') return iso.slice(0, 7);
  return iso.slice(5, 10);
}

/** Draws a dashed line and the name at each milestone inside the visible range. */
function milestonePlugin(milestones) {
  return {
    hooks: {
      draw: (u) => {
        const { ctx } = u;
        const { left, top, width, height } = u.bbox;
        ctx.save();
        ctx.strokeStyle = '#b45309';
        ctx.fillStyle = '#b45309';
        ctx.lineWidth = Math.max(1, devicePixelRatio);
        ctx.setLineDash([4 * devicePixelRatio, 4 * devicePixelRatio]);
        ctx.font = `${11 * devicePixelRatio}px system-ui, sans-serif`;
        for (const m of milestones) {
          const x = Math.round(u.valToPos(wallSeconds(m.milestone_date), 'x', true));
          if (x < left || x > left + width) continue;
          ctx.beginPath();
          ctx.moveTo(x, top);
          ctx.lineTo(x, top + height);
          ctx.stroke();
          ctx.fillText(m.name, Math.min(x + 4 * devicePixelRatio, left + width - ctx.measureText(m.name).width), top + 12 * devicePixelRatio);
        }
        ctx.restore();
      },
    },
  };
}

/**
 * Renders into `container`; returns a function that resizes the chart to the container's width.
 * `rows`: aggregation rows with `timestamp`, `visits`, `pageviews`; `allBuckets`: every bucket of the range.
 */
export function drawChart(container, { rows, allBuckets, grouping, milestones }) {
  const byBucket = new Map(rows.map((r) => [r.timestamp, r]));
  const xs = allBuckets.map(wallSeconds);
  const visits = allBuckets.map((b) => Number(byBucket.get(b)?.visits ?? 0));
  const pageviews = allBuckets.map((b) => Number(byBucket.get(b)?.pageviews ?? 0));
  container.replaceChildren();
  const width = () => Math.max(280, container.clientWidth || 600);
  const plot = new uPlot(
    {
      width: width(),
      height: 240,
      // Timestamps are site wall-clock times read as UTC (range.js): label them in UTC to show them unchanged.
      tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
      cursor: { drag: { x: false, y: false } },
      legend: { live: true },
      scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(4, Math.ceil(max * 1.1))] } },
      // Ticks on whole buckets, labelled as buckets: days as MM-DD, hours as HH:00, months as YYYY-MM.
      axes: [{ incrs: INCREMENTS[grouping], values: (_u, splits) => splits.map((s) => label(s, grouping)) }, { size: 50 }],
      series: [
        { label: grouping === 'hour' ? 'Hour' : grouping === 'month' ? 'Month' : 'Day' },
        { label: 'Visits', stroke: '#2563eb', width: 2, fill: 'rgba(37, 99, 235, 0.08)', points: { show: xs.length <= 62 } },
        { label: 'Pageviews', stroke: '#059669', width: 2, points: { show: xs.length <= 62 } },
      ],
      plugins: [milestonePlugin(milestones)],
    },
    [xs, visits, pageviews],
    container,
  );
  return () => plot.setSize({ width: width(), height: 240 });
}

/** The same numbers as text, for screen readers and for anyone who prefers a table. */
export function chartSummary(milestones) {
  if (milestones.length === 0) return null;
  return h(
    'p',
    { class: 'muted milestones' },
    'Milestones: ',
    milestones.map((m, i) => [i ? ', ' : '', h('span', { class: 'milestone' }, `${m.name} (${m.milestone_date.slice(0, 10)})`)]),
  );
}
