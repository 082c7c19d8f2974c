// Page numbers of recorded journeys (table journey_pages, migration 28): each site's journey pages numbered from 1,
// given out on the writer's connection only (so that two connections never number one page twice), and the numbers
// set on visits as they are stored. Journeys group by them (src/report/journeys.ts).

import { JOURNEY_PAGE_COLUMNS } from '../event-rows.js';

/** A journey's page columns in the visits table, the entry page first. */
const PAGE_COLUMNS = ['entry_page', ...JOURNEY_PAGE_COLUMNS];
/** Their numbers' columns, in the same order (0: no page, or a journey not known). */
export const JOURNEY_ID_COLUMNS = PAGE_COLUMNS.map((_, i) => `journey_id_${i + 1}`);

/** The distinct (site_id, p) of the recorded journeys' pages among `rows`, a FROM item with the visits' columns. */
const pagesOf = (rows: string) =>
  `SELECT DISTINCT site_id, p FROM (SELECT site_id, unnest([${PAGE_COLUMNS.join(', ')}]) AS p FROM ${rows} WHERE journey_length > 0) AS x WHERE p <> ''`;

/** Numbers the pages of `rows`' journeys that have none yet, each site's after its highest (`rows` read once). */
export const numberNewPages = (rows: string) =>
  `WITH n AS MATERIALIZED (${pagesOf(rows)})
   INSERT INTO journey_pages
   SELECT n.site_id, n.p, CAST(coalesce(m.top, 0) + row_number() OVER (PARTITION BY n.site_id ORDER BY n.p) AS UINTEGER)
   FROM n
   LEFT JOIN (SELECT site_id, max(page_id) AS top FROM journey_pages WHERE site_id IN (SELECT site_id FROM n) GROUP BY site_id) AS m
     ON m.site_id = n.site_id
   WHERE NOT EXISTS (SELECT 1 FROM journey_pages j WHERE j.site_id = n.site_id AND j.pathname = n.p)`;

/**
 * `SELECT` of `rows` (aliased `u`) with each journey page's number as its JOURNEY_ID_COLUMNS column: `select` gets
 * the numbers' expressions and writes the select list; `order`, an ORDER BY on `u`. The pages must have been
 * numbered (numberNewPages) in a transaction this one sees. A subquery (an import's CSV file) is read once, into
 * memory, for both its pages and its rows; a table is read where it is.
 */
export function withJourneyIds(rows: { table: string } | { subquery: string }, select: (ids: string[]) => string, order = ''): string {
  const read = 'subquery' in rows;
  const source = read ? 'journey_rows' : rows.table;
  const ids = PAGE_COLUMNS.map((_, i) => `CASE WHEN u.journey_length > 0 THEN coalesce(m${i + 1}.page_id, 0) ELSE 0 END`);
  const joins = PAGE_COLUMNS.map((c, i) => `LEFT JOIN m AS m${i + 1} ON m${i + 1}.site_id = u.site_id AND m${i + 1}.pathname = u.${c}`);
  return (
    `WITH ${read ? `${source} AS MATERIALIZED (${rows.subquery}), ` : ''}` +
    `m AS (SELECT site_id, pathname, page_id FROM journey_pages WHERE (site_id, pathname) IN (SELECT site_id, p FROM (${pagesOf(source)}) AS q)) ` +
    `SELECT ${select(ids)} FROM ${source} AS u ${joins.join(' ')}${order ? ` ORDER BY ${order}` : ''}`
  );
}
