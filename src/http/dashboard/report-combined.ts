// Every goal of a site answered in one request: for each event goal, exactly what /v1/aggregations answers for that
// goal with the same parameters; for each pageview goal, what /v1 answers for pageviews and visits with the goal's
// path as a `pathname` filter. The report page asks this once per period instead of once per goal, so a range
// change costs the same number of requests whatever the number of goals.

import type { ReportEngine, ReportRow } from '../../report/engine.js';
import type { ReportRequest } from '../../report/parse.js';
import { pageGoalPathRegex } from '../../domain/page-goal-paths.js';
import { POSITIVE_OPERATORS } from '../../report/fields.js';
import type { Goal, MetaStore, PageGoal, Site } from '../../store/types.js';

/** A site has at most 500 goals (the collector's bound): 20 pages of 100 cover them all. */
const MAX_GOAL_PAGES = 20;
/** Goals answered at once: a site with hundreds of goals must not take every connection of the store. */
const AT_ONCE = 4;

export interface GoalAnswer {
  id: string;
  name: string;
  rows: ReportRow[];
}

/** Every goal of the site, in the order the goal list gives them. */
export async function siteGoals(meta: MetaStore, siteId: string): Promise<Goal[]> {
  const out: Goal[] = [];
  let after: string | undefined;
  for (let i = 0; i < MAX_GOAL_PAGES; i++) {
    const page = await meta.listGoals(siteId, { limit: 100, startingAfter: after });
    out.push(...page.items);
    if (!page.hasMore || page.items.length === 0) break;
    after = page.items[page.items.length - 1]!.id;
  }
  return out;
}

/**
 * `report` (an event report: its goal name is replaced) for each goal: the same engine call /v1 makes for one goal,
 * so every number equals /v1's.
 */
export function aggregateEveryGoal(reports: ReportEngine, site: Site, goals: Goal[], report: ReportRequest): Promise<GoalAnswer[]> {
  return atMostAtOnce(goals, async (goal) => ({ id: goal.id, name: goal.name, rows: await reports.aggregate({ ...report, eventName: goal.name }, site) }));
}

export interface PageGoalAnswer {
  id: string;
  name: string;
  path: string;
  regex: string;
  /**
   * `[{conversions, unique_conversions}]`: the pageviews of matching pages and the visits with one (as /v1's
   * `pageviews` and `visits`); null when the report already selects pages by path (a positive `pathname` filter),
   * which /v1 would OR with the goal's instead of requiring both (docs/reports.md, "Pageview goals").
   */
  rows: { conversions: string; unique_conversions: string }[] | null;
}

/**
 * `report` (a pageview report) for each pageview goal: /v1's `pageviews` and `visits` with the goal's path as a
 * `matching` filter on `pathname` added to the report's own, so every number equals /v1's for that filter.
 */
export function aggregateEveryPageGoal(reports: ReportEngine, site: Site, goals: PageGoal[], report: ReportRequest): Promise<PageGoalAnswer[]> {
  const selectsPages = report.filters.some((f) => f.property === 'pathname' && POSITIVE_OPERATORS.has(f.operator));
  return atMostAtOnce(goals, async (goal) => {
    const regex = pageGoalPathRegex(goal.path);
    let rows: PageGoalAnswer['rows'] = null;
    if (!selectsPages) {
      const answer = await reports.aggregate({
        ...report, aggregates: ['pageviews', 'visits'], filters: [...report.filters, { property: 'pathname', operator: 'matching', value: regex }],
      }, site);
      rows = answer.map((r) => ({ conversions: String(r.pageviews), unique_conversions: String(r.visits) }));
    }
    return { id: goal.id, name: goal.name, path: goal.path, regex, rows };
  });
}

/** `answer` for each item, in order, AT_ONCE of them running at a time. */
async function atMostAtOnce<T, R>(items: readonly T[], answer: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await answer(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(AT_ONCE, items.length) }, worker));
  return out;
}
