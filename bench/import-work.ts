// The set-based import's own work, in this process, without HTTP or the CLI: the reader thread's part (chunk files
// read, lines parsed and checked into columns) and the import thread's (enriched, hashed, sessionised, written as
// CSV files: BatchImport and CsvLoad) in CPU time per hit, against JSON.parse of the same lines (the floor of any
// import that reads them, same run); then DuckDB loading those files as the server does (EventStore.writeCsv), hits
// alone and hits with visits, each until a checkpoint has written everything.
// BENCH_IMPORT_HITS sets the size (default 1,000,000).

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchImport, type ImportLookups } from '../src/ingest/bulk-import/batch-import.js';
import { placer, readColumns, type ChunkColumns } from '../src/ingest/bulk-import/chunk-columns.js';
import { CsvLoad, PendingVisits } from '../src/ingest/bulk-import/csv-load.js';
import { GeoLookup } from '../src/ingest/enrich/geo.js';
import { EphemeralSalts } from '../src/ingest/salts.js';
import { DuckDatabase } from '../src/store/duckdb/database.js';
import { DuckEventStore } from '../src/store/duckdb/event-store.js';
import { migrate } from '../src/store/duckdb/migrations.js';
import { ROW_GROUP_ROWS } from '../src/store/duckdb/row-group-checkpoints.js';
import type { CsvRows } from '../src/store/event-csv.js';
import type { Site } from '../src/store/types.js';
import { generate } from './import.js';

/** As the CLI sends them and the import thread loads them (src/cli/import.ts, src/ingest/bulk-import/import-thread.ts). */
const CHUNK_LINES = 100_000;
const SLICE_HITS = 8_192;
const LOAD_HITS = ROW_GROUP_ROWS;
const VISIT_LOAD_ROWS = ROW_GROUP_ROWS;

/** CPU seconds of this process (all its threads) spent in `work`. */
async function cpuOf(work: () => Promise<void>): Promise<number> {
  const before = process.cpuUsage();
  await work();
  const used = process.cpuUsage(before);
  return (used.user + used.system) / 1e6;
}

export async function benchImportWork(hits = 1_000_000): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-bench-import-work-'));
  try {
    const site = { id: 'BENCHSIT', multiDomain: false, multiDomainOption: null } as Site;
    const lines = generate(site.id, hits).split('\n');
    const lookups: ImportLookups = {
      sites: async (ids) => new Map(ids.map((id) => [id, id === site.id ? site : undefined])),
      goals: async (names) => names.map(([, name]) => name),
    };
    const load = loadavg();

    let parsed = 0;
    const parse = await cpuOf(async () => {
      for (const line of lines) parsed += (JSON.parse(line) as object) ? 1 : 0;
    });

    // The chunks' files as the server spools them; the reader thread's part parses them into columns.
    const bodies: string[] = [];
    for (let first = 0; first < lines.length; first += CHUNK_LINES) {
      bodies.push(join(dir, `body-${bodies.length}.ndjson`));
      writeFileSync(bodies.at(-1)!, lines.slice(first, first + CHUNK_LINES).join('\n'));
    }
    const read: ChunkColumns[] = [];
    const geo = await GeoLookup.open();
    const place = placer(geo);
    const reading = await cpuOf(async () => {
      for (const [i, body] of bodies.entries()) read.push(await readColumns(body, i * CHUNK_LINES + 1, place));
    });

    const batch = new BatchImport({ geo, salts: new EphemeralSalts(), excludedHosts: [] });
    const files: CsvRows[] = [];
    let stored = 0;
    const visits = new PendingVisits();
    const work = await cpuOf(async () => {
      let csv = new CsvLoad(dir, String(files.length));
      for (const [i, columns] of read.entries()) {
        const first = i * CHUNK_LINES;
        read[i] = undefined!;
        // Loads of exactly a row group, a chunk's last rows in one load with the next chunk's first, and visits
        // stored once they fill a row group of their own, as the server's (src/ingest/bulk-import/import-thread.ts).
        await batch.chunk(columns, first + 1, lookups, async (rows, touched) => {
          stored += rows.length;
          await csv.add(rows);
          visits.add(touched);
          if (csv.size >= LOAD_HITS) {
            files.push(await csv.finish(visits.size >= VISIT_LOAD_ROWS ? visits : undefined));
            csv = new CsvLoad(dir, String(files.length));
          }
        }, () => Math.min(SLICE_HITS, LOAD_HITS - csv.size));
      }
      if (csv.size > 0 || visits.size > 0) files.push(await csv.finish(visits));
    });

    const loadInto = async (name: string, withVisits: boolean) => {
      const db = await DuckDatabase.open(join(dir, `${name}.duckdb`));
      await migrate(db);
      const events = await DuckEventStore.open(db);
      const seconds = await cpuOf(async () => {
        for (const f of files) await events.writeCsv(withVisits ? f : { ...f, visits: 0, newVisits: 0 });
        // The checkpoint too: what the loads leave to it (partly filled row groups to merge) is part of storing them.
        await db.serial((q) => q.exec('CHECKPOINT'));
      });
      await events.close();
      await db.close();
      return seconds;
    };
    const hitsOnly = await loadInto('hits', false);
    const withVisits = await loadInto('both', true);

    const us = (seconds: number) => ((seconds * 1e6) / stored).toFixed(1);
    console.log(`\nImport work in process: ${lines.length.toLocaleString('en')} generated lines, ${stored.toLocaleString('en')} stored hits, ${files.length} loads (visits: ${files.reduce((n, f) => n + f.newVisits, 0).toLocaleString('en')} new, ${files.reduce((n, f) => n + f.visits, 0).toLocaleString('en')} replaced), ${cpus().length} cores, ${cpus()[0]?.model ?? 'unknown CPU'}\n`);
    console.log('| part | CPU seconds | CPU µs per hit |');
    console.log('|---|---|---|');
    console.log(`| JSON.parse of every line (baseline) | ${parse.toFixed(2)} | ${us(parse)} |`);
    console.log(`| reader thread's work (files read, lines parsed into columns, addresses placed) | ${reading.toFixed(2)} | ${us(reading)} |`);
    console.log(`| import thread's work (BatchImport from the columns + CSV files) | ${work.toFixed(2)} | ${us(work)} |`);
    console.log(`| DuckDB loading the hits files | ${hitsOnly.toFixed(2)} | ${us(hitsOnly)} |`);
    console.log(`| DuckDB loading hits and visits (as the server does) | ${withVisits.toFixed(2)} | ${us(withVisits)} |`);
    console.log(`\nimport thread's work / JSON.parse: ${(work / parse).toFixed(1)}x`);
    console.log(`load average before: ${load.map((l) => l.toFixed(2)).join(', ')}`);
    if (parsed !== lines.length) process.exitCode = 1;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
