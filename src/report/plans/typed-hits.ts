// The hits of one type a report counts apart from its plan (`visitors` from pageviews, engagement from engagement
// hits): their group keys, conditions and, where filters or groups need it, the join of their visits. The same
// range, filters, property, funnel and scope conditions as the plans, so both sides of the compiler's join agree.

import { offsetSpans } from '../../domain/zoned-time.js';
import { columnOf, filterConditions, propConditions } from '../conditions.js';
import type { Binder } from '../dialect.js';
import { funnelConditions } from '../funnel-filter.js';
import { GROUP_FIELDS } from '../fields.js';
import { queryLevels } from '../plan-choice.js';
import type { ReportQuery } from '../query.js';
import { fieldAlias, TIMESTAMP_ALIAS } from '../result-columns.js';
import { scopeConditions } from './hit-scope.js';
import type { PlanContext } from './plan-sql.js';

export interface TypedHits {
  /** The report's fields and time bucket: result alias and the expression on `h` (or its visit `v`). */
  keys: { alias: string; expr: string }[];
  /** Conditions on `h` (and `v`), to be ANDed. */
  where: string[];
  /** The visits' join (` JOIN ... ON v.visit_id = h.visit_id`), or ''. */
  join: string;
  /** A key as a result column read from `from`: the bucket formatted as every plan writes it. */
  keyColumn(key: { alias: string }, from: string): string;
}

/** Binds, in this order, the bucket's offsets, site, range, filters, property, funnel and scope conditions. */
export function typedHits(ctx: PlanContext, q: ReportQuery, b: Binder, type: 'pageview' | 'engagement'): TypedHits {
  const d = ctx.dialect;
  const { hitFilters, visitFilters, visitLevel } = queryLevels(q);
  const keys = q.fieldGrouping.map((f, i) => ({ alias: fieldAlias(i), expr: columnOf(GROUP_FIELDS[f]) }));
  if (q.dateGrouping) {
    const spans = offsetSpans(q.timezone, q.from.getTime(), q.until.getTime());
    keys.push({ alias: TIMESTAMP_ALIAS, expr: d.bucket(q.dateGrouping, d.localTime('h.ts', spans, b)) });
  }
  const site = b.value(q.siteId);
  const from = b.value(q.from);
  const until = b.value(q.until);
  const visitWhere = filterConditions(d, visitFilters, b);
  const where = [
    `h.site_id = ${site}`, `h.type = '${type}'`, `h.ts >= ${from}`, `h.ts < ${until}`, ...filterConditions(d, hitFilters, b), ...visitWhere,
    ...propConditions(d, q, b, site, from, until),
    ...funnelConditions(d, q, b),
    ...scopeConditions(d, q.scope, site, b),
  ];
  const join = visitLevel
    ? ` ${d.joinVisitsOn('v', { site, where: [`v.started_at < ${until}`, `v.last_seen_at >= ${from}`, ...visitWhere] }, 'h.visit_id')}`
    : '';
  const keyColumn = (k: { alias: string }, source: string) =>
    k.alias === TIMESTAMP_ALIAS ? `${d.formatBucket(`${source}.${k.alias}`)} AS ${k.alias}` : `${source}.${k.alias} AS ${k.alias}`;
  return { keys, where, join, keyColumn };
}
