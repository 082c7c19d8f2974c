// One report request must not hold up the process: the widest range a request may name (years 2000 to 2099,
// grouped by day or year, in zones with DST every year) is computed while /healthz keeps answering, and the hostile
// ranges that used to stall the event loop for many seconds are refused before any work.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { createSite, importLines, line } from '../report/fixtures.js';

const q = (text: string) => text.replace(/ /g, '%20').replace(/\+/g, '%2B');

describe('report ranges and responsiveness', () => {
  let t: TestApp;
  let base = '';
  let site = '';
  before(async () => {
    t = await startTestApp();
    base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    site = await createSite(t, { name: 'Wide', timezone: 'America/Santiago' });
    // Hits from 1990 (imports take any time) to now: the default date_from is the first one.
    await importLines(t, [
      line(site, '1990-06-01 12:00:00', 'https://wide.example/old'),
      line(site, '2001-03-04 05:06:07', 'https://wide.example/a', { ip: '81.2.69.10' }),
      line(site, '2026-03-04 05:06:07', 'https://wide.example/b', { ip: '81.2.69.11' }),
    ]);
  });
  after(() => t.close());

  const report = (query: string) =>
    fetch(`${base}/v1/aggregations?entity=pageview&entity_id=${site}&${q(query)}`, { headers: { authorization: `Bearer ${OWNER_TOKEN}` } });

  it('refuses the ranges that stalled the process, at once and under the parameter at fault', async () => {
    const cases: [string, string[]][] = [
      ['aggregates=pageviews&date_grouping=year&date_from=0100-01-01 00:00:00&date_to=9999-12-31 23:59:59', ['date_from', 'date_to']],
      ['aggregates=pageviews&date_grouping=day&date_to=9999-12-31 23:59:59', ['date_to']],
      ['aggregates=pageviews&date_grouping=month&date_from=0001-01-01&date_to=9999-12-31T23:59:59Z', ['date_from', 'date_to']],
    ];
    for (const [query, fields] of cases) {
      const res = await report(query);
      const body = (await res.json()) as { errors: Record<string, string[]> };
      assert.equal(res.status, 400, `${query}: ${JSON.stringify(body)}`);
      assert.deepEqual(Object.keys(body.errors).sort(), fields);
      for (const field of fields) assert.match(body.errors[field]!.join(' '), /2000-01-01 00:00:00 to 2099-12-31 23:59:59/);
    }
  });

  it('keeps answering /healthz while the widest accepted reports are computed', async () => {
    // The widest range in zones that change offset twice a year, none used before in this process (so nothing is
    // cached): the whole of 2000-2099 by year, by day from the first hit (the default date_from), by month in
    // instants. Counted in answers, not milliseconds (a loaded machine makes any time budget flaky): work done on
    // the event loop in one piece would leave no room for health checks while the reports run. That the zone
    // arithmetic yields between years is tested in test/domain/zoned-time.test.ts.
    const worst = [
      'aggregates=pageviews,visits,uniques,avg_duration,bounce_rate&date_grouping=year&date_from=2000-01-01 00:00:00&date_to=2099-12-31 23:59:59&timezone=America/Havana',
      'aggregates=pageviews,visits,uniques,avg_duration,bounce_rate&date_grouping=day&date_to=2099-12-31 23:59:59&timezone=Pacific/Chatham',
      'aggregates=pageviews,visits,bounce_rate&date_grouping=month&date_from=2000-01-01T00:00:00-12:00&date_to=2099-12-31T23:59:59.999+14:00&timezone=Europe/Lisbon',
    ];
    let pending = worst.length;
    const reports = worst.map(async (query) => {
      try {
        const res = await report(query);
        const body = await res.json();
        assert.equal(res.status, 200, `${query}: ${JSON.stringify(body)}`);
        return body as Record<string, string>[];
      } finally {
        pending--;
      }
    });
    let answered = 0;
    while (pending > 0) {
      const res = await fetch(`${base}/healthz`);
      await res.text();
      assert.equal(res.status, 200);
      answered++;
    }
    const results = await Promise.all(reports);
    assert.ok(answered >= 3, `only ${answered} health checks were answered while the reports ran`);
    // The answers are right too: the 1990 hit is before the earliest date, the other two are counted.
    assert.deepEqual(results[0]!.map((r) => [r.timestamp, r.pageviews]), [['2001-01-01 00:00:00', '1'], ['2026-01-01 00:00:00', '1']]);
    assert.deepEqual(results[1]!.map((r) => r.timestamp), ['2001-03-04 00:00:00', '2026-03-04 00:00:00']);
    assert.equal(results[2]!.length, 2);
  });
});
