// A reference implementation of docs/reports.md, "Funnels", in plain TypeScript: the oracle's visits (oracle.ts,
// sessionised from the raw import lines) in, the `steps` of GET /v1/sites/{site_id}/funnels/{id}/report out. Every
// rule is done here again the slow and obvious way, independent of SQL and of src/report/.

import { localToUtc, passes, type Filter, type OracleHit, type Prepared } from './oracle.js';

export interface OracleStep {
  type: 'page' | 'event';
  value: string;
}

export interface OracleStepRow {
  step: string;
  type: 'page' | 'event';
  value: string;
  visits: string;
  visitors: string;
  conversion_rate: string;
  step_conversion_rate: string;
  drop_off: string;
  median_seconds: string | null;
}

/** A page step's value as a matcher: `*` (one or more in a row) any run of characters, the rest literal. */
function pageMatcher(value: string): (path: string) => boolean {
  if (!value.includes('*')) return (path) => path === value;
  const parts = value.split(/\*+/);
  return (path) => {
    // Anchored at both ends; each literal part found as early as possible after the previous one.
    if (!path.startsWith(parts[0]!)) return false;
    let at = parts[0]!.length;
    for (let i = 1; i < parts.length - 1; i++) {
      const found = path.indexOf(parts[i]!, at);
      if (found < 0) return false;
      at = found + parts[i]!.length;
    }
    const last = parts[parts.length - 1]!;
    return path.length - at >= last.length && path.endsWith(last);
  };
}

function stepMatches(step: OracleStep, hit: OracleHit): boolean {
  if (step.type === 'event') return hit.type === 'event' && hit.eventName === step.value;
  return hit.type === 'pageview' && pageMatcher(step.value)(hit.attributes.pathname);
}

const decimals = (scaled: number, places: number): string => {
  const text = (scaled / 10 ** places).toFixed(places);
  return text.includes('.') ? text.replace(/0+$/, '').replace(/\.$/, '') : text;
};
const rate = (n: number, d: number): string => (d === 0 ? '0' : decimals(Math.floor((2 * n * 10_000 + d) / (2 * d)), 4));

/**
 * The funnel over local `from` to `to` (inclusive to the second) in `zone`: the answer's `steps`. Within a visit the
 * range's pageviews and events are taken by time, a pageview before an event at the same time, then (same time,
 * same kind) by the sum of 2^(k-1) over the steps k they match, smallest first.
 */
export function funnelOracle(data: Prepared, steps: readonly OracleStep[], filters: readonly Filter[], from: string, to: string, zone: string): OracleStepRow[] {
  const start = localToUtc(from, zone);
  const end = localToUtc(to, zone) + 1000;
  const reachedAt: number[][] = steps.map(() => []);
  const gaps: number[][] = steps.map(() => []);
  const visitorSets: Set<string>[] = steps.map(() => new Set());
  for (const visit of data.visits) {
    const inRange = visit.hits.filter((h) => h.at >= start && h.at < end && (h.type === 'pageview' || h.type === 'event'));
    if (filters.length > 0 && !inRange.some((h) => h.type === 'pageview' && passes(h, filters))) continue;
    const list = inRange
      .map((h) => ({ hit: h, rank: h.type === 'event' ? 1 : 0, mask: steps.reduce((m, s, k) => m + (stepMatches(s, h) ? 2 ** k : 0), 0) }))
      .filter((e) => e.mask > 0)
      .sort((a, b) => a.hit.at - b.hit.at || a.rank - b.rank || a.mask - b.mask);
    const used = new Set<number>();
    let previous: number | undefined;
    for (let k = 0; k < steps.length; k++) {
      const index = list.findIndex((e, i) => !used.has(i) && (previous === undefined || e.hit.at >= previous) && stepMatches(steps[k]!, e.hit));
      if (index < 0) break;
      const at = list[index]!.hit.at;
      used.add(index);
      reachedAt[k]!.push(at);
      visitorSets[k]!.add(list[index]!.hit.visitorDay);
      if (previous !== undefined) gaps[k]!.push(at - previous);
      previous = at;
    }
  }
  const visits = reachedAt.map((r) => r.length);
  return steps.map((s, k) => {
    let median: string | null = null;
    if (k > 0 && visits[k]! > 0) {
      const sorted = [...gaps[k]!].sort((a, b) => a - b);
      const n = sorted.length;
      const middle = n % 2 === 1 ? 2 * sorted[(n - 1) / 2]! : sorted[n / 2 - 1]! + sorted[n / 2]!;
      median = decimals(Math.floor((middle + 10) / 20), 2);
    }
    return {
      step: String(k + 1),
      type: s.type,
      value: s.value,
      visits: String(visits[k]),
      visitors: String(visitorSets[k]!.size),
      conversion_rate: rate(visits[k]!, visits[0]!),
      step_conversion_rate: k === 0 ? '1' : rate(visits[k]!, visits[k - 1]!),
      drop_off: String(k === 0 ? 0 : visits[k - 1]! - visits[k]!),
      median_seconds: median,
    };
  });
}
