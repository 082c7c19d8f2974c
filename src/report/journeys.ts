// Journeys (docs/reports.md, "Journeys"): the sequences of pages visits take, as the most frequent prefixes of
// each depth. One statement: the journeys visits recorded as their hits arrived, and those of the other visits from
// their pageviews in the range; the dialect writes the list functions.

import { JOURNEY_PAGES } from '../domain/hits.js';
import { filterConditions, propConditions } from './conditions.js';
import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import { funnelConditions } from './funnel-filter.js';
import { queryLevels } from './plan-choice.js';
import { edgeVisitHits, Subqueries } from './plans/plan-sql.js';
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
 * sorted (docs/benchmarks.md, "Analysis reports"). The heads are then counted per prefix of each depth (everyHead,
 * or numberedHeads: by page numbers, only where a listed prefix can be); within a depth every prefix has that many
 * pages, so ordering by the columns is ordering by the pages (journeyRows).
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
  // Without conditions on hits, recorded journeys answer for the visits wholly inside the range: on DuckDB by their
  // pages' numbers (numberedHeads), so only visits whose pages were numbered.
  const recorded = hitWhere.length === 0 && ofVisits.length === 0;
  const numbered = recorded && d.commonTableExpressions;
  const known = numbered ? ['v.journey_length > 0', 'v.journey_id_1 > 0'] : ['v.journey_length > 0'];
  const inside = `${known.join(' AND ')} AND v.started_at >= ${from} AND v.last_seen_at < ${until}`;
  // A visit whose first page is the entry page has a pageview of it in the range: only those visits' pages are
  // collected and sorted (at 10 M pageviews, a seventh of the visits for a common entry page), the first page
  // still tested below.
  const withEntry =
    entryPage !== undefined
      ? ` AND h.visit_id IN (SELECT e.visit_id FROM ${d.table('hits', 'e')} WHERE e.site_id = ${site} AND e.type = 'pageview'` +
        ` AND e.ts >= ${from} AND e.ts < ${until} AND e.pathname = ${entryPage})`
      : '';
  const pagesOf = (more: string) =>
    `SELECT h.visit_id AS visit_id, ${d.timeOrderedPages('h.ts', 'h.pathname')} AS ps FROM ${d.table('hits', 'h')}` +
    ` WHERE h.site_id = ${site} AND h.type = 'pageview' AND h.ts >= ${from} AND h.ts < ${until}${more}${withEntry}${visitKept}` +
    ` GROUP BY h.visit_id${having}`;
  // With recorded journeys, the pages of the range's edge visits only, read near its ends (edgeVisitHits).
  w.add(
    'j',
    recorded
      ? edgeVisitHits(d, b, q, { site, from, until }, known, 'h.ts', (time, ids) => pagesOf(`${time ? ` AND ${time}` : ''} AND h.visit_id IN (${ids})`))
      : pagesOf(''),
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
  // A recorded journey's head from its visit's row: page 1 is the entry page, the later pages '' past its end (or
  // their numbers, 0 past its end).
  const rowHead = positions.map((i) => (numbered ? `v.journey_id_${i}` : i === 1 ? 'v.entry_page' : `v.journey_${i}`));
  const rowLength = d.bigint(`least(v.journey_length, ${steps} + 1)`);
  const rowWhere = [`v.site_id = ${site}`, inside, ...visitWhere, ...(entryPage !== undefined ? [`v.entry_page = ${entryPage}`] : [])].join(' AND ');
  const rows = (journeys: string) =>
    `SELECT ${rowHead.map((h, i) => `${h} AS p${i + 1}`).join(', ')}, ${rowLength} AS n, ${journeys} AS journeys FROM ${d.table('visits', 'v')} WHERE ${rowWhere}`;

  const parts: JourneyParts = { d, w, steps, limit, positions, head, fromHits, rows, none: numbered ? '0' : "''" };
  const sql = !recorded ? everyHead(parts, false) : numbered ? numberedHeads(parts, site, o.steps) : everyHead(parts, true);
  return b.compiled(sql);
}

