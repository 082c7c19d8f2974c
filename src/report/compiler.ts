// Compiles a typed report query into one SQL statement for a dialect: one of five plans, chosen from the query's
// shape (docs/benchmarks.md explains why each exists). The plans are the same for every database; a dialect
// only changes how values and a few functions are written.

import { offsetSpans } from '../domain/zoned-time.js';
import { filterSource, GROUP_FIELDS, POSITIVE_OPERATORS, type Aggregate, type FieldSource } from './fields.js';
import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import type { Filter, PropFilter, ReportQuery } from './query.js';

/** Aggregates that count distinct visits or need visit facts: they need the per-visit stage. */
const PER_VISIT: ReadonlySet<Aggregate> = new Set(['visits', 'unique_conversions', 'uniques', 'avg_duration', 'bounce_rate']);

/** What the visits table can answer by itself (plan 4). */
const ROLLUP_AGGREGATES: ReadonlySet<Aggregate> = new Set(['visits', 'pageviews', 'avg_duration', 'bounce_rate']);

/** Result column names: fields are f0, f1..., the bucket `bucket_start`, aggregates `a_` and their name. */
export const fieldAlias = (i: number) => `f${i}`;
export const aggregateAlias = (a: Aggregate) => `a_${a}`;
// Never the name of a table column: a GROUP BY on it must not fall back to hits.ts.
export const TIMESTAMP_ALIAS = 'bucket_start';
/** The custom property value a dashboard breakdown groups by. */
export const PROP_ALIAS = 'prop_value';

const col = (source: FieldSource) => `${source.table === 'hit' ? 'h' : 'v'}.${source.column}`;

/** `is like` pattern: `*` is any run of characters, everything else (`%` and `_` too) literal. */
export function likePattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%')}%`;
}

/**
 * The conditions of one property's filters on `column`: its positives ORed as one clause, each negative a clause
 * of its own (to be ANDed). The one place reports turn `is`, `is like` and `matching` (and their negations) into
 * SQL, for recorded hits and imported days alike.
 */
export function valueConditions(d: SqlDialect, column: string, filters: readonly Pick<Filter, 'operator' | 'value'>[], b: Binder): string[] {
  const condition = (f: Pick<Filter, 'operator' | 'value'>): string => {
    switch (f.operator) {
      case 'is':
        return `${column} = ${b.value(f.value)}`;
      case 'is not':
        return `${column} <> ${b.value(f.value)}`;
      case 'is like':
        return d.ilike(column, b.value(likePattern(f.value)));
      case 'is not like':
        return `NOT ${d.ilike(column, b.value(likePattern(f.value)))}`;
      case 'matching':
        return d.regexMatch(column, b.value(f.value));
      case 'not matching':
        return `NOT ${d.regexMatch(column, b.value(f.value))}`;
    }
  };
  const positives = filters.filter((f) => POSITIVE_OPERATORS.has(f.operator)).map(condition);
  const negatives = filters.filter((f) => !POSITIVE_OPERATORS.has(f.operator)).map(condition);
  return [...(positives.length > 0 ? [`(${positives.join(' OR ')})`] : []), ...negatives];
}

const atVisitLevel = (source: FieldSource) => source.table === 'visit';

/** A query's filters on hit and on visit columns, and whether it reads its hits' visits (filters or groups). */
function levels(q: ReportQuery): { hitFilters: Filter[]; visitFilters: Filter[]; visitLevel: boolean } {
  const hitFilters = q.filters.filter((f) => !atVisitLevel(filterSource(f.property)));
  const visitFilters = q.filters.filter((f) => atVisitLevel(filterSource(f.property)));
  const visitLevel = visitFilters.length > 0 || q.fieldGrouping.some((f) => atVisitLevel(GROUP_FIELDS[f]));
  return { hitFilters, visitFilters, visitLevel };
}

/**
 * The named subqueries of one statement: a WITH clause, or, for a dialect without common table expressions
 * (ClickHouse 18.16 has WITH for expressions only), each subquery inlined wherever it is read.
 */
class Subqueries {
  private readonly defined = new Map<string, string>();
  constructor(private readonly dialect: SqlDialect) {}

  /** Defines `name` (its SQL may read earlier names). */
  add(name: string, sql: string): void {
    this.defined.set(name, sql);
  }

