// Funnels (docs/reports.md, "Funnels"): one statement that finds the range's visits with a hit of step 1, reads their
// hits matching a step, sorts each visit's into a list and walks the steps along it, then counts per step.

import { pageGoalPathRegex } from '../domain/page-goal-paths.js';
import type { FunnelStep } from '../store/types.js';
import { filterConditions, propConditions } from './conditions.js';
import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import { formatAggregate } from './format.js';
import { queryLevels } from './plan-choice.js';
import type { ReportQuery } from './query.js';

export const MIN_FUNNEL_STEPS = 2;
export const MAX_FUNNEL_STEPS = 8;

/**
 * Each matching hit becomes one integer, so a visit's list sorts with a plain sort and a step's test is integer
 * arithmetic: ((epoch ms * 2 + rank) * 256 + mask), rank 0 for a pageview and 1 for an event (a pageview first at
 * equal times), mask bit k-1 set when the hit matches step k (8 steps: 8 bits). Hits at the same time and of the
 * same rank are told apart by their mask only, which is all a step looks at, so any order of equal keys gives the
 * same answer. Times of 2000-2099 stay far below 2^63.
 */
const MASK_SPAN = 256;
const TIME_SPAN = 2 * MASK_SPAN;

/** One step's numbers as /v1 writes them (strings), median_seconds null for step 1 and a step no visit reached. */
export interface FunnelStepResult {
  step: string;
  type: FunnelStep['type'];
  value: string;
  visits: string;
  visitors: string;
  conversion_rate: string;
  step_conversion_rate: string;
  drop_off: string;
  median_seconds: string | null;
}

/** The condition a hit (`h`) meets when it matches `step`, its value bound through `b`. */
function matchCondition(d: SqlDialect, step: FunnelStep, b: Binder): string {
  if (step.type === 'event') return `(h.type = 'event' AND h.event_name = ${b.value(step.value)})`;
  // A path without `*` is compared exactly (cheaper than any pattern); a pattern as pageview goals read it.
  if (!step.value.includes('*')) return `(h.type = 'pageview' AND h.pathname = ${b.value(step.value)})`;
  return `(h.type = 'pageview' AND ${d.regexMatch('h.pathname', b.value(pageGoalPathRegex(step.value)))})`;
}

/**
 * The funnel of `steps` over `q`'s site, range and filters (its aggregates and groupings are not read). One row:
 * per step k (1-based) `visits_k` and `visitors_k`, and from step 2 `lo_k` and `hi_k`, the two middle values (equal
 * for an odd count) of the milliseconds from step k-1 to step k over the visits that reached step k.
 */
export function funnelQuery(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[]): CompiledQuery {
  const b = new Binder(d);
  const walked = walkedVisits(d, q, steps, b);
  const counted: string[] = [];
  const shaped: string[] = [];
  for (let k = 1; k <= steps.length; k++) {
    counted.push(`sum(CASE WHEN p${k} > 0 THEN 1 ELSE 0 END) AS visits_${k}`);
    counted.push(`${d.countDistinct(`CASE WHEN p${k} > 0 THEN ${d.pairSecond(`hs[p${k}]`)} END`)} AS visitors_${k}`);
    shaped.push(`visits_${k}`, `visitors_${k}`);
    if (k > 1) {
      counted.push(`${d.sortedValues(`t${k} - t${k - 1}`, `p${k} > 0`)} AS gaps_${k}`);
      const n = d.listLength(`gaps_${k}`);
      shaped.push(`gaps_${k}[${d.intDiv(`${n} + 1`, '2')}] AS lo_${k}`, `gaps_${k}[${d.intDiv(n, '2')} + 1] AS hi_${k}`);
    }
  }
  const sql = `SELECT ${shaped.join(', ')} FROM (SELECT ${counted.join(', ')} FROM (${walked}) AS f) AS g`;
  return { sql, params: b.params };
}

/**
 * The visits of the funnel of `steps` over `q`'s site, range and filters (and its custom property filters), one row each: `visit_id`, `hs` (its hits
 * matching a step, as sorted (key, visitor) pairs) and per step k `p_k` (the index in `hs` of the hit that reached
 * step k, 0 when the visit did not) and `t_k` (that hit's epoch ms). Only visits that reached step 1 are rows. What
 * funnelQuery counts, and what a filter to the visits that continued or dropped at a step selects from.
 */
