// The stores the ClickHouse report suites fill: hits imported through the real pipeline into an in-memory DuckDB
// (metadata and events), an account to make sites in, and a fresh ClickHouse database of the engine under test to
// copy them into (test/helpers/clickhouse.ts).

import { randomBytes } from 'node:crypto';
import { importLines, type ImportResult } from '../../src/ingest/line-import.js';
import { Ingest } from '../../src/ingest/ingest.js';
import { Metrics } from '../../src/metrics.js';
import { ClickHouseEventStore } from '../../src/store/clickhouse/event-store.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import type { Site } from '../../src/store/types.js';
import { testEngine } from './clickhouse.js';

export interface PipelineStores {
  meta: SqlMetaStore;
  duck: DuckEventStore;
  ingest: Ingest;
  /** A site of the account in `timezone`. */
  newSite(timezone: string, name?: string): Promise<Site>;
  /** Imports lines (objects, as NDJSON) through the pipeline and flushes them. */
  importLines(lines: readonly object[]): Promise<ImportResult>;
  /** A fresh ClickHouse database (dropped by close()) holding every hit and visit of `sites` as DuckDB has them. */
  copyToClickHouse(sites: readonly Site[]): Promise<ClickHouseEventStore>;
  close(): Promise<void>;
}

export async function pipelineStores(): Promise<PipelineStores> {
  const db = await DuckDatabase.open(':memory:');
  await migrate(db);
  const meta = new SqlMetaStore(db);
  const duck = await DuckEventStore.open(db);
  const ingest = await Ingest.start(meta, duck, new Metrics({ processMetrics: false }));
  const account = await meta.createAccount({ name: 'A', email: 'a@a.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
  const copies: ClickHouseEventStore[] = [];
  return {
    meta,
    duck,
    ingest,
    newSite: (timezone, name = timezone) =>
      meta.createSite({ accountId: account.id, name, sharing: 'none', sharePasswordHash: null, timezone, multiDomain: false, multiDomainOption: null }),
    async importLines(lines) {
      const result = await importLines(lines.map((l) => JSON.stringify(l)), await ingest.importPipeline(), ingest.buffer);
      await ingest.flush();
      return result;
    },
    async copyToClickHouse(sites) {
      const ch = await ClickHouseEventStore.open({ ...testEngine(), database: `plumb_test_${randomBytes(6).toString('hex')}`, node: 'test' });
      copies.push(ch);
      for (const site of sites) await ch.write(await duck.listHits(site.id), await duck.listVisits(site.id));
      return ch;
    },
    async close() {
      await ingest.close();
      for (const ch of copies) {
        await ch.dropDatabase();
        await ch.close();
      }
      await duck.close();
      await meta.close();
    },
  };
}