  /** A FROM item reading `name`, under `alias` when given. */
  ref(name: string, alias?: string): string {
    if (!this.dialect.commonTableExpressions) return `(${this.defined.get(name)!}) ${alias ?? name}`;
    return alias ? `${name} ${alias}` : name;
  }

  /**
   * What the statement starts with: the WITH clause, or nothing when inlined. NOT MATERIALIZED: DuckDB otherwise
   * may store a subquery read twice, and the page plan's selection of every pageview in the range (10 M rows
   * over a month of a big site) took 272 MiB of memory and made its report twice as slow as reading it twice.
   */
  with(): string {
    if (!this.dialect.commonTableExpressions || this.defined.size === 0) return '';
    return `WITH ${[...this.defined].map(([name, sql]) => `${name} AS NOT MATERIALIZED (${sql})`).join(', ')} `;
  }
}

export class ReportCompiler {
  /**
   * `parts`: avg_duration and bounce_rate come out as their unrounded numerators (durations in milliseconds,
   * bounced visits), to be added to imported days' before dividing (src/report/imported.ts); the denominator is
   * the `visits` aggregate of the same row.
   */
  constructor(
    readonly dialect: SqlDialect,
    private readonly parts = false,
  ) {}

  /**
   * Plans 4 and 5 first (see specialPlan) when the query has their shape; otherwise:
   * 1. counts and sums only, nothing at visit level: one pass over the selected hits;
   * 2. totals with visit facts (duration, bounces): the visits having a selected hit, by semi-join;
   * 3. everything else: count per (hit-level group, visit), then per group. Visit-level groups (entry and exit
   *    page) and filters are constant within a visit, so they join the visits table after the per-visit step,
   *    on one row per visit instead of one per hit.
   */
  aggregation(q: ReportQuery): CompiledQuery {
    const b = new Binder(this.dialect);
    return { sql: this.body(q, b) + this.tail(q, b), params: b.params };
  }

