// Journeys (docs/reports.md, "Journeys"): the sequences of pages visits take, as the most frequent prefixes of
// each depth. One statement, one scan of the range's pageviews of the site; the dialect writes the list functions.

import { filterConditions, propConditions } from './conditions.js';
import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import { funnelConditions } from './funnel-filter.js';
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
 * The statement answering journeys for `q`'s site, range and filters, custom property filters and funnel filter
 * included (q's aggregates, groups, sort and limit are not read). Its rows: `depth`, `q1`..`q<steps>` (the prefix's pages, '' past the depth), `visits`, `ended`;
 * depth 0 is one row whose `visits` is the number of journeys, then at most `limit` rows per depth 1..steps, most
 * visits first, then by pages ascending. Depths are counted from a per-journey rollup: each visit is reduced to its first `steps`
 * pages and its length capped at steps + 1 (enough to tell "ended at step d" for every d <= steps), so the
 * expansion into prefixes reads distinct (head, length) pairs, not visits. The head is held as one text column per
 * step (`p1`..`p<steps>`, '' past its end), not as a list: grouping and ordering on lists cost DuckDB about ten times
 * as much at 10 M pageviews (docs/benchmarks.md, "Analysis reports"). Within a depth every prefix has that many
 * pages, so ordering by the columns is ordering by the pages; the rows carry the prefix as `q1`..`q<depth>`
 * (journeyRows).
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
  // The dashboard's custom property and funnel filters keep whole visits (a visit with a hit carrying the property,
  // a visit that reached a funnel's step): conditions on the visit id, so they narrow the pageviews read as well.
  const ofVisits = [...propConditions(d, { ...q, entity: 'pageview' }, b, site, from, until), ...funnelConditions(d, q, b)];
  const visitKept = ofVisits.map((c) => ` AND ${c}`).join('');
  // A visit takes part when one of its pageviews in the range passes the hit filters (none: every visit).
  const having = hitWhere.length > 0 ? ` HAVING max(CASE WHEN ${hitWhere.join(' AND ')} THEN 1 ELSE 0 END) = 1` : '';
  const entryPage = o.entryPage !== undefined ? b.value(o.entryPage) : undefined;
  // A visit whose first page is the entry page has a pageview of it in the range: only those visits' pages are
  // collected and sorted (at 10 M pageviews, a seventh of the visits for a common entry page), the first page
  // still tested below.
  const withEntry =
    entryPage !== undefined
      ? ` AND h.visit_id IN (SELECT e.visit_id FROM ${d.table('hits', 'e')} WHERE e.site_id = ${site} AND e.type = 'pageview'` +
        ` AND e.ts >= ${from} AND e.ts < ${until} AND e.pathname = ${entryPage})`
      : '';
  w.add(
    'j',
    `SELECT h.visit_id AS visit_id, ${d.timeOrderedPages('h.ts', 'h.pathname')} AS ps FROM ${d.table('hits', 'h')}` +
      ` WHERE h.site_id = ${site} AND h.type = 'pageview' AND h.ts >= ${from} AND h.ts < ${until}${withEntry}${visitKept}` +
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
  const entry = entryPage !== undefined ? ` WHERE ${d.listFirst('jp.pages')} = ${entryPage}` : '';
  // Column names from the step count, a whole number MIN_STEPS..MAX_STEPS checked here (never text of the request).
  if (!Number.isInteger(o.steps) || o.steps < MIN_STEPS || o.steps > MAX_STEPS) throw new Error(`journeys have ${MIN_STEPS} to ${MAX_STEPS} steps`);
  const positions = Array.from({ length: o.steps }, (_, i) => i + 1);
  const heads = positions.map((i) => d.listItem('jp.pages', String(i)));
  const length = `least(${d.listLength('jp.pages')}, ${steps} + 1)`;
  w.add(
    'k',
    `SELECT ${heads.map((h, i) => `${h} AS p${i + 1}`).join(', ')}, ${length} AS n, count(*) AS journeys` +
      ` FROM ${w.ref('jp')}${entry} GROUP BY ${[...heads, length].join(', ')}`,
  );
  const depth = 'depth';
  // Page i of the depth's prefix, '' past the depth.
  const prefix = positions.map((i) => `CASE WHEN ${depth} >= ${i} THEN k.p${i} ELSE '' END`);
  return {
    sql:
      w.with() +
      `SELECT ${depth}, ${prefix.map((p, i) => `${p} AS q${i + 1}`).join(', ')}, sum(k.journeys) AS visits,` +
      ` sum(CASE WHEN k.n = ${depth} THEN k.journeys ELSE 0 END) AS ended` +
      ` FROM ${w.ref('k')} ${d.depthsUpTo(steps, depth)} WHERE ${depth} <= k.n` +
      ` GROUP BY ${[depth, ...prefix].join(', ')} ${d.topPerGroup(depth, ['visits DESC', ...positions.map((i) => `q${i} ASC`)], b.value(o.limit))}`,
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
    const pages = Array.from({ length: Math.min(depth, MAX_STEPS) }, (_, i) => `q${i + 1}`).map((key) => String(Object.hasOwn(r, key) ? r[key] : ''));
    paths.push({ pages, visits: Number(r.visits), ended: Number(r.ended) });
  }
  return { totalVisits, paths };
}
