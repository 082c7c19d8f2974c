// Runs every test file under test/ with node:test, compiled first (type-checked into .test-build/: compile-tests.mjs):
// first everything on the embedded store, then the behaviour suite again in scale-out mode (PostgreSQL + ClickHouse +
// Redis, PLUMB_TEST_STORE), then the ClickHouse suites again on ClickHouse 26 in process (chdb,
// PLUMB_TEST_CLICKHOUSE=chdb).
//
// Usage: node scripts/run-tests.mjs [--embedded | --scale-out | --clickhouse] [path-filter ...]
//   --embedded    only the first pass;   --scale-out   only the second (`npm run test:scale-out`);
//   --clickhouse  only the ClickHouse suites, on the ClickHouse server (18.16 here) and on chdb (26.x), each
//                 engine's version() printed (`npm run test:clickhouse`).
// ClickHouse is started by scripts/clickhouse/start.sh when it is installed but not running, chdb installed by
// scripts/chdb/install.sh (npm ci of its pinned lockfile) when missing; without either, its tests are skipped
// with a warning, unless PLUMB_REQUIRE_CLICKHOUSE=1 (CI) makes that a failure.

import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { build, isStale } from './build-state.mjs';
import { compileForTests, compiledTest } from './compile-tests.mjs';
import { isBehaviour, testFiles } from './test-files.mjs';

/** Files that only make sense with ClickHouse (they run in the embedded pass but talk to ClickHouse directly). */
const NEEDS_CLICKHOUSE = /clickhouse|event-store-contract|test\/scale-out\//;
/** The ClickHouse suites: store contract and store, dialect, reports against DuckDB (run on each engine directly). */
const CLICKHOUSE_SUITES = /^test\/(store\/(clickhouse|event-store-contract)|report\/clickhouse)/;
/** Behaviour files that are the report oracle and injection suites: run in scale-out mode on each engine too. */
const REPORT_SUITES = /^test\/report\/(aggregations|attribution|injection|engagement|journeys|funnels|journeys-funnels-dashboard)\.test\.ts$/;
const CLICKHOUSE_URL = process.env.PLUMB_TEST_CLICKHOUSE_URL ?? 'http://127.0.0.1:8123';
/**
 * Test files run at once: node:test's default is one fewer than the cores, so one at a time on two, while most
 * files spend their time waiting on a server process, ClickHouse, PostgreSQL or Chromium. Every file has its own
 * databases, schemas, key prefixes, ports and directories, so they do not meet (PLUMB_TEST_CONCURRENCY=1: one at a
 * time, to tell a slow file from a busy machine).
 */
const CONCURRENCY = Number(process.env.PLUMB_TEST_CONCURRENCY ?? 2);

async function serverVersion() {
  try {
    const res = await fetch(CLICKHOUSE_URL, { method: 'POST', body: 'SELECT version()' });
    return res.ok ? (await res.text()).trim() : undefined;
  } catch {
    return undefined;
  }
}

/** The server's version(), starting it first when it is installed here but not running; undefined without one. */
async function clickhouseServer() {
  const running = await serverVersion();
  if (running) return running;
  const installed = ['/usr/sbin/clickhouse-server', '/usr/bin/clickhouse-server', '/usr/bin/clickhouse'].some(existsSync);
  if (!installed || process.env.PLUMB_TEST_CLICKHOUSE_URL) return undefined;
  if (spawnSync('scripts/clickhouse/start.sh', { stdio: 'inherit' }).status !== 0) return undefined;
  return serverVersion();
}

/** chdb's version(), installing it first when missing; undefined when it cannot be had. */
function chdbEngine() {
  if (spawnSync('scripts/chdb/install.sh', { stdio: 'inherit' }).status !== 0) return undefined;
  const probe = spawnSync(process.execPath, ['-e', "console.log(require('chdb').query('SELECT version()', 'TSV').trim())"], {
    cwd: 'scripts/chdb',
    encoding: 'utf8',
  });
  return probe.status === 0 ? probe.stdout.trim() : undefined;
}

function missing(what) {
  if (process.env.PLUMB_REQUIRE_CLICKHOUSE === '1') {
    console.error(`${what}: required here (PLUMB_REQUIRE_CLICKHOUSE=1)`);
    process.exit(1);
  }
  console.warn(`\nWARNING: ${what}; its tests are skipped.\n`);
}

/**
 * The browser files spread among the others, largest first (their size stands for their time, so the longest does
 * not start last): in name order they ran side by side for the first half of the pass, two Chromiums contending
 * for the two cores, while the second half mostly waited on servers and timers.
 */
function interleaveBrowserFiles(files) {
  const browser = files.filter((f) => f.startsWith('test/browser/')).sort((a, b) => statSync(b).size - statSync(a).size);
  const rest = files.filter((f) => !f.startsWith('test/browser/'));
  const every = Math.max(1, Math.floor(rest.length / Math.max(1, browser.length)));
  const out = [];
  for (let i = 0; i < rest.length || browser.length > 0; i++) {
    if (i % every === 0 && browser.length > 0) out.push(browser.shift());
    if (i < rest.length) out.push(rest[i]);
  }
  return out;
}

