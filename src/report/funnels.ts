// Funnels (docs/reports.md, "Funnels"): one statement that finds, per step, the visits that reached it and when,
// then counts per step: a join per step on DuckDB (chainedSteps), a walk along each visit's hits on ClickHouse.

import { pageGoalPathsOverlap } from '../domain/page-goal-paths.js';
import type { FunnelStep } from '../store/types.js';
import { filterConditions, propConditions } from './conditions.js';
import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import { formatAggregate } from './format.js';
import { inexactFirstViews, Subqueries } from './plans/plan-sql.js';
import { queryLevels } from './plan-choice.js';
import type { ReportQuery } from './query.js';

export const MIN_FUNNEL_STEPS = 2;
export const MAX_FUNNEL_STEPS = 8;

/**
 * Each matching hit becomes one integer (hitKey), so a visit's hits sort with a plain sort and a step's test is
 * integer arithmetic: ((epoch ms * 2 + rank) * 256 + mask), rank 0 for a pageview and 1 for an event (a pageview first at
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
  return `(h.type = 'pageview' AND ${d.pagePathMatch('h.pathname', step.value, b)})`;
}

/** Whether some hit could match both `a` and `b` (a page and an event never can). */
function stepsOverlap(a: FunnelStep, b: FunnelStep): boolean {
  if (a.type !== b.type) return false;
  return a.type === 'event' ? a.value === b.value : pageGoalPathsOverlap(a.value, b.value);
}

/** Whether no hit can match two of `steps`: then the order of a millisecond's hits never decides a step (chainedSteps). */
function disjoint(steps: readonly FunnelStep[]): boolean {
  return steps.every((a, i) => steps.slice(i + 1).every((b) => !stepsOverlap(a, b)));
}

/**
 * The funnel of `steps` over `q`'s site, range and filters (its aggregates and groupings are not read). One row:
 * per step k (1-based) `visits_k` and `visitors_k`, and from step 2 `lo_k` and `hi_k`, the two middle values (equal
 * for an odd count) of the milliseconds from step k-1 to step k over the visits that reached step k.
 */
export function funnelQuery(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[]): CompiledQuery {
  checkSteps(steps);
  const b = new Binder(d);
  const sql = d.commonTableExpressions ? chainedFunnel(d, q, steps, b) : walkedFunnel(d, q, steps, b);
  return { sql, params: b.params };
}

function checkSteps(steps: readonly FunnelStep[]): void {
  if (steps.length < MIN_FUNNEL_STEPS || steps.length > MAX_FUNNEL_STEPS) throw new Error(`a funnel has ${MIN_FUNNEL_STEPS} to ${MAX_FUNNEL_STEPS} steps`);
}

/** lo_k and hi_k from `gaps_k`, the sorted milliseconds from step k-1 to step k. */
function middleGaps(d: SqlDialect, k: number): string[] {
  const n = d.listLength(`gaps_${k}`);
  return [`gaps_${k}[${d.intDiv(`${n} + 1`, '2')}] AS lo_${k}`, `gaps_${k}[${d.intDiv(n, '2')} + 1] AS hi_${k}`];
}

/** funnelQuery over walkedVisits: each step's numbers from the visits' p_k (the hit's index) and t_k. */
function walkedFunnel(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[], b: Binder): string {
  const walked = walkedVisits(d, q, steps, b);
  const counted: string[] = [];
  const shaped: string[] = [];
  for (let k = 1; k <= steps.length; k++) {
    counted.push(`sum(CASE WHEN p${k} > 0 THEN 1 ELSE 0 END) AS visits_${k}`);
    counted.push(`${d.countDistinct(`CASE WHEN p${k} > 0 THEN ${d.pairSecond(`hs[p${k}]`)} END`)} AS visitors_${k}`);
    shaped.push(`visits_${k}`, `visitors_${k}`);
    if (k > 1) {
      counted.push(`${d.sortedValues(`t${k} - t${k - 1}`, `p${k} > 0`)} AS gaps_${k}`);
      shaped.push(...middleGaps(d, k));
    }
  }
  return `SELECT ${shaped.join(', ')} FROM (SELECT ${counted.join(', ')} FROM (${walked}) AS f) AS g`;
}

