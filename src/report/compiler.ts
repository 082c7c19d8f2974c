// Compiles a typed report query into one SQL statement for a dialect. The plan for the aggregates other than
// `visitors` is chosen from the query's shape (plan-choice.ts) and built by its module in ./plans/; `visitors`
// is counted on its own (plans/visitor-days.ts) and joined to them; order and limit come last. The plans are the
// same for every database; a dialect only changes how values and a few functions are written.

import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import { ENGAGEMENT_AGGREGATES, type Aggregate } from './fields.js';
import { choosePlan, type PlanName } from './plan-choice.js';
import { engagement, ENGAGED_PAIRS } from './plans/engagement.js';
import { pages } from './plans/pages.js';
import { perVisit } from './plans/per-visit.js';
import { Subqueries, type PlanContext } from './plans/plan-sql.js';
import { rollupAndPages } from './plans/rollup-and-pages.js';
import { semiJoinTotals } from './plans/semi-join-totals.js';
import { singlePass } from './plans/single-pass.js';
import { visitRollup } from './plans/visit-rollup.js';
import { countsTopVisitors, TOP_GROUP_ROWS, topVisitors } from './plans/top-visitors.js';
import { visitorDays } from './plans/visitor-days.js';
import type { ReportQuery } from './query.js';
import { aggregateAlias, fieldAlias, PROP_ALIAS, TIMESTAMP_ALIAS } from './result-columns.js';

/** Each plan's builder: the report without its order and limit. */
const PLANS: Record<PlanName, (ctx: PlanContext, q: ReportQuery, b: Binder) => string> = {
  'single pass': singlePass,
  'semi-join totals': semiJoinTotals,
  'per visit': perVisit,
  'visit rollup': visitRollup,
  pages,
  'visit rollup and pages': rollupAndPages,
};

export class ReportCompiler implements PlanContext {
  /**
   * `parts`: avg_duration and bounce_rate come out as their unrounded numerators (durations in milliseconds,
   * bounced visits), to be added to imported days' before dividing (src/report/imported.ts); the denominator is
   * the `visits` aggregate of the same row. So do scroll_depth and time_on_page (summed percent and ms), over
   * the row's ENGAGED_PAIRS column.
   */
  constructor(
    readonly dialect: SqlDialect,
    readonly parts = false,
    readonly topGroupRows = TOP_GROUP_ROWS,
  ) {}

  aggregation(q: ReportQuery): CompiledQuery {
    const compiled = (topOnly: boolean): CompiledQuery => {
      const b = new Binder(this.dialect);
      return b.compiled(this.body(q, b, topOnly) + this.tail(q, b));
    };
    // Sorted by visitors with a limit: visitors of the listable groups only, and the whole count if their pageviews
    // are too many to count in one pass (plans/top-visitors.ts).
    return countsTopVisitors(this.dialect, q) ? { ...compiled(true), fallback: compiled(false) } : compiled(false);
  }

  /**
   * The report without its order and limit. `visitors` (distinct visitor-days) is not a per-visit count: a visit
   * crossing midnight UTC has two. It is counted on its own from the selected pageviews and joined to the
   * other aggregates on the group keys (both sides have the same groups: those with a selected pageview).
   */
  private body(q: ReportQuery, b: Binder, topOnly: boolean): string {
    const engaged = q.aggregates.filter((a) => ENGAGEMENT_AGGREGATES.has(a));
    if (engaged.length === 0) return this.pageviewBody(q, b, topOnly);
    // Groups are those with a selected pageview, as for every other aggregate: the pageview side is asked for
    // pageviews when only engagement is wanted, and engagement is left-joined to it, null where a group had none.
    const rest = q.aggregates.filter((a) => !ENGAGEMENT_AGGREGATES.has(a));
    const keys = this.groupKeys(q);
    const pairs = `e.${ENGAGED_PAIRS}`;
    const columns = [
      ...[...keys, ...(q.propGroup !== undefined ? [PROP_ALIAS] : [])].map((k) => `m.${k} AS ${k}`),
      ...q.aggregates.map((a) => {
        const alias = aggregateAlias(a);
        if (!ENGAGEMENT_AGGREGATES.has(a)) return `m.${alias} AS ${alias}`;
        // A custom property breakdown groups by values engagement hits never carry (they have no properties).
        return q.propGroup !== undefined ? `NULL AS ${alias}` : `CASE WHEN ${pairs} > 0 THEN e.${alias} ELSE NULL END AS ${alias}`;
      }),
      // Parts mode: the engagement sums' denominator, for mergeImported (null or 0: the group had no pairs).
      ...(this.parts && q.propGroup === undefined ? [`${pairs} AS ${ENGAGED_PAIRS}`] : []),
    ];
    const w = new Subqueries(this.dialect);
    w.add('m', this.pageviewBody({ ...q, aggregates: rest.length > 0 ? rest : ['pageviews'] }, b, topOnly));
    if (q.propGroup !== undefined) return `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('m')}`;
    // With a limit and an order engagement does not decide, only the rows listed need engagement: the pageview side
    // is ordered and limited first (the tail does it again). Fields only: the listed time buckets are formatted.
    const listedOnly =
      this.dialect.commonTableExpressions && q.limit !== undefined && q.fieldGrouping.length > 0 && !q.dateGrouping && !ENGAGEMENT_AGGREGATES.has(q.sort.field as Aggregate);
    let side = 'm';
    if (listedOnly) {
      w.add('listed', `SELECT * FROM ${w.ref('m')} ORDER BY ${this.orderBy(q)} ${this.dialect.limit(b.value(q.limit!))}`, { materialized: true });
      side = 'listed';
    }
    w.add('e', engagement(this, q, b, listedOnly ? w.ref('listed') : undefined));
    // Without groups each side is one row (the engagement side counts 0 pairs when there were none).
    const join = keys.length > 0 ? `LEFT JOIN ${w.ref('e')} ON ${keys.map((k) => `e.${k} = m.${k}`).join(' AND ')}` : `CROSS JOIN ${w.ref('e')}`;
    return `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref(side, 'm')} ${join}`;
  }

