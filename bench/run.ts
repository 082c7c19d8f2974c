// `npm run bench [section ...]`: Plumb's benchmarks. Sections: collector.

import { benchCollector } from './collector.js';

const sections: Record<string, () => Promise<void>> = {
  collector: () => benchCollector(Number(process.env.BENCH_SECONDS ?? 15)),
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
