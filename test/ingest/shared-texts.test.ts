// SharedTexts (equal texts as one string) and what it is for: the live ingest thread's visits in progress, each of
// whose hits arrives as a copy of its own, hold less memory when they share their texts.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { NO_ATTRIBUTION } from '../../src/domain/hits.js';
import { SharedTexts } from '../../src/ingest/shared-texts.js';
import { VisitTracker, type VisitHit } from '../../src/ingest/visits.js';

describe('SharedTexts', () => {
  it('answers each text with an equal one and holds one string for equal texts', () => {
    const texts = new SharedTexts();
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 50; i++) assert.equal(texts.of(`/page-${i}`), `/page-${i}`);
    }
    assert.equal(texts.size, 50);
  });

  it('holds at most its maximum, starting again when full, and never long texts', () => {
    const texts = new SharedTexts(100);
    for (let i = 0; i < 1_000; i++) {
      texts.of(`/unique-${i}`);
      assert.ok(texts.size <= 100);
    }
    const long = `/${'x'.repeat(200)}`;
    const before = texts.size;
    assert.equal(texts.of(long), long);
    assert.equal(texts.size, before);
  });
});

describe('VisitTracker with shared texts', () => {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;

  /** Heap bytes a visit in progress keeps, for hits that each carry copies of their texts (as cloned messages do). */
  function heapPerVisit(tracker: VisitTracker, visits: number): number {
    const at = Date.parse('2026-03-04T12:00:00Z');
    const site = '6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
    gc();
    const before = process.memoryUsage().heapUsed;
    for (let i = 0; i < visits; i++) {
      const hit: VisitHit & { siteId: string } = structuredClone({
        type: 'pageview',
        timestamp: new Date(at + i),
        siteId: site,
        hostname: 'https://shop.example.com',
        pathname: `/products/item-${i % 300}`,
        ...NO_ATTRIBUTION,
        referrerHostname: 'www.google.com',
        referrerPathname: '/search',
        referrerSource: 'Google',
        utmSource: 'newsletter-2026',
      });
      tracker.record(hit.siteId, 1_000_000_007n * BigInt(i + 1), undefined, hit);
    }
    gc();
    const perVisit = (process.memoryUsage().heapUsed - before) / visits;
    assert.equal(tracker.activeVisits, visits); // the tracker is alive (and used) until after the measure
    return perVisit;
  }

  it('keeps visits in less memory than with each hit\'s own copies', () => {
    const copies = heapPerVisit(new VisitTracker(), 20_000);
    const shared = heapPerVisit(new VisitTracker({ sharedTexts: true }), 20_000);
    // Six texts a visit of 14-36 characters, each 32-56 bytes as a string of its own: at least 150 bytes a visit.
    assert.ok(copies - shared > 150, `copies ${copies.toFixed(0)} bytes a visit, shared ${shared.toFixed(0)}`);
  });
});