  /** The report's group keys (time bucket and fields) as result columns: what two sides of a report join on. */
  private groupKeys(q: ReportQuery): string[] {
    return [...(q.dateGrouping ? [TIMESTAMP_ALIAS] : []), ...q.fieldGrouping.map((_, i) => fieldAlias(i))];
  }

  /**
   * The report's pageview (or event) aggregates: the chosen plan, with `visitors` counted apart and joined (with
   * `topOnly`, for the listable groups only: the join keeps those).
   */
  private pageviewBody(q: ReportQuery, b: Binder, topOnly: boolean): string {
    if (!q.aggregates.includes('visitors')) return this.plan(q, b);
    const rest = q.aggregates.filter((a) => a !== 'visitors');
    // The top groups' plan counts their pageviews for its bound: with nothing else asked, it answers alone.
    if (topOnly && rest.length === 1 && rest[0] === 'pageviews') return topVisitors(this, q, b, true);
    const days = visitorDays(this, q, b, topOnly);
    if (rest.length === 0) return days;
    const keys = this.groupKeys(q);
    const columns = [
      ...keys.map((k) => `m.${k} AS ${k}`),
      ...q.aggregates.map((a) => `${a === 'visitors' ? 'x' : 'm'}.${aggregateAlias(a)} AS ${aggregateAlias(a)}`),
    ];
    const w = new Subqueries(this.dialect);
    w.add('m', this.plan({ ...q, aggregates: rest }, b));
    w.add('x', days);
    const join = keys.length > 0 ? `JOIN ${w.ref('x')} ON ${keys.map((k) => `x.${k} = m.${k}`).join(' AND ')}` : `CROSS JOIN ${w.ref('x')}`;
    return `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('m')} ${join}`;
  }

  /** The chosen plan's SQL for aggregates other than `visitors`. */
  private plan(q: ReportQuery, b: Binder): string {
    return PLANS[choosePlan(q)](this, q, b);
  }

  /** ORDER BY and LIMIT. */
  private tail(q: ReportQuery, b: Binder): string {
    const order = this.orderBy(q);
    return (order ? ` ORDER BY ${order}` : '') + (q.limit !== undefined ? ` ${this.dialect.limit(b.value(q.limit))}` : '');
  }

  /** The requested or default order, then ties broken by timestamp and the grouped fields, ascending. */
  private orderBy(q: ReportQuery): string {
    const groupAliases = [
      ...(q.dateGrouping ? [TIMESTAMP_ALIAS] : []), ...q.fieldGrouping.map((_, i) => fieldAlias(i)), ...(q.propGroup !== undefined ? [PROP_ALIAS] : []),
    ];
    if (groupAliases.length === 0) return '';
    const key = (field: string) =>
      field === 'timestamp'
        ? TIMESTAMP_ALIAS
        : q.fieldGrouping.includes(field as never)
          ? fieldAlias(q.fieldGrouping.indexOf(field as never))
          : aggregateAlias(field as Aggregate);
    const primary = `${key(q.sort.field)} ${q.sort.direction.toUpperCase()}`;
    const ties = groupAliases.filter((a) => a !== key(q.sort.field)).map((a) => `${a} ASC`);
    return [primary, ...ties].join(', ');
  }

