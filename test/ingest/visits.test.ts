// VisitTracker: DESIGN.md section 6 visits (30-minute gap from the last hit, entry/exit, midnight, sweep, seed).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HitType, VisitRecord } from '../../src/domain/hits.js';
import { VISIT_TIMEOUT_MS, VisitTracker, type VisitHit } from '../../src/ingest/visits.js';

const SITE = 'SITEAAAA';
const A = 0xaaaan;
const B = 0xbbbbn;
const T0 = Date.parse('2026-03-04T12:00:00Z');
const MIN = 60_000;

function hit(at: number | string, overrides: Partial<VisitHit> & { type?: HitType } = {}): VisitHit {
  return {
    type: 'pageview',
    timestamp: new Date(typeof at === 'string' ? Date.parse(at) : at),
    hostname: 'https://example.com',
    pathname: '/',
    referrerHostname: '',
    referrerPathname: '',
    ...overrides,
  };
}

describe('VisitTracker', () => {
  it('uses a 30-minute timeout', () => {
    assert.equal(VISIT_TIMEOUT_MS, 30 * 60 * 1000);
  });

  it('continues a visit after a gap of 29:59 and of exactly 30:00', () => {
    for (const gap of [29 * MIN + 59_000, 30 * MIN]) {
      const t = new VisitTracker();
      const first = t.record(SITE, A, undefined, hit(T0));
      const second = t.record(SITE, A, undefined, hit(T0 + gap));
      assert.equal(second.visitId, first.visitId, `gap ${gap} ms`);
      assert.equal(second.pageviews, 2);
    }
  });

  it('starts a new visit after a gap of 30:00.001', () => {
    const t = new VisitTracker();
    const first = t.record(SITE, A, undefined, hit(T0));
    const second = t.record(SITE, A, undefined, hit(T0 + 30 * MIN + 1));
    assert.notEqual(second.visitId, first.visitId);
    assert.equal(second.pageviews, 1);
    assert.equal(second.startedAt.getTime(), T0 + 30 * MIN + 1);
  });

  it('measures the gap from the last hit, so a hit every 20 minutes keeps one visit for hours', () => {
    const t = new VisitTracker();
    const first = t.record(SITE, A, undefined, hit(T0));
    let last = first;
    for (let i = 1; i <= 12; i++) last = t.record(SITE, A, undefined, hit(T0 + i * 20 * MIN));
    assert.equal(last.visitId, first.visitId);
    assert.equal(last.pageviews, 13);
    assert.equal(last.lastSeenAt.getTime() - last.startedAt.getTime(), 4 * 60 * MIN);
  });

  it('keeps entry page, exit page, exit hostname, duration and counts', () => {
    const t = new VisitTracker();
    t.record(SITE, A, undefined, hit(T0, { pathname: '/in', hostname: 'https://a.example' }));
    t.record(SITE, A, undefined, hit(T0 + 1 * MIN, { pathname: '/middle' }));
    t.record(SITE, A, undefined, hit(T0 + 2 * MIN, { type: 'event', pathname: '/event-page', hostname: 'https://c.example' }));
    const v = t.record(SITE, A, undefined, hit(T0 + 3 * MIN, { pathname: '/out', hostname: 'https://b.example' }));
    const after = t.record(SITE, A, undefined, hit(T0 + 4 * MIN, { type: 'event', pathname: '/later-event', hostname: 'https://d.example' }));
    assert.equal(v.entryPage, '/in');
    assert.equal(v.exitPage, '/out');
    assert.equal(v.exitHostname, 'https://b.example');
    assert.equal(v.pageviews, 3);
    assert.equal(v.events, 1);
    // Events move lastSeenAt (the duration) but not the entry or exit page.
    assert.equal(after.entryPage, '/in');
    assert.equal(after.exitPage, '/out');
    assert.equal(after.exitHostname, 'https://b.example');
    assert.equal(after.pageviews, 3);
    assert.equal(after.events, 2);
    assert.equal(after.startedAt.getTime(), T0);
    assert.equal(after.lastSeenAt.getTime(), T0 + 4 * MIN);
    assert.equal(after.lastSeenAt.getTime() - after.startedAt.getTime(), 4 * MIN);
    assert.equal(after.visitorId, A);
    assert.equal(after.siteId, SITE);
  });

  it('leaves the entry page empty for a visit with only events, until its first pageview', () => {
    const t = new VisitTracker();
    const e1 = t.record(SITE, A, undefined, hit(T0, { type: 'event', pathname: '/x' }));
    const e2 = t.record(SITE, A, undefined, hit(T0 + MIN, { type: 'event', pathname: '/y' }));
    assert.equal(e2.visitId, e1.visitId);
    assert.equal(e2.entryPage, '');
    assert.equal(e2.exitPage, '');
    assert.equal(e2.exitHostname, '');
    assert.equal(e2.pageviews, 0);
    assert.equal(e2.events, 2);
    const p = t.record(SITE, A, undefined, hit(T0 + 2 * MIN, { pathname: '/first-page' }));
    assert.equal(p.entryPage, '/first-page');
    assert.equal(p.exitPage, '/first-page');
    assert.equal(p.startedAt.getTime(), T0);
  });

  it('fixes entry page and start time when an earlier pageview arrives later', () => {
    const t = new VisitTracker();
    const first = t.record(SITE, A, undefined, hit(T0 + 10 * MIN, { pathname: '/second' }));
    t.record(SITE, A, undefined, hit(T0 + 12 * MIN, { pathname: '/third' }));
    const late = t.record(SITE, A, undefined, hit(T0, { pathname: '/first' }));
    assert.equal(late.visitId, first.visitId);
    assert.equal(late.entryPage, '/first');
    assert.equal(late.exitPage, '/third');
    assert.equal(late.startedAt.getTime(), T0);
    assert.equal(late.lastSeenAt.getTime(), T0 + 12 * MIN);
    assert.equal(late.pageviews, 3);
  });

  it('takes the referrer of the first hit that had one', () => {
    const t = new VisitTracker();
    const none = t.record(SITE, A, undefined, hit(T0));
    assert.equal(none.referrerHostname, '');
    const first = t.record(SITE, A, undefined, hit(T0 + MIN, { referrerHostname: 'https://google.com', referrerPathname: '/search' }));
    const second = t.record(SITE, A, undefined, hit(T0 + 2 * MIN, { referrerHostname: 'https://bing.com', referrerPathname: '/' }));
    assert.equal(first.referrerHostname, 'https://google.com');
    assert.equal(second.referrerHostname, 'https://google.com');
    assert.equal(second.referrerPathname, '/search');
  });

  it('continues a visit across midnight through the previous day id, then under the new id alone', () => {
    const t = new VisitTracker();
    const before = t.record(SITE, A, undefined, hit('2026-03-04T23:50:00Z', { pathname: '/night' }));
    const crossing = t.record(SITE, B, A, hit('2026-03-05T00:05:00Z', { pathname: '/morning' }));
    assert.equal(crossing.visitId, before.visitId);
    assert.equal(crossing.entryPage, '/night');
    assert.equal(crossing.exitPage, '/morning');
    assert.equal(crossing.pageviews, 2);
    const later = t.record(SITE, B, undefined, hit('2026-03-05T00:20:00Z', { pathname: '/later' }));
    assert.equal(later.visitId, before.visitId);
    assert.equal(later.pageviews, 3);
    assert.equal(later.startedAt.toISOString(), '2026-03-04T23:50:00.000Z');
    assert.equal(t.activeVisits, 1);
  });

  it('starts a new visit for the same id pair after more than 30 minutes', () => {
    const t = new VisitTracker();
    const before = t.record(SITE, A, undefined, hit('2026-03-04T23:50:00Z'));
    const crossing = t.record(SITE, B, A, hit('2026-03-05T00:05:00Z'));
    assert.equal(crossing.visitId, before.visitId);
    const fresh = t.record(SITE, B, A, hit('2026-03-05T00:35:00.001Z'));
    assert.notEqual(fresh.visitId, before.visitId);
    assert.equal(fresh.pageviews, 1);
    // The new visit goes on under the new id.
    const next = t.record(SITE, B, A, hit('2026-03-05T00:40:00Z'));
    assert.equal(next.visitId, fresh.visitId);
  });

  it('does not continue a midnight visit through the previous id once the gap is over 30 minutes', () => {
    const t = new VisitTracker();
    const before = t.record(SITE, A, undefined, hit('2026-03-04T23:30:00Z'));
    const after = t.record(SITE, B, A, hit('2026-03-05T00:00:00.001Z'));
    assert.notEqual(after.visitId, before.visitId);
  });

  it('keeps visits of different sites apart for the same visitor id', () => {
    const t = new VisitTracker();
    const one = t.record('SITEONEE', A, undefined, hit(T0, { pathname: '/one' }));
    const two = t.record('SITETWOO', A, undefined, hit(T0 + MIN, { pathname: '/two' }));
    assert.notEqual(one.visitId, two.visitId);
    assert.equal(two.entryPage, '/two');
    assert.equal(two.pageviews, 1);
    const again = t.record('SITEONEE', A, undefined, hit(T0 + 2 * MIN, { pathname: '/one-again' }));
    assert.equal(again.visitId, one.visitId);
    assert.equal(again.pageviews, 2);
    assert.equal(t.activeVisits, 2);
  });

  it('returns a copy of the visit state, not a live reference', () => {
    const t = new VisitTracker();
    const first = t.record(SITE, A, undefined, hit(T0, { pathname: '/a' }));
    t.record(SITE, A, undefined, hit(T0 + MIN, { pathname: '/b' }));
    assert.equal(first.pageviews, 1);
    assert.equal(first.exitPage, '/a');
  });

  it('sweep() forgets idle visits and returns how many', () => {
    const t = new VisitTracker();
    const idle1 = t.record(SITE, A, undefined, hit(T0));
    t.record(SITE, B, undefined, hit(T0 + 5 * MIN));
    t.record(SITE, 0xccccn, undefined, hit(T0 + 40 * MIN));
    assert.equal(t.activeVisits, 3);
    assert.equal(t.sweep(new Date(T0 + 30 * MIN)), 0, 'a visit exactly 30 minutes idle is kept');
    assert.equal(t.sweep(new Date(T0 + 36 * MIN)), 2);
    assert.equal(t.activeVisits, 1);
    // A forgotten visit is not continued: the next hit starts a new one (even though it is within 30 min of nothing).
    const again = t.record(SITE, A, undefined, hit(T0 + 36 * MIN));
    assert.notEqual(again.visitId, idle1.visitId);
    assert.equal(t.sweep(new Date(T0 + 36 * MIN)), 0);
  });

  it(
    'sweep() counts a visit that crossed midnight (reachable under two ids) once',
    () => {
      const t = new VisitTracker();
      t.record(SITE, A, undefined, hit('2026-03-04T23:50:00Z'));
      t.record(SITE, B, A, hit('2026-03-05T00:05:00Z'));
      assert.equal(t.activeVisits, 1);
      assert.equal(t.sweep(new Date('2026-03-05T01:00:00Z')), 1);
      assert.equal(t.activeVisits, 0);
    },
  );

  it('seed() resumes stored visits: a hit within 30 minutes continues, one after does not', () => {
    const stored: VisitRecord = {
      siteId: SITE,
      visitId: 123456789n,
      visitorId: A,
      startedAt: new Date(T0),
      lastSeenAt: new Date(T0 + 10 * MIN),
      entryPage: '/start',
      exitPage: '/middle',
      exitHostname: 'https://example.com',
      pageviews: 2,
      events: 1,
      pathsExact: true,
      referrerHostname: 'https://news.example',
      referrerPathname: '/item',
    };
    const t = new VisitTracker();
    t.seed([stored]);
    assert.equal(t.activeVisits, 1);
    const next = t.record(SITE, A, undefined, hit(T0 + 40 * MIN, { pathname: '/end' }));
    assert.equal(next.visitId, 123456789n);
    assert.equal(next.entryPage, '/start');
    assert.equal(next.exitPage, '/end');
    assert.equal(next.pageviews, 3);
    assert.equal(next.events, 1);
    assert.equal(next.referrerHostname, 'https://news.example');
    assert.equal(next.startedAt.getTime(), T0);
    // The seeded record itself is not changed.
    assert.equal(stored.pageviews, 2);

    const late = new VisitTracker();
    late.seed([stored]);
    const fresh = late.record(SITE, A, undefined, hit(T0 + 40 * MIN + 1));
    assert.notEqual(fresh.visitId, 123456789n);
    assert.equal(fresh.pageviews, 1);
  });

  it('seed() keeps the latest of two records for the same visitor', () => {
    const base: VisitRecord = {
      siteId: SITE, visitId: 1n, visitorId: A, startedAt: new Date(T0), lastSeenAt: new Date(T0),
      entryPage: '/', exitPage: '/', exitHostname: 'https://example.com', pageviews: 1, events: 0, pathsExact: true,
      referrerHostname: '', referrerPathname: '',
    };
    const newer: VisitRecord = { ...base, visitId: 2n, startedAt: new Date(T0 + 40 * MIN), lastSeenAt: new Date(T0 + 45 * MIN) };
    const t = new VisitTracker();
    t.seed([newer, base]);
    assert.equal(t.record(SITE, A, undefined, hit(T0 + 50 * MIN)).visitId, 2n);
  });

  describe('first views of pages', () => {
    const page = (at: number, pathname: string) => ({ ...hit(at), pathname });

    it('flags the first view of each pathname in a visit, not repeats and not events', () => {
      const t = new VisitTracker();
      const flags = [
        t.record(SITE, A, undefined, page(T0, '/a')),
        t.record(SITE, A, undefined, page(T0 + MIN, '/b')),
        t.record(SITE, A, undefined, page(T0 + 2 * MIN, '/a')),
        t.record(SITE, A, undefined, { ...page(T0 + 3 * MIN, '/c'), type: 'event' }),
        t.record(SITE, A, undefined, page(T0 + 4 * MIN, '/c')),
      ].map((v) => v.firstView);
      assert.deepEqual(flags, [true, true, false, false, true]);
      assert.equal(t.record(SITE, A, undefined, page(T0 + 5 * MIN, '/d')).pathsExact, true);
      // A new visit starts its own set of pages.
      assert.equal(t.record(SITE, A, undefined, page(T0 + 40 * MIN, '/a')).firstView, true);
    });

    it('gives up exact flags when a view arrives earlier than the flagged one', () => {
      const t = new VisitTracker();
      t.record(SITE, A, undefined, page(T0 + 5 * MIN, '/a'));
      const early = t.record(SITE, A, undefined, page(T0, '/a'));
      assert.equal(early.pathsExact, false);
      assert.equal(t.record(SITE, A, undefined, page(T0 + 6 * MIN, '/b')).pathsExact, false, 'stays given up');
    });

    it('gives up exact flags for resumed visits and for visits with too many pages', () => {
      const resumed = new VisitTracker();
      const first = new VisitTracker().record(SITE, A, undefined, page(T0, '/a'));
      resumed.seed([first]);
      assert.equal(resumed.record(SITE, A, undefined, page(T0 + MIN, '/b')).pathsExact, false);

      const t = new VisitTracker();
      let last = t.record(SITE, A, undefined, page(T0, '/p0'));
      for (let i = 1; i <= 1000; i++) last = t.record(SITE, A, undefined, page(T0 + i, `/p${i}`));
      assert.equal(last.pathsExact, false);
      assert.equal(last.firstView, false);
    });
  });
});
