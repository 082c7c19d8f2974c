// Runs the ClickHouse store suites and the whole behaviour suite (with --reports: only the report oracle suites)
// against ClickHouse clusters (CLICKHOUSE_CLUSTER):
// for each layout, starts the cluster with scripts/clickhouse/cluster.mjs, points the tests at one node with the
// cluster named, runs them, and stops the cluster (also when a suite fails or the run is interrupted). Prints each
// layout's wall time. PostgreSQL and Redis are the ones the scale-out suite uses (test/helpers/). Each run of suites
// is stopped after PLUMB_CLUSTER_SUITE_LIMIT_S seconds (default 900: they take 40-140 s), so a node that stops
// answering fails the run instead of holding it; a failed layout prints the end of every node's error log.
//
// Usage: node scripts/run-cluster-tests.mjs [2x1] [1x2] [--reports] [path-filter ...]   (default: both layouts)

import { spawn } from 'node:child_process';
import { describe, errorLogs, LAYOUTS, startCluster } from './clickhouse/cluster.mjs';
import { compileForTests, compiledTest } from './compile-tests.mjs';
import { isBehaviour, testFiles } from './test-files.mjs';

/** Store suites: the ClickHouse event store and the event store contract, on the store directly. */
const STORE_SUITES = testFiles('test/store').filter((f) => /^test\/store\/(clickhouse|event-store-contract)/.test(f));
/** The report oracle and injection suites, in scale-out mode (an app on PostgreSQL + the cluster + Redis). */
const REPORT_SUITES = ['aggregations', 'attribution', 'injection', 'engagement', 'journeys', 'funnels', 'journeys-funnels-dashboard'].map((n) => `test/report/${n}.test.ts`);
/** By default the whole behaviour suite, in scale-out mode, the report suites among it. */
const BEHAVIOUR_SUITE = testFiles().filter(isBehaviour);
const CONCURRENCY = Number(process.env.PLUMB_TEST_CONCURRENCY ?? 2);
const SUITE_LIMIT_MS = Number(process.env.PLUMB_CLUSTER_SUITE_LIMIT_S ?? 900) * 1000;

const args = process.argv.slice(2);
const layouts = args.filter((a) => a in LAYOUTS);
const reportsOnly = args.includes('--reports');
const filters = args.filter((a) => !(a in LAYOUTS) && a !== '--reports');
const pick = (files) => files.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

if (!compileForTests()) process.exit(1);

let current;
let child;
/** Stops the test runner and the test processes it started (its own process group). */
const stopTests = () => {
  try {
    if (child?.exitCode === null) process.kill(-child.pid, 'SIGKILL');
  } catch {
    // Already gone.
  }
};
// Interrupted: stop the tests, then the cluster, so no server or ZooKeeper outlives the run.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    stopTests();
    await current?.stop();
    process.exit(130);
  });
}

function run(files, env) {
  if (files.length === 0) return Promise.resolve(0);
  return new Promise((resolve) => {
    child = spawn(process.execPath, ['--enable-source-maps', '--test', `--test-concurrency=${CONCURRENCY}`, '--test-reporter=spec', ...files.map(compiledTest)], {
      stdio: 'inherit',
      env: { ...process.env, ...env },
      detached: true,
    });
    const limit = setTimeout(() => {
      console.error(`\nThe suites did not finish within ${SUITE_LIMIT_MS / 1000} s: stopped (PLUMB_CLUSTER_SUITE_LIMIT_S).`);
      stopTests();
    }, SUITE_LIMIT_MS);
    child.on('exit', (code) => {
      clearTimeout(limit);
      resolve(code ?? 1);
    });
  });
}

let status = 0;
const times = [];
for (const name of layouts.length > 0 ? layouts : Object.keys(LAYOUTS)) {
  const started = Date.now();
  console.log(`\n=== ClickHouse cluster ${name} ===`);
  current = await startCluster(LAYOUTS[name]);
  const up = Date.now();
  try {
    console.log(describe(current));
    const env = {
      PLUMB_TEST_CLICKHOUSE: 'http',
      PLUMB_TEST_CLICKHOUSE_URL: current.url,
      CLICKHOUSE_CLUSTER: current.name,
      PLUMB_TEST_CLUSTER_LAYOUT: name,
      PLUMB_TEST_CLUSTER_NODES: JSON.stringify(current.nodes.map((n) => ({ name: n.name, url: n.url, shard: n.shard }))),
    };
    const stores = await run(pick(STORE_SUITES), { ...env, PLUMB_TEST_STORE: 'embedded' });
    const failed = (await run(pick(reportsOnly ? REPORT_SUITES : BEHAVIOUR_SUITE), { ...env, PLUMB_TEST_STORE: 'scale-out' })) || stores;
    if (failed) console.error(`\nThe ${name} layout failed. What its servers logged last:\n${errorLogs(current)}`);
    status = failed || status;
  } finally {
    const done = Date.now();
    await current.stop();
    current = undefined;
    times.push(`${name}: ${((Date.now() - started) / 1000).toFixed(0)} s (cluster start ${((up - started) / 1000).toFixed(1)} s, suites ${((done - up) / 1000).toFixed(0)} s)`);
  }
}
console.log(`\nClickHouse cluster suites, wall time: ${times.join('; ')}`);
process.exit(status);
