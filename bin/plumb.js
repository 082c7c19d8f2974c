#!/usr/bin/env node
// The `plumb` CLI entry point: runs the compiled command line (compiled at install; again only if a source changed).
import { existsSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { buildIfStale } from '../scripts/build-state.mjs';

const compiled = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
if (!buildIfStale() && !existsSync(compiled)) {
  console.error('plumb: the CLI could not be compiled (see above); run `npm run build`');
  process.exit(1);
}
const { run } = await import(pathToFileURL(compiled).href);
process.exitCode = await run(process.argv.slice(2), process.env, (l) => console.log(l), (l) => console.error(l));
