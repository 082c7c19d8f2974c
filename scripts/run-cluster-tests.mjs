// Runs the ClickHouse store suites and the whole behaviour suite (with --reports: only the report oracle suites)
// against ClickHouse clusters (CLICKHOUSE_CLUSTER):
// for each layout, starts the cluster with scripts/clickhouse/cluster.mjs, points the tests at one node with the
// cluster named, runs them, and stops the cluster (also when a suite fails or the run is interrupted). Prints each
// layout's wall time. PostgreSQL and Redis are the ones the scale-out suite uses (test/helpers/).
//
// Usage: node scripts/run-cluster-tests.mjs [2x1] [1x2] [--reports] [path-filter ...]   (default: both layouts)

import { spawn } from 'node:child_process';
import { describe, LAYOUTS, startCluster } from './clickhouse/cluster.mjs';
import { compileForTests, compiledTest } from './compile-tests.mjs';
import { isBehaviour, testFiles } from './test-files.mjs';

/** Store suites: the ClickHouse event store and the event store contract, on the store directly. */
const STORE_SUITES = testFiles('test/store').filter((f) => /^test\/store\/(clickhouse|event-store-contract)/.test(f));
/** The report oracle and injection suites, in scale-out mode (an app on PostgreSQL + the cluster + Redis). */
const REPORT_SUITES = ['aggregations', 'attribution', 'injection', 'engagement', 'journeys', 'funnels', 'journeys-funnels-dashboard'].map((n) => `test/report/${n}.test.ts`);
/** By default the whole behaviour suite, in scale-out mode, the report suites among it. */
const BEHAVIOUR_SUITE = testFiles().filter(isBehaviour);
const CONCURRENCY = Number(process.env.PLUMB_TEST_CONCURRENCY ?? 2);

const args = process.argv.slice(2);
const layouts = args.filter((a) => a in LAYOUTS);
const reportsOnly = args.includes('--reports');
const filters = args.filter((a) => !(a in LAYOUTS) && a !== '--reports');
const pick = (files) => files.filter((f) => filters.length === 0 || filters.some((x) => f.includes(x)));

if (!compileForTests()) process.exit(1);

let current;
let child;
// Interrupted: stop the tests, then the cluster, so no server or ZooKeeper outlives the run.
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, async () => {
    child?.kill('SIGTERM');
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
    });
    child.on('exit', (code) => resolve(code ?? 1));
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
    status = (await run(pick(STORE_SUITES), { ...env, PLUMB_TEST_STORE: 'embedded' })) || status;
    status = (await run(pick(reportsOnly ? REPORT_SUITES : BEHAVIOUR_SUITE), { ...env, PLUMB_TEST_STORE: 'scale-out' })) || status;
  } finally {
    const done = Date.now();
    await current.stop();
    current = undefined;
    times.push(`${name}: ${((Date.now() - started) / 1000).toFixed(0)} s (cluster start ${((up - started) / 1000).toFixed(1)} s, suites ${((done - up) / 1000).toFixed(0)} s)`);
  }
}
console.log(`\nClickHouse cluster suites, wall time: ${times.join('; ')}`);
process.exit(status);
