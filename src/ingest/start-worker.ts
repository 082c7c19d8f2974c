// Starts one of the ingest side's worker threads: its JavaScript once built; under the TypeScript loader of tests
// and benchmarks (tsx), its TypeScript, registering the loader in the thread first (Node 20 does not pass loader
// hooks to workers).

import { Worker, type ResourceLimits } from 'node:worker_threads';

/** `name`: the module beside this one, without extension (`ingest-thread`); `resourceLimits` as Worker takes them. */
export function startWorker(name: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, import.meta.url), { workerData, resourceLimits });
  const entry = JSON.stringify(new URL(`./${name}.ts`, import.meta.url).href);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${tsx}).then((tsx) => { tsx.register(); return import(${entry}); })`, { eval: true, workerData, resourceLimits });
}
