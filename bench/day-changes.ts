// What day rollups cost the write path: batches of 5,000 hits (the write buffer's largest) written through the
// ClickHouse store as the collector writes them, alternately into a database with migrations 9 and 10's counting
// views on hits and into one without them (the views dropped: the baseline, same run, same server), medians of each.
// BENCH_DAY_CHANGES_BATCHES sets the batches per side (default 200); CLICKHOUSE_URL as the scale-out tests take it.

import { randomBytes } from 'node:crypto';
import { cpus } from 'node:os';
import { ClickHouseEventStore } from '../src/store/clickhouse/event-store.js';
import { ClickHouseConnection, parseClickHouseUrl } from '../src/store/clickhouse/client.js';
import { storedHit } from '../test/helpers/stored-hits.js';
import { CLICKHOUSE_URL } from '../test/helpers/scale-out.js';
import { median } from './median.js';

const BATCH = 5_000;

export async function benchDayChanges(batches = 200): Promise<void> {
  const open = (database: string) => ClickHouseEventStore.open({ url: CLICKHOUSE_URL, database, node: 'bench' });
  const counted = await open(`plumb_bench_counted_${randomBytes(4).toString('hex')}`);
  const plainName = `plumb_bench_plain_${randomBytes(4).toString('hex')}`;
  const plain = await open(plainName);
  const conn = ClickHouseConnection.open(parseClickHouseUrl(CLICKHOUSE_URL, plainName));
  try {
    for (const view of ['day_changes_view', 'day_edges_view']) await conn.exec(`DROP TABLE ${view}`);
    const times: Record<'counted' | 'plain', number[]> = { counted: [], plain: [] };
    // Each hit counts for its day, and those within 30 minutes of a midnight for the day across it too.
    let expected = 0;
    const start = Date.now() - 3 * 86_400_000;
    for (let b = 0; b < batches; b++) {
      // A batch spans a few sites and two days, as a busy server's does around midnight.
      const hits = Array.from({ length: BATCH }, (_, i) =>
        storedHit(`SITE${i % 7}`, new Date(start + b * 60_000 + i * 17).toISOString(), { pathname: `/page-${i % 300}` }),
      );
      for (const h of hits) {
        const ofDay = h.timestamp.getTime() % 86_400_000;
        expected += ofDay < 1_800_000 || ofDay >= 86_400_000 - 1_800_000 ? 2 : 1;
      }
      for (const [name, store] of b % 2 === 0 ? ([['counted', counted], ['plain', plain]] as const) : ([['plain', plain], ['counted', counted]] as const)) {
        const started = performance.now();
        await store.write(hits, []);
        times[name].push(performance.now() - started);
      }
    }
    const [row] = await counted.query('SELECT sum(inserted) AS n FROM day_changes', []);
    if (Number(row?.n) !== expected) throw new Error(`the views counted ${String(row?.n)} hits, not ${expected}`);
    const [c, p] = [median(times.counted), median(times.plain)];
    console.log(`\nDay rollups' counting views on inserts (ClickHouse ${counted.features.version}; ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}; ${batches} batches of ${BATCH.toLocaleString('en')} hits each way, alternating)\n`);
    console.log('| hits table | median ms a batch | / without the views |');
    console.log('|---|---|---|');
    console.log(`| without the views (baseline) | ${p.toFixed(1)} | 1.00 |`);
    console.log(`| with the views | ${c.toFixed(1)} | ${(c / p).toFixed(2)} |`);
  } finally {
    await conn.close();
    for (const store of [counted, plain]) {
      await store.dropDatabase();
      await store.close();
    }
  }
}
