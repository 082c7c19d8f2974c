// When grouped visitors are counted in slices (SqlDialect.slicesVisitors): on DuckDB stores past a size, in slices
// of time cut at UTC midnights (each cut again by visitor id where the range has fewer days than the store's size
// asks for), never on ClickHouse; the oracle suite (aggregations.test.ts) runs with slices to prove their answers
// (and top-visitors.test.ts where a report sorted by visitors falls back to them).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HITS_PER_VISITOR_SLICE, MAX_VISITOR_SLICES, visitorSlicesFor } from '../../src/report/engine.js';
import { parseReportRequest } from '../../src/report/parse.js';
import { MAX_TIME_SLICES, utcDayCuts } from '../../src/report/plans/day-slices.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { TEST_STORE } from '../helpers/scale-out.js';
import { storedHit } from '../helpers/stored-hits.js';

/** How many passes count a statement's grouped visitors: one per slice. */
const slicesIn = (sql: string) => (sql.match(/count\(DISTINCT p\.visitor_id\) AS n FROM/g) ?? []).length;
const DAY = 86_400_000;

describe('grouped visitors in slices', () => {
  let small: TestApp;
  let sliced: TestApp;
  before(async () => {
    small = await startTestApp();
    sliced = await startTestApp({ visitorSlices: 4 });
  });
  after(async () => {
    await small.close();
    await sliced.close();
  });

  async function compiled(t: TestApp, query: string, which: 'statement' | 'fallback' = 'statement'): Promise<string> {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Slices' })).body.id as string;
    const request = parseReportRequest(Object.fromEntries(new URLSearchParams(`entity=pageview&entity_id=${site}&${query}`)));
    const c = (await t.reports.compile(request, (await t.meta.getSite(site))!)).compiled;
    return which === 'statement' ? c.sql : (c.fallback?.sql ?? '');
  }

  it('a small store counts them in one pass', async () => {
    assert.equal(slicesIn(await compiled(small, 'aggregates=visitors&field_grouping=pathname')), 0);
  });

  it('cuts a range at the UTC midnights inside it, at most MAX_TIME_SLICES pieces', () => {
    const at = (iso: string) => new Date(iso);
    const iso = (cuts: Date[]) => cuts.map((c) => c.toISOString());
    assert.deepEqual(iso(utcDayCuts(at('2026-03-01T00:00:00Z'), at('2026-03-02T00:00:00Z'))), ['2026-03-01T00:00:00.000Z', '2026-03-02T00:00:00.000Z'], 'one UTC day');
    assert.deepEqual(iso(utcDayCuts(at('2026-03-01T05:00:00Z'), at('2026-03-03T05:00:00Z'))), [
      '2026-03-01T05:00:00.000Z', '2026-03-02T00:00:00.000Z', '2026-03-03T00:00:00.000Z', '2026-03-03T05:00:00.000Z',
    ], 'two local days of New York');
    assert.deepEqual(iso(utcDayCuts(at('2026-03-01T10:00:00Z'), at('2026-03-01T10:00:00Z'))), ['2026-03-01T10:00:00.000Z', '2026-03-01T10:00:00.000Z'], 'an empty range');
    for (const [from, until] of [['2026-01-01', '2027-01-01'], ['2026-01-01', '2026-03-04'], ['1970-01-01', '2100-01-01']] as const) {
      const cuts = utcDayCuts(at(from), at(until));
      assert.ok(cuts.length - 1 <= MAX_TIME_SLICES && cuts.length > 2, `${from}..${until}: ${cuts.length - 1} slices`);
      assert.equal(cuts[0]!.toISOString(), at(from).toISOString());
      assert.equal(cuts.at(-1)!.toISOString(), at(until).toISOString());
      for (let i = 1; i < cuts.length; i++) assert.ok(cuts[i]! > cuts[i - 1]!, 'ascending');
      for (const inner of cuts.slice(1, -1)) assert.equal(inner.getTime() % DAY, 0, 'at a UTC midnight');
    }
    assert.equal(utcDayCuts(at('2026-01-01'), at('2026-03-04')).length - 1, MAX_TIME_SLICES, 'as many days as slices: one a slice');
    assert.equal(utcDayCuts(at('2026-01-01'), at('2026-03-05')).length - 1, 32, 'one day more: two a slice');
  });

  it('one slice per 1.25 M stored hits, from two to sixteen', () => {
    assert.equal(visitorSlicesFor(0), 1);
    assert.equal(visitorSlicesFor(HITS_PER_VISITOR_SLICE), 1);
    assert.equal(visitorSlicesFor(HITS_PER_VISITOR_SLICE + 1), 2);
    assert.equal(visitorSlicesFor(10_000_000), 8);
    assert.equal(visitorSlicesFor(1e12), MAX_VISITOR_SLICES);
  });

  it(`a large store counts them in ${TEST_STORE === 'embedded' ? 'four slices over a day, one a day over a month (DuckDB)' : 'one pass (ClickHouse)'}`, async () => {
    const embedded = TEST_STORE === 'embedded';
    assert.equal(slicesIn(await compiled(sliced, 'aggregates=visitors,pageviews&field_grouping=pathname&sort_by=pageviews:desc')), embedded ? 4 : 0);
    assert.equal(slicesIn(await compiled(sliced, 'aggregates=pageviews&field_grouping=pathname')), 0, 'no visitors, no slices');
    const march = 'aggregates=visitors,pageviews&field_grouping=pathname&sort_by=pageviews:desc&date_from=2026-03-01&date_to=2026-03-31';
    assert.equal(slicesIn(await compiled(sliced, march)), embedded ? 31 : 0, 'a slice a day');
    // Sorted by visitors with a limit: the top groups' visitors in one bounded pass, in slices where it is over its
    // bound (plans/top-visitors.ts).
    const top = 'aggregates=visitors,pageviews&field_grouping=pathname&sort_by=visitors:desc&limit=10';
    assert.equal(slicesIn(await compiled(sliced, top)), 0);
    assert.equal(slicesIn(await compiled(sliced, top, 'fallback')), embedded ? 4 : 0);
  });
});

describe('DuckEventStore.hitsEstimate', () => {
  it('is the number of stored hits, all sites together, asked again only once a minute old', async () => {
    const db = await DuckDatabase.open(':memory:');
    await migrate(db);
    const store = await DuckEventStore.open(db);
    try {
      assert.equal(await store.hitsEstimate(), 0);
      await store.write([storedHit('SITEAAAA', '2026-03-01T00:00:00Z'), storedHit('SITEBBBB', '2026-03-01T00:00:01Z')], []);
      assert.equal(await store.hitsEstimate(), 0, 'the last answer, while it is fresh');
      const fresh = await DuckEventStore.open(db);
      assert.equal(await fresh.hitsEstimate(), 2);
      await fresh.close();
    } finally {
      await store.close();
      await db.close();
    }
  });
});
