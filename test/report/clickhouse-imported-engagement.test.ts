// Imported engagement on ClickHouse (18.16 and 26, scripts/run-tests.mjs --clickhouse): recorded pageviews with
// engagement hits and imported days carrying engagement sums (src/store/types.ts, ImportedDay) stored in DuckDB and
// in ClickHouse, and scroll_depth and time_on_page answered alike by both, equal to the sums worked out by hand.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { StoredHit } from '../../src/domain/hits.js';
import { ClickHouseDialect } from '../../src/report/clickhouse-dialect.js';
import { ReportCompiler } from '../../src/report/compiler.js';
import { SqlDialect } from '../../src/report/dialect.js';
import { ReportEngine } from '../../src/report/engine.js';
import { parseReportRequest } from '../../src/report/parse.js';
import { QueryGate } from '../../src/report/query-gate.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import type { ImportedDay, Site } from '../../src/store/types.js';
import { pipelineStores, type PipelineStores } from '../helpers/pipeline-stores.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const RANGE = { date_from: '2026-03-02', date_to: '2026-03-04' };

describe('imported engagement on ClickHouse answers as on DuckDB', () => {
  let stores: PipelineStores;
  let ch: ClickHouseEventStore;
  let site: Site;
  let engines: ReportEngine[] = [];

  before(async () => {
    stores = await pipelineStores();
    const duck = stores.duck;
    site = await stores.newSite('UTC', 'S');
    // 3 March: one visit views / and /a; another /b.
    const line = (ip: string, at: string, path: string) =>
      ({ type: 'pageview', site_id: site.id, timestamp: `2026-03-03 ${at}`, url: `https://e.example${path}`, referrer: '', user_agent: UA, ip });
    const result = await stores.importLines([line('81.2.69.1', '10:00:00', '/'), line('81.2.69.1', '10:01:00', '/a'), line('81.2.69.2', '11:00:00', '/b')]);
    assert.equal(result.imported, 3, JSON.stringify(result.errors));
    // Pairs: / 60 % and 15 s, /a 100 % and 30.001 s, /b 25 % and 4 s (185 over 3; 49,001 ms over 3).
    const engagement: Record<string, [number, number][]> = { '/': [[40, 10_000], [60, 5_000]], '/a': [[100, 30_001]], '/b': [[25, 4_000]] };
    const engaged: StoredHit[] = [];
    for (const pv of await duck.listHits(site.id)) {
      (engagement[pv.pathname] ?? []).forEach(([scrollDepth, engagedMs], i) =>
        engaged.push({ ...pv, type: 'engagement', timestamp: new Date(pv.timestamp.getTime() + (i + 1) * 1000), firstView: false, scrollDepth, engagedMs }));
    }
    await duck.write(engaged, []);
    ch = await stores.copyToClickHouse([site]);
    // Imported: /a 810 % over 12 pairs and 521 s over 7; /b 90 % over 3, no time; /c none; the totals their sums.
    const day = (d: string, dimension: '' | 'pathname', value: string, pageviews: number, e: [number, number, number, number]): ImportedDay => ({
      importId: 'i', siteId: site.id, day: d, dimension, value, pageviews, visits: 0, visitors: 0, bounces: 0, visitDuration: 0, lacks: 0,
      scrollSum: e[0], scrollPairs: e[1], engagedMsSum: e[2], engagedPairs: e[3],
    });
    const rows = [
      day('2026-03-02', 'pathname', '/a', 20, [500, 8, 400_000, 5]), day('2026-03-02', 'pathname', '/b', 10, [90, 3, 0, 0]),
      day('2026-03-04', 'pathname', '/a', 9, [310, 4, 121_000, 2]), day('2026-03-04', 'pathname', '/c', 1, [0, 0, 0, 0]),
      day('2026-03-02', '', '', 30, [590, 11, 400_000, 5]), day('2026-03-04', '', '', 10, [310, 4, 121_000, 2]),
    ];
    await duck.writeImportedDays(rows);
    await ch.writeImportedDays(rows);
    engines = [
      new ReportEngine(duck, new ReportCompiler(new SqlDialect()), new QueryGate()),
      new ReportEngine(ch, new ReportCompiler(new ClickHouseDialect(ch.features)), new QueryGate()),
    ];
  });
  after(() => stores?.close());

  /** Both engines' answer, which must be the same; returns it. */
  const answer = async (params: Record<string, string>) => {
    const [d, c] = await Promise.all(engines.map((e) => e.aggregate(parseReportRequest({ entity: 'pageview', entity_id: site.id, ...RANGE, ...params }), site)));
    assert.deepEqual(c, d, JSON.stringify(params));
    return d;
  };

  it('totals', async () => {
    // (185 + 900) / 18; (49,001 + 521,000) ms / 10.
    assert.deepEqual(await answer({ aggregates: 'pageviews,scroll_depth,time_on_page' }), [{ pageviews: '43', scroll_depth: '60.28', time_on_page: '57' }]);
  });

  it('by page and by day, null last', async () => {
    assert.deepEqual(await answer({ aggregates: 'scroll_depth,time_on_page', field_grouping: 'pathname', sort_by: 'time_on_page:desc' }), [
      { pathname: '/a', scroll_depth: '70', time_on_page: '68.88' },
      { pathname: '/', scroll_depth: '60', time_on_page: '15' },
      { pathname: '/b', scroll_depth: '28.75', time_on_page: '4' },
      { pathname: '/c', scroll_depth: null, time_on_page: null },
    ]);
    assert.deepEqual(await answer({ aggregates: 'scroll_depth,time_on_page', date_grouping: 'day' }), [
      { timestamp: '2026-03-02 00:00:00', scroll_depth: '53.64', time_on_page: '80' },
      { timestamp: '2026-03-03 00:00:00', scroll_depth: '61.67', time_on_page: '16.33' },
      { timestamp: '2026-03-04 00:00:00', scroll_depth: '77.5', time_on_page: '60.5' },
    ]);
  });

  it('recorded days only', async () => {
    assert.deepEqual(await answer({ aggregates: 'scroll_depth,time_on_page', date_from: '2026-03-03', date_to: '2026-03-03' }), [{ scroll_depth: '61.67', time_on_page: '16.33' }]);
  });
});
