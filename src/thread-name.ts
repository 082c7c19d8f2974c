// Names the calling thread for the operating system, so that `top -H`, `ps -T` and `pidstat -t` (and the
// benchmarks, through /proc) tell Plumb's threads apart: Node.js 20 calls every JavaScript thread "node".

import { writeFileSync } from 'node:fs';

/** Sets the calling thread's name (Linux keeps 15 bytes of it); where there is no /proc/thread-self, nothing. */
export function nameThread(name: string): void {
  try {
    writeFileSync('/proc/thread-self/comm', name.slice(0, 15));
  } catch {
    // Not Linux, or no /proc: the name only helps whoever reads the threads.
  }
}
