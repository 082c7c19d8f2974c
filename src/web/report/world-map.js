// The world map of the Locations panel: countries shaded by their visitors (or a goal's completions), the same
// rows /v1 answers for field_grouping=country_code, drawn here as SVG from the outlines Plumb serves
// (world-atlas' countries-110m); a country with visitors filters the page when clicked, or with Enter or Space.

import { geoEqualEarth, geoPath } from 'd3-geo';
import { feature } from 'topojson-client';
import { fmtInt } from '../format.js';
import { html, useEffect, useState } from '../ui.js';
import { displayValue } from './properties.js';

const WIDTH = 960;
const HEIGHT = 440;
const STEPS = 5;

/**
 * world-atlas names countries by ISO 3166-1 numeric code ("276"); CLDR, through Intl, knows each as an alias of the
 * two-letter code the API records ("DE"). Three shapes have no numeric code: Kosovo has the XK geo databases use,
 * Northern Cyprus and Somaliland none (left grey).
 */
function alpha2(shape) {
  if (shape.properties?.name === 'Kosovo') return 'XK';
  if (!/^\d{3}$/.test(shape.id ?? '')) return '';
  try {
    const region = new Intl.Locale(Intl.getCanonicalLocales(`und-${shape.id}`)[0]).region ?? '';
    return /^[A-Z]{2}$/.test(region) ? region : '';
  } catch {
    return '';
  }
}

// The outlines are fetched and projected once per page, whatever the number of redraws.
let shapes;
function loadShapes() {
  shapes ??= fetch('/dashboard/world-110m.json')
    .then((res) => {
      if (!res.ok) throw new Error(`the map outlines answered ${res.status}`);
      return res.json();
    })
    .then((topology) => {
      // Antarctica takes a sixth of the height and is nobody's market; its visitors still show in the list.
      const countries = feature(topology, topology.objects.countries).features.filter((f) => f.id !== '010');
      const projection = geoEqualEarth().fitExtent([[4, 4], [WIDTH - 4, HEIGHT - 4]], { type: 'FeatureCollection', features: countries });
      const path = geoPath(projection);
      return countries.map((f) => ({ code: alpha2(f), name: f.properties?.name ?? '', d: path(f) }));
    })
    .catch((err) => {
      shapes = undefined;
      throw err;
    });
  return shapes;
}

/** Step limits: the top of each shade, from a fifth of the largest number to all of it (fewer when numbers are small). */
export function shadeSteps(max) {
  const tops = [];
  for (let i = 1; i <= STEPS; i++) {
    const top = Math.ceil((max * i) / STEPS);
    if (top > (tops.at(-1) ?? 0)) tops.push(top);
  }
  return tops;
}

const stepWords = (low, high) => (low === high ? fmtInt(high) : `${fmtInt(low)}–${fmtInt(high)}`);

const shadeOf = (value, tops) => (value > 0 ? tops.findIndex((top) => value <= top) + 1 : 0);

/**
 * rows: /v1's rows grouped by country_code; metric: the column shaded ('visitors' or 'conversions'), its words;
 * onPick(code): a country clicked, or undefined when the page is already filtered to one country.
 */
export function WorldMap({ rows, metric, metricLabel, onPick }) {
  const [outlines, setOutlines] = useState(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let live = true;
    loadShapes().then((s) => live && setOutlines(s), () => live && setFailed(true));
    return () => {
      live = false;
    };
  }, []);
  if (failed) return html`<p class="muted small">The map could not be loaded; the list below has every country.</p>`;
  if (!outlines) return html`<div class="world-map placeholder" aria-hidden="true"></div>`;
  const byCode = new Map(rows.filter((r) => r.country_code).map((r) => [r.country_code, Number(r[metric]) || 0]));
  const tops = shadeSteps(Math.max(0, ...byCode.values()));
  const words = metricLabel.toLowerCase();
  return html`<figure class="world-map">
    <svg viewBox=${`0 0 ${WIDTH} ${HEIGHT}`} role="group" aria-label=${`World map of ${words} by country`}>
      ${outlines.map(({ code, name, d }) => {
        const value = byCode.get(code) ?? 0;
        const place = code ? displayValue('country_code', code) : name;
        const active = value > 0 && onPick;
        const label = `${place}: ${fmtInt(value)} ${words}`;
        return html`<path d=${d} class=${`shade-${shadeOf(value, tops)}${active ? ' pick' : ''}`} data-country=${code || null} data-value=${value}
          tabindex=${active ? '0' : null} role=${active ? 'button' : null} aria-label=${active ? `${label}. Filter by this country` : null}
          onClick=${active ? () => onPick(code) : null}
          onKeyDown=${active ? (e) => {
            if (e.key === 'Enter' || e.key === ' ') {
              e.preventDefault();
              onPick(code);
            }
          } : null}><title>${label}</title></path>`;
      })}
    </svg>
    <figcaption class="map-legend">
      <span class="muted small">${metricLabel}</span>
      <span class="legend-step"><span class="swatch shade-0" aria-hidden="true"></span>0</span>
      ${tops.map((top, i) => html`<span class="legend-step"><span class=${`swatch shade-${i + 1}`} aria-hidden="true"></span>${stepWords(i === 0 ? 1 : tops[i - 1] + 1, top)}</span>`)}
    </figcaption>
  </figure>`;
}
