// Filters as SQL conditions, for every plan and for imported days alike: the one place reports turn `is`,
// `is like` and `matching` (and their negations) into SQL, and custom property filters into conditions on hits.

import type { Binder, SqlDialect } from './dialect.js';
import { filterSource, POSITIVE_OPERATORS, type FieldSource } from './fields.js';
import type { Filter, PropFilter, ReportQuery } from './query.js';

/** A field's column as the plans name it: the hit is `h`, its visit `v`. */
export const columnOf = (source: FieldSource) => `${source.table === 'hit' ? 'h' : 'v'}.${source.column}`;

/** `is like` pattern: `*` is any run of characters, everything else (`%` and `_` too) literal. */
export function likePattern(value: string): string {
  return `%${value.replace(/[\\%_]/g, (c) => `\\${c}`).replace(/\*/g, '%')}%`;
}

/**
 * The conditions of one property's filters on `column`: its positives ORed as one clause, each negative a clause
 * of its own (to be ANDed).
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

/** Filters: per property, positives ORed and negatives ANDed; properties ANDed (docs/reports.md). */
export function filterConditions(d: SqlDialect, filters: readonly Filter[], b: Binder): string[] {
  const byProperty = new Map<string, Filter[]>();
  for (const f of filters) byProperty.set(f.property, [...(byProperty.get(f.property) ?? []), f]);
  const clauses: string[] = [];
  for (const [property, list] of byProperty) {
    const source = filterSource(property as Filter['property']);
    const column = property === 'domain' ? d.domain(columnOf(source)) : columnOf(source);
    clauses.push(...valueConditions(d, column, list, b));
  }
  return clauses;
}

/**
 * Custom property filters, as conditions on the hit `h`: per key, positives ORed and negatives ANDed; keys
 * ANDed, as SPEC.md's filters. On an event report the event itself must carry (or not carry) the value; on a
 * pageview report the pageview's visit must have some hit in the range that does (properties are mostly on
 * events), and `is not` keeps the visits none of whose hits does (docs/reports.md, "Custom properties").
 * `site`, `from` and `until` are the placeholders the caller bound.
 */
export function propConditions(d: SqlDialect, q: ReportQuery, b: Binder, site: string, from: string, until: string): string[] {
  const list = q.props ?? [];
  if (list.length === 0) return [];
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
