// The query gate: a bounded number of reports at once, a bounded queue, 503 with Retry-After beyond it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AtCapacity, QueryGate } from '../../src/report/query-gate.js';
import { OWNER_TOKEN, startTestApp } from '../helpers/app.js';

const deferred = () => {
  let release!: () => void;
  const done = new Promise<void>((r) => (release = r));
  return { done, release };
};

describe('QueryGate', () => {
  it('runs at most maxConcurrent at once and the rest in arrival order', async () => {
    const gate = new QueryGate({ maxConcurrent: 2, maxQueued: 10 });
    const order: number[] = [];
    const blockers = [deferred(), deferred(), deferred(), deferred()];
    const runs = blockers.map((d, i) => gate.run(async () => { order.push(i); await d.done; return i; }));
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, [0, 1]);
    assert.deepEqual(gate.stats, { running: 2, queued: 2 });
    blockers[1]!.release();
    await runs[1];
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, [0, 1, 2]);
    for (const b of blockers) b.release();
    assert.deepEqual(await Promise.all(runs), [0, 1, 2, 3]);
    assert.deepEqual(gate.stats, { running: 0, queued: 0 });
  });

  it('refuses at once when the queue is full, and after waiting too long', async () => {
    const gate = new QueryGate({ maxConcurrent: 1, maxQueued: 1, maxWaitMs: 50 });
    const hold = deferred();
    const first = gate.run(() => hold.done);
    const queued = gate.run(async () => 'late');
    const refused = await gate.run(async () => 'never').catch((e: unknown) => e);
    assert.ok(refused instanceof AtCapacity);
    assert.equal(refused.status, 503);
    assert.equal(refused.headers()['retry-after'], '2');
    assert.deepEqual(Object.keys(refused.body() as object), ['error']);
    assert.ok((await queued.catch((e: unknown) => e)) instanceof AtCapacity, 'waited past maxWaitMs');
    hold.release();
    await first;
    assert.equal(await gate.run(async () => 'ok'), 'ok', 'a failed wait does not leak a slot');
  });

  it('frees its slot when the work fails', async () => {
    const gate = new QueryGate({ maxConcurrent: 1 });
    await assert.rejects(gate.run(async () => { throw new Error('boom'); }), /boom/);
    assert.equal(await gate.run(async () => 1), 1);
  });
});

describe('reports at capacity over HTTP', () => {
  it('answers 503 {error} with Retry-After when the report queue is full', async () => {
    const t = await startTestApp({ gate: { maxConcurrent: 1, maxQueued: 0 } });
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Busy' })).body.id;
    const url = `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews&date_from=2026-01-01%2000:00:00&date_to=2026-01-02%2000:00:00`;
    // The app's one slot held by a report of its own while these arrive: six requests sent at once could each find
    // the slot free on a fast machine (an empty site's report is quick), and then none met a full queue.
    const gate = (t.reports as unknown as { gate: QueryGate }).gate;
    const hold = deferred();
    const held = gate.run(() => hold.done);
    const whileFull = await Promise.all(Array.from({ length: 6 }, () => t.call(OWNER_TOKEN, 'GET', url)));
    hold.release();
    await held;
    const answers = [...whileFull, await t.call(OWNER_TOKEN, 'GET', url)];
    const statuses = answers.map((a) => a.status).sort();
    assert.ok(statuses.includes(200), JSON.stringify(statuses));
    const busy = answers.filter((a) => a.status === 503);
    assert.ok(busy.length > 0, JSON.stringify(statuses));
    for (const b of busy) {
      assert.equal(typeof b.body.error, 'string');
      assert.equal(b.headers['retry-after'], '2');
    }
    await t.close();
  });
});
