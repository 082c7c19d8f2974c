// Where uploads of zipped exports wait while they are read (a zip's directory is at its end; up to 1 GiB each),
// and the removal at start of those a process that died left behind.
//
// With a data directory they go to its `import-spool/` folder: the directory is this process's alone (DuckDB's
// file lock, or the scale-out data directory's lock, src/data-dir.ts), so whatever is there at start was left by
// a run that died and is removed whole, with no guess about which process made it; and the disk an operator gave
// Plumb takes them, not a /tmp that may be memory (tmpfs). Without one (an in-memory database, tests), they go to
// the system's temporary directory as `plumb-import-PID-XXXXXX`, and at start those whose process no longer
// exists are removed. Spools of versions before this one (`plumb-import-XXXXXX`, no pid) are removed once a day
// old: whose they were cannot be told, and no import runs that long.

import { mkdir, mkdtemp, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { processAlive } from '../../data-dir.js';

const PID_SPOOL = /^plumb-import-(\d+)-[A-Za-z0-9]{6}$/;
const OLD_SPOOL = /^plumb-import-[A-Za-z0-9]{6}$/;
const OLD_SPOOL_AGE_MS = 24 * 3_600_000;

export class ImportSpool {
  private constructor(
    /** The folder a new spool is made in, and its name's prefix. */
    private readonly prefix: string,
  ) {}

  /** The spool of a process with `dataDir` (or none), after removing what dead processes left. */
  static async open(dataDir: string | undefined, temp = tmpdir()): Promise<ImportSpool> {
    await removeDeadTempSpools(temp);
    if (dataDir === undefined) return new ImportSpool(join(temp, `plumb-import-${process.pid}-`));
    const root = join(dataDir, 'import-spool');
    await rm(root, { recursive: true, force: true });
    await mkdir(root, { recursive: true });
    return new ImportSpool(join(root, 'import-'));
  }

  /** A new empty folder for one upload; the caller removes it when the import is finished either way. */
  make(): Promise<string> {
    return mkdtemp(this.prefix);
  }
}

/** Removes the system temporary directory's spools of processes that no longer exist (and day-old unowned ones). */
async function removeDeadTempSpools(temp: string): Promise<void> {
  const names = await readdir(temp).catch(() => [] as string[]);
  const now = Date.now();
  for (const name of names) {
    const owned = PID_SPOOL.exec(name);
    let dead = false;
    if (owned) dead = Number(owned[1]) !== process.pid && !processAlive(Number(owned[1]));
    else if (OLD_SPOOL.test(name)) dead = await stat(join(temp, name)).then((s) => now - s.mtimeMs > OLD_SPOOL_AGE_MS, () => false);
    if (dead) await rm(join(temp, name), { recursive: true, force: true }).catch(() => undefined);
  }
}