/** What the two ways of counting heads build on (journeysQuery). */
interface JourneyParts {
  d: SqlDialect;
  w: Subqueries;
  /** Bound values: the steps and the limit per depth. */
  steps: string;
  limit: string;
  /** 1..steps. */
  positions: number[];
  /** The head's columns: p1..p<steps>, n. */
  head: string[];
  /** Heads gathered from pageviews, grouped: p1..p<steps>, n, journeys. */
  fromHits: string;
  /** The recorded heads of the visits wholly inside the range, one row each with `journeys` as given. */
  rows: (journeys: string) => string;
  /** A head's page past its end: '' in heads of texts, 0 in heads of page numbers (numberedHeads). */
  none: string;
}

/** `source`'s heads as the prefixes of depths `lowest`..steps (capped by each head's length), with their counts. */
function prefixes(p: JourneyParts, source: string, lowest: number): string {
  const q = p.positions.map((i) => `${i <= lowest ? `s.p${i}` : `CASE WHEN depth >= ${i} THEN s.p${i} ELSE ${p.none} END`} AS q${i}`);
  return (
    `SELECT depth, ${q.join(', ')}, s.journeys AS journeys, CASE WHEN s.n = depth THEN s.journeys ELSE 0 END AS ends` +
    ` FROM ${source} ${p.d.depthsUpTo(p.steps, 'depth')} WHERE depth <= s.n${lowest > 0 ? ` AND depth >= ${lowest}` : ''}`
  );
}

/** The top `limit` prefixes of each depth among `expanded`'s rows (prefixes()); `having`: a bound they all meet. */
function topPrefixes(p: JourneyParts, expanded: string, having = ''): string {
  const q = p.positions.map((i) => `q${i}`);
  return (
    `SELECT depth, ${q.join(', ')}, sum(journeys) AS visits, sum(ends) AS ended FROM (${expanded}) AS x` +
    ` GROUP BY ${['depth', ...q].join(', ')}${having ? ` HAVING ${having}` : ''}` +
    ` ${p.d.topPerGroup('depth', ['visits DESC', ...q.map((c) => `${c} ASC`)], p.limit)}`
  );
}

/**
 * Every head grouped once, then expanded into prefixes: with hits filtered (no recorded heads), or where subqueries
 * are inlined (ClickHouse), so that the part gathered from pageviews is computed once.
 */
function everyHead(p: JourneyParts, recorded: boolean): string {
  const { w, head } = p;
  if (!recorded) w.add('k', p.fromHits);
  else {
    w.add('kh', p.fromHits);
    w.add('kv', `SELECT ${head.join(', ')}, count(*) AS journeys FROM (${p.rows('1')}) AS r GROUP BY ${head.join(', ')}`);
    w.add('k', `SELECT ${head.join(', ')}, journeys FROM ${w.ref('kh')} UNION ALL SELECT ${head.join(', ')}, journeys FROM ${w.ref('kv')}`);
  }
  return w.with() + topPrefixes(p, prefixes(p, w.ref('k', 's'), 0));
}

/**
 * Recorded heads where subqueries are shared (DuckDB), as page numbers (journey_pages: grouping numbers took about
 * three quarters of the time of grouping texts), grouped in full only where a listed prefix can be: most distinct
 * heads are deep ones of a visit or two, and grouping every head (1.3 million of them at 10 M pageviews) was most of
 * the time, ranking every prefix most of the rest (docs/benchmarks.md, "Analysis reports").
 *
 * The heads gathered from pageviews are texts: their pages get the site's numbers, and the pages without one
 * numbers above the site's highest, for this statement only (`extra`). The listed prefixes get their texts back
 * before they are ranked, ties by their pages' texts.
 *
 * Depths 0-2 come from every journey grouped by its first two pages. A prefix of depth d >= 3 among the top `limit`
 * has at least T_d visits (the limit-th largest count of depth d), and so has its depth-2 ancestor. The limit-th
 * largest count among the depth-d descendants of `limit` depth-2 prefixes with the most visits (the sample: exact
 * counts of real prefixes, whichever of equal counts are taken) is at most T_d. So the heads under depth-2
 * prefixes with at least the smallest of these bounds hold every prefix that can be listed, each with its exact
 * count; from the first depth whose sample has fewer than `limit` prefixes on, every head that deep is needed too.
 * Only prefixes meeting their depth's bound are ranked.
 */
