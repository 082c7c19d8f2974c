// Where the project is and how its modules run, whether the tests run compiled (.test-build/, npm test) or as
// TypeScript through tsx (`node --import tsx --test test/...`).

import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
// @ts-expect-error: a plain ES module of the build scripts, without type declarations
import { compiledTest } from '../../scripts/compile-tests.mjs';

/** The project's root: the first folder above this file with a package.json (.test-build/ has none). */
export const ROOT = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    if (dirname(dir) === dir) throw new Error('cannot find the project root (no package.json above test/helpers)');
    dir = dirname(dir);
  }
  return dir;
})();

/** Whether this run is the compiled one: then the server and other child processes run compiled too. */
export const COMPILED = import.meta.url.endsWith('.js');

/** `src/<path>.ts`'s module in this run: its compiled JavaScript, or the TypeScript itself under tsx. */
const modulePath = (path: string) => join(ROOT, COMPILED ? (compiledTest(path) as string) : path);

/** Node's arguments to run `src/<path>.ts` in a child process: its compiled module, or the source through tsx. */
export function sourceEntry(path: string): string[] {
  return [...LOADER, modulePath(path)];
}

/** The URL to import `src/<path>.ts` from in a child process's script, in this run's form (see sourceEntry). */
export const sourceModuleUrl = (path: string) => pathToFileURL(modulePath(path)).href;

/** A file under ROOT (the dashboard's JavaScript, fixtures), as a URL to import. */
export const rootFileUrl = (path: string) => pathToFileURL(join(ROOT, path)).href;

/** Node's arguments that load TypeScript in a child process of a tsx run; none in the compiled run. */
export const LOADER: string[] = COMPILED ? [] : ['--import', 'tsx'];