let passes = 0;
function run(files, env) {
  if (files.length === 0) return 0;
  // PLUMB_TEST_TIMES=path also writes each file's time to path.<pass>, slowest first (scripts/test-file-times.mjs).
  const times = process.env.PLUMB_TEST_TIMES
    ? ['--test-reporter-destination=stdout', '--test-reporter=./scripts/test-file-times.mjs', `--test-reporter-destination=${process.env.PLUMB_TEST_TIMES}.${++passes}`]
    : [];
  const args = ['--enable-source-maps', '--test', `--test-concurrency=${CONCURRENCY}`, '--test-reporter=spec', ...times, ...files.map(compiledTest)];
  const result = spawnSync(process.execPath, args, {
    stdio: 'inherit',
    env: { ...process.env, ...env },
  });
  return result.status ?? 1;
}

const args = process.argv.slice(2);
const only = args.includes('--embedded')
  ? 'embedded'
  : args.includes('--scale-out')
    ? 'scale-out'
    : args.includes('--clickhouse')
      ? 'clickhouse'
      : undefined;
const filters = args.filter((a) => !a.startsWith('--'));
const all = testFiles().filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));
if (all.length === 0) {
  console.error('no test files matched');
  process.exit(1);
}
const behaviour = all.filter(isBehaviour);
const clickhouseSuites = all.filter((f) => CLICKHOUSE_SUITES.test(f));
const reportSuites = all.filter((f) => REPORT_SUITES.test(f));

// The server is probed (and started) only when a selected file needs it; chdb likewise.
const needsServer =
  (only === undefined || only === 'embedded' ? all.some((f) => NEEDS_CLICKHOUSE.test(f)) : false) ||
  (only === undefined || only === 'scale-out' ? behaviour.length > 0 : false) ||
  (only === 'clickhouse' && clickhouseSuites.length + reportSuites.length > 0);
// PLUMB_TEST_CHDB=off leaves the chdb pass out (CI, whose time the suite outgrew on its 2-core machine: .ci/run).
const needsChdb =
  process.env.PLUMB_TEST_CHDB !== 'off' && (only === undefined || only === 'clickhouse') && clickhouseSuites.length + reportSuites.length > 0;
const server = needsServer ? await clickhouseServer() : undefined;
if (needsServer && !server) missing(`ClickHouse is not reachable at ${CLICKHOUSE_URL} (apt-get install -y clickhouse-server)`);
const chdb = needsChdb ? chdbEngine() : undefined;
if (needsChdb && !chdb) missing('chdb (ClickHouse in process) could not be installed by scripts/chdb/install.sh');

if (!compileForTests()) process.exit(1);

// The CLI tests run the compiled server and build it when the sources are newer: built here once instead, so two
// of them running at once never build into dist/ together.
if (all.some((f) => f.startsWith('test/cli/')) && isStale() && !build()) process.exit(1);

let status = 0;
const ran = [];
if (only === undefined || only === 'embedded') {
  const files = interleaveBrowserFiles(all.filter((f) => !f.startsWith('test/scale-out/') && (server || !NEEDS_CLICKHOUSE.test(f))));
  status ||= run(files, { PLUMB_TEST_STORE: 'embedded' });
  if (server && files.some((f) => NEEDS_CLICKHOUSE.test(f))) ran.push(`ClickHouse ${server} (server, HTTP)`);
}
if ((only === undefined || only === 'scale-out') && server && behaviour.length > 0) {
  console.log(`\n=== The behaviour suite in scale-out mode (PostgreSQL + ClickHouse ${server} + Redis): ${behaviour.length} files ===\n`);
  status = run(behaviour, { PLUMB_TEST_STORE: 'scale-out' }) || status;
  if (!ran.length) ran.push(`ClickHouse ${server} (server, HTTP)`);
}
if (only === 'clickhouse' && server) {
  console.log(`\n=== ClickHouse suites on ClickHouse ${server} (server, HTTP) ===\n`);
  status = run(clickhouseSuites, { PLUMB_TEST_STORE: 'embedded', PLUMB_TEST_CLICKHOUSE: 'http' }) || status;
  status = run(reportSuites, { PLUMB_TEST_STORE: 'scale-out', PLUMB_TEST_CLICKHOUSE: 'http' }) || status;
  ran.push(`ClickHouse ${server} (server, HTTP)`);
}
if (chdb) {
  // The two-process tests stay on the server: chdb is an engine inside one process, not shared between processes.
  console.log(`\n=== ClickHouse suites on ClickHouse ${chdb} (chdb, in process) ===\n`);
  status = run(clickhouseSuites, { PLUMB_TEST_STORE: 'embedded', PLUMB_TEST_CLICKHOUSE: 'chdb' }) || status;
  status = run(reportSuites, { PLUMB_TEST_STORE: 'scale-out', PLUMB_TEST_CLICKHOUSE: 'chdb' }) || status;
  ran.push(`ClickHouse ${chdb} (chdb, in process)`);
}
if (ran.length > 0) console.log(`\nClickHouse engines tested: ${ran.join('; ')}`);
process.exit(status);
