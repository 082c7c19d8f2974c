#!/usr/bin/env node
// The `plumb` CLI entry point: runs the compiled command line from dist/ and never builds it. A build rewrites the
// dist/ that a running server loads its modules from, and takes seconds; `npm run build` and `npm start` build.
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { isStale, ROOT } from '../scripts/build-state.mjs';

const compiled = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
if (!existsSync(compiled)) {
  console.error(`plumb: the CLI is not built yet (no ${compiled}): run \`npm run build\` in ${ROOT}`);
  process.exit(1);
}
// Said, not acted on: the built CLI is the one that matches the running server's build until it restarts.
let stale = false;
try {
  stale = isStale();
} catch {
  // no src/ beside dist/ (an installed copy): there is nothing to be older than
}
if (stale) {
  console.error('plumb: note: sources changed since the last build; this runs the built CLI (`npm run build` updates it)');
}
const { run } = await import(pathToFileURL(compiled).href);
process.exitCode = await run(process.argv.slice(2), process.env, (l) => console.log(l), (l) => console.error(l));
