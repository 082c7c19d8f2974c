// Which test files there are and which of them form the behaviour suite (what users observe through HTTP, run on
// both configurations from the same files): shared by scripts/run-tests.mjs and scripts/run-cluster-tests.mjs.

import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

const BEHAVIOUR = ['test/http/', 'test/report/', 'test/security/', 'test/dashboard/', 'test/scale-out/'];

/** Every `*.test.ts` under `dir`, as forward-slash paths, sorted. */
export function testFiles(dir = 'test') {
  const walk = (d) =>
    readdirSync(d).flatMap((name) => {
      const path = join(d, name);
      if (statSync(path).isDirectory()) return walk(path);
      return name.endsWith('.test.ts') ? [path.split('\\').join('/')] : [];
    });
  return walk(dir).sort();
}

/** A file of the behaviour suite (the ClickHouse-only files talk to ClickHouse directly and are not). */
export function isBehaviour(file) {
  return BEHAVIOUR.some((dir) => file.startsWith(dir)) && !/clickhouse/.test(file);
}
