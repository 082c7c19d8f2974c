// The funnel filter (ReportQuery.funnel) on ClickHouse answers exactly as on DuckDB: generated traffic imported into
// DuckDB and copied into a fresh ClickHouse database, and every plan's shape of report (totals, by time, by a hit
// field, by a visit field, visit-level filters, goals) asked of both with the visits that continued or dropped at
// each step. DuckDB's answers are checked against the oracle by test/report/funnel-filter.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { DEFAULT_DEMO_EVENTS, demoTraffic } from '../../src/cli/demo-traffic.js';
import { ClickHouseDialect } from '../../src/report/clickhouse-dialect.js';
import { ReportCompiler } from '../../src/report/compiler.js';
import { SqlDialect } from '../../src/report/dialect.js';
import { ReportEngine } from '../../src/report/engine.js';
import { parseReportRequest } from '../../src/report/parse.js';
import { QueryGate } from '../../src/report/query-gate.js';
import type { FunnelFilter } from '../../src/report/query.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import type { FunnelStep, Site } from '../../src/store/types.js';
import { pipelineStores, type PipelineStores } from '../helpers/pipeline-stores.js';

const NOW = new Date('2026-03-10T12:00:00.250Z');
const RANGE = { date_from: '2026-03-06 00:00:00', date_to: '2026-03-09 23:59:59' };
const STEPS: FunnelStep[] = [{ type: 'page', value: '/' }, { type: 'page', value: '/pri*' }, { type: 'page', value: '/signup' }, { type: 'event', value: 'Purchase' }];

describe('the funnel filter on ClickHouse answers as on DuckDB', () => {
  let stores: PipelineStores;
  let ch: ClickHouseEventStore;
  let duckReports: ReportEngine;
  let chReports: ReportEngine;
  let site: Site;

  before(async () => {
    stores = await pipelineStores();
    site = await stores.newSite('America/New_York', 'F');
    for (const e of DEFAULT_DEMO_EVENTS) await stores.meta.createGoal({ siteId: site.id, name: e.name, currency: 'dollar' });
    const result = await stores.importLines([...demoTraffic({ siteId: site.id, start: new Date('2026-03-06T00:00:00Z'), days: 4, visitsPerDay: 150, seed: 7 })]);
    assert.ok(result.imported > 1000, JSON.stringify(result.errors));
    ch = await stores.copyToClickHouse([site]);
    duckReports = new ReportEngine(stores.duck, new ReportCompiler(new SqlDialect()), new QueryGate(), () => NOW);
    chReports = new ReportEngine(ch, new ReportCompiler(new ClickHouseDialect(ch.features)), new QueryGate(), () => NOW);
  });
  after(() => stores?.close());

  async function same(params: Record<string, string>, funnel: FunnelFilter): Promise<unknown> {
    const entity = params.entity === 'event' ? { site_id: site.id } : { entity: 'pageview', entity_id: site.id };
    const request = { ...parseReportRequest({ ...entity, ...RANGE, ...params }), funnel };
    const expected = await duckReports.aggregate(request, site);
    const actual = await chReports.aggregate(request, site);
    assert.deepEqual(actual, expected, `${JSON.stringify(params)} step ${funnel.step} ${funnel.outcome}`);
    return expected;
  }

  const SHAPES: Record<string, string>[] = [
    { aggregates: 'visits' },
    { aggregates: 'pageviews,visits,uniques,avg_duration,bounce_rate,visitors' },
    { aggregates: 'pageviews,visits,visitors', date_grouping: 'day' },
    { aggregates: 'pageviews,visits,uniques,visitors', field_grouping: 'pathname' },
    { aggregates: 'visits,bounce_rate,visitors', field_grouping: 'entry_page' },
    { aggregates: 'pageviews,visits', filters: JSON.stringify([{ property: 'entry_page', operator: 'is', value: '/' }]) },
    { aggregates: 'pageviews,scroll_depth,time_on_page', field_grouping: 'pathname' },
    { entity: 'event', entity_name: 'Purchase', aggregates: 'conversions,unique_conversions,value' },
  ];

  it('every shape of report, at every step, continued and dropped', async () => {
    let nonEmpty = 0;
    for (let step = 1; step <= STEPS.length; step++) {
      for (const outcome of step < STEPS.length ? (['continued', 'dropped'] as const) : (['continued'] as const)) {
        for (const shape of SHAPES) {
          const rows = (await same(shape, { steps: STEPS, step, outcome })) as Record<string, string | null>[];
          if (rows.some((r) => Object.values(r).some((v) => v !== '0' && v !== null))) nonEmpty += 1;
        }
      }
    }
    // Most answers have numbers: a filter that kept nothing anywhere would compare zeros with zeros.
    assert.ok(nonEmpty > SHAPES.length * 4, `only ${nonEmpty} answers had any number`);
  });

  it("with the funnel's own filters and the report's", async () => {
    const funnel: FunnelFilter = { steps: STEPS.slice(0, 3), step: 1, outcome: 'dropped', filters: [{ property: 'browser', operator: 'is not', value: 'Safari' }] };
    const rows = (await same({ aggregates: 'visits,pageviews', filters: JSON.stringify([{ property: 'pathname', operator: 'is not', value: '/contact' }]) }, funnel)) as Record<string, string>[];
    assert.ok(Number(rows[0]!.visits) > 0);
  });
});
