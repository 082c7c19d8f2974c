// A small trend line drawn as SVG: a series of counts, its shape only (the numbers are written next to it).

import { html } from '../ui.js';

const WIDTH = 120;
const HEIGHT = 32;
const PAD = 2;

/** `values` left to right (oldest first), scaled to the largest; a flat line at the bottom when all are 0. */
export function Sparkline({ values, label }) {
  const peak = Math.max(1, ...values);
  const step = values.length > 1 ? (WIDTH - 2 * PAD) / (values.length - 1) : 0;
  const points = values.map((v, i) => [PAD + i * step, HEIGHT - PAD - (v / peak) * (HEIGHT - 2 * PAD)]);
  const line = points.map(([x, y]) => `${x.toFixed(1)},${y.toFixed(1)}`).join(' ');
  const area = `${PAD},${HEIGHT - PAD} ${line} ${(PAD + (values.length - 1) * step).toFixed(1)},${HEIGHT - PAD}`;
  return html`<svg class="sparkline" viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} width=${WIDTH} height=${HEIGHT} role="img" aria-label=${label} data-values=${values.join(',')}>
    <polygon class="sparkline-area" points=${area} />
    <polyline class="sparkline-line" points=${line} />
  </svg>`;
}
