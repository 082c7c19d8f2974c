// Custom properties on the write path: what storing a hit costs in the embedded store (DuckDB appender and
// commit, the path every live hit takes after the hit log) without properties, with 3 and with 30 (the limit),
// in interleaved rounds of the same run; CPU time of the whole process (DuckDB's threads included) per hit.

import { cpus, loadavg } from 'node:os';
import type { StoredHit } from '../src/domain/hits.js';
import type { PropList } from '../src/domain/props.js';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { DuckEventStore } from '../src/store/duckdb/event-store.js';
import { migrate } from '../src/store/duckdb/migrations.js';
import { storedHit } from '../test/helpers/stored-hits.js';
import { median } from './median.js';

export async function benchProps(batch = 5_000, rounds = 9): Promise<void> {
  const db = await DuckDatabase.open(':memory:');
  await migrate(db);
  const store = await DuckEventStore.open(db);
  const props = (n: number): PropList => Array.from({ length: n }, (_, i) => [`key${i}`, `value of property ${i}`] as const);
  const variants: [string, PropList | undefined][] = [['no properties', undefined], ['3 properties', props(3)], ['30 properties', props(30)]];
  const hitsOf = (p: PropList | undefined): StoredHit[] =>
    Array.from({ length: batch }, (_, i) => storedHit('BENCHSIT', new Date(Date.UTC(2026, 0, 1) + i * 1000).toISOString(), p ? { type: 'event', eventName: 'Signup', props: p } : {}));
  const results = new Map<string, { wall: number[]; cpu: number[] }>(variants.map(([name]) => [name, { wall: [], cpu: [] }]));
  for (const [, p] of variants) await store.write(hitsOf(p), []); // warm
  for (let r = 0; r < rounds; r++) {
    for (const [name, p] of variants) {
      const hits = hitsOf(p);
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      await store.write(hits, []);
      const wall = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      results.get(name)!.wall.push((wall * 1000) / batch);
      results.get(name)!.cpu.push((cpu.user + cpu.system) / batch);
    }
  }
  const base = median(results.get('no properties')!.cpu);
  console.log(`\n== props: DuckEventStore.write, ${batch} hits a batch, ${rounds} interleaved rounds (median per hit) ==`);
  console.log(`machine: ${cpus().length} x ${cpus()[0]?.model}, Node ${process.version}, load average ${loadavg().map((l) => l.toFixed(2)).join(' ')}`);
  for (const [name] of variants) {
    const r = results.get(name)!;
    console.log(`${name.padEnd(14)} wall ${median(r.wall).toFixed(2)} µs/hit   CPU ${median(r.cpu).toFixed(2)} µs/hit   CPU ratio ${(median(r.cpu) / base).toFixed(2)}x`);
  }
  await store.close();
  await db.close();
}