/** funnelQuery over chainedSteps: each step's numbers counted from its own visits, one row each joined. */
function chainedFunnel(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[], b: Binder): string {
  const w = chainedSteps(d, q, steps, b, steps.length);
  const parts: string[] = [];
  const shaped: string[] = [];
  for (let k = 1; k <= steps.length; k++) {
    const counted = [`count(*) AS visits_${k}`, `${d.countDistinct('who')} AS visitors_${k}`];
    if (k > 1) counted.push(`${d.sortedValues('t - prev', 'true')} AS gaps_${k}`);
    parts.push(`(SELECT ${counted.join(', ')} FROM ${w.ref(stepName(k))}) AS c${k}`);
    shaped.push(`visits_${k}`, `visitors_${k}`, ...(k > 1 ? middleGaps(d, k) : []));
  }
  return `${w.with()}SELECT ${shaped.join(', ')} FROM ${parts.join(' CROSS JOIN ')}`;
}

/**
 * The visits of the funnel of `steps` that reached `step` and then continued to the next step or dropped before
 * it (the last step: that reached it), as one `SELECT visit_id`. What the dashboard's funnel filter keeps.
 */
export function funnelOutcomeVisits(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[], step: number, outcome: 'continued' | 'dropped', b: Binder): string {
  checkSteps(steps);
  const last = steps.length;
  if (d.commonTableExpressions) {
    const next = Math.min(step + 1, last);
    const w = chainedSteps(d, q, steps, b, next);
    if (step === last || outcome === 'continued') return `${w.with()}SELECT visit_id FROM ${w.ref(stepName(next))}`;
    return `${w.with()}SELECT visit_id FROM ${w.ref(stepName(step))} WHERE visit_id NOT IN (SELECT visit_id FROM ${w.ref(stepName(next), 'n')})`;
  }
  const walked = walkedVisits(d, q, steps, b);
  // p_k is the index of the hit that reached step k, 0 when the visit did not.
  const reached = [`fw.p${step} > 0`];
  if (step < last) reached.push(`fw.p${step + 1} ${outcome === 'continued' ? '>' : '='} 0`);
  // ClickHouse 18.16 drops from a subquery the columns only a lambda reads (each p_k and t_k, read by the later
  // steps' searches), and then fails to find them: naming every one here keeps them all. Always true: an index
  // and a time are 0 or more.
  reached.push(`${Array.from({ length: last }, (_, j) => `fw.p${j + 1} + fw.t${j + 1}`).join(' + ')} >= 0`);
  return `SELECT fw.visit_id FROM (${walked}) AS fw WHERE ${reached.join(' AND ')}`;
}

/** What both shapes start from: the funnel's site, range, step conditions and which visits take part. */
interface FunnelScope {
  site: string;
  from: string;
  until: string;
  /** Per step, the condition a hit `h` matching it meets. */
  matches: string[];
  /** With hit-level filters: the condition a pageview `h` passing them meets. */
  passes: string | undefined;
  /** Conditions on `h.visit_id` (the dashboard's custom property filters: whole visits). */
  ofVisits: string[];
  /** Conditions on the visit `v` (the visit-level filters). */
  visitWhere: string[];
}

/** The scope of a funnel whose first steps are `steps` (only the values the statement reads are bound). */
function funnelScope(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[], b: Binder): FunnelScope {
  const { hitFilters, visitFilters } = queryLevels(q);
  const site = b.value(q.siteId);
  const from = b.value(q.from);
  const until = b.value(q.until);
  const matches = steps.map((s) => matchCondition(d, s, b));
  // A visit takes part when one of its pageviews in the range passes the hit-level filters (and the visit the
  // visit-level ones), as /v1's `visits` counts with filters.
  const passes = q.filters.length > 0 ? `(${["h.type = 'pageview'", ...filterConditions(d, hitFilters, b)].join(' AND ')})` : undefined;
  // The dashboard's custom property filters keep whole visits (one with a hit carrying the property): a condition on
  // the visit id, which a visit's walk does not depend on, applied to the hits read. (The funnel filter of
  // funnel-filter.ts walks without them: the same visits either way.)
  const ofVisits = propConditions(d, { ...q, entity: 'pageview' }, b, site, from, until);
  return { site, from, until, matches, passes, ofVisits, visitWhere: filterConditions(d, visitFilters, b) };
}

const stepName = (k: number) => `funnel_step_${k}`;