  /**
   * The report without its order and limit. `visitors` (distinct visitor-days) is not a per-visit count: a visit
   * crossing midnight UTC has two. It is counted on its own from the selected pageviews and joined to the
   * other aggregates on the group keys (both sides have the same groups: those with a selected pageview).
   */
  private body(q: ReportQuery, b: Binder): string {
    if (!q.aggregates.includes('visitors')) return this.plan(q, b);
    const days = this.visitorDays(q, b);
    const rest = q.aggregates.filter((a) => a !== 'visitors');
    if (rest.length === 0) return days;
    const keys = [...(q.dateGrouping ? [TIMESTAMP_ALIAS] : []), ...q.fieldGrouping.map((_, i) => fieldAlias(i))];
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

  /**
   * `visitors` per group: distinct visitor ids (each a visitor-day, see StoredHit) among the selected pageviews.
   * Visit-level groups and filters join each hit's visit.
   */
  private visitorDays(q: ReportQuery, b: Binder): string {
    const d = this.dialect;
    const { hitFilters, visitFilters, visitLevel } = levels(q);
    const keys = q.fieldGrouping.map((f, i) => ({ alias: fieldAlias(i), expr: col(GROUP_FIELDS[f]) }));
    if (q.dateGrouping) {
      const spans = offsetSpans(q.timezone, q.from.getTime(), q.until.getTime());
      keys.push({ alias: TIMESTAMP_ALIAS, expr: d.bucket(q.dateGrouping, d.localTime('h.ts', spans, b)) });
    }
    const site = b.value(q.siteId);
    const from = b.value(q.from);
    const until = b.value(q.until);
    const visitWhere = this.filters(visitFilters, b);
    const where = [
      `h.site_id = ${site}`, `h.type = 'pageview'`, `h.ts >= ${from}`, `h.ts < ${until}`, ...this.filters(hitFilters, b), ...visitWhere,
      ...this.propFilters(q, b, site, from, until),
    ];
    const join = visitLevel
      ? ` ${d.joinVisits('v', { site, where: [`v.started_at < ${until}`, `v.last_seen_at >= ${from}`, ...visitWhere] })} ON v.visit_id = h.visit_id`
      : '';
    const selected = [...keys.map((k) => `${k.expr} AS ${k.alias}`), 'h.visitor_id AS visitor_id'];
    const pageviews = (...more: string[]) =>
      `(SELECT ${selected.join(', ')} FROM ${d.table('hits', 'h')}${join} WHERE ${[...where, ...more].join(' AND ')}) p`;
    const keyOf = (k: { alias: string }, from: string) =>
      k.alias === TIMESTAMP_ALIAS ? `${d.formatBucket(`${from}.${k.alias}`)} AS ${k.alias}` : `${from}.${k.alias} AS ${k.alias}`;
    const visitors = aggregateAlias('visitors');
    if (keys.length === 0) return `SELECT ${d.countDistinct('p.visitor_id')} AS ${visitors} FROM ${pageviews()}`;
    const groupBy = (from: string) => ` GROUP BY ${keys.map((k) => `${from}.${k.alias}`).join(', ')}`;
    const slices = q.visitorSlices ?? 1;
    if (slices <= 1) {
      return `SELECT ${[...keys.map((k) => keyOf(k, 'p')), `${d.countDistinct('p.visitor_id')} AS ${visitors}`].join(', ')} FROM ${pageviews()}${groupBy('p')}`;
    }
    // Disjoint slices of visitor ids, counted one after another and added up (see SqlDialect.slicesVisitors). The
    // slice is chosen where the hits are read: DuckDB would otherwise work out every group key before filtering.
    const counts = Array.from({ length: slices }, (_, i) =>
      `SELECT ${keys.map((k) => `p.${k.alias} AS ${k.alias}`).join(', ')}, ${d.countDistinct('p.visitor_id')} AS n` +
      ` FROM ${pageviews(`h.visitor_id % ${slices} = ${i}`)}${groupBy('p')}`,
    );
    return `SELECT ${[...keys.map((k) => keyOf(k, 's')), `${d.sumInteger('s.n')} AS ${visitors}`].join(', ')} FROM (${counts.join(' UNION ALL ')}) s${groupBy('s')}`;
  }

  /** One of the five plans for aggregates other than `visitors`, without order and limit. */
  private plan(q: ReportQuery, b: Binder): string {
    const d = this.dialect;
    const { hitFilters, visitFilters, visitLevel } = levels(q);
    const needsVisitFacts = q.aggregates.includes('avg_duration') || q.aggregates.includes('bounce_rate');
    const withProps = (q.props?.length ?? 0) > 0 || q.propGroup !== undefined;
    const special = withProps ? undefined : this.specialPlan(q, b, hitFilters.length === 0 && visitFilters.length === 0);
    if (special !== undefined) return special;
    const wantsPaths = q.aggregates.includes('uniques');
    const wantsValue = q.aggregates.includes('value');

    // Group keys: `inner` ones are computed from the hit (fields and the time bucket), `outer` ones from the visit.
    const inner: { alias: string; expr: string }[] = [];
    const outer: { alias: string; expr: string }[] = [];
    q.fieldGrouping.forEach((f, i) => {
      const source = GROUP_FIELDS[f];
      (atVisitLevel(source) ? outer : inner).push({ alias: fieldAlias(i), expr: col(source) });
    });
    if (q.dateGrouping) {
      const spans = offsetSpans(q.timezone, q.from.getTime(), q.until.getTime());
      inner.push({ alias: TIMESTAMP_ALIAS, expr: d.bucket(q.dateGrouping, d.localTime('h.ts', spans, b)) });
    }
    const propKey = q.propGroup === undefined ? undefined : b.value(q.propGroup);
    if (propKey !== undefined) inner.push({ alias: PROP_ALIAS, expr: d.propValue('h', propKey) });

    // Bound in this order (DuckDB's placeholders are numbered by it); site and range are reused by the JOIN below.
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
      ...this.filters(hitFilters, b),
      ...this.propFilters(q, b, site, from, until),
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

    const visitFacts = this.visitFacts();
    const groupColumns = [
      ...inner.map((g) => (g.alias === TIMESTAMP_ALIAS ? `${d.formatBucket(`p.${g.alias}`)} AS ${g.alias}` : `p.${g.alias} AS ${g.alias}`)),
      ...outer.map((g) => `${g.expr} AS ${g.alias}`),
    ];
    const select = (aggregateSql: Partial<Record<Aggregate, string>>) =>
      [...groupColumns, ...q.aggregates.map((a) => `${aggregateSql[a]} AS ${aggregateAlias(a)}`)].join(', ');
    const groupKeys = [...inner.map((g) => `p.${g.alias}`), ...outer.map((g) => g.expr)];
    const groupBy = groupKeys.length > 0 ? ` GROUP BY ${groupKeys.join(', ')}` : '';

    let sql: string;
    if (!visitLevel && !q.aggregates.some((a) => PER_VISIT.has(a))) {
      sql = w.with() + `SELECT ${select({ pageviews: 'count(*)', conversions: 'count(*)', value: 'sum(p.value)' })} FROM ${w.ref('sel', 'p')}${groupBy}`;
    } else if (!visitLevel && groupKeys.length === 0 && needsVisitFacts && !wantsPaths) {
      const totals = {
        pageviews: `(SELECT count(*) FROM ${w.ref('sel')})`,
        conversions: `(SELECT count(*) FROM ${w.ref('sel')})`,
        value: `(SELECT sum(value) FROM ${w.ref('sel')})`,
        visits: 'count(*)',
        unique_conversions: 'count(*)',
        ...visitFacts,
      };
      sql = w.with() + `SELECT ${select(totals)} FROM ${d.table('visits', 'v')} WHERE v.visit_id IN (SELECT visit_id FROM ${w.ref('sel')})`;
    } else {
      const perVisit = [
        ...inner.map((g) => g.alias),
        'visit_id',
        'count(*) AS n',
        ...(wantsPaths ? [`${d.countDistinct('pathname')} AS paths`] : []),
        ...(wantsValue ? ['sum(value) AS value_sum'] : []),
      ];
      const perGroup = {
        pageviews: 'sum(p.n)',
        conversions: 'sum(p.n)',
        visits: 'count(*)',
        unique_conversions: 'count(*)',
        uniques: 'sum(p.paths)',
        value: 'sum(p.value_sum)',
        ...visitFacts,
      };
      const visitWhere = this.filters(visitFilters, b);
      w.add('per_visit', `SELECT ${perVisit.join(', ')} FROM ${w.ref('sel')} GROUP BY ${[...inner.map((g) => g.alias), 'visit_id'].join(', ')}`);
      sql =
        w.with() +
        `SELECT ${select(perGroup)} FROM ${w.ref('per_visit', 'p')}` +
        // Every joined visit has a hit in the range, so overlaps it (a visit's started_at and last_seen_at span
        // all its hits, as plan 4 relies on too), and passes the visit filters.
        (needsVisitFacts || visitLevel
          ? ` ${d.joinVisits('v', { site, where: [`v.started_at < ${until}`, `v.last_seen_at >= ${from}`, ...visitWhere] })} ON v.visit_id = p.visit_id`
          : '') +
        (visitWhere.length > 0 ? ` WHERE ${visitWhere.join(' AND ')}` : '') +
        groupBy;
    }
    return sql;
  }

  /**
   * Plans 4 and 5 (and both at once: whole-visit aggregates with uniques, by time or in total), when the query
   * is of a shape they answer; undefined otherwise.
   */
  private specialPlan(q: ReportQuery, b: Binder, unfiltered: boolean): string | undefined {
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
      return this.visitRollup(q, b);
    }
    if (
      pathnameOnly &&
      counted &&
      q.fieldGrouping.every((f) => f === 'pathname') &&
      q.aggregates.every((a) => a === 'pageviews' || a === 'uniques' || (a === 'visits' && byPage))
    ) {
      return this.pagePlan(q, b);
    }
    if (unfiltered && q.fieldGrouping.length === 0 && q.aggregates.includes('uniques') && q.aggregates.every((a) => a === 'uniques' || ROLLUP_AGGREGATES.has(a))) {
      // Both: the visit rollup for its aggregates, the page plan for uniques, joined on the time bucket (the two
      // have the same buckets: those with a pageview).
      const visitPart = this.visitRollup({ ...q, aggregates: q.aggregates.filter((a) => a !== 'uniques') }, b);
      const pagePart = this.pagePlan({ ...q, aggregates: ['uniques'] }, b);
      const columns = [
        ...(q.dateGrouping ? [`a.${TIMESTAMP_ALIAS} AS ${TIMESTAMP_ALIAS}`] : []),
        ...q.aggregates.map((a) => `${a === 'uniques' ? 'u' : 'a'}.${aggregateAlias(a)} AS ${aggregateAlias(a)}`),
      ];
      const w = new Subqueries(this.dialect);
      w.add('a', visitPart);
      w.add('u', pagePart);
      return (
        `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('a')} ` +
        (q.dateGrouping ? `JOIN ${w.ref('u')} ON u.${TIMESTAMP_ALIAS} = a.${TIMESTAMP_ALIAS}` : `CROSS JOIN ${w.ref('u')}`)
      );
    }
    return undefined;
  }

