// Compiles a typed report query into one SQL statement for a dialect. The shape (select the entity's hits, count
// per group and visit, then per group, joining visit facts only when needed) is the same for every database.

import { offsetSpans } from '../domain/zoned-time.js';
import { filterSource, GROUP_FIELDS, POSITIVE_OPERATORS, type Aggregate, type FieldSource } from './fields.js';
import { Binder, type CompiledQuery, type SqlDialect } from './dialect.js';
import type { Filter, ReportQuery } from './query.js';

/** Result column names: fields are f0, f1..., the bucket `ts`, aggregates `a_` and their name. */
export const fieldAlias = (i: number) => `f${i}`;
export const aggregateAlias = (a: Aggregate) => `a_${a}`;
export const TIMESTAMP_ALIAS = 'ts';

const col = (source: FieldSource) => `${source.table === 'hit' ? 'h' : 'v'}.${source.column}`;

/** `is like` pattern: `*` is any run of characters, everything else (`%` and `_` too) literal. */
export function likePattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%')}%`;
}

export class ReportCompiler {
  constructor(readonly dialect: SqlDialect) {}

  aggregation(q: ReportQuery): CompiledQuery {
    const d = this.dialect;
    const b = new Binder(d);
    const needsVisitInHits =
      q.fieldGrouping.some((f) => GROUP_FIELDS[f].table === 'visit') || q.filters.some((f) => filterSource(f.property).table === 'visit');
    const needsVisitFacts = q.aggregates.includes('avg_duration') || q.aggregates.includes('bounce_rate');

    const groups: string[] = q.fieldGrouping.map((f, i) => `${col(GROUP_FIELDS[f])} AS ${fieldAlias(i)}`);
    if (q.dateGrouping) {
      const spans = offsetSpans(q.timezone, q.from.getTime(), q.until.getTime());
      groups.push(`${d.bucket(q.dateGrouping, d.localTime('h.ts', spans, b))} AS ${TIMESTAMP_ALIAS}`);
    }
    const groupAliases = [...q.fieldGrouping.map((_, i) => fieldAlias(i)), ...(q.dateGrouping ? [TIMESTAMP_ALIAS] : [])];

    const where = [
      `h.site_id = ${b.value(q.siteId)}`,
      `h.type = ${b.value(q.entity)}`,
      ...(q.entity === 'event' ? [`h.event_name = ${b.value(q.eventName ?? '')}`] : []),
      `h.ts >= ${b.value(q.from)}`,
      `h.ts < ${b.value(q.until)}`,
      ...this.filters(q.filters, b),
    ];
    const wantsPaths = q.aggregates.includes('uniques');
    const wantsValue = q.aggregates.includes('value');

    const selected = [
      ...groups,
      'h.visit_id AS visit_id',
      ...(wantsPaths ? ['h.pathname AS pathname'] : []),
      ...(wantsValue ? ['h.value AS value'] : []),
    ];
    const hitsFrom = `${d.table('hits')} h${needsVisitInHits ? ` JOIN ${d.table('visits')} v ON v.visit_id = h.visit_id` : ''}`;
    const perVisit = [
      ...groupAliases,
      'visit_id',
      'count(*) AS n',
      ...(wantsPaths ? [`${d.countDistinct('pathname')} AS paths`] : []),
      ...(wantsValue ? ['sum(value) AS value_sum'] : []),
    ];

    const aggregateSql: Record<Aggregate, string> = {
      pageviews: 'sum(p.n)',
      conversions: 'sum(p.n)',
      visits: 'count(*)',
      unique_conversions: 'count(*)',
      uniques: 'sum(p.paths)',
      value: 'sum(p.value_sum)',
      // Rounded half up with integers only, so every database (and the reference implementation) agrees to the
      // last digit, and sorting sees exactly the value shown: hundredths of a second, ten-thousandths of a rate.
      avg_duration: this.roundedRatio(`sum(${d.durationMs('v.started_at', 'v.last_seen_at')})`, 'count(*) * 10'),
      bounce_rate: this.roundedRatio('sum(CASE WHEN v.pageviews = 1 THEN 1 ELSE 0 END) * 10000', 'count(*)'),
    };
    const outer = [...groupAliases.map((a) => `p.${a} AS ${a}`), ...q.aggregates.map((a) => `${aggregateSql[a]} AS ${aggregateAlias(a)}`)];

    const order = this.orderBy(q);
    const limit = q.limit !== undefined ? ` ${d.limit(b.value(q.limit))}` : '';
    const sql =
      `WITH sel AS (SELECT ${selected.join(', ')} FROM ${hitsFrom} WHERE ${where.join(' AND ')}), ` +
      `per_visit AS (SELECT ${perVisit.join(', ')} FROM sel GROUP BY ${[...groupAliases, 'visit_id'].join(', ')}) ` +
      `SELECT ${outer.join(', ')} FROM per_visit p` +
      (needsVisitFacts ? ` JOIN ${d.table('visits')} v ON v.visit_id = p.visit_id` : '') +
      (groupAliases.length > 0 ? ` GROUP BY ${groupAliases.map((a) => `p.${a}`).join(', ')}` : '') +
      (order ? ` ORDER BY ${order}` : '') +
      limit;
    return { sql, params: b.params };
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
    return { sql: `SELECT min(ts) AS first FROM ${this.dialect.table('hits')} WHERE ${where.join(' AND ')}`, params: b.params };
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

  /** Filters: per property, positives ORed and negatives ANDed; properties ANDed (docs/reports.md). */
  private filters(filters: readonly Filter[], b: Binder): string[] {
    const byProperty = new Map<string, Filter[]>();
    for (const f of filters) byProperty.set(f.property, [...(byProperty.get(f.property) ?? []), f]);
    const clauses: string[] = [];
    for (const [property, list] of byProperty) {
      const source = filterSource(property as Filter['property']);
      const column = property === 'domain' ? this.dialect.domain(col(source)) : col(source);
      const positives = list.filter((f) => POSITIVE_OPERATORS.has(f.operator)).map((f) => this.condition(column, f, b));
      const negatives = list.filter((f) => !POSITIVE_OPERATORS.has(f.operator)).map((f) => this.condition(column, f, b));
      if (positives.length > 0) clauses.push(`(${positives.join(' OR ')})`);
      clauses.push(...negatives);
    }
    return clauses;
  }

  private condition(column: string, f: Filter, b: Binder): string {
    const d = this.dialect;
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
  }

  /** The requested or default order, then ties broken by timestamp and the grouped fields, ascending. */
  private orderBy(q: ReportQuery): string {
    const groupAliases = [...(q.dateGrouping ? [TIMESTAMP_ALIAS] : []), ...q.fieldGrouping.map((_, i) => fieldAlias(i))];
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