function numberedHeads(p: JourneyParts, site: string, steps: number): string {
  const { d, w, head, limit, positions } = p;
  const texts = positions.map((i) => `p${i}`);
  w.add('kh', p.fromHits, { materialized: true });
  w.add('khpages', `SELECT DISTINCT unnest([${texts.join(', ')}]) AS p FROM ${w.ref('kh')}`);
  w.add('known', `SELECT pathname AS p, page_id AS id FROM journey_pages WHERE site_id = ${site} AND pathname IN (SELECT p FROM ${w.ref('khpages')})`, {
    materialized: true,
  });
  w.add(
    'extra',
    `SELECT p, CAST((SELECT coalesce(max(page_id), 0) FROM journey_pages WHERE site_id = ${site}) + row_number() OVER (ORDER BY p) AS UINTEGER) AS id` +
      ` FROM ${w.ref('khpages')} WHERE p <> '' AND p NOT IN (SELECT p FROM ${w.ref('known')})`,
    { materialized: true },
  );
  w.add('khnames', `SELECT p, id FROM ${w.ref('known')} UNION ALL SELECT p, id FROM ${w.ref('extra')} UNION ALL SELECT '' AS p, CAST(0 AS UINTEGER) AS id`);
  const khNumbered =
    `SELECT ${positions.map((i) => `n${i}.id AS p${i}`).join(', ')}, kh.n AS n, kh.journeys AS journeys FROM ${w.ref('kh')} AS kh ` +
    positions.map((i) => `JOIN ${w.ref('khnames', `n${i}`)} ON n${i}.p = kh.p${i}`).join(' ');
  w.add('src', `${khNumbered} UNION ALL ${p.rows('1')}`);
  // Every journey by its first two pages (0 as the second: a journey of one page), with how many have two pages only.
  w.add(
    'shallow',
    `SELECT p1, p2, sum(journeys) AS journeys, sum(CASE WHEN n = 2 THEN journeys ELSE 0 END) AS twos FROM ${w.ref('src')} GROUP BY p1, p2`,
    { materialized: true },
  );
  w.add('parents', `SELECT p1, p2, journeys AS c FROM ${w.ref('shallow')} WHERE p2 <> 0`);
  w.add('top2', `SELECT p1, p2, c FROM ${w.ref('parents')} ORDER BY c DESC, p1, p2 ${d.limit(limit)}`, { materialized: true });
  // The limit-th largest count of depth 2 (exact: every depth-2 prefix is in parents), 0 when there are fewer.
  const depth2Bound = `(SELECT CASE WHEN count(*) = ${limit} THEN min(c) ELSE 0 END FROM ${w.ref('top2')})`;
  // Depths 0-2 as prefix rows (journeys, ends), depth 2 only for the prefixes that meet its bound.
  const blanks = (from: number) => positions.slice(from).map((i) => `0 AS q${i}, `).join('');
  const shallow =
    `SELECT 0 AS depth, ${blanks(0)}sum(journeys) AS journeys, 0 AS ends FROM ${w.ref('shallow')}` +
    ` UNION ALL SELECT 1 AS depth, p1 AS q1, ${blanks(1)}sum(journeys) AS journeys, sum(CASE WHEN p2 = 0 THEN journeys ELSE 0 END) AS ends` +
    ` FROM ${w.ref('shallow')} GROUP BY p1` +
    ` UNION ALL SELECT 2 AS depth, p1 AS q1, p2 AS q2, ${blanks(2)}journeys, twos AS ends FROM ${w.ref('shallow')}` +
    ` WHERE p2 <> 0 AND journeys >= ${depth2Bound}`;
  // Named subqueries are written once all are added: the ranking adds its own.
  if (steps === 2) {
    const ranked = rankedWithTexts(p, site, shallow);
    return w.with() + ranked;
  }
  // Deeper prefixes only: a head of fewer than three pages holds none (7% of the statement at 10 M pageviews).
  const grouped = (where: string) =>
    `SELECT ${head.join(', ')}, sum(journeys) AS journeys FROM ${w.ref('src')} WHERE n >= 3 AND ${where} GROUP BY ${head.join(', ')}`;
  w.add('sample', grouped(`(p1, p2) IN (SELECT p1, p2 FROM ${w.ref('top2')})`));
  const q = positions.map((i) => `q${i}`);
  w.add(
    'ranks',
    `SELECT depth, sum(journeys) AS c FROM (${prefixes(p, w.ref('sample', 's'), 3)}) AS x GROUP BY ${['depth', ...q].join(', ')}` +
      ` ${d.topPerGroup('depth', ['c DESC'], limit)}`,
  );
  // The bound of each depth with `limit` prefixes in the sample; their smallest, and the first depth without one
  // (none when every depth has one: steps + 2, more than any head's n).
  w.add('sampledBounds', `SELECT depth, min(c) AS c FROM ${w.ref('ranks')} GROUP BY depth HAVING count(*) = ${limit}`, { materialized: true });
  const bound = `(SELECT min(c) FROM ${w.ref('sampledBounds')})`;
  const depths = Array.from({ length: steps - 2 }, (_, i) => `(${i + 3})`).join(', ');
  const unbounded = `coalesce((SELECT min(d) FROM (VALUES ${depths}) AS t(d) WHERE d NOT IN (SELECT depth FROM ${w.ref('sampledBounds')})), ${steps + 2})`;
  w.add('deep', grouped(`((p1, p2) IN (SELECT p1, p2 FROM ${w.ref('parents')} WHERE c >= ${bound}) OR n >= ${unbounded})`));
  const bounds = `depth <= 2 OR depth >= ${unbounded} OR sum(journeys) >= ${bound}`;
  const ranked = rankedWithTexts(p, site, `${shallow} UNION ALL ${prefixes(p, w.ref('deep', 's'), 3)}`, bounds);
  return w.with() + ranked;
}