  /**
   * Plan 4, for reports of whole-visit facts without hit filters (totals, by time, by entry or exit page): most
   * visits lie wholly inside the range and inside one time bucket, so the visits table answers for them
   * directly; only the few visits that cross the range's ends or a bucket boundary are counted from their hits.
   */
  private visitRollup(q: ReportQuery, b: Binder): string {
    const d = this.dialect;
    const outer = q.fieldGrouping.map((f, i) => ({ alias: fieldAlias(i), expr: col(GROUP_FIELDS[f]) }));
    const visits = d.table('visits', 'v');
    const spans = q.dateGrouping ? offsetSpans(q.timezone, q.from.getTime(), q.until.getTime()) : [];
    const bucketOf = (ts: string) => d.bucket(q.dateGrouping!, d.localTime(ts, spans, b));
    const site = b.value(q.siteId);
    const from = b.value(q.from);
    const until = b.value(q.until);
    const inside = `v.started_at >= ${from} AND v.last_seen_at < ${until}${q.dateGrouping ? ` AND ${bucketOf('v.started_at')} = ${bucketOf('v.last_seen_at')}` : ''}`;
    const ts = q.dateGrouping ? [`${bucketOf('v.started_at')} AS ${TIMESTAMP_ALIAS}`] : [];
    const facts = 'v.entry_page, v.exit_page, v.started_at, v.last_seen_at, v.pageviews';
    const edge = [`v.pageviews > 0`, `v.started_at < ${until}`, `v.last_seen_at >= ${from}`, `NOT (${inside})`];
    const edgeVisits = d.visitIds(site, edge);
    const edgeHits =
      `SELECT ${q.dateGrouping ? `${bucketOf('h.ts')} AS ${TIMESTAMP_ALIAS}, ` : ''}h.visit_id AS visit_id, count(*) AS n ` +
      `FROM ${d.table('hits', 'h')} WHERE h.site_id = ${site} AND h.type = 'pageview' AND h.ts >= ${from} AND h.ts < ${until} ` +
      `AND h.visit_id IN (${edgeVisits}) GROUP BY ${q.dateGrouping ? `${TIMESTAMP_ALIAS}, ` : ''}h.visit_id`;
    const rollup =
      `SELECT ${[...ts, 'v.visit_id AS visit_id', 'v.pageviews AS n', facts].join(', ')} FROM ${visits} ` +
      `WHERE v.site_id = ${site} AND v.pageviews > 0 AND ${inside} ` +
      `UNION ALL SELECT ${[...(q.dateGrouping ? [`e.${TIMESTAMP_ALIAS} AS ${TIMESTAMP_ALIAS}`] : []), 'e.visit_id AS visit_id', 'e.n AS n', facts].join(', ')} ` +
      `FROM (${edgeHits}) e ${d.joinVisits('v', { site, where: edge, few: true })} ON v.visit_id = e.visit_id`;
    const aggregates: Record<string, string> = { pageviews: 'sum(v.n)', visits: 'count(*)', ...this.visitFacts() };
    const columns = [
      ...(q.dateGrouping ? [`${d.formatBucket(`v.${TIMESTAMP_ALIAS}`)} AS ${TIMESTAMP_ALIAS}`] : []),
      ...outer.map((g) => `${g.expr} AS ${g.alias}`),
      ...q.aggregates.map((a) => `${aggregates[a]} AS ${aggregateAlias(a)}`),
    ];
    const keys = [...(q.dateGrouping ? [`v.${TIMESTAMP_ALIAS}`] : []), ...outer.map((g) => g.expr)];
    const visitWhere = this.filters(q.filters, b);
    const w = new Subqueries(d);
    w.add('rollup', rollup);
    return (
      `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('rollup', 'v')}` +
      (visitWhere.length > 0 ? ` WHERE ${visitWhere.join(' AND ')}` : '') +
      (keys.length > 0 ? ` GROUP BY ${keys.join(', ')}` : '')
    );
  }

