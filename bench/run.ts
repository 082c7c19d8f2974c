// `npm run bench [section ...]`: Plumb's benchmarks. Sections: collector, import, import-work, reports, overhead,
// umami-import, props, fathom-import, plausible-import, startup, freshness, analysis, day-changes; and soak, which
// runs only when named (an hour by default: `SOAK_MINUTES=60 npm run bench -- soak`).

import { benchAnalysis } from './analysis.js';
import { benchCollector } from './collector.js';
import { benchDayChanges } from './day-changes.js';
import { benchFathomImport } from './fathom-import.js';
import { benchFreshness } from './freshness.js';
import { benchImport } from './import.js';
import { benchImportWork } from './import-work.js';
import { benchOverhead } from './overhead.js';
import { benchPlausibleImport } from './plausible-import.js';
import { benchProps } from './props.js';
import { benchReports } from './reports.js';
import { benchSoak } from './soak.js';
import { benchStartup } from './startup.js';
import { benchUmamiImport } from './umami-import.js';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { buildIfStale } from '../scripts/build-state.mjs';

const sections: Record<string, () => Promise<void>> = {
  collector: () => benchCollector(Number(process.env.BENCH_SECONDS ?? 15)),
  import: () => benchImport(Number(process.env.BENCH_IMPORT_HITS ?? 1_000_000)),
  'import-work': () => benchImportWork(Number(process.env.BENCH_IMPORT_HITS ?? 1_000_000)),
  reports: () => benchReports(Number(process.env.BENCH_PAGEVIEWS ?? 10_000_000)),
  overhead: () => benchOverhead(Number(process.env.BENCH_OVERHEAD_PAGEVIEWS ?? 20_000)),
  'umami-import': () => benchUmamiImport(Number(process.env.BENCH_UMAMI_ROWS ?? 4_100_000)),
  props: () => benchProps(),
  'fathom-import': () => benchFathomImport(Number(process.env.BENCH_FATHOM_MB ?? 950)),
  'plausible-import': () => benchPlausibleImport(Number(process.env.BENCH_PLAUSIBLE_MB ?? 1000)),
  startup: () => benchStartup(Number(process.env.BENCH_STARTUP_RUNS ?? 5)),
  freshness: () => benchFreshness(),
  analysis: () => benchAnalysis(Number(process.env.BENCH_PAGEVIEWS ?? 10_000_000)),
  'day-changes': () => benchDayChanges(Number(process.env.BENCH_DAY_CHANGES_BATCHES ?? 200)),
};
/** Sections run only when named: an hour's soak is no part of a run of every benchmark. */
const named: Record<string, () => Promise<void>> = { soak: () => benchSoak() };

// The CLI runs compiled, as `plumb` does for users (bench/server-watch.ts), and so does the import benchmark's
// server: compiled once here, before anything is timed.
if (!(buildIfStale() as boolean)) process.exit(1);

const chosen = process.argv.slice(2);
for (const name of chosen.length > 0 ? chosen : Object.keys(sections)) {
  const section = sections[name] ?? named[name];
  if (!section) {
    console.error(`unknown benchmark "${name}"; choose from ${[...Object.keys(sections), ...Object.keys(named)].join(', ')}`);
    process.exit(2);
  }
  await section();
}
