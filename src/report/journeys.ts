// Journeys (docs/reports.md, "Journeys"): the sequences of pages visits take, as the most frequent prefixes of
// each depth. One statement: the journeys visits recorded as their hits arrived, and those of the other visits from
// their pageviews in the range; the dialect writes the list functions.

import { JOURNEY_PAGES } from '../domain/hits.js';
import { filterConditions, propConditions } from './conditions.js';
import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import { funnelConditions } from './funnel-filter.js';
import { queryLevels } from './plan-choice.js';
import { Subqueries } from './plans/plan-sql.js';
import type { ReportQuery } from './query.js';

export const MIN_STEPS = 2;
/** As deep as visits record their journeys (a deeper journey would need every visit's pages gathered again). */
export const MAX_STEPS = JOURNEY_PAGES;
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
 * included (q's aggregates, groups, sort and limit are not read). Its rows: `depth`, `q1`..`q<steps>` (the prefix's
 * pages, '' past the depth), `visits`, `ended`; depth 0 is one row whose `visits` is the number of journeys, then at
 * most `limit` rows per depth 1..steps, most visits first, then by pages ascending.
 *
 * Each journey is reduced to its head: its first `steps` pages as one text column each (`p1`..`p<steps>`, '' past
 * its end; grouping on lists cost DuckDB about ten times as much) and its length capped at steps + 1 (`n`, enough
 * to tell "ended at step d" for every d <= steps). A visit wholly inside the range whose journey was recorded as its
 * hits arrived (VisitRecord.journeyLength) has its head in its row; the other visits that overlap the range (crossing
 * an end, a journey not known) and every visit when hits are filtered have their pageviews in the range gathered and
 * sorted (docs/benchmarks.md, "Analysis reports"). Heads are then expanded into the prefixes of each depth; within a
 * depth every prefix has that many pages, so ordering by the columns is ordering by the pages (journeyRows).
 */