  /**
   * Plan 5, distinct (visit, page) pairs without grouping by visit: top pages and uniques. Each pageview knows
   * whether it is its visit's first view of the page, so for visits wholly inside the range (and one time
   * bucket) with exact flags, counting flagged views counts pairs. Filters may only be on pathname, which all
   * views of a pair share. The few other visits are counted from their hits, pair by pair.
   */
  private pagePlan(q: ReportQuery, b: Binder): string {
    const d = this.dialect;
    const pathFilters = q.filters;
    const spans = q.dateGrouping ? offsetSpans(q.timezone, q.from.getTime(), q.until.getTime()) : [];
    const bucketOf = (ts: string) => d.bucket(q.dateGrouping!, d.localTime(ts, spans, b));
    const site = b.value(q.siteId);
    const from = b.value(q.from);
    const until = b.value(q.until);
    const simple =
      `v.paths_exact AND v.started_at >= ${from} AND v.last_seen_at < ${until}` +
      (q.dateGrouping ? ` AND ${bucketOf('v.started_at')} = ${bucketOf('v.last_seen_at')}` : '');
    const edge = d.visitIds(site, ['v.pageviews > 0', `v.started_at < ${until}`, `v.last_seen_at >= ${from}`, `NOT (${simple})`]);
    const groups = [...(q.dateGrouping ? [TIMESTAMP_ALIAS] : []), ...(q.fieldGrouping.length > 0 ? [fieldAlias(0)] : [])];
    const selected = [
      ...(q.dateGrouping ? [`${bucketOf('h.ts')} AS ${TIMESTAMP_ALIAS}`] : []),
      ...(q.fieldGrouping.length > 0 ? [`h.pathname AS ${fieldAlias(0)}`] : []),
      'h.visit_id AS visit_id',
      'h.pathname AS pathname',
      'h.first_view AS first_view',
    ];
    const where = [
      `h.site_id = ${site}`,
      `h.type = 'pageview'`,
      `h.ts >= ${from}`,
      `h.ts < ${until}`,
      ...this.filters(pathFilters, b),
    ];
    const groupBy = (extra: string[] = []) => ([...groups, ...extra].length > 0 ? ` GROUP BY ${[...groups, ...extra].join(', ')}` : '');
    const lead = groups.length > 0 ? `${groups.join(', ')}, ` : '';
    const w = new Subqueries(d);
    w.add('edge', edge);
    w.add('sel', `SELECT ${selected.join(', ')} FROM ${d.table('hits', 'h')} WHERE ${where.join(' AND ')}`);
    const parts =
      `SELECT ${lead}count(*) AS pv, sum(CASE WHEN first_view THEN 1 ELSE 0 END) AS pairs FROM ${w.ref('sel')} ` +
      `WHERE visit_id NOT IN (SELECT visit_id FROM ${w.ref('edge')})${groupBy()} ` +
      `UNION ALL SELECT ${lead}sum(n) AS pv, count(*) AS pairs FROM (SELECT ${lead}visit_id, pathname, count(*) AS n FROM ${w.ref('sel')} ` +
      `WHERE visit_id IN (SELECT visit_id FROM ${w.ref('edge')})${groupBy(['visit_id', 'pathname'])}) e${groupBy()}`;
    w.add('parts', parts);
    const aggregates: Partial<Record<Aggregate, string>> = { pageviews: 'sum(p.pv)', uniques: 'sum(p.pairs)', visits: 'sum(p.pairs)' };
    const columns = [
      ...(q.fieldGrouping.length > 0 ? [`p.${fieldAlias(0)} AS ${fieldAlias(0)}`] : []),
      ...(q.dateGrouping ? [`${d.formatBucket(`p.${TIMESTAMP_ALIAS}`)} AS ${TIMESTAMP_ALIAS}`] : []),
      ...q.aggregates.map((a) => `${aggregates[a]} AS ${aggregateAlias(a)}`),
    ];
    return (
      `${w.with()}SELECT ${columns.join(', ')} FROM ${w.ref('parts', 'p')}` +
      (groups.length > 0 ? ` GROUP BY ${groups.map((g) => `p.${g}`).join(', ')}` : '')
    );
  }

