// Who runs an import, and how others can tell it is still alive. Every process has an owner id; an import it starts is
// recorded with that id and a heartbeat time, renewed every `heartbeatMs` while the import runs (a lease). A process
// that dies stops renewing: once the heartbeat is older than `leaseMs`, any process may take the import for an orphan
// (src/ingest/peer-imports/import-sweeper.ts). Times are the processes' own clocks, so in scale-out they must agree
// within much less than the lease (NTP does). An import whose lease was lost (the process stalled or could not reach
// the meta store for a whole lease, and another took the import over) stops at its next write.

import { GeneralError } from '../../domain/errors.js';
import type { ImportRecord, MetaStore } from '../../store/types.js';

export interface ImportTiming {
  /** How often a running import renews its heartbeat. */
  heartbeatMs: number;
  /** A heartbeat older than this is a dead owner's (several missed renewals, not one slow one). */
  leaseMs: number;
  /** How often every process looks for imports of dead owners (besides once at start). */
  sweepMs: number;
}

export const IMPORT_TIMING: ImportTiming = { heartbeatMs: 10_000, leaseMs: 60_000, sweepMs: 30_000 };

/**
 * Thrown into an import that is no longer this process's (deleted while it ran, or taken over by another process
 * after this one missed its renewals): it must stop writing. Answered as a 409.
 */
export class ImportLeaseLost extends GeneralError {
  constructor(id: string) {
    super(409, `The import ${id} was deleted, or taken over by another server process, while it ran; nothing of it was kept. Import the file again.`);
  }
}

/** One held lease: renewed on a timer until released. */
export class ImportLease {
  private lostIt = false;
  private renewing = false;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly owner: ImportOwner,
    private readonly meta: MetaStore,
    readonly id: string,
    log: (err: unknown, message: string) => void,
  ) {
    this.timer = setInterval(() => {
      // One renewal at a time: a slow store must not pile them up.
      if (this.renewing || this.lostIt) return;
      this.renewing = true;
      this.meta
        .renewImport(id, owner.id, new Date())
        .then((held) => {
          if (!held) this.lostIt = true;
        })
        // The store unreachable: try again next time; the lease runs out only after several misses.
        .catch((err: unknown) => log(err, `renewing the heartbeat of import ${id}`))
        .finally(() => (this.renewing = false));
    }, owner.timing.heartbeatMs);
    this.timer.unref();
  }

  get lost(): boolean {
    return this.lostIt;
  }

  /** Throws once another process has taken the import over. */
  check(): void {
    if (this.lostIt) throw new ImportLeaseLost(this.id);
  }

  release(): void {
    clearInterval(this.timer);
    this.owner.forget(this.id);
  }
}

/** This process as the owner of imports: its id, its timing, and the imports it is running now. */
export class ImportOwner {
  private readonly running = new Set<string>();
  /** Imports being recorded: their ids are not known yet, and a sweep must not take one for a leftover. */
  private starting = 0;

  constructor(
    readonly id: string,
    readonly timing: ImportTiming = IMPORT_TIMING,
  ) {}

  /** Records an import through `create` (owned by this process) and holds its lease; release it when finished either way. */
  async begin(meta: MetaStore, create: () => Promise<ImportRecord>, log: (err: unknown, message: string) => void): Promise<{ record: ImportRecord; lease: ImportLease }> {
    this.starting++;
    try {
      const record = await create();
      return { record, lease: this.hold(meta, record, log) };
    } finally {
      this.starting--;
    }
  }

  /** Starts renewing `record`'s heartbeat (the record is owned by this process). */
  hold(meta: MetaStore, record: ImportRecord, log: (err: unknown, message: string) => void): ImportLease {
    this.running.add(record.id);
    return new ImportLease(this, meta, record.id, log);
  }

  /** Whether this process is (or may be, while one is being recorded) running the import now. */
  isRunning(id: string): boolean {
    return this.starting > 0 || this.running.has(id);
  }

  forget(id: string): void {
    this.running.delete(id);
  }
}
