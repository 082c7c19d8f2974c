// The plan each query shape gets, decided from the query alone (src/report/plan-choice.ts), table-driven; the
// oracle tests prove each plan's numbers and compiler.test.ts the SQL each choice produces.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { choosePlan, type PlanName } from '../../src/report/plan-choice.js';
import type { ReportQuery } from '../../src/report/query.js';

/** A pageview report over one day: the plan depends only on the shape that `q` gives it. */
const shaped = (q: Partial<ReportQuery>): ReportQuery => ({
  entity: 'pageview', siteId: 'ABCDEFGH', aggregates: ['pageviews'], fieldGrouping: [], filters: [], timezone: 'UTC',
  sort: { field: 'pageviews', direction: 'desc' }, from: new Date(0), until: new Date(86_400_000), ...q,
});

describe('choosePlan', () => {
  const cases: [string, Partial<ReportQuery>, PlanName][] = [
    ['pageviews by day', { dateGrouping: 'day' }, 'single pass'],
    ['conversions and value by source', { entity: 'event', eventName: 'x', aggregates: ['conversions', 'value'], fieldGrouping: ['referrer_source'] }, 'single pass'],
    ['unique conversions in total', { entity: 'event', eventName: 'x', aggregates: ['unique_conversions'] }, 'per visit'],
    ['totals', { aggregates: ['visits', 'pageviews', 'avg_duration', 'bounce_rate'] }, 'visit rollup'],
    ['bounce rate by exit page, filtered on entry page', { aggregates: ['bounce_rate'], fieldGrouping: ['exit_page'], filters: [{ property: 'entry_page', operator: 'is', value: '/' }] }, 'visit rollup'],
    ['totals under a hit filter', { aggregates: ['visits', 'avg_duration'], filters: [{ property: 'browser', operator: 'is', value: 'Chrome' }] }, 'semi-join totals'],
    ['duration by day under a hit filter', { aggregates: ['avg_duration'], dateGrouping: 'day', filters: [{ property: 'browser', operator: 'is', value: 'Chrome' }] }, 'per visit'],
    ['top pages', { aggregates: ['visits', 'pageviews'], fieldGrouping: ['pathname'] }, 'pages'],
    ['visits in total (not by page) filtered on pathname', { aggregates: ['visits'], filters: [{ property: 'pathname', operator: 'is', value: '/a' }] }, 'per visit'],
    ['top pages filtered on country', { aggregates: ['visits'], fieldGrouping: ['pathname'], filters: [{ property: 'country_code', operator: 'is', value: 'US' }] }, 'per visit'],
    ['totals with uniques', { aggregates: ['visits', 'uniques', 'pageviews', 'avg_duration', 'bounce_rate'] }, 'visit rollup and pages'],
    ['totals with uniques, filtered on entry page', { aggregates: ['visits', 'uniques'], filters: [{ property: 'entry_page', operator: 'is', value: '/' }] }, 'per visit'],
    ['totals with a custom property filter', { aggregates: ['visits', 'pageviews'], props: [{ key: 'plan', operator: 'is', value: 'pro' }] }, 'per visit'],
    ['pageviews by a custom property', { propGroup: 'plan' }, 'single pass'],
    ['top pages by a custom property', { aggregates: ['visits'], fieldGrouping: ['pathname'], propGroup: 'plan' }, 'per visit'],
  ];
  for (const [name, q, expected] of cases) {
    it(`${name}: ${expected}`, () => assert.equal(choosePlan(shaped(q)), expected));
  }
});
