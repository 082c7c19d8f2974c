// Which plan the compiler picks for a query (the oracle tests prove each plan right; this keeps the fast plans
// from silently falling back to the general one), and that values only ever arrive as bound parameters.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReportCompiler } from '../../src/report/compiler.js';
import { SqlDialect } from '../../src/report/dialect.js';
import type { ReportQuery } from '../../src/report/query.js';

const base: ReportQuery = {
  entity: 'pageview',
  siteId: 'ABCDEFGH',
  aggregates: ['pageviews'],
  fieldGrouping: [],
  filters: [],
  sort: { field: 'pageviews', direction: 'desc' },
  from: new Date('2026-03-01T00:00:00Z'),
  until: new Date('2026-04-01T00:00:00Z'),
  timezone: 'Europe/Berlin',
};
const compile = (q: Partial<ReportQuery>) => new ReportCompiler(new SqlDialect()).aggregation({ ...base, ...q });

const plan = (sql: string) =>
  sql.startsWith('WITH a AS') ? 'visit rollup and pages'
    : sql.startsWith('WITH rollup') ? 'visit rollup'
    : sql.startsWith('WITH edge') ? 'pages'
      : sql.includes('per_visit') ? 'per visit'
        : sql.includes('IN (SELECT visit_id FROM sel)') ? 'semi-join totals'
          : 'single pass';

describe('ReportCompiler plans', () => {
  const cases: [string, Partial<ReportQuery>, string][] = [
    ['pageviews by day', { dateGrouping: 'day', sort: { field: 'timestamp', direction: 'asc' } }, 'single pass'],
    ['conversions by referrer', { entity: 'event', eventName: 'x', aggregates: ['conversions', 'value'], fieldGrouping: ['referrer_source'] }, 'single pass'],
    ['totals', { aggregates: ['visits', 'pageviews', 'avg_duration', 'bounce_rate'] }, 'visit rollup'],
    ['visits by day', { aggregates: ['visits'], dateGrouping: 'day' }, 'visit rollup'],
    ['entry pages', { aggregates: ['visits', 'bounce_rate'], fieldGrouping: ['entry_page'] }, 'visit rollup'],
    ['totals with a hit filter', { aggregates: ['visits', 'avg_duration'], filters: [{ property: 'browser', operator: 'is', value: 'Chrome' }] }, 'semi-join totals'],
    ['top pages', { aggregates: ['visits', 'pageviews'], fieldGrouping: ['pathname'] }, 'pages'],
    ['uniques by hour', { aggregates: ['uniques'], dateGrouping: 'hour' }, 'pages'],
    ['top pages filtered on pathname', { aggregates: ['visits'], fieldGrouping: ['pathname'], filters: [{ property: 'pathname', operator: 'matching', value: '^/a' }] }, 'pages'],
    ['top pages filtered on country', { aggregates: ['visits'], fieldGrouping: ['pathname'], filters: [{ property: 'country_code', operator: 'is', value: 'US' }] }, 'per visit'],
    ['visits by referrer', { aggregates: ['visits'], fieldGrouping: ['referrer_source'] }, 'per visit'],
    ['pages with bounce rate', { aggregates: ['visits', 'bounce_rate'], fieldGrouping: ['pathname'] }, 'per visit'],
    ['totals with uniques', { aggregates: ['visits', 'uniques', 'pageviews', 'avg_duration', 'bounce_rate'] }, 'visit rollup and pages'],
    ['everything by day', { aggregates: ['visits', 'uniques', 'pageviews', 'bounce_rate'], dateGrouping: 'day' }, 'visit rollup and pages'],
    ['uniques and visits by referrer', { aggregates: ['visits', 'uniques'], fieldGrouping: ['referrer_source'] }, 'per visit'],
  ];
  for (const [name, q, expected] of cases) {
    it(`${name}: ${expected}`, () => assert.equal(plan(compile(q).sql), expected));
  }

  it('never has DuckDB store a subquery: each is computed where it is read (a stored selection took 272 MiB)', () => {
    for (const [name, q] of cases) {
      const { sql } = compile(q);
      assert.doesNotMatch(sql, /\w AS \(/, name);
      if (sql.startsWith('WITH ')) assert.match(sql, /^WITH \w+ AS NOT MATERIALIZED \(/, name);
    }
  });

  it('counts visitors in disjoint slices when asked: one per UTC day, grouped ones cut by visitor id where the days are fewer', () => {
    const passes = (sql: string) => (sql.match(/count\(DISTINCT p\.visitor_id\) AS n FROM/g) ?? []).length;
    const byId = (sql: string) => [...sql.matchAll(/visitor_id % (\d+) = (\d+)/g)].map((m) => `${m[2]}/${m[1]}`);
    const grouped: Partial<ReportQuery> = { aggregates: ['visitors', 'pageviews'], fieldGrouping: ['pathname'] };
    // The base range is March 2026: 31 UTC days, more than the slices asked for.
    const month = compile({ ...grouped, visitorSlices: 4 }).sql;
    assert.equal(passes(month), 31);
    assert.deepEqual(byId(month), []);
    assert.equal(passes(compile({ aggregates: ['visitors'], dateGrouping: 'day', visitorSlices: 4 }).sql), 31);
    // One day, four slices: the day's pageviews in four slices of visitor ids.
    const day = compile({ ...grouped, visitorSlices: 4, from: new Date('2026-03-02T00:00:00Z'), until: new Date('2026-03-03T00:00:00Z') }).sql;
    assert.equal(passes(day), 4);
    assert.deepEqual(byId(day), ['0/4', '1/4', '2/4', '3/4']);
    // Two days and a half (a zone's local days): three slices of time, each cut in two.
    const zoned = compile({ ...grouped, visitorSlices: 4, from: new Date('2026-03-02T05:00:00Z'), until: new Date('2026-03-04T05:00:00Z') }).sql;
    assert.equal(passes(zoned), 6);
    assert.deepEqual(byId(zoned), ['0/2', '1/2', '0/2', '1/2', '0/2', '1/2']);
    assert.equal(passes(compile(grouped).sql), 0, 'one pass unless asked');
    const total = compile({ aggregates: ['visitors'], visitorSlices: 4 }).sql;
    assert.equal(passes(total), 31, 'a total, a slice a day');
    const dayTotal = compile({ aggregates: ['visitors'], visitorSlices: 4, from: new Date('2026-03-02T00:00:00Z'), until: new Date('2026-03-03T00:00:00Z') }).sql;
    assert.equal(passes(dayTotal) + byId(dayTotal).length, 1, 'a total holds visitors only, not pairs: never cut by id');
  });

  it('binds every request value as a numbered parameter', () => {
    const hostile = "x' OR 1=1 --";
    const { sql, params } = compile({
      aggregates: ['visits'],
      fieldGrouping: ['pathname'],
      filters: [
        { property: 'pathname', operator: 'is', value: hostile },
        { property: 'utm_source', operator: 'is like', value: hostile },
        { property: 'entry_page', operator: 'matching', value: hostile },
      ],
      limit: 10,
    });
    assert.ok(!sql.includes('OR 1=1'), sql);
    assert.ok(params.includes(hostile));
    const numbers = [...sql.matchAll(/\$(\d+)/g)].map((m) => Number(m[1]));
    assert.equal(Math.max(...numbers), params.length, 'every parameter is used');
    for (let i = 1; i <= params.length; i++) assert.ok(numbers.includes(i), `$${i} appears`);
  });
});
