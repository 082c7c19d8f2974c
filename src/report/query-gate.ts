// Admission for analytics queries: a few run at once, a bounded number wait, the rest are told to come back
// (503 with Retry-After) instead of piling up. Keeps one slow report from starving the server or the others.

import { RetryLater } from '../domain/errors.js';

export class AtCapacity extends RetryLater {
  constructor(message: string) {
    super(message, 2);
  }
}

export interface QueryGateOptions {
  /** Queries running at once (the database parallelises each query itself). */
  maxConcurrent?: number;
  /** Queries allowed to wait for a turn. */
  maxQueued?: number;
  /** Longest a query waits for its turn before it is refused. */
  maxWaitMs?: number;
}

interface Waiter {
  start: () => void;
  timer: NodeJS.Timeout;
}

export class QueryGate {
  private running = 0;
  private readonly queue: Waiter[] = [];
  readonly maxConcurrent: number;
  private readonly maxQueued: number;
  private readonly maxWaitMs: number;

  constructor(options: QueryGateOptions = {}) {
    this.maxConcurrent = options.maxConcurrent ?? 2;
    this.maxQueued = options.maxQueued ?? 64;
    this.maxWaitMs = options.maxWaitMs ?? 15_000;
  }

  get stats() {
    return { running: this.running, queued: this.queue.length };
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    await this.turn();
    try {
      return await work();
    } finally {
      this.running--;
      this.queue.shift()?.start();
    }
  }

  private turn(): Promise<void> {
    if (this.running < this.maxConcurrent) {
      this.running++;
      return Promise.resolve();
    }
    if (this.queue.length >= this.maxQueued) {
      return Promise.reject(new AtCapacity('The analytics API is at capacity; retry shortly'));
    }
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        start: () => {
          clearTimeout(waiter.timer);
          this.running++;
          resolve();
        },
        timer: setTimeout(() => {
          const i = this.queue.indexOf(waiter);
          if (i >= 0) this.queue.splice(i, 1);
          reject(new AtCapacity('The analytics API is busy; retry shortly'));
        }, this.maxWaitMs),
      };
      this.queue.push(waiter);
    });
  }
}
