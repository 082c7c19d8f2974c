// Starts one of Plumb's worker threads (the ingest side's, and the CLI's file index): its JavaScript once built;
// under the TypeScript loader of tests and benchmarks (tsx), its TypeScript, registering the loader in the thread
// first (Node 20 does not pass loader hooks to workers).

import { Worker, type ResourceLimits } from 'node:worker_threads';

/**
 * `name`: the thread's module, without extension (`ingest-thread`), in the folder of the module at the URL `beside`
 * (its caller's `import.meta.url`); `resourceLimits` as Worker takes them.
 */
export function startWorker(beside: string, name: string, workerData: unknown, resourceLimits?: ResourceLimits): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL(`./${name}.js`, beside), { workerData, resourceLimits });
  const entry = JSON.stringify(new URL(`./${name}.ts`, beside).href);
  const tsx = JSON.stringify(import.meta.resolve('tsx/esm/api'));
  return new Worker(`import(${tsx}).then((tsx) => { tsx.register(); return import(${entry}); })`, { eval: true, workerData, resourceLimits });
}