  /**
   * avg_duration and bounce_rate over rows that carry their visit's facts as `v.`: rounded half up with integers
   * only, so every database (and the reference implementation) agrees to the last digit, and sorting sees
   * exactly the value shown (hundredths of a second, ten-thousandths of a rate).
   */
  private visitFacts(): Record<'avg_duration' | 'bounce_rate', string> {
    if (this.parts) {
      return { avg_duration: `sum(${this.dialect.durationMs('v.started_at', 'v.last_seen_at')})`, bounce_rate: 'sum(CASE WHEN v.pageviews = 1 THEN 1 ELSE 0 END)' };
    }
    return {
      avg_duration: this.roundedRatio(`sum(${this.dialect.durationMs('v.started_at', 'v.last_seen_at')})`, 'count(*) * 10'),
      bounce_rate: this.roundedRatio('sum(CASE WHEN v.pageviews = 1 THEN 1 ELSE 0 END) * 10000', 'count(*)'),
    };
  }

  /** ORDER BY and LIMIT. */
  private tail(q: ReportQuery, b: Binder): string {
    const order = this.orderBy(q);
    return (order ? ` ORDER BY ${order}` : '') + (q.limit !== undefined ? ` ${this.dialect.limit(b.value(q.limit))}` : '');
  }

  /** round_half_up(numerator / denominator) as an integer, 0 when the denominator is 0. */
  private roundedRatio(numerator: string, denominator: string): string {
    const d = this.dialect;
    return `CASE WHEN count(*) = 0 THEN 0 ELSE ${d.intDiv(`2 * ${numerator} + ${denominator}`, `2 * ${denominator}`)} END`;
  }