export function walkedVisits(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[], b: Binder): string {
  if (steps.length < MIN_FUNNEL_STEPS || steps.length > MAX_FUNNEL_STEPS) throw new Error(`a funnel has ${MIN_FUNNEL_STEPS} to ${MAX_FUNNEL_STEPS} steps`);
  const { hitFilters, visitFilters } = queryLevels(q);
  const filtered = q.filters.length > 0;
  const site = b.value(q.siteId);
  const from = b.value(q.from);
  const until = b.value(q.until);
  const matches = steps.map((s) => matchCondition(d, s, b));
  const mask = matches.map((m, k) => `CASE WHEN ${m} THEN ${2 ** k} ELSE 0 END`).join(' + ');
  const rank = `CASE WHEN h.type = 'event' THEN 1 ELSE 0 END`;
  const key = `(${d.epochMs('h.ts')} * 2 + ${rank}) * ${MASK_SPAN} + ${mask}`;
  // A visit takes part when one of its pageviews in the range passes the hit-level filters (and the visit the
  // visit-level ones, below), as /v1's `visits` counts with filters: so with filters every such pageview is read
  // too, to find out, while only hits matching a step enter the list.
  const passes = filtered ? `(${["h.type = 'pageview'", ...filterConditions(d, hitFilters, b)].join(' AND ')})` : undefined;
  // The dashboard's custom property filters keep whole visits (one with a hit carrying the property): a condition on
  // the visit id, which a visit's walk does not depend on, applied to the hits read. (The funnel filter of
  // funnel-filter.ts walks without them: the same visits either way.)
  const ofVisits = propConditions(d, { ...q, entity: 'pageview' }, b, site, from, until).map((c) => ` AND ${c}`).join('');
  // Only visits with a hit of step 1 in the range can reach any step: their ids, found first by a scan that reads
  // only step 1's columns, keep the other visits' hits out of the lists (at 10 M pageviews most visits lack step 1,
  // and building their lists was most of the time: docs/benchmarks.md, "Analysis reports").
  const withFirstStep =
    `SELECT h.visit_id FROM ${d.table('hits', 'h')} WHERE h.site_id = ${site} AND h.ts >= ${from} AND h.ts < ${until} AND ${matches[0]!}`;
  const hits =
    `SELECT h.visit_id AS visit_id, h.visitor_id AS visitor_id, ${key} AS hit_key` +
    (passes ? `, CASE WHEN ${passes} THEN 1 ELSE 0 END AS passes` : '') +
    ` FROM ${d.table('hits', 'h')} WHERE h.site_id = ${site} AND h.ts >= ${from} AND h.ts < ${until}` +
    ` AND (${[...matches, ...(passes ? [passes] : [])].join(' OR ')}) AND h.visit_id IN (${withFirstStep})${ofVisits}`;
  // Only visits with a hit of step 1 (bit 0: an odd key) can reach any step, and with filters only those with a
  // passing pageview take part: the rest are dropped here, before their lists are walked.
  const perVisit =
    `SELECT visit_id, ${d.sortedPairs('hit_key', 'visitor_id', `hit_key % ${MASK_SPAN} > 0`)} AS hs` +
    ` FROM (${hits}) AS hk GROUP BY visit_id HAVING max(hit_key % 2) = 1` +
    (passes ? ' AND max(passes) = 1' : '');
  let visits = perVisit;
  const visitWhere = filterConditions(d, visitFilters, b);
  if (visitWhere.length > 0) {
    const join = d.joinVisits('v', { site, where: [`v.started_at < ${until}`, `v.last_seen_at >= ${from}`, ...visitWhere] });
    visits = `SELECT pv.visit_id AS visit_id, pv.hs AS hs FROM (${perVisit}) AS pv ${join} ON v.visit_id = pv.visit_id WHERE ${visitWhere.join(' AND ')}`;
  }

  // One level per step, each adding where the step was reached (p_k, an index into hs, 0 when not) and when
  // (t_k, epoch ms). Step k's hit is the first in the list matching it at or after t_(k-1) that reached no earlier
  // step. `SELECT *` keeps every column in view of the lambdas (ClickHouse 18.16 needs it, see its dialect).
  const hitTime = (pair: string) => d.intDiv(d.pairKey(pair), String(TIME_SPAN));
  const matchesStep = (k: number) => `${d.intDiv(d.pairKey('x'), String(2 ** (k - 1)))} % 2 = 1`;
  let walked = visits;
  for (let k = 1; k <= steps.length; k++) {
    const condition =
      k === 1
        ? matchesStep(1)
        : [`p${k - 1} > 0`, matchesStep(k), `${hitTime('x')} >= t${k - 1}`, ...Array.from({ length: k - 1 }, (_, j) => `i <> p${j + 1}`)].join(' AND ');
    walked = `SELECT *, ${d.firstIndexWhere('hs', condition)} AS p${k} FROM (${walked}) AS w${k}`;
    walked = `SELECT *, CASE WHEN p${k} > 0 THEN ${hitTime(`hs[p${k}]`)} ELSE 0 END AS t${k} FROM (${walked}) AS x${k}`;
  }
  return walked;
}

const count = (raw: unknown): bigint => (raw === null || raw === undefined ? 0n : BigInt(typeof raw === 'number' ? Math.round(raw) : String(raw)));

/** `n / d` to 4 decimals, rounded half up, written as bounce_rate is; "0" when `d` is 0. */
function rate(n: bigint, d: bigint): string {
  return formatAggregate('bounce_rate', d === 0n ? 0n : (2n * n * 10_000n + d) / (2n * d)) ?? '0';
}

/** The funnel's answer per step from the one row of funnelQuery (or none). */
export function funnelResults(row: Record<string, unknown> | undefined, steps: readonly FunnelStep[]): FunnelStepResult[] {
  const visits = steps.map((_, i) => count(row?.[`visits_${i + 1}`]));
  return steps.map((s, i) => {
    const k = i + 1;
    const reached = visits[i]!;
    const previous = i === 0 ? reached : visits[i - 1]!;
    let median: string | null = null;
    if (i > 0 && reached > 0n) {
      // The mean of the two middle milliseconds, in hundredths of a second rounded half up: (lo + hi) / 20.
      const twice = count(row?.[`lo_${k}`]) + count(row?.[`hi_${k}`]);
      median = formatAggregate('avg_duration', (twice + 10n) / 20n);
    }
    return {
      step: String(k),
      type: s.type,
      value: s.value,
      visits: reached.toString(),
      visitors: count(row?.[`visitors_${k}`]).toString(),
      conversion_rate: rate(reached, visits[0]!),
      step_conversion_rate: i === 0 ? '1' : rate(reached, previous),
      drop_off: (previous - reached).toString(),
      median_seconds: median,
    };
  });
}
