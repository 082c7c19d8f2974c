// Journeys (docs/reports.md, "Journeys"): the sequences of pages visits take, as the most frequent prefixes of
// each depth. One statement, one scan of the range's pageviews of the site; the dialect writes the list functions.

import { filterConditions } from './conditions.js';
import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import { queryLevels } from './plan-choice.js';
import { Subqueries } from './plans/plan-sql.js';
import type { ReportQuery } from './query.js';

export const MIN_STEPS = 2;
export const MAX_STEPS = 5;
export const DEFAULT_STEPS = 3;
export const MAX_JOURNEY_LIMIT = 100;
export const DEFAULT_JOURNEY_LIMIT = 10;

export interface JourneyOptions {
  /** Only journeys whose first page is this pathname. */
  entryPage?: string;
  /** Deepest prefix listed (MIN_STEPS to MAX_STEPS). */
  steps: number;
  /** Prefixes listed per depth at most. */
  limit: number;
}

export interface JourneyPath {
  pages: string[];
  visits: number;
  ended: number;
}

/**
 * The statement answering journeys for `q`'s site, range and filters (q's aggregates, groups, sort and limit are
 * not read). Its rows: `depth`, `pages` (the prefix, a list), `visits`, `ended`; depth 0 is one row whose
 * `visits` is the number of journeys, then at most `limit` rows per depth 1..steps, most visits first, then by
 * pages ascending. Depths are counted from a per-journey rollup: each visit is reduced to its first `steps`
 * pages and its length capped at steps + 1 (enough to tell "ended at step d" for every d <= steps), so the
 * expansion into prefixes reads distinct (head, length) pairs, not visits.
 */
export function journeysQuery(d: SqlDialect, q: ReportQuery, o: JourneyOptions): CompiledQuery {
  const b = new Binder(d);
  const { hitFilters, visitFilters } = queryLevels(q);
  const site = b.value(q.siteId);
  const from = b.value(q.from);
  const until = b.value(q.until);
  const hitWhere = filterConditions(d, hitFilters, b);
  const visitWhere = filterConditions(d, visitFilters, b);
  const w = new Subqueries(d);
  // A visit takes part when one of its pageviews in the range passes the hit filters (none: every visit).
  const having = hitWhere.length > 0 ? ` HAVING max(CASE WHEN ${hitWhere.join(' AND ')} THEN 1 ELSE 0 END) = 1` : '';
  w.add(
    'j',
    `SELECT h.visit_id AS visit_id, ${d.timeOrderedPages('h.ts', 'h.pathname')} AS ps FROM ${d.table('hits', 'h')}` +
      ` WHERE h.site_id = ${site} AND h.type = 'pageview' AND h.ts >= ${from} AND h.ts < ${until}` +
      ` GROUP BY h.visit_id${having}`,
  );
  // Visit filters (entry and exit page) are the visit's, as in /v1/aggregations: the visits table joined per
  // visit, not per hit. Every joined visit has a pageview in the range, so overlaps it.
  const joined =
    visitWhere.length > 0
      ? ` ${d.joinVisits('v', { site, where: [`v.started_at < ${until}`, `v.last_seen_at >= ${from}`, ...visitWhere] })} ON v.visit_id = j.visit_id` +
        ` WHERE ${visitWhere.join(' AND ')}`
      : '';
  w.add('jp', `SELECT ${d.collapseRepeats('j.ps')} AS pages FROM ${w.ref('j')}${joined}`);
  const steps = b.value(o.steps);
  const entry = o.entryPage !== undefined ? ` WHERE ${d.listFirst('jp.pages')} = ${b.value(o.entryPage)}` : '';
  w.add(
    'k',
    `SELECT ${d.listHead('jp.pages', steps)} AS head, least(${d.listLength('jp.pages')}, ${steps} + 1) AS n, count(*) AS journeys` +
      ` FROM ${w.ref('jp')}${entry} GROUP BY ${d.listHead('jp.pages', steps)}, least(${d.listLength('jp.pages')}, ${steps} + 1)`,
  );
  const depth = 'depth';
  return {
    sql:
      w.with() +
      `SELECT ${depth}, ${d.listHead('k.head', depth)} AS pages, sum(k.journeys) AS visits,` +
      ` sum(CASE WHEN k.n = ${depth} THEN k.journeys ELSE 0 END) AS ended` +
      ` FROM ${w.ref('k')} ${d.depthsUpTo(steps, depth)} WHERE ${depth} <= k.n` +
      ` GROUP BY ${depth}, ${d.listHead('k.head', depth)} ${d.topPerGroup(depth, ['visits DESC', 'pages ASC'], b.value(o.limit))}`,
    params: b.params,
  };
}

/** The statement's rows as the total and the listed prefixes, in depth order, then visits, then pages. */
export function journeyRows(rows: readonly Record<string, unknown>[]): { totalVisits: number; paths: JourneyPath[] } {
  let totalVisits = 0;
  const paths: JourneyPath[] = [];
  for (const r of rows) {
    const depth = Number(r.depth);
    if (depth === 0) {
      totalVisits = Number(r.visits);
      continue;
    }
    const pages = Array.isArray(r.pages) ? r.pages.map(String) : [];
    paths.push({ pages, visits: Number(r.visits), ended: Number(r.ended) });
  }
  return { totalVisits, paths };
}
