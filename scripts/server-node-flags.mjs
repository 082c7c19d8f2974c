// The Node.js flags the server runs with: `npm start` puts them on its command line, and the test and benchmark
// servers (test/helpers/process.ts) use the same. On a machine of at most two cores V8 collects garbage on the
// thread that made it (`--single-threaded-gc`) instead of handing parts to its helper threads, which there only
// compete with the server's own threads (HTTP, ingest, import, DuckDB) for the same cores: measured on two cores,
// the collector took 7% less CPU a hit on average and imports ran 4-13% faster (docs/benchmarks.md,
// "PLUMB_SINGLE_THREADED_GC"). Each thread's young generation then starts at its full 16 MB semi-spaces
// (`--min-semi-space-size=16`; V8 starts at 1 MB and grows it only as much survives): under collector load the HTTP
// thread's own collections were a fifth of its time, and with the flag the collector took 12% less CPU a hit in
// alternating runs (the same section).
// PLUMB_SINGLE_THREADED_GC=on or off overrides the choice (the server refuses any other value). Run as a script, it
// prints the flags for a shell.
import { availableParallelism } from 'node:os';
import { pathToFileURL } from 'node:url';

/** The flags for a machine of `cores` cores with `env`'s setting. */
export function serverNodeFlags(env = process.env, cores = availableParallelism()) {
  const setting = env.PLUMB_SINGLE_THREADED_GC;
  const single = setting === 'on' || (setting !== 'off' && cores <= 2);
  return single ? ['--single-threaded-gc', '--min-semi-space-size=16'] : [];
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  console.log(serverNodeFlags().join(' '));
}