/**
 * The top `limit` prefixes of each depth among `expanded`'s rows of page numbers (prefixes()), `having` a bound they
 * all meet, with their pages' texts: the prefixes that can be listed whatever their texts (every count up to the
 * limit-th, ties included) are named first, then ranked as topPrefixes ranks texts.
 */
function rankedWithTexts(p: JourneyParts, site: string, expanded: string, having = ''): string {
  const { d, w, positions, limit } = p;
  const q = positions.map((i) => `q${i}`);
  w.add(
    'listable',
    `SELECT depth, ${q.join(', ')}, sum(journeys) AS visits, sum(ends) AS ended FROM (${expanded}) AS x` +
      ` GROUP BY ${['depth', ...q].join(', ')}${having ? ` HAVING ${having}` : ''}` +
      ` QUALIFY rank() OVER (PARTITION BY depth ORDER BY visits DESC) <= ${limit}`,
    { materialized: true },
  );
  w.add(
    'names',
    `SELECT page_id AS id, pathname AS p FROM journey_pages WHERE site_id = ${site} AND page_id IN (SELECT unnest([${q.join(', ')}]) FROM ${w.ref('listable')})` +
      ` UNION ALL SELECT id, p FROM ${w.ref('extra')} UNION ALL SELECT CAST(0 AS UINTEGER) AS id, '' AS p`,
    { materialized: true },
  );
  const named =
    `SELECT l.depth AS depth, ${positions.map((i) => `n${i}.p AS q${i}`).join(', ')}, l.visits AS visits, l.ended AS ended FROM ${w.ref('listable', 'l')} ` +
    positions.map((i) => `JOIN ${w.ref('names', `n${i}`)} ON n${i}.id = l.q${i}`).join(' ');
  return `SELECT * FROM (${named}) AS t ${d.topPerGroup('depth', ['visits DESC', ...q.map((c) => `${c} ASC`)], limit)}`;
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
