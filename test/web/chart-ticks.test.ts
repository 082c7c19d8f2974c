// The report chart's axis labels for months and weeks (src/web/report/ticks.js): at bucket starts, none twice,
// thinned to fit the chart's width.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rootFileUrl } from '../helpers/root.js';

type BucketTicks = (starts: readonly number[], widthPx: number) => number[];
// A dashboard module (plain JavaScript for the browser): imported by URL, as the type checker has no declarations for it.
const { bucketTicks, LABEL_ROOM_PX } = (await import(rootFileUrl('src/web/report/ticks.js'))) as {
  bucketTicks: BucketTicks;
  LABEL_ROOM_PX: number;
};

/** The starts of `n` months from December 2025, as the chart's x values (wall-clock seconds). */
const months = (n: number) => Array.from({ length: n }, (_, i) => Date.UTC(2025, 11 + i, 1) / 1000);

describe('chart axis ticks for months and weeks', () => {
  it('labels every month at its first day when there is room, and no month twice', () => {
    const year = months(12);
    const ticks = bucketTicks(year, 12 * LABEL_ROOM_PX);
    assert.deepEqual(ticks, year);
    const labels = ticks.map((s) => new Date(s * 1000).toISOString().slice(0, 7));
    assert.equal(new Set(labels).size, labels.length);
    assert.deepEqual(labels.slice(0, 2), ['2025-12', '2026-01']);
  });

  it('thins to every n-th bucket, from the first, as the width allows', () => {
    const year = months(12);
    // A phone's chart: room for four labels, so every third month.
    assert.deepEqual(bucketTicks(year, 4 * LABEL_ROOM_PX + 10), [year[0], year[3], year[6], year[9]]);
    // Room for five: still every third (every second would need six).
    assert.deepEqual(bucketTicks(year, 5 * LABEL_ROOM_PX), [year[0], year[3], year[6], year[9]]);
    assert.deepEqual(bucketTicks(year, 6 * LABEL_ROOM_PX), year.filter((_, i) => i % 2 === 0));
    // Too narrow for even one label: the first is still named.
    assert.deepEqual(bucketTicks(year, 10), [year[0]]);
  });

  it('labels nothing for no buckets', () => {
    assert.deepEqual(bucketTicks([], 600), []);
  });
});
