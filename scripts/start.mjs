// `npm start`: runs the compiled server from dist/, compiling first only when a source is newer than the last
// build (a fresh clone is built by `npm ci` already, through `prepare`).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { buildIfStale, ROOT } from './build-state.mjs';

const main = join(ROOT, 'dist', 'src', 'main.js');
if (!buildIfStale() && !existsSync(main)) process.exit(1);
await import(pathToFileURL(main).href);