export function journeysQuery(d: SqlDialect, q: ReportQuery, o: JourneyOptions): CompiledQuery {
  // Column names from the step count, a whole number MIN_STEPS..MAX_STEPS checked here (never text of the request).
  if (!Number.isInteger(o.steps) || o.steps < MIN_STEPS || o.steps > MAX_STEPS) throw new Error(`journeys have ${MIN_STEPS} to ${MAX_STEPS} steps`);
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
  const steps = b.value(o.steps);
  const limit = b.value(o.limit);
  const positions = Array.from({ length: o.steps }, (_, i) => i + 1);
  const head = [...positions.map((i) => `p${i}`), 'n'];
  // Without conditions on hits, recorded journeys answer for the visits wholly inside the range.
  const recorded = hitWhere.length === 0 && ofVisits.length === 0;
  const inside = `v.journey_length > 0 AND v.started_at >= ${from} AND v.last_seen_at < ${until}`;
  const others = recorded
    ? ` AND h.visit_id IN (${d.visitIds(site, ['v.pageviews > 0', `v.started_at < ${until}`, `v.last_seen_at >= ${from}`, `NOT (${inside})`])})`
    : '';
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
      ` WHERE h.site_id = ${site} AND h.type = 'pageview' AND h.ts >= ${from} AND h.ts < ${until}${others}${withEntry}${visitKept}` +
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
  const entry = entryPage !== undefined ? ` WHERE ${d.listFirst('jp.pages')} = ${entryPage}` : '';
  const listHead = positions.map((i) => d.listItem('jp.pages', String(i)));
  const listLength = d.bigint(`least(${d.listLength('jp.pages')}, ${steps} + 1)`);
  const fromHits =
    `SELECT ${listHead.map((h, i) => `${h} AS p${i + 1}`).join(', ')}, ${listLength} AS n, count(*) AS journeys` +
    ` FROM ${w.ref('jp')}${entry} GROUP BY ${[...listHead, listLength].join(', ')}`;
  // A recorded journey's head from its visit's row: page 1 is the entry page, the later pages '' past its end.
  const rowHead = positions.map((i) => (i === 1 ? 'v.entry_page' : `v.journey_${i}`));
  const rowLength = d.bigint(`least(v.journey_length, ${steps} + 1)`);
  const rowWhere = [`v.site_id = ${site}`, inside, ...visitWhere, ...(entryPage !== undefined ? [`v.entry_page = ${entryPage}`] : [])].join(' AND ');
  const rows = (journeys: string) =>
    `SELECT ${rowHead.map((h, i) => `${h} AS p${i + 1}`).join(', ')}, ${rowLength} AS n, ${journeys} AS journeys FROM ${d.table('visits', 'v')} WHERE ${rowWhere}`;

  /** `source`'s heads as the prefixes of depths `lowest`..steps (capped by each head's length), with their counts. */
  const prefixes = (source: string, lowest: number) =>
    `SELECT depth, ${positions.map((i) => `${i <= lowest ? `s.p${i}` : `CASE WHEN depth >= ${i} THEN s.p${i} ELSE '' END`} AS q${i}`).join(', ')},` +
    ` s.journeys AS journeys, CASE WHEN s.n = depth THEN s.journeys ELSE 0 END AS ends` +
    ` FROM ${source} ${d.depthsUpTo(steps, 'depth')} WHERE depth <= s.n${lowest > 0 ? ` AND depth >= ${lowest}` : ''}`;
  /** The top `limit` prefixes of each depth among `expanded`'s rows (prefixes); `having`: a bound they all meet. */
  const topPrefixes = (expanded: string, having = '') =>
    `SELECT depth, ${positions.map((i) => `q${i}`).join(', ')}, sum(journeys) AS visits, sum(ends) AS ended FROM (${expanded}) AS x` +
    ` GROUP BY ${['depth', ...positions.map((i) => `q${i}`)].join(', ')}${having ? ` HAVING ${having}` : ''}` +
    ` ${d.topPerGroup('depth', ['visits DESC', ...positions.map((i) => `q${i} ASC`)], limit)}`;

  if (!recorded || !d.commonTableExpressions) {
    // Every head grouped once, then expanded: with filtered hits, or where subqueries are inlined (ClickHouse), so
    // that the hits' part is computed once.
    if (!recorded) w.add('k', fromHits);
    else {
      w.add('kh', fromHits);
      w.add('kv', `${rows('count(*)')} GROUP BY ${[...rowHead, rowLength].join(', ')}`);
      w.add('k', `SELECT ${head.join(', ')}, journeys FROM ${w.ref('kh')} UNION ALL SELECT ${head.join(', ')}, journeys FROM ${w.ref('kv')}`);
    }
    return { sql: w.with() + topPrefixes(prefixes(w.ref('k', 's'), 0)), params: b.params };
  }

  // Recorded journeys where subqueries are shared (DuckDB): most distinct heads are deep ones of a visit or two, and
  // grouping every head (1.3 million of them at 10 M pageviews) was most of the time, ranking every prefix most of
  // the rest. Depths 0-2 are grouped in full from (p1, p2) alone. A prefix of depth 3 or more among the top `limit`
  // has at least T visits, T the limit-th largest count of its depth, and so has its depth-2 ancestor; the limit-th
  // largest count among the descendants of the top `limit` depth-2 prefixes (exact counts of real prefixes) is at
  // most T. So only the heads under depth-2 prefixes with at least the smallest such bound over depths 3..steps are
  // grouped in full: they hold every prefix that can be listed, each with its exact count. (Fewer than `limit`
  // prefixes of a depth in that sample: bound 0, every head.) Only prefixes meeting their depth's bound are ranked.
  w.add('kh', fromHits, { materialized: true });
  w.add('src', `SELECT ${head.join(', ')}, journeys FROM ${w.ref('kh')} UNION ALL ${rows('1')}`);
  w.add('shallow', `SELECT p1, p2, least(n, 3) AS n, sum(journeys) AS journeys FROM ${w.ref('src')} GROUP BY p1, p2, least(n, 3)`, { materialized: true });
  w.add('parents', `SELECT p1, p2, sum(journeys) AS c FROM ${w.ref('shallow')} WHERE n >= 2 GROUP BY p1, p2`, { materialized: true });
  w.add('top2', `SELECT p1, p2, c FROM ${w.ref('parents')} ORDER BY c DESC, p1, p2 ${d.limit(limit)}`, { materialized: true });
  // The limit-th largest count of depth 2 (exact: every depth-2 prefix is in parents), 0 when there are fewer.
  const depth2Bound = `(SELECT CASE WHEN count(*) = ${limit} THEN min(c) ELSE 0 END FROM ${w.ref('top2')})`;
  const shallowHeads = `(SELECT p1, p2, ${positions.slice(2).map((i) => `'' AS p${i}, `).join('')}n, journeys FROM ${w.ref('shallow')}) AS s`;
  const shallowPrefixes = `${prefixes(shallowHeads, 0)} AND depth <= 2`;
  if (o.steps === 2) return { sql: w.with() + topPrefixes(shallowPrefixes, `depth < 2 OR sum(journeys) >= ${depth2Bound}`), params: b.params };
  const grouped = (where: string) => `SELECT ${head.join(', ')}, sum(journeys) AS journeys FROM ${w.ref('src')} WHERE ${where} GROUP BY ${head.join(', ')}`;
  w.add('sample', grouped(`(p1, p2) IN (SELECT p1, p2 FROM ${w.ref('top2')})`));
  w.add(
    'ranks',
    `SELECT depth, sum(journeys) AS c FROM (${prefixes(w.ref('sample', 's'), 3)}) AS x GROUP BY ${['depth', ...positions.map((i) => `q${i}`)].join(', ')}` +
      ` ${d.topPerGroup('depth', ['c DESC'], limit)}`,
  );
  w.add(
    'bound',
    `SELECT CASE WHEN count(*) = ${o.steps - 2} THEN min(c) ELSE 0 END AS c FROM` +
      ` (SELECT depth, min(c) AS c FROM ${w.ref('ranks')} GROUP BY depth HAVING count(*) = ${limit}) AS b`,
    { materialized: true },
  );
  const deepBound = `(SELECT c FROM ${w.ref('bound')})`;
  w.add('deep', grouped(`(p1, p2) IN (SELECT p1, p2 FROM ${w.ref('parents')} WHERE c >= ${deepBound})`));
  const bounds = `depth < 2 OR (depth = 2 AND sum(journeys) >= ${depth2Bound}) OR (depth > 2 AND sum(journeys) >= ${deepBound})`;
  return { sql: w.with() + topPrefixes(`${shallowPrefixes} UNION ALL ${prefixes(w.ref('deep', 's'), 3)}`, bounds), params: b.params };
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
