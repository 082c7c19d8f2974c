// Which of the five plans answers a report (the aggregates other than `visitors`, see compiler.ts), decided from
// the query's shape alone: no SQL is written here. Each plan's SQL is built in ./plans/; docs/benchmarks.md
// ("How reports are planned") says why each exists and what it saves.
//
// 1. single pass: counts and sums only, nothing at visit level: one pass over the selected hits;
// 2. semi-join totals: totals with visit facts (duration, bounces): the visits having a selected hit;
// 3. per visit, the general plan: count per (hit-level group, visit), then per group;
// 4. visit rollup: whole-visit facts without hit filters (totals, by time, by entry or exit page);
// 5. pages: distinct (visit, page) pairs without grouping by visit (top pages, uniques);
// and 4 and 5 together for whole-visit aggregates with uniques, in total or by time.

import { filterSource, GROUP_FIELDS, type Aggregate, type FieldSource } from './fields.js';
import type { Filter, ReportQuery } from './query.js';

export type PlanName = 'single pass' | 'semi-join totals' | 'per visit' | 'visit rollup' | 'pages' | 'visit rollup and pages';

/** Aggregates that count distinct visits or need visit facts: they need the per-visit stage. */
const PER_VISIT: ReadonlySet<Aggregate> = new Set(['visits', 'unique_conversions', 'uniques', 'avg_duration', 'bounce_rate']);

/** What the visits table can answer by itself (plan 4). */
const ROLLUP_AGGREGATES: ReadonlySet<Aggregate> = new Set(['visits', 'pageviews', 'avg_duration', 'bounce_rate']);

/** A query's filters on hit and on visit columns, and whether it reads its hits' visits (filters or groups). */
export function queryLevels(q: ReportQuery): { hitFilters: Filter[]; visitFilters: Filter[]; visitLevel: boolean } {
  const atVisitLevel = (source: FieldSource) => source.table === 'visit';
  const hitFilters = q.filters.filter((f) => !atVisitLevel(filterSource(f.property)));
  const visitFilters = q.filters.filter((f) => atVisitLevel(filterSource(f.property)));
  const visitLevel = visitFilters.length > 0 || q.fieldGrouping.some((f) => atVisitLevel(GROUP_FIELDS[f]));
  return { hitFilters, visitFilters, visitLevel };
}

/**
 * The plan for `q`: plans 4 and 5 (alone or together) when the query has their shape and no custom property
 * filter or grouping (nor funnel filter, nor scope), else the cheapest of 1-3 that answers it.
 */
export function choosePlan(q: ReportQuery): PlanName {
  // A funnel filter or a scope, like a property filter, is a condition only plans 1-3 take.
  const withProps = (q.props?.length ?? 0) > 0 || q.propGroup !== undefined || q.funnel !== undefined || q.scope !== undefined;
  const special = withProps ? undefined : specialPlan(q);
  if (special !== undefined) return special;
  const { visitLevel } = queryLevels(q);
  const needsVisitFacts = q.aggregates.includes('avg_duration') || q.aggregates.includes('bounce_rate');
  const groups = q.fieldGrouping.length + (q.dateGrouping ? 1 : 0) + (q.propGroup !== undefined ? 1 : 0);
  if (!visitLevel && !q.aggregates.some((a) => PER_VISIT.has(a))) return 'single pass';
  if (!visitLevel && groups === 0 && needsVisitFacts && !q.aggregates.includes('uniques')) return 'semi-join totals';
  return 'per visit';
}

/** Plans 4 and 5, and both at once, when the query is of a shape they answer. */
function specialPlan(q: ReportQuery): PlanName | undefined {
  if (q.entity !== 'pageview') return undefined;
  const visitLevelOnly = q.filters.every((f) => filterSource(f.property).table === 'visit');
  const pathnameOnly = q.filters.every((f) => f.property === 'pathname');
  const byPage = q.fieldGrouping.includes('pathname');
  const counted = q.aggregates.some((a) => PER_VISIT.has(a));

  if (
    visitLevelOnly &&
    counted &&
    q.aggregates.every((a) => ROLLUP_AGGREGATES.has(a)) &&
    q.fieldGrouping.every((f) => GROUP_FIELDS[f].table === 'visit')
  ) {
    return 'visit rollup';
  }
  if (
    pathnameOnly &&
    counted &&
    q.fieldGrouping.every((f) => f === 'pathname') &&
    q.aggregates.every((a) => a === 'pageviews' || a === 'uniques' || (a === 'visits' && byPage))
  ) {
    return 'pages';
  }
  if (
    q.filters.length === 0 &&
    q.fieldGrouping.length === 0 &&
    q.aggregates.includes('uniques') &&
    q.aggregates.every((a) => a === 'uniques' || ROLLUP_AGGREGATES.has(a))
  ) {
    return 'visit rollup and pages';
  }
  return undefined;
}
