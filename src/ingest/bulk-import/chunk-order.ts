// The order of an import's chunks when a client sends several at once: each chunk carries its number in the
// import, and chunk n is handed to the importer only after chunk n - 1 was, whichever request arrived first.

import { GeneralError, ValidationError } from '../../domain/errors.js';

const conflict = (message: string) => new GeneralError(409, message);

/**
 * How far past the next expected chunk a client may send: enough to keep the importer busy, no more (the CLI has
 * ten in flight, src/cli/import.ts; a chunk waiting for its turn stays unread in its connection).
 */
export const MAX_CHUNKS_AHEAD = 12;

/**
 * How long a chunk waits for its predecessor to come before it is refused (the client that sent both has gone).
 * Only while the predecessor is missing: once it has come, the chunk waits as long as the chunks before it take
 * (in scale-out mode each is handed over only when it is done, and the CLI sends ten at a time).
 */
export const CHUNK_WAIT_MS = 120_000;

/** A chunk received out of turn. */
interface Waiter {
  go: () => void;
  refuse: (err: Error) => void;
  /** Set while its predecessor has not come. */
  timer: NodeJS.Timeout | undefined;
}

interface ImportOrder {
  /** The number the next chunk to be handed over must have. */
  next: number;
  /** Whether chunk `next` has its turn (is being received or handed over). */
  inTurn: boolean;
  /** Chunks received out of turn, by number. */
  waiting: Map<number, Waiter>;
  /** When a chunk of this import was last seen (orders idle for longer are forgotten). */
  at: number;
}

/** Whether chunk `seq` has come and is still to be handed over: in its turn, or waiting for it. */
const here = (order: ImportOrder, seq: number) => (seq === order.next && order.inTurn) || order.waiting.has(seq);

export class ChunkOrder {
  private readonly imports = new Map<string, ImportOrder>();

  /** `forgetAfterMs`: how long an import's order is kept after its last chunk (as long as its visits live). */
  constructor(
    private readonly forgetAfterMs: number,
    private readonly waitMs = CHUNK_WAIT_MS,
  ) {}

  /**
   * Resolves when chunk `seq` (1-based) of import `id` may be handed over: at once for chunk 1 or the next
   * expected one, else once its predecessors were. Rejects with a 400 for a number too far ahead and a 409 for a
   * number already taken or a predecessor that did not come in time (CHUNK_WAIT_MS). Every resolved turn must be
   * ended with `handedOver` (whether the chunk succeeded or not), or its successors wait.
   */
  async turn(id: string, seq: number): Promise<void> {
    const now = Date.now();
    this.forgetIdle(now);
    const order = this.imports.get(id) ?? { next: 1, inTurn: false, waiting: new Map<number, Waiter>(), at: now };
    this.imports.set(id, order);
    order.at = now;
    if (seq < order.next || here(order, seq)) throw conflict(`chunk ${seq} of import ${id} was already received`);
    if (seq > order.next + MAX_CHUNKS_AHEAD) {
      throw ValidationError.of('x-plumb-import-seq', `is more than ${MAX_CHUNKS_AHEAD} chunks ahead of the next expected (${order.next})`);
    }
    if (seq === order.next) {
      order.inTurn = true;
      this.arrived(order, seq);
      return;
    }
    await new Promise<void>((go, refuse) => {
      const waiter: Waiter = { go, refuse, timer: undefined };
      order.waiting.set(seq, waiter);
      if (!here(order, seq - 1)) this.time(id, order, seq, waiter);
      this.arrived(order, seq);
    });
  }

  /** Chunk `seq` has come: its successor, if waiting, no longer waits for a predecessor that may never come. */
  private arrived(order: ImportOrder, seq: number): void {
    const successor = order.waiting.get(seq + 1);
    clearTimeout(successor?.timer);
    if (successor) successor.timer = undefined;
  }

  /**
   * Refuses waiting chunk `seq` unless its predecessor comes within the wait. A refused chunk is missing again for
   * its successor, whose own wait then starts.
   */
  private time(id: string, order: ImportOrder, seq: number, waiter: Waiter): void {
    waiter.timer = setTimeout(() => {
      order.waiting.delete(seq);
      waiter.refuse(conflict(`chunk ${seq} of import ${id} waited ${this.waitMs / 1000} s for chunk ${seq - 1}, which never came`));
      const successor = order.waiting.get(seq + 1);
      if (successor && successor.timer === undefined) this.time(id, order, seq + 1, successor);
    }, this.waitMs);
  }

  /** Chunk `seq` of import `id` was handed over (or failed before): its successor may go. Calls after the first are ignored. */
  handedOver(id: string, seq: number): void {
    const order = this.imports.get(id);
    if (!order || seq !== order.next) return;
    order.next = seq + 1;
    order.at = Date.now();
    const successor = order.waiting.get(order.next);
    order.inTurn = successor !== undefined;
    if (successor) {
      order.waiting.delete(order.next);
      clearTimeout(successor.timer);
      successor.go();
    }
  }

  /** Imports known (for tests and metrics). */
  get size(): number {
    return this.imports.size;
  }

  private forgetIdle(now: number): void {
    for (const [id, order] of this.imports) {
      if (order.waiting.size === 0 && !order.inTurn && now - order.at > this.forgetAfterMs) this.imports.delete(id);
    }
  }
}