/**
 * Steps 1 to `upTo` as named subqueries `funnel_step_k`, one row per visit that reached step k: `visit_id`, `t`
 * (when, epoch ms), `who` (the visitor id of the hit that reached it) and from step 2 `prev` (step k-1's `t`). Step 1
 * is each visit's first hit of step 1 (among the visits taking part; an exact path's flagged first view where the
 * flags answer, firstPageView); step k joins step k-1's visits to the hits of
 * step k at or after step k-1's time and keeps the first. Where subqueries are named once (WITH): each step's visits
 * are read by the next step and by the counts without being computed again (step 1 from first views aside: a filter
 * of rows already kept, read twice).
 *
 * "First" is by time alone when no hit can match two steps (disjoint). Otherwise it is the walk's order (hitKey:
 * time, a pageview before an event, then the steps a hit matches), and a hit that reached an earlier step cannot
 * reach another: each step keeps its hit's row id (DuckDB's `rowid`) for the later steps to pass over. The walk's
 * answers either way (test/report/funnels.test.ts); the row ids cost a fifth more time.
 */
function chainedSteps(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[], b: Binder, upTo: number): Subqueries {
  const byTime = disjoint(steps);
  // Ordered by the walk's key, every step's condition is in each hit's key: all are bound then.
  const { site, from, until, matches, passes, ofVisits, visitWhere } = funnelScope(d, q, byTime ? steps.slice(0, upTo) : steps, b);
  const inRange = `h.site_id = ${site} AND h.ts >= ${from} AND h.ts < ${until}`;
  // What "first" minimises, and the time in epoch ms of a step's least value `o`.
  const order = byTime ? d.epochMs('h.ts') : hitKey(d, matches);
  const time = (o: string) => (byTime ? o : d.intDiv(o, String(TIME_SPAN)));
  const w = new Subqueries(d);
  const taking = [...ofVisits];
  if (passes) taking.push(`h.visit_id IN (SELECT h.visit_id FROM ${d.table('hits', 'h')} WHERE ${inRange} AND ${passes})`);
  // Row ids of the hits that reached steps 1..k (r1..rk), carried while a later step may still need them.
  const rowIds = (k: number) => (byTime ? [] : Array.from({ length: k }, (_, j) => `r${j + 1}`));
  const reached = (k: number) =>
    `min(${order}) AS o, ${d.argMin('h.visitor_id', order)} AS who` + (byTime || k === upTo ? '' : `, ${d.argMin(d.rowId('h'), order)} AS r${k}`);
  const firstRowIds = rowIds(upTo > 1 ? 1 : 0);
  const stepOneHits = `FROM ${d.table('hits', 'h')} WHERE ${[inRange, matches[0]!, ...taking].join(' AND ')}`;
  const byFirstViews = steps[0]!.type === 'page' && !steps[0]!.value.includes('*');
  let first = byFirstViews
    ? firstPageView(d, w, stepOneHits, { site, from, until, order, rowId: firstRowIds.length > 0 })
    : `SELECT h.visit_id AS visit_id, ${reached(1)} ${stepOneHits} GROUP BY h.visit_id`;
  if (visitWhere.length > 0) {
    const join = d.joinVisitsOn('v', { site, where: [`v.started_at < ${until}`, `v.last_seen_at >= ${from}`, ...visitWhere] }, 'f.visit_id');
    first = `SELECT ${['visit_id', 'o', 'who', ...firstRowIds].map((c) => `f.${c} AS ${c}`).join(', ')} FROM (${first}) AS f ${join} WHERE ${visitWhere.join(' AND ')}`;
  }
  // Step 1 from first views without visit filters is a filter of rows already kept (funnel_first_hits): read twice
  // (by step 2 and by the counts), it costs less than a copy (3 steps at 10 M pageviews: up to 7% less
  // time, docs/benchmarks.md). Grouped from the hits or joined to the visits, it is kept: not done twice.
  const stepOneKept = !byFirstViews || visitWhere.length > 0;
  w.add(stepName(1), `SELECT ${['visit_id', `${time('o')} AS t`, 'who', ...firstRowIds].join(', ')} FROM (${first}) AS s`, { materialized: stepOneKept });
  for (let k = 2; k <= upTo; k++) {
    const earlier = rowIds(k - 1);
    const carried = k === upTo ? '' : earlier.map((r) => `, min(p.${r}) AS ${r}`).join('');
    const passOver = earlier.length > 0 ? ` AND ${d.rowId('h')} NOT IN (${earlier.map((r) => `p.${r}`).join(', ')})` : '';
    const grouped =
      `SELECT h.visit_id AS visit_id, ${reached(k)}, min(p.t) AS prev${carried}` +
      ` FROM ${d.table('hits', 'h')} JOIN ${w.ref(stepName(k - 1), 'p')} ON p.visit_id = h.visit_id` +
      ` WHERE ${inRange} AND ${matches[k - 1]!} AND ${d.epochMs('h.ts')} >= p.t${passOver} GROUP BY h.visit_id`;
    const kept = ['visit_id', `${time('o')} AS t`, 'who', 'prev', ...(k === upTo ? [] : rowIds(k))];
    w.add(stepName(k), `SELECT ${kept.join(', ')} FROM (${grouped}) AS s`, { materialized: true });
  }
  return w;
}

