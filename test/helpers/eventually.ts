// Polling for what a test waits on across processes (a sweep, a restart, hits reaching ClickHouse): the value once
// `check` returns one, or a failure naming `what` after `timeoutMs`.

import { setTimeout as sleep } from 'node:timers/promises';

export async function eventually<T>(check: () => Promise<T | undefined>, what: string, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}
