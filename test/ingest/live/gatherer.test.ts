// Gatherer: the store's next batch on the ingest thread, cut once it is full or its time is up, with the highest
// hit-log sequence number of its rows (the watermark the batch moves).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Gatherer } from '../../../src/ingest/live/gatherer.js';

describe('Gatherer', () => {
  it('asks for a cut once it holds maxRecords rows, and hands them over with their highest sequence number', () => {
    const taken: { rows: string[]; records: number; seq: number }[] = [];
    const gather: Gatherer<string> = new Gatherer(() => taken.push(gather.take()!), { maxRecords: 3, maxWaitMs: 60_000 });
    gather.add('a', 7);
    gather.add('b', 5);
    assert.equal(gather.size, 2);
    assert.deepEqual(taken, []);
    gather.add('c', 6);
    gather.add('d', 0);
    assert.deepEqual(taken, [{ rows: ['a', 'b', 'c'], records: 3, seq: 7 }]);
    assert.equal(gather.size, 1);
    // Rows that were never logged (imports) carry sequence number 0.
    assert.deepEqual(gather.take(), { rows: ['d'], records: 1, seq: 0 });
    assert.equal(gather.take(), undefined);
  });

  it('asks for a cut maxWaitMs after the first row of a batch, not later rows', async () => {
    const cuts: string[][] = [];
    let cut: () => void = () => undefined;
    const due = () => new Promise<void>((resolve) => (cut = resolve));
    const gather: Gatherer<string> = new Gatherer(
      () => {
        cuts.push(gather.take()?.rows ?? []);
        cut();
      },
      { maxRecords: 100, maxWaitMs: 5 },
    );
    let next = due();
    gather.add('a', 1);
    gather.add('b', 2);
    await next;
    assert.deepEqual(cuts, [['a', 'b']]);
    // A take() stops the pending timer: the next batch's time starts with its own first row.
    next = due();
    gather.add('c', 3);
    assert.deepEqual(gather.take(), { rows: ['c'], records: 1, seq: 3 });
    gather.add('d', 4);
    await next;
    assert.deepEqual(cuts, [['a', 'b'], ['d']]);
  });

  it('counts a row of several records (a hit-log group) as that many towards the cut', () => {
    const taken: { rows: string[]; records: number; seq: number }[] = [];
    const gather: Gatherer<string> = new Gatherer(() => taken.push(gather.take()!), { maxRecords: 10, maxWaitMs: 60_000 });
    gather.add('group of 4', 4, 4);
    gather.add('group of 5', 9, 5);
    assert.equal(gather.size, 9);
    assert.deepEqual(taken, []);
    gather.add('group of 3', 12, 3);
    assert.deepEqual(taken, [{ rows: ['group of 4', 'group of 5', 'group of 3'], records: 12, seq: 12 }]);
    assert.equal(gather.size, 0);
  });
});