  /** The first recorded hit of the entity: the default start of a report's range. */
  firstHit(siteId: string, entity: 'pageview' | 'event', eventName?: string): CompiledQuery {
    const b = new Binder(this.dialect);
    const where = [`site_id = ${b.value(siteId)}`, `type = ${b.value(entity)}`];
    if (entity === 'event') where.push(`event_name = ${b.value(eventName ?? '')}`);
    return { sql: `SELECT ${this.dialect.earliest('ts')} AS first FROM ${this.dialect.table('hits')} WHERE ${where.join(' AND ')}`, params: b.params };
  }

  /**
   * The site's visits with pageviews in [from, until) that are not wholly inside it (`visit_id`, and `started_ms`
   * and `last_seen_ms`, epoch milliseconds): a day rollup's crossing visits (src/report/day-rollups/builder.ts).
   */
  crossingVisits(siteId: string, from: Date, until: Date): CompiledQuery {
    const b = new Binder(this.dialect);
    const d = this.dialect;
    const columns = `v.visit_id AS visit_id, ${d.epochMs('v.started_at')} AS started_ms, ${d.epochMs('v.last_seen_at')} AS last_seen_ms`;
    return b.compiled(d.edgeVisitIds(b.value(siteId), b.value(from), b.value(until), [], 'both', columns));
  }

  /** Runs a pattern once, so an invalid one fails on its own before the report (and becomes a 400). */
  regexCheck(pattern: string): CompiledQuery {
    const b = new Binder(this.dialect);
    return { sql: `SELECT ${this.dialect.regexMatch("''", b.value(pattern))} AS ok`, params: b.params };
  }

  currentVisitors(siteId: string, since: Date): { total: CompiledQuery; content: CompiledQuery; referrers: CompiledQuery } {
    const visits = this.dialect.table('visits');
    const scope = (b: Binder) => `site_id = ${b.value(siteId)} AND last_seen_at >= ${b.value(since)}`;
    const top = (select: string, extra: string, group: string) => {
      const b = new Binder(this.dialect);
      const where = `${scope(b)}${extra}`;
      return {
        sql: `SELECT ${select}, count(*) AS total FROM ${visits} WHERE ${where} GROUP BY ${group} ORDER BY total DESC, ${group} ${this.dialect.limit(b.value(150))}`,
        params: b.params,
      };
    };
    const b = new Binder(this.dialect);
    return {
      total: { sql: `SELECT count(*) AS total FROM ${visits} WHERE ${scope(b)}`, params: b.params },
      content: top('exit_hostname AS hostname, exit_page AS pathname', ' AND pageviews > 0', 'hostname, pathname'),
      referrers: top(
        'referrer_hostname AS referrer_hostname, referrer_pathname AS referrer_pathname',
        " AND referrer_hostname <> ''",
        'referrer_hostname, referrer_pathname',
      ),
    };
  }

  /** The visit rows current visitors count (src/report/current-visitors.ts), at most `limit`. */
  currentVisitRows(siteId: string, since: Date, limit: number): CompiledQuery {
    const b = new Binder(this.dialect);
    return {
      sql: `SELECT visit_id, last_seen_at, pageviews, exit_hostname, exit_page, referrer_hostname, referrer_pathname
        FROM ${this.dialect.table('visits')} WHERE site_id = ${b.value(siteId)} AND last_seen_at >= ${b.value(since)} ${this.dialect.limit(b.value(limit))}`,
      params: b.params,
    };
  }

  /**
   * The custom property keys carried by a goal's completions in a range, most used first (the dashboard's key
   * choice): `k` and `n`, at most `limit` rows.
   */
  propertyKeys(q: ReportQuery, limit: number): CompiledQuery {
    const b = new Binder(this.dialect);
    const d = this.dialect;
    const where = [
      `h.site_id = ${b.value(q.siteId)}`, `h.type = 'event'`, `h.event_name = ${b.value(q.eventName ?? '')}`,
      `h.ts >= ${b.value(q.from)}`, `h.ts < ${b.value(q.until)}`,
    ];
    return {
      sql: `SELECT p.k AS k, count(*) AS n FROM (${d.propKeyRows(d.table('hits', 'h'), where)}) p GROUP BY p.k ORDER BY n DESC, k ASC ${d.limit(b.value(limit))}`,
      params: b.params,
    };
  }
}
