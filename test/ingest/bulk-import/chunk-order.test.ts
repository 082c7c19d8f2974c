// ChunkOrder: numbered chunks of an import go in their order, whatever order they come in; a chunk whose
// predecessor never comes is refused after a while instead of waiting for ever, and one whose predecessor has come
// waits for it as long as it takes.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ChunkOrder } from '../../../src/ingest/bulk-import/chunk-order.js';

/** Whether `turn` still waits (neither went nor was refused) once the event loop has gone round. */
async function waitsAfterATurn(turn: Promise<void>): Promise<boolean> {
  let went = false;
  void turn.then(
    () => (went = true),
    () => (went = true),
  );
  await new Promise((resolve) => setImmediate(resolve));
  return !went;
}

describe('ChunkOrder', () => {
  it('lets chunks go in number order and each import on its own', async () => {
    const order = new ChunkOrder(60_000);
    const went: string[] = [];
    const go = async (id: string, seq: number) => {
      await order.turn(id, seq);
      went.push(`${id}${seq}`);
      order.handedOver(id, seq);
    };
    const all = [go('a', 3), go('a', 2), go('b', 2), go('b', 1), go('a', 1)];
    await Promise.all(all);
    assert.deepEqual(went.filter((w) => w.startsWith('a')), ['a1', 'a2', 'a3']);
    assert.deepEqual(went.filter((w) => w.startsWith('b')), ['b1', 'b2']);
  });

  it('lets the next chunk go when one is handed over, not when it is done', async () => {
    const order = new ChunkOrder(60_000);
    await order.turn('a', 1);
    const second = order.turn('a', 2);
    assert.equal(await waitsAfterATurn(second), true);
    order.handedOver('a', 1);
    await second;
    // A second hand-over of chunk 1 (its request ending) does not let chunk 3 overtake chunk 2.
    order.handedOver('a', 1);
    const third = order.turn('a', 3);
    assert.equal(await waitsAfterATurn(third), true);
    order.handedOver('a', 2);
    await third;
  });

  it('refuses a chunk whose predecessor does not come in time, and a number already taken', async () => {
    const order = new ChunkOrder(60_000, 50);
    await assert.rejects(order.turn('a', 2), (err: Error & { status?: number }) => err.status === 409 && /never came/.test(err.message));
    await order.turn('a', 1);
    await assert.rejects(order.turn('a', 1), (err: Error & { status?: number }) => err.status === 409 && /already received/.test(err.message));
    order.handedOver('a', 1);
    await order.turn('a', 2);
  });

  it('lets a chunk wait as long as the chunks before it take once they have come', async () => {
    const order = new ChunkOrder(60_000, 50);
    await order.turn('a', 1);
    const third = order.turn('a', 3);
    const second = order.turn('a', 2);
    // Chunk 1 is being worked on far longer than the wait (in scale-out mode a chunk is handed over when done).
    await new Promise((resolve) => setTimeout(resolve, 150));
    assert.equal(await waitsAfterATurn(second), true);
    assert.equal(await waitsAfterATurn(third), true);
    order.handedOver('a', 1);
    await second;
    order.handedOver('a', 2);
    await third;
  });

  it('refuses the chunks after one whose predecessor never came, each after its own wait', async () => {
    const order = new ChunkOrder(60_000, 50);
    const third = order.turn('a', 3);
    third.catch(() => undefined);
    const second = order.turn('a', 2);
    const started = Date.now();
    await assert.rejects(second, (err: Error & { status?: number }) => err.status === 409 && /chunk 1, which never came/.test(err.message));
    // Chunk 2 came and was refused: chunk 3's wait for it starts then.
    assert.equal(await waitsAfterATurn(third), true);
    await assert.rejects(third, (err: Error & { status?: number }) => err.status === 409 && /chunk 2, which never came/.test(err.message));
    assert.ok(Date.now() - started >= 90, `chunk 3 refused after ${Date.now() - started} ms`);
  });

  it('forgets imports idle for longer than their visits live', async () => {
    const order = new ChunkOrder(10);
    await order.turn('a', 1);
    order.handedOver('a', 1);
    await new Promise((resolve) => setTimeout(resolve, 30));
    await order.turn('b', 1);
    assert.equal(order.size, 1);
  });
});
