#!/usr/bin/env node
// The `plumb` CLI entry point: runs the compiled command line (build it with `npm run build`).
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const compiled = fileURLToPath(new URL('../dist/src/cli/main.js', import.meta.url));
if (!existsSync(compiled)) {
  console.error('plumb: the CLI is not built yet; run `npm run build` (npm start also builds it)');
  process.exit(1);
}
const { run } = await import(compiled);
process.exitCode = await run(process.argv.slice(2), process.env, (l) => console.log(l), (l) => console.error(l));