/**
 * Step 1 when it is an exact path: `visit_id`, `o` (the least `order`), `who` and, with `rowId`, `r1`, of each
 * visit's first hit among `hits` (`FROM ... WHERE`, on alias `h`, the step's pageviews). Each pageview is flagged
 * when it is its visit's first view of its page (first_view), so a visit wholly inside the range with exact flags
 * (all but inexactFirstViews, plans/plan-sql.ts) has one flagged hit of the path: step 1's, found without grouping by
 * visit (most of step 1's time at 10 M pageviews). The few other visits (the range's edges, flags not exact) group
 * their hits. The earliest hit of a path is also its least `order` (hitKey): the key's other parts are the path's.
 * (A pattern's first views are of several paths, still to be grouped: no faster than grouping every hit.)
 */
function firstPageView(d: SqlDialect, w: Subqueries, hits: string, o: { site: string; from: string; until: string; order: string; rowId: boolean }): string {
  w.add('funnel_edge', inexactFirstViews(d, o.site, o.from, o.until), { materialized: true });
  const rowId = o.rowId ? ['r1'] : [];
  // Each hit's edge mark is computed while scanning (a join built on the few edge visits) and tested twice on the
  // named rows: a second scan for the edge visits' hits cost more, its join built on the hits.
  w.add(
    'funnel_first_hits',
    `SELECT ${['h.visit_id AS visit_id', `${o.order} AS o`, 'h.visitor_id AS who', ...(o.rowId ? [`${d.rowId('h')} AS r1`] : [])].join(', ')},` +
      ` h.first_view AS first_view, h.visit_id IN (SELECT visit_id FROM ${w.ref('funnel_edge')}) AS edge ${hits}`,
    { materialized: true },
  );
  const grouped = ['visit_id', 'min(o) AS o', `${d.argMin('who', 'o')} AS who`, ...rowId.map((r) => `${d.argMin(r, 'o')} AS ${r}`)];
  const rows = w.ref('funnel_first_hits');
  return (
    `SELECT ${['visit_id', 'o', 'who', ...rowId].join(', ')} FROM ${rows} WHERE first_view AND NOT edge` +
    ` UNION ALL SELECT ${grouped.join(', ')} FROM ${rows} WHERE edge GROUP BY visit_id`
  );
}

/**
 * Each matching hit as one integer, so that a visit's hits sort with a plain sort and a step's test is integer
 * arithmetic (MASK_SPAN). `matches`: each step's condition on the hit `h`.
 */
function hitKey(d: SqlDialect, matches: readonly string[]): string {
  const mask = matches.map((m, k) => `CASE WHEN ${m} THEN ${2 ** k} ELSE 0 END`).join(' + ');
  const rank = `CASE WHEN h.type = 'event' THEN 1 ELSE 0 END`;
  return `(${d.epochMs('h.ts')} * 2 + ${rank}) * ${MASK_SPAN} + ${mask}`;
}

/**
 * The visits of the funnel of `steps` over `q`'s site, range and filters (and its custom property filters), one row
 * each: `visit_id`, `hs` (its hits matching a step, as sorted (key, visitor) pairs) and per step k `p_k` (the index
 * in `hs` of the hit that reached step k, 0 when the visit did not) and `t_k` (that hit's epoch ms). Only visits that
 * reached step 1 are rows. How ClickHouse answers funnels: it inlines subqueries, so a join per step would compute
 * each earlier step again.
 */
function walkedVisits(d: SqlDialect, q: ReportQuery, steps: readonly FunnelStep[], b: Binder): string {
  const { site, from, until, matches, passes, ofVisits: visitConditions, visitWhere } = funnelScope(d, q, steps, b);
  const ofVisits = visitConditions.map((c) => ` AND ${c}`).join('');
  const key = hitKey(d, matches);
  // With filters every pageview is read too, to find out whether the visit takes part, while only hits matching
  // a step enter the list.
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