  /** The first recorded hit of the entity: the default start of a report's range. */
  firstHit(siteId: string, entity: 'pageview' | 'event', eventName?: string): CompiledQuery {
    const b = new Binder(this.dialect);
    const where = [`site_id = ${b.value(siteId)}`, `type = ${b.value(entity)}`];
    if (entity === 'event') where.push(`event_name = ${b.value(eventName ?? '')}`);
    return { sql: `SELECT ${this.dialect.earliest('ts')} AS first FROM ${this.dialect.table('hits')} WHERE ${where.join(' AND ')}`, params: b.params };
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

  /**
   * Custom property filters, as conditions on the hit `h`: per key, positives ORed and negatives ANDed; keys
   * ANDed, as SPEC.md's filters. On an event report the event itself must carry (or not carry) the value; on a
   * pageview report the pageview's visit must have some hit in the range that does (properties are mostly on
   * events), and `is not` keeps the visits none of whose hits does (docs/reports.md, "Custom properties").
   */
  private propFilters(q: ReportQuery, b: Binder, site: string, from: string, until: string): string[] {
    const list = q.props ?? [];
    if (list.length === 0) return [];
    const d = this.dialect;
    const byKey = new Map<string, PropFilter[]>();
    for (const f of list) byKey.set(f.key, [...(byKey.get(f.key) ?? []), f]);
    const positive = (alias: string, f: PropFilter): string => {
      const value = d.propValue(alias, b.value(f.key));
      return f.operator === 'is' || f.operator === 'is not'
        ? `${value} = ${b.value(f.value)}`
        : d.ilike(value, b.value(likePattern(f.value)));
    };
    const negative = (f: PropFilter) => f.operator === 'is not' || f.operator === 'is not like';
    const clauses: string[] = [];
    for (const filters of byKey.values()) {
      const pos = filters.filter((f) => !negative(f));
      const neg = filters.filter(negative);
      if (q.entity === 'event') {
        if (pos.length > 0) clauses.push(`(${pos.map((f) => positive('h', f)).join(' OR ')})`);
        for (const f of neg) clauses.push(`NOT ${positive('h', f)}`);
        continue;
      }
      const visitsWith = (conditions: string) =>
        `h.visit_id IN (SELECT ph.visit_id FROM ${d.table('hits', 'ph')} WHERE ph.site_id = ${site} AND ph.ts >= ${from} AND ph.ts < ${until} AND ${conditions})`;
      if (pos.length > 0) clauses.push(visitsWith(`(${pos.map((f) => positive('ph', f)).join(' OR ')})`));
      for (const f of neg) clauses.push(`NOT ${visitsWith(positive('ph', f))}`);
    }
    return clauses;
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

  /** Filters: per property, positives ORed and negatives ANDed; properties ANDed (docs/reports.md). */
  private filters(filters: readonly Filter[], b: Binder): string[] {
    const byProperty = new Map<string, Filter[]>();
    for (const f of filters) byProperty.set(f.property, [...(byProperty.get(f.property) ?? []), f]);
    const clauses: string[] = [];
    for (const [property, list] of byProperty) {
      const source = filterSource(property as Filter['property']);
      const column = property === 'domain' ? this.dialect.domain(col(source)) : col(source);
      clauses.push(...valueConditions(this.dialect, column, list, b));
    }
    return clauses;
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
}
