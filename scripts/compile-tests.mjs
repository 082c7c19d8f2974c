// The tests run compiled: tsc type-checks the whole project (src, test, bench) and writes JavaScript into
// .test-build/ (same layout as the sources), incrementally. Loading TypeScript through tsx instead cost about
// 0.85 s of CPU per test process and per server a test starts, some 300 of each in `npm test`. Shared by
// scripts/run-tests.mjs and scripts/run-cluster-tests.mjs.

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { compiler } from './build-state.mjs';

export const TEST_BUILD = '.test-build';

/** Type-checks and compiles into .test-build/; false (tsc printed why) when the code does not type-check. */
export function compileForTests() {
  const tsc = compiler();
  if (!tsc) {
    console.error('cannot compile the tests: TypeScript is not installed (npm ci)');
    return false;
  }
  const args = ['-p', 'tsconfig.json', '--outDir', TEST_BUILD, '--incremental', '--tsBuildInfoFile', `${TEST_BUILD}/.tsbuildinfo`];
  if (spawnSync(process.execPath, [tsc, ...args], { stdio: 'inherit' }).status !== 0) return false;
  // The build scripts the tests import (`../../scripts/build-state.mjs`) are JavaScript, which tsc does not copy: the
  // same relative path reaches them through a link (Node then loads them from their real place).
  const scripts = join(TEST_BUILD, 'scripts');
  mkdirSync(TEST_BUILD, { recursive: true });
  if (!existsSync(scripts)) symlinkSync(join('..', 'scripts'), scripts, 'dir');
  return true;
}

/** A file's compiled module: `test/a/b.test.ts` → `.test-build/test/a/b.test.js` (src/ alike). */
export const compiledTest = (file) => `${TEST_BUILD}/${file.replace(/\.ts$/, '.js')}`;
