// The Node.js flags the server runs with: `npm start` puts them on its command line, and the test and benchmark
// servers (test/helpers/process.ts) use the same. On a machine of at most two cores V8 collects garbage on the
// thread that made it (`--single-threaded-gc`) instead of handing parts to its helper threads, which there only
// compete with the server's own threads (HTTP, ingest, import, DuckDB) for the same cores: measured on two cores,
// the collector took 7% less CPU a hit on average and imports ran 4-13% faster (docs/benchmarks.md, "Collector and
// import in session 15").
// PLUMB_SINGLE_THREADED_GC=on or off overrides the choice (the server refuses any other value). Run as a script, it
// prints the flags for a shell.
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';

/** The flags for a machine of `cores` cores with `env`'s setting. */
export function serverNodeFlags(env = process.env, cores = availableParallelism()) {
  const setting = env.PLUMB_SINGLE_THREADED_GC;
  const single = setting === 'on' || (setting !== 'off' && cores <= 2);
  return single ? ['--single-threaded-gc'] : [];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(serverNodeFlags().join(' '));
}
