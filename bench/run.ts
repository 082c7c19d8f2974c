// `npm run bench [section ...]`: Plumb's benchmarks. Sections: collector, reports.

import { benchCollector } from './collector.js';
import { benchReports } from './reports.js';

const sections: Record<string, () => Promise<void>> = {
  collector: () => benchCollector(Number(process.env.BENCH_SECONDS ?? 15)),
  reports: () => benchReports(Number(process.env.BENCH_PAGEVIEWS ?? 10_000_000)),
};

const chosen = process.argv.slice(2);
for (const name of chosen.length > 0 ? chosen : Object.keys(sections)) {
  const section = sections[name];
  if (!section) {
    console.error(`unknown benchmark "${name}"; choose from ${Object.keys(sections).join(', ')}`);
    process.exit(2);
  }
  await section();
}
