// A scale-out process's own data directory: it holds only that process's hit log, so it must not be shared.
// Claiming it takes a lock file (refused while another live process holds it) and reads the process's stable
// node id, which tags its hits in ClickHouse so a restart replays exactly what its log still owes.

import { randomBytes } from 'node:crypto';
import { mkdir, open, readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

export interface ClaimedDataDir {
  node: string;
  release(): Promise<void>;
}

/** Whether a process with this pid exists (signal 0 asks without signalling). */
export const processAlive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
};

export async function claimDataDir(dir: string): Promise<ClaimedDataDir> {
  await mkdir(dir, { recursive: true });
  const lockPath = join(dir, 'plumb.lock');
  for (let attempt = 0; ; attempt++) {
    try {
      const handle = await open(lockPath, 'wx');
      await handle.writeFile(String(process.pid));
      await handle.close();
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt > 0) throw err;
      const holder = Number((await readFile(lockPath, 'utf8').catch(() => '')).trim());
      if (Number.isInteger(holder) && holder > 0 && holder !== process.pid && processAlive(holder)) {
        throw new Error(
          `${dir} is in use by another Plumb process (pid ${holder}); give every scale-out process its own PLUMB_DATA_DIR`,
        );
      }
      // Left behind by a process that died: take it over.
      await rm(lockPath, { force: true });
    }
  }
  const nodePath = join(dir, 'node-id');
  let node = (await readFile(nodePath, 'utf8').catch(() => '')).trim();
  if (!/^[0-9a-f]{16}$/.test(node)) {
    node = randomBytes(8).toString('hex');
    await writeFile(nodePath, `${node}\n`);
  }
  return { node, release: () => rm(lockPath, { force: true }) };
}
