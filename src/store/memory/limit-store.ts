// LimitStore in process memory, for the embedded mode: exact sliding-window logs and leased slots.

import type { LimitStore, WindowDecision } from '../types.js';

export class MemoryLimitStore implements LimitStore {
  /** key -> ascending times of the requests counted in the current window */
  private readonly windows = new Map<string, number[]>();
  /** key -> slot id -> lease expiry */
  private readonly slots = new Map<string, Map<string, number>>();
  private sweeps = 0;

  async hitWindow(key: string, windowMs: number, limit: number, now: number): Promise<WindowDecision> {
    const log = this.windows.get(key) ?? [];
    let expired = 0;
    while (expired < log.length && log[expired]! <= now - windowMs) expired++;
    if (expired > 0) log.splice(0, expired);
    if (log.length < limit) {
      log.push(now);
      this.windows.set(key, log);
      this.sweep(now, windowMs);
      return { allowed: true };
    }
    // After a downgrade the log can hold more than `limit`: wait for enough of them to leave.
    const freeing = log[log.length - limit]!;
    return { allowed: false, retryAfterMs: freeing + windowMs - now };
  }

  async acquireSlot(key: string, slotId: string, limit: number, leaseMs: number, now: number): Promise<boolean> {
    const held = this.slots.get(key) ?? new Map<string, number>();
    for (const [id, expiry] of held) if (expiry <= now) held.delete(id);
    if (held.size >= limit) return false;
    held.set(slotId, now + leaseMs);
    this.slots.set(key, held);
    return true;
  }

  async releaseSlot(key: string, slotId: string): Promise<void> {
    const held = this.slots.get(key);
    if (!held) return;
    held.delete(slotId);
    if (held.size === 0) this.slots.delete(key);
  }

  async close(): Promise<void> {
    this.windows.clear();
    this.slots.clear();
  }

  /** Now and then, drop whole logs that have gone quiet so idle accounts cost no memory. */
  private sweep(now: number, windowMs: number): void {
    if (++this.sweeps % 1000 !== 0) return;
    for (const [key, log] of this.windows) {
      if (log.length === 0 || log[log.length - 1]! <= now - Math.max(windowMs, 3_600_000)) this.windows.delete(key);
    }
  }
}
