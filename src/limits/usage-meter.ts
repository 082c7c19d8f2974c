// Counts every authenticated /v1 request toward the account's monthly total (SPEC.md section 8 rule 5),
// in memory, written to the MetaStore in batches so no request waits on a write.

import type { MetaStore } from '../store/types.js';

export class UsageMeter {
  private pending = new Map<number, Map<string, number>>();
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly store: MetaStore,
    options: { flushIntervalMs?: number } = {},
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), options.flushIntervalMs ?? 10_000);
    this.timer.unref();
  }

  count(accountId: number, at: Date, requests = 1): void {
    const month = at.toISOString().slice(0, 7);
    const months = this.pending.get(accountId) ?? new Map<string, number>();
    months.set(month, (months.get(month) ?? 0) + requests);
    this.pending.set(accountId, months);
  }

  /** Writes what was counted; on failure the counts are put back for the next attempt, not lost. */
  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.store.addUsage(batch);
    } catch (err) {
      for (const [account, months] of batch) for (const [month, n] of months) this.count(account, monthStart(month), n);
      throw err;
    }
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

const monthStart = (month: string) => new Date(`${month}-01T00:00:00Z`);
