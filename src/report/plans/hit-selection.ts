// The selection plans 1-3 share (single pass, semi-join totals, per visit): the range's hits of the report's
// entity that pass its hit-level filters, with their group keys, as the subquery `sel`; and the report's
// columns and grouping over rows read from it as `p` (with the visit as `v` where a plan joins it).

import { offsetSpans } from '../../domain/zoned-time.js';
import { columnOf, filterConditions, propConditions } from '../conditions.js';
import type { Binder } from '../dialect.js';
import { funnelConditions } from '../funnel-filter.js';
import { GROUP_FIELDS, type Aggregate } from '../fields.js';
import { queryLevels } from '../plan-choice.js';
import type { Filter, ReportQuery } from '../query.js';
import { aggregateAlias, fieldAlias, PROP_ALIAS, TIMESTAMP_ALIAS } from '../result-columns.js';
import { scopeConditions } from './hit-scope.js';
import { Subqueries, type PlanContext } from './plan-sql.js';

export interface GroupKey {
  alias: string;
  expr: string;
}

export interface HitSelection {
  /** The statement's subqueries, `sel` defined. */
  w: Subqueries;
  /** Group keys computed from the hit (fields and the time bucket, selected into `sel`)... */
  inner: GroupKey[];
  /** ...and from its visit (entry and exit page), read from `v` after a plan joins the visits. */
  outer: GroupKey[];
  /** Placeholders of the site and the range, for a plan's join of the visits. */
  site: string;
  from: string;
  until: string;
  visitFilters: Filter[];
  visitLevel: boolean;
  /** The report's columns: the group keys, then each aggregate as the plan writes it. */
  select(aggregateSql: Partial<Record<Aggregate, string>>): string;
  /** ` GROUP BY` the group keys, or nothing. */
  groupBy: string;
}

/** Binds, in this order, the bucket's offsets, the property key, site, entity, event, range, hit filters and scope. */
export function selectHits(ctx: PlanContext, q: ReportQuery, b: Binder): HitSelection {
  const d = ctx.dialect;
  const { hitFilters, visitFilters, visitLevel } = queryLevels(q);
  const wantsPaths = q.aggregates.includes('uniques');
  const wantsValue = q.aggregates.includes('value');

  const inner: GroupKey[] = [];
  const outer: GroupKey[] = [];
  q.fieldGrouping.forEach((f, i) => {
    const source = GROUP_FIELDS[f];
    (source.table === 'visit' ? outer : inner).push({ alias: fieldAlias(i), expr: columnOf(source) });
  });
  if (q.dateGrouping) {
    const spans = offsetSpans(q.timezone, q.from.getTime(), q.until.getTime());
    inner.push({ alias: TIMESTAMP_ALIAS, expr: d.bucket(q.dateGrouping, d.localTime('h.ts', spans, b)) });
  }
  const propKey = q.propGroup === undefined ? undefined : b.value(q.propGroup);
  if (propKey !== undefined) inner.push({ alias: PROP_ALIAS, expr: d.propValue('h', propKey) });

  // Bound in this order (DuckDB's placeholders are numbered by it); site and range are reused by plans' joins.
  const site = b.value(q.siteId);
  const entity = b.value(q.entity);
  const eventName = q.entity === 'event' ? b.value(q.eventName ?? '') : undefined;
  const from = b.value(q.from);
  const until = b.value(q.until);
  const where = [
    `h.site_id = ${site}`,
    `h.type = ${entity}`,
    ...(eventName !== undefined ? [`h.event_name = ${eventName}`] : []),
    `h.ts >= ${from}`,
    `h.ts < ${until}`,
    ...filterConditions(d, hitFilters, b),
    ...propConditions(d, q, b, site, from, until),
    ...funnelConditions(d, q, b),
    ...scopeConditions(d, q.scope, site, b),
    ...(propKey !== undefined ? [d.hasProp('h', propKey)] : []),
  ];
  const selected = [
    ...inner.map((g) => `${g.expr} AS ${g.alias}`),
    'h.visit_id AS visit_id',
    ...(wantsPaths ? ['h.pathname AS pathname'] : []),
    ...(wantsValue ? ['h.value AS value'] : []),
  ];
  const w = new Subqueries(d);
  w.add('sel', `SELECT ${selected.join(', ')} FROM ${d.table('hits', 'h')} WHERE ${where.join(' AND ')}`);

  const groupColumns = [
    ...inner.map((g) => (g.alias === TIMESTAMP_ALIAS ? `${d.formatBucket(`p.${g.alias}`)} AS ${g.alias}` : `p.${g.alias} AS ${g.alias}`)),
    ...outer.map((g) => `${g.expr} AS ${g.alias}`),
  ];
  const select = (aggregateSql: Partial<Record<Aggregate, string>>) =>
    [...groupColumns, ...q.aggregates.map((a) => `${aggregateSql[a]} AS ${aggregateAlias(a)}`)].join(', ');
  const groupKeys = [...inner.map((g) => `p.${g.alias}`), ...outer.map((g) => g.expr)];
  const groupBy = groupKeys.length > 0 ? ` GROUP BY ${groupKeys.join(', ')}` : '';
  return { w, inner, outer, site, from, until, visitFilters, visitLevel, select, groupBy };
}
