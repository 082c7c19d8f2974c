// Runs every test file under test/ with node:test, TypeScript loaded through tsx: first everything on the embedded
// store, then the behaviour suite again in scale-out mode (PostgreSQL + ClickHouse + Redis, PLUMB_TEST_STORE).
//
// Usage: node scripts/run-tests.mjs [--embedded | --scale-out] [path-filter ...]
//   --embedded   only the first pass;   --scale-out   only the second (`npm run test:scale-out`).
// ClickHouse is started by scripts/clickhouse/start.sh when it is installed but not running; without it the
// ClickHouse tests are skipped with a warning, unless PLUMB_REQUIRE_CLICKHOUSE=1 (CI) makes that a failure.

import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** The behaviour suite: what users observe through HTTP. Runs on both configurations from the same files. */
const BEHAVIOUR = ['test/http/', 'test/report/', 'test/security/', 'test/dashboard/', 'test/scale-out/'];
/** Files that only make sense with ClickHouse (they run in the embedded pass but talk to ClickHouse directly). */
const NEEDS_CLICKHOUSE = /clickhouse|event-store-contract|test\/scale-out\//;
const CLICKHOUSE_URL = process.env.PLUMB_TEST_CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';

function find(dir) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return find(path);
    return name.endsWith('.test.ts') ? [path] : [];
  });
}

async function clickhouseReady() {
  const ping = async () => {
    try {
      return (await (await fetch(`${CLICKHOUSE_URL}/ping`)).text()).trim() === 'Ok.';
    } catch {
      return false;
    }
  };
  if (await ping()) return true;
  const installed = ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server', '/usr/bin/clickhouse'].some(existsSync);
  if (!installed || process.env.PLUMB_TEST_CLICKHOUSE_URL) return false;
  return spawnSync('scripts/clickhouse/start.sh', { stdio: 'inherit' }).status === 0 && (await ping());
}

function run(files, env) {
  if (files.length === 0) return 0;
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-reporter=spec', ...files], {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return result.status ?? 1;
}

const args = process.argv.slice(2);
const only = args.includes('--embedded') ? 'embedded' : args.includes('--scale-out') ? 'scale-out' : undefined;
const filters = args.filter((a) => !a.startsWith('--'));
const all = find('test')
  .map((f) => f.split('\\').join('/'))
  .filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)))
  .sort();
if (all.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}

// ClickHouse is probed (and started) only when a selected file needs it: its own tests, or the scale-out pass.
const needsClickHouse =
  (only !== 'scale-out' && all.some((f) => NEEDS_CLICKHOUSE.test(f))) ||
  (only !== 'embedded' && all.some((f) => BEHAVIOUR.some((dir) => f.startsWith(dir))));
const haveClickHouse = needsClickHouse && (await clickhouseReady());
if (needsClickHouse && !haveClickHouse) {
  const message = `ClickHouse is not reachable at ${CLICKHOUSE_URL} (apt-get install -y clickhouse-server)`;
  if (process.env.PLUMB_REQUIRE_CLICKHOUSE === '1') {
    console.error(`${message}: required here (PLUMB_REQUIRE_CLICKHOUSE=1)`);
    process.exit(1);
  }
  console.warn(`\nWARNING: ${message}; the ClickHouse and scale-out tests are skipped.\n`);
}

let status = 0;
if (only !== 'scale-out') {
  const files = all.filter((f) => !f.startsWith('test/scale-out/') && (haveClickHouse || !NEEDS_CLICKHOUSE.test(f)));
  status ||= run(files, { PLUMB_TEST_STORE: 'embedded' });
}
if (only !== 'embedded' && haveClickHouse) {
  const files = all.filter((f) => BEHAVIOUR.some((dir) => f.startsWith(dir)) && !/clickhouse/.test(f));
  if (files.length > 0) console.log(`\n=== The behaviour suite in scale-out mode (PostgreSQL + ClickHouse + Redis): ${files.length} files ===\n`);
  status = run(files, { PLUMB_TEST_STORE: 'scale-out' }) || status;
}
process.exit(status);
