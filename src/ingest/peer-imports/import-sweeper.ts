// Finds imports left running by a process that died (kill -9, out of memory, power loss) and undoes them: their
// rows are removed, as a failure inside the process removes them, and they are finished as failed with a reason
// the user understands. Runs once at start, before requests are taken, and then every `sweepMs`.
//
// An import's owner is dead when (src/ingest/peer-imports/import-owner.ts):
// * it is this process's own id and this process is not running the import (left by an earlier run of this
//   process, whose id a scale-out node keeps in its data directory, or by a failure path that could not finish);
// * the store is this process's alone (embedded: DuckDB's file lock) and the owner is another id;
// * or its heartbeat is older than the lease (scale-out: another process that stopped renewing), or it has none
//   (recorded before owners existed).
// Taking an orphan over is a compare-and-set on the owner and heartbeat seen (MetaStore.claimImport), so of
// several processes sweeping at once exactly one undoes it; the taker then holds the lease while it removes the
// rows, so if it dies too, the next sweep takes the import over again and removes what is left.

import type { EventStore, ImportRecord, MetaStore } from '../../store/types.js';
import type { ImportOwner } from './import-owner.js';
import { removeImportRows } from './import-rows.js';

/** What the user is told about an import whose process stopped (the dashboard's and /admin/imports' `failure_reason`). */
export const INTERRUPTED = 'interrupted: the server stopped during the import; nothing of it was kept, import the file again';

export interface ImportSweeperOptions {
  meta: MetaStore;
  events: EventStore;
  owner: ImportOwner;
  /** True when no other process can use the same stores (embedded mode): every other owner is dead. */
  exclusive: boolean;
  log: (err: unknown, message: string) => void;
  info?: (fields: Record<string, unknown>, message: string) => void;
}

export class ImportSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<string[]> | undefined;

  constructor(private readonly o: ImportSweeperOptions) {}

  /** Whether `record`'s owner is dead, by the rules above. */
  orphaned(record: ImportRecord, now: Date): boolean {
    const { owner, exclusive } = this.o;
    if (record.owner === owner.id) return !owner.isRunning(record.id);
    if (exclusive) return true;
    return record.heartbeatAt === null || now.getTime() - record.heartbeatAt.getTime() > owner.timing.leaseMs;
  }

  /** Undoes every orphaned import; the ids of those this call undid. One sweep at a time per process. */
  sweep(): Promise<string[]> {
    this.sweeping ??= this.sweepOnce().finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<string[]> {
    const { meta, events, owner, log } = this.o;
    const undone: string[] = [];
    const now = new Date();
    for (const seen of await meta.runningImports()) {
      if (!this.orphaned(seen, now)) continue;
      const claimed = await meta.claimImport(seen, owner.id, new Date());
      if (!claimed) continue; // another process took it first, or its owner just finished it
      const lease = owner.hold(meta, claimed, log);
      try {
        await removeImportRows(events, claimed);
        const failed = await meta.finishImport(claimed.id, owner.id, {
          status: 'failed', digest: null, imported: 0, rejected: 0, firstHitAt: null, lastHitAt: null, failure: INTERRUPTED,
        });
        if (failed) {
          undone.push(claimed.id);
          this.o.info?.({ import: claimed.id, site: claimed.siteId, kind: claimed.kind, deadOwner: seen.owner }, 'import left running by a stopped process undone');
        }
      } catch (err) {
        // Still running under this process's id and no longer held: the next sweep takes it up again.
        log(err, `undoing import ${claimed.id} left running by a stopped process`);
      } finally {
        lease.release();
      }
    }
    return undone;
  }

  /** Sweeps every `sweepMs` until closed (errors logged: the store may be down for a while). */
  start(): void {
    this.timer = setInterval(() => {
      this.sweep().catch((err: unknown) => this.o.log(err, 'looking for imports left running by stopped processes'));
    }, this.o.owner.timing.sweepMs);
    this.timer.unref();
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.sweeping?.catch(() => undefined);
  }
}
