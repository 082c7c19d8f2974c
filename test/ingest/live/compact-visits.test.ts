// CompactVisitTracker against VisitTracker: the same hits (many visitors, midnight, events, hits out of order,
// sweeps) give the same visits, through the table's growth, its index's rebuilds and its shrinking; and it keeps a
// visit in progress in far less memory.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { NO_ATTRIBUTION } from '../../../src/domain/hits.js';
import { CompactVisitTracker } from '../../../src/ingest/live/compact-visits.js';
import { VisitTracker, type RecordedVisit, type VisitHit } from '../../../src/ingest/visits.js';

const T0 = Date.parse('2026-03-04T22:00:00Z');
const MIN = 60_000;
const SITES = ['SITEAAAA', 'SITEBBBB', 'SITECCCC'];

/** A small seeded generator (mulberry32): the same hits in every run. */
function random(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Visitor hashes spread over all 64 bits, some sharing their low or high half. */
const visitorId = (n: number): bigint => (BigInt(n % 7) << 32n) | BigInt((n * 2654435761) >>> 0) | (n % 3 === 0 ? 1n << 63n : 0n);

describe('CompactVisitTracker', () => {
  it('records the same visits as VisitTracker for the same hits, through growth, sweeps and shrinking', () => {
    const next = random(15);
    const objects = new VisitTracker();
    const table = new CompactVisitTracker();
    // Visit ids are random in each tracker: the first visit id one gives is paired with the other's.
    const pairs = new Map<bigint, bigint>();
    const paired = new Set<bigint>();
    let at = T0;
    let compared = 0;
    const check = (a: RecordedVisit, b: RecordedVisit, what: string) => {
      const pair = pairs.get(a.visitId);
      if (pair === undefined) {
        assert.ok(!paired.has(b.visitId), `${what}: a visit id paired twice`);
        pairs.set(a.visitId, b.visitId);
        paired.add(b.visitId);
      } else assert.equal(b.visitId, pair, what);
      assert.deepEqual({ ...b, visitId: a.visitId }, a, what);
      compared++;
    };
    // Three phases: a crowd (the table grows to thousands of rows), a quiet spell swept away (it shrinks), a crowd again.
    for (const [phase, hits, visitors] of [['crowd', 12_000, 5_000], ['quiet', 2_000, 300], ['crowd again', 12_000, 8_000]] as const) {
      for (let i = 0; i < hits; i++) {
        at += Math.floor(next() * 900);
        const n = Math.floor(next() * visitors);
        const siteId = SITES[n % SITES.length]!;
        // After midnight a visitor has a new hash, and yesterday's is asked too.
        const day = Math.floor(at / 86_400_000);
        const current = visitorId(n + day * 100_003);
        const previous = next() < 0.9 ? visitorId(n + (day - 1) * 100_003) : undefined;
        const late = next() < 0.05 ? Math.floor(next() * 10 * MIN) : 0;
        const hit: VisitHit = {
          type: next() < 0.15 ? 'event' : 'pageview',
          timestamp: new Date(at - late),
          hostname: `https://${n % 2 ? 'www.' : ''}example.com`,
          pathname: `/p${Math.floor(next() * 40)}`,
          ...NO_ATTRIBUTION,
          ...(next() < 0.3 ? { referrerHostname: `https://ref${n % 5}.example`, referrerSource: `Ref ${n % 5}`, utmSource: n % 2 ? 'news' : '' } : {}),
        };
        check(objects.record(siteId, current, previous, hit), table.record(siteId, current, previous, hit), `${phase}, hit ${i}`);
        if (i % 1000 === 999) {
          assert.equal(table.sweep(new Date(at)), objects.sweep(new Date(at)), `${phase}: swept visits`);
          assert.equal(table.activeVisits, objects.activeVisits, `${phase}: active visits`);
        }
      }
      if (phase === 'quiet') {
        at += 31 * MIN;
        assert.equal(table.sweep(new Date(at)), objects.sweep(new Date(at)));
        assert.equal(table.activeVisits, 0);
      }
    }
    assert.equal(compared, 26_000);
    assert.ok(pairs.size > 10_000, `${pairs.size} visits`);
  });

  it('shrinks its table once most visits are gone, and keeps the rest reachable', () => {
    const table = new CompactVisitTracker();
    const hit = (at: number, pathname: string): VisitHit => ({ type: 'pageview', timestamp: new Date(at), hostname: 'https://example.com', pathname, ...NO_ATTRIBUTION });
    const first = new Map<number, bigint>();
    for (let n = 0; n < 20_000; n++) first.set(n, table.record('SITEAAAA', BigInt(n), undefined, hit(T0 + (n < 100 ? 20 * MIN : 0), '/a')).visitId);
    const grown = table.columns.capacity;
    assert.ok(grown >= 20_000);
    assert.equal(table.sweep(new Date(T0 + 31 * MIN)), 19_900);
    assert.ok(table.columns.capacity < grown / 8, `capacity ${table.columns.capacity} after ${grown}`);
    for (let n = 0; n < 100; n++) {
      const again = table.record('SITEAAAA', BigInt(n), undefined, hit(T0 + 21 * MIN, '/b'));
      assert.equal(again.visitId, first.get(n));
      assert.equal(again.pageviews, 2);
      assert.equal(again.firstView, true, 'its pages are still known');
    }
  });

  describe('memory', () => {
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;

    /** Bytes (heap and array buffers) a visit in progress keeps, for hits that each carry copies of their texts. */
    function bytesPerVisit(tracker: VisitTracker | CompactVisitTracker, visits: number): number {
      const site = '6f1b2c3d-4e5f-4a6b-8c7d-9e0f1a2b3c4d';
      const used = () => {
        const m = process.memoryUsage();
        return m.heapUsed + m.arrayBuffers;
      };
      gc();
      const before = used();
      for (let i = 0; i < visits; i++) {
        const hit: VisitHit & { siteId: string } = structuredClone({
          type: 'pageview',
          timestamp: new Date(T0 + i),
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
      const perVisit = (used() - before) / visits;
      assert.equal(tracker.activeVisits, visits); // the tracker is alive (and used) until after the measure
      return perVisit;
    }

    it('keeps a visit in progress in under a third of the memory of an object, sharing its texts', () => {
      // 2^16 visits: the table is full, not just grown (its capacity doubles).
      const objects = bytesPerVisit(new VisitTracker(), 65_536);
      const table = bytesPerVisit(new CompactVisitTracker(), 65_536);
      // About 135 against 607 bytes (2026-12-06, with journeys); without shared texts a row would hold its own site id, page and host (over 200).
      assert.ok(table < objects / 3, `objects ${objects.toFixed(0)} bytes a visit, table ${table.toFixed(0)}`);
    });
  });
});
