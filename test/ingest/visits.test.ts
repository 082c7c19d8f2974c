// Visit rules of DESIGN.md section 6 (30-minute gap from the last hit, entry/exit, midnight, first views), one set
// of tests run on every visit state: VisitTracker and CompactVisitTracker (process memory) and SharedVisitTracker on
// real Redis. Then the memory trackers' sweep and seed, and what only shared state must survive: concurrent hits from
// two processes.

import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { randomBytes } from 'node:crypto';
import { NO_ATTRIBUTION, type HitType, type VisitRecord } from '../../src/domain/hits.js';
import {
  randomVisitId, SharedVisitTracker, VISIT_ID_DAY_BITS, VISIT_TIMEOUT_MS, visitIdDay, visitorKey, VisitTracker, type VisitHit, type VisitState,
} from '../../src/ingest/visits.js';
import { RedisVisitStateStore } from '../../src/store/redis/visit-state.js';
import { CompactVisitTracker } from '../../src/ingest/live/compact-visits.js';
import { REDIS_URL } from '../helpers/redis.js';

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
    ...NO_ATTRIBUTION,
    ...overrides,
  };
}

/** Redis stores opened by the tests, each under a prefix of its own, cleared and closed at the end. */
const stores: RedisVisitStateStore[] = [];
const redisStore = () => {
  const store = new RedisVisitStateStore(REDIS_URL, `plumb-test-visits-${randomBytes(6).toString('hex')}:`);
  stores.push(store);
  return store;
};
after(async () => {
  for (const store of stores) {
    await store.clear();
    await store.close();
  }
});

const TRACKERS: [string, () => VisitState][] = [
  ['VisitTracker (memory)', () => new VisitTracker()],
  ['CompactVisitTracker (memory, a table)', () => new CompactVisitTracker()],
  ['SharedVisitTracker (Redis)', () => new SharedVisitTracker(redisStore())],
];

for (const [name, make] of TRACKERS) describe(name, () => {
  it('uses a 30-minute timeout', async () => {
    assert.equal(VISIT_TIMEOUT_MS, 30 * 60 * 1000);
  });

  it('continues a visit after a gap of 29:59 and of exactly 30:00', async () => {
    for (const gap of [29 * MIN + 59_000, 30 * MIN]) {
      const t = make();
      const first = await t.record(SITE, A, undefined, hit(T0));
      const second = await t.record(SITE, A, undefined, hit(T0 + gap));
      assert.equal(second.visitId, first.visitId, `gap ${gap} ms`);
      assert.equal(second.pageviews, 2);
    }
  });

  it('starts a new visit after a gap of 30:00.001', async () => {
    const t = make();
    const first = await t.record(SITE, A, undefined, hit(T0));
    const second = await t.record(SITE, A, undefined, hit(T0 + 30 * MIN + 1));
    assert.notEqual(second.visitId, first.visitId);
    assert.equal(second.pageviews, 1);
    assert.equal(second.startedAt.getTime(), T0 + 30 * MIN + 1);
  });

  it('measures the gap from the last hit, so a hit every 20 minutes keeps one visit for hours', async () => {
    const t = make();
    const first = await t.record(SITE, A, undefined, hit(T0));
    let last = first;
    for (let i = 1; i <= 12; i++) last = await t.record(SITE, A, undefined, hit(T0 + i * 20 * MIN));
    assert.equal(last.visitId, first.visitId);
    assert.equal(last.pageviews, 13);
    assert.equal(last.lastSeenAt.getTime() - last.startedAt.getTime(), 4 * 60 * MIN);
  });

  it('keeps entry page, exit page, exit hostname, duration and counts', async () => {
    const t = make();
    await t.record(SITE, A, undefined, hit(T0, { pathname: '/in', hostname: 'https://a.example' }));
    await t.record(SITE, A, undefined, hit(T0 + 1 * MIN, { pathname: '/middle' }));
    await t.record(SITE, A, undefined, hit(T0 + 2 * MIN, { type: 'event', pathname: '/event-page', hostname: 'https://c.example' }));
    const v = await t.record(SITE, A, undefined, hit(T0 + 3 * MIN, { pathname: '/out', hostname: 'https://b.example' }));
    const after = await t.record(SITE, A, undefined, hit(T0 + 4 * MIN, { type: 'event', pathname: '/later-event', hostname: 'https://d.example' }));
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

  it('leaves the entry page empty for a visit with only events, until its first pageview', async () => {
    const t = make();
    const e1 = await t.record(SITE, A, undefined, hit(T0, { type: 'event', pathname: '/x' }));
    const e2 = await t.record(SITE, A, undefined, hit(T0 + MIN, { type: 'event', pathname: '/y' }));
    assert.equal(e2.visitId, e1.visitId);
    assert.equal(e2.entryPage, '');
    assert.equal(e2.exitPage, '');
    assert.equal(e2.exitHostname, '');
    assert.equal(e2.pageviews, 0);
    assert.equal(e2.events, 2);
    const p = await t.record(SITE, A, undefined, hit(T0 + 2 * MIN, { pathname: '/first-page' }));
    assert.equal(p.entryPage, '/first-page');
    assert.equal(p.exitPage, '/first-page');
    assert.equal(p.startedAt.getTime(), T0);
  });

  it('fixes entry page and start time when an earlier pageview arrives later', async () => {
    const t = make();
    const first = await t.record(SITE, A, undefined, hit(T0 + 10 * MIN, { pathname: '/second' }));
    await t.record(SITE, A, undefined, hit(T0 + 12 * MIN, { pathname: '/third' }));
    const late = await t.record(SITE, A, undefined, hit(T0, { pathname: '/first' }));
    assert.equal(late.visitId, first.visitId);
    assert.equal(late.entryPage, '/first');
    assert.equal(late.exitPage, '/third');
    assert.equal(late.startedAt.getTime(), T0);
    assert.equal(late.lastSeenAt.getTime(), T0 + 12 * MIN);
    assert.equal(late.pageviews, 3);
  });

  it("numbers a visit's id by the UTC day it started, and keeps the id when a late hit or midnight moves the day", async () => {
    const t = make();
    const dayOf = (id: bigint) => Number(id >> (64n - VISIT_ID_DAY_BITS));
    const beforeMidnight = Date.parse('2026-03-04T23:50:00Z');
    const first = await t.record(SITE, A, undefined, hit(beforeMidnight));
    assert.equal(dayOf(first.visitId), Math.floor(beforeMidnight / 86_400_000) % 4096);
    // Past midnight under the new day's visitor id, then a late hit from the day before: one visit, one id.
    const next = await t.record(SITE, B, A, hit(beforeMidnight + 15 * MIN));
    const late = await t.record(SITE, B, A, hit(beforeMidnight - 20 * MIN));
    assert.deepEqual([next.visitId, late.visitId], [first.visitId, first.visitId]);
    // Another visit of the next day: the next day's number.
    const other = await t.record(SITE, 0xccccn, undefined, hit(beforeMidnight + 20 * MIN));
    assert.equal(dayOf(other.visitId), dayOf(first.visitId) + 1);
  });

  it("takes the whole attribution from the visit's first hit; later referrers and campaigns change nothing", async () => {
    const t = make();
    const campaign = { referrerHostname: 'https://news.ycombinator.com', referrerPathname: '/item', referrerSource: 'Hacker News', utmSource: 'hn', utmCampaign: 'launch', ref: 'x' };
    const first = await t.record(SITE, A, undefined, hit(T0, campaign));
    const second = await t.record(SITE, A, undefined, hit(T0 + MIN, { referrerHostname: 'https://bing.com', referrerPathname: '/', referrerSource: 'Bing', utmSource: 'ads', utmMedium: 'cpc', keyword: 'k' }));
    const event = await t.record(SITE, A, undefined, hit(T0 + 2 * MIN, { type: 'event' }));
    const expected = { ...NO_ATTRIBUTION, ...campaign };
    for (const v of [first, second, event]) {
      assert.deepEqual(Object.fromEntries(Object.keys(NO_ATTRIBUTION).map((k) => [k, v[k as keyof typeof NO_ATTRIBUTION]])), expected);
      assert.equal(v.visitId, first.visitId, 'a new referrer does not start a new visit');
    }
  });

  it('a visit whose first hit has no referrer keeps none, even when a later hit has one', async () => {
    const t = make();
    await t.record(SITE, A, undefined, hit(T0));
    const later = await t.record(SITE, A, undefined, hit(T0 + MIN, { referrerHostname: 'https://google.com', referrerPathname: '/search', referrerSource: 'Google', utmSource: 'g' }));
    assert.equal(later.referrerHostname, '');
    assert.equal(later.utmSource, '');
  });

  it("a visit starting with an event takes the event's attribution", async () => {
    const t = make();
    await t.record(SITE, A, undefined, hit(T0, { type: 'event', utmSource: 'newsletter' }));
    const page = await t.record(SITE, A, undefined, hit(T0 + MIN, { utmSource: 'other' }));
    assert.equal(page.utmSource, 'newsletter');
  });

  it('continues a visit across midnight through the previous day id, then under the new id alone', async () => {
    const t = make();
    const before = await t.record(SITE, A, undefined, hit('2026-03-04T23:50:00Z', { pathname: '/night' }));
    const crossing = await t.record(SITE, B, A, hit('2026-03-05T00:05:00Z', { pathname: '/morning' }));
    assert.equal(crossing.visitId, before.visitId);
    assert.equal(crossing.entryPage, '/night');
    assert.equal(crossing.exitPage, '/morning');
    assert.equal(crossing.pageviews, 2);
    const later = await t.record(SITE, B, undefined, hit('2026-03-05T00:20:00Z', { pathname: '/later' }));
    assert.equal(later.visitId, before.visitId);
    assert.equal(later.pageviews, 3);
    assert.equal(later.startedAt.toISOString(), '2026-03-04T23:50:00.000Z');
  });

  it('starts a new visit for the same id pair after more than 30 minutes', async () => {
    const t = make();
    const before = await t.record(SITE, A, undefined, hit('2026-03-04T23:50:00Z'));
    const crossing = await t.record(SITE, B, A, hit('2026-03-05T00:05:00Z'));
    assert.equal(crossing.visitId, before.visitId);
    const fresh = await t.record(SITE, B, A, hit('2026-03-05T00:35:00.001Z'));
    assert.notEqual(fresh.visitId, before.visitId);
    assert.equal(fresh.pageviews, 1);
    // The new visit goes on under the new id.
    const next = await t.record(SITE, B, A, hit('2026-03-05T00:40:00Z'));
    assert.equal(next.visitId, fresh.visitId);
  });

  it('does not continue a midnight visit through the previous id once the gap is over 30 minutes', async () => {
    const t = make();
    const before = await t.record(SITE, A, undefined, hit('2026-03-04T23:30:00Z'));
    const after = await t.record(SITE, B, A, hit('2026-03-05T00:00:00.001Z'));
    assert.notEqual(after.visitId, before.visitId);
  });

  it('keeps visits of different sites apart for the same visitor id', async () => {
    const t = make();
    const one = await t.record('SITEONEE', A, undefined, hit(T0, { pathname: '/one' }));
    const two = await t.record('SITETWOO', A, undefined, hit(T0 + MIN, { pathname: '/two' }));
    assert.notEqual(one.visitId, two.visitId);
    assert.equal(two.entryPage, '/two');
    assert.equal(two.pageviews, 1);
    const again = await t.record('SITEONEE', A, undefined, hit(T0 + 2 * MIN, { pathname: '/one-again' }));
    assert.equal(again.visitId, one.visitId);
    assert.equal(again.pageviews, 2);
  });

  it('returns a copy of the visit state, not a live reference', async () => {
    const t = make();
    const first = await t.record(SITE, A, undefined, hit(T0, { pathname: '/a' }));
    await t.record(SITE, A, undefined, hit(T0 + MIN, { pathname: '/b' }));
    assert.equal(first.pageviews, 1);
    assert.equal(first.exitPage, '/a');
  });

  describe('first views of pages', () => {
    const page = (at: number, pathname: string) => ({ ...hit(at), pathname });

    it('flags the first view of each pathname in a visit, not repeats and not events', async () => {
      const t = make();
      const flags = [
        await t.record(SITE, A, undefined, page(T0, '/a')),
        await t.record(SITE, A, undefined, page(T0 + MIN, '/b')),
        await t.record(SITE, A, undefined, page(T0 + 2 * MIN, '/a')),
        await t.record(SITE, A, undefined, { ...page(T0 + 3 * MIN, '/c'), type: 'event' }),
        await t.record(SITE, A, undefined, page(T0 + 4 * MIN, '/c')),
      ].map((v) => v.firstView);
      assert.deepEqual(flags, [true, true, false, false, true]);
      assert.equal((await t.record(SITE, A, undefined, page(T0 + 5 * MIN, '/d'))).pathsExact, true);
      // A new visit starts its own set of pages.
      assert.equal((await t.record(SITE, A, undefined, page(T0 + 40 * MIN, '/a'))).firstView, true);
    });

    it('knows the entry page without a list of pages, also after events and views out of order', async () => {
      const t = make();
      const flags = [
        await t.record(SITE, A, undefined, { ...page(T0, '/e'), type: 'event' }),
        await t.record(SITE, A, undefined, page(T0 + 2 * MIN, '/a')),
        await t.record(SITE, A, undefined, page(T0 + 3 * MIN, '/a')),
        await t.record(SITE, A, undefined, page(T0 + MIN, '/b')),
        await t.record(SITE, A, undefined, page(T0 + 4 * MIN, '/b')),
        await t.record(SITE, A, undefined, page(T0 + 5 * MIN, '/a')),
      ];
      assert.deepEqual(flags.map((v) => v.firstView), [false, true, false, true, false, false]);
      assert.deepEqual(flags.map((v) => v.entryPage), ['', '/a', '/a', '/b', '/b', '/b']);
      assert.equal(flags.at(-1)!.pathsExact, true);
    });

    it('gives up exact flags when a view arrives earlier than the flagged one', async () => {
      const t = make();
      await t.record(SITE, A, undefined, page(T0 + 5 * MIN, '/a'));
      const early = await t.record(SITE, A, undefined, page(T0, '/a'));
      assert.equal(early.pathsExact, false);
      assert.equal((await t.record(SITE, A, undefined, page(T0 + 6 * MIN, '/b'))).pathsExact, false, 'stays given up');
    });

    it('records the journey: pages in time order, a page repeated right after itself once, events left out', async () => {
      const t = make();
      const states = [
        await t.record(SITE, A, undefined, { ...page(T0, '/e'), type: 'event' }),
        await t.record(SITE, A, undefined, page(T0 + MIN, '/a')),
        await t.record(SITE, A, undefined, page(T0 + 2 * MIN, '/a')),
        await t.record(SITE, A, undefined, page(T0 + 3 * MIN, '/b')),
        await t.record(SITE, A, undefined, { ...page(T0 + 4 * MIN, '/x'), type: 'event' }),
        await t.record(SITE, A, undefined, page(T0 + 5 * MIN, '/a')),
        await t.record(SITE, A, undefined, page(T0 + 5 * MIN, '/a')),
      ];
      assert.deepEqual(states.map((v) => v.journeyLength), [0, 1, 1, 2, 2, 3, 3]);
      assert.deepEqual(states.map((v) => v.journeyPages), [[], [], [], ['/b'], ['/b'], ['/b', '/a'], ['/b', '/a']]);
      // Up to five pages are kept; the length counts on to six (a seventh page changes nothing).
      let last = states.at(-1)!;
      for (const [i, path] of ['/c', '/d', '/e', '/f'].entries()) last = await t.record(SITE, A, undefined, page(T0 + (6 + i) * MIN, path));
      assert.equal(last.journeyLength, 6);
      assert.deepEqual(last.journeyPages, ['/b', '/a', '/c', '/d']);
      assert.equal(last.entryPage, '/a');
      // A new visit has a journey of its own.
      const next = await t.record(SITE, A, undefined, page(T0 + 60 * MIN, '/z'));
      assert.equal(next.journeyLength, 1);
      assert.deepEqual(next.journeyPages, []);
    });

    it('leaves the journey not known after a pageview out of time order, or another page at the same millisecond', async () => {
      for (const [at, path] of [[T0 + MIN, '/c'], [T0 + 2 * MIN, '/c']] as const) {
        const t = make();
        await t.record(SITE, A, undefined, page(T0, '/a'));
        await t.record(SITE, A, undefined, page(T0 + 2 * MIN, '/b'));
        const broken = await t.record(SITE, A, undefined, page(at, path));
        assert.equal(broken.journeyLength, 0, `${path} at +${(at - T0) / MIN} min`);
        assert.deepEqual(broken.journeyPages, []);
        const later = await t.record(SITE, A, undefined, page(T0 + 5 * MIN, '/d'));
        assert.equal(later.journeyLength, 0, 'stays not known');
        assert.equal(later.pageviews, 4);
      }
      // The same page again at the same millisecond is a repeat: the journey is still known.
      const t = make();
      await t.record(SITE, A, undefined, page(T0, '/a'));
      const repeat = await t.record(SITE, A, undefined, page(T0, '/a'));
      assert.equal(repeat.journeyLength, 1);
    });

    it('gives up exact flags for visits with too many pages', async () => {
      const t = make();
      let last = await t.record(SITE, A, undefined, page(T0, '/p0'));
      for (let i = 1; i <= 1000; i++) last = await t.record(SITE, A, undefined, page(T0 + i, `/p${i}`));
      assert.equal(last.pathsExact, false);
      assert.equal(last.firstView, false);
    });
  });
});

const LOCAL_TRACKERS: [string, () => VisitTracker | CompactVisitTracker][] = [
  ['VisitTracker', () => new VisitTracker()],
  ['CompactVisitTracker', () => new CompactVisitTracker()],
];

for (const [name, make] of LOCAL_TRACKERS) describe(`${name}: memory only`, () => {
  it('counts active visits once each, also one reachable under two ids after midnight', () => {
    const t = make();
    t.record(SITE, A, undefined, hit('2026-03-04T23:50:00Z'));
    t.record(SITE, B, A, hit('2026-03-05T00:05:00Z'));
    t.record('SITETWOO', A, undefined, hit('2026-03-05T00:06:00Z'));
    assert.equal(t.activeVisits, 2);
  });

  it('gives up exact first-view flags for resumed visits (their pages are not stored)', () => {
    const resumed = make();
    const first = make().record(SITE, A, undefined, hit(T0, { pathname: '/a' }));
    resumed.seed([first]);
    const next = resumed.record(SITE, A, undefined, hit(T0 + MIN, { pathname: '/b' }));
    assert.equal(next.pathsExact, false);
    assert.equal(next.journeyLength, 0, 'nor its journey');
  });

  it('sweep() forgets idle visits and returns how many', async () => {
    const t = make();
    const idle1 = await t.record(SITE, A, undefined, hit(T0));
    await t.record(SITE, B, undefined, hit(T0 + 5 * MIN));
    await t.record(SITE, 0xccccn, undefined, hit(T0 + 40 * MIN));
    assert.equal(t.activeVisits, 3);
    assert.equal(t.sweep(new Date(T0 + 30 * MIN)), 0, 'a visit exactly 30 minutes idle is kept');
    assert.equal(t.sweep(new Date(T0 + 36 * MIN)), 2);
    assert.equal(t.activeVisits, 1);
    // A forgotten visit is not continued: the next hit starts a new one (even though it is within 30 min of nothing).
    const again = await t.record(SITE, A, undefined, hit(T0 + 36 * MIN));
    assert.notEqual(again.visitId, idle1.visitId);
    assert.equal(t.sweep(new Date(T0 + 36 * MIN)), 0);
  });

  it(
    'sweep() counts a visit that crossed midnight (reachable under two ids) once',
    async () => {
      const t = make();
      await t.record(SITE, A, undefined, hit('2026-03-04T23:50:00Z'));
      await t.record(SITE, B, A, hit('2026-03-05T00:05:00Z'));
      assert.equal(t.activeVisits, 1);
      assert.equal(t.sweep(new Date('2026-03-05T01:00:00Z')), 1);
      assert.equal(t.activeVisits, 0);
    },
  );

  it('seed() resumes stored visits: a hit within 30 minutes continues, one after does not', async () => {
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
      journeyLength: 2,
      journeyPages: ['/middle'],
      ...NO_ATTRIBUTION,
      referrerHostname: 'https://news.example',
      referrerPathname: '/item',
      utmSource: 'hn',
    };
    const t = make();
    t.seed([stored]);
    assert.equal(t.activeVisits, 1);
    const next = await t.record(SITE, A, undefined, hit(T0 + 40 * MIN, { pathname: '/end' }));
    assert.equal(next.visitId, 123456789n);
    assert.equal(next.entryPage, '/start');
    assert.equal(next.exitPage, '/end');
    assert.equal(next.pageviews, 3);
    assert.equal(next.events, 1);
    assert.equal(next.referrerHostname, 'https://news.example');
    assert.equal(next.utmSource, 'hn');
    assert.equal(next.startedAt.getTime(), T0);
    // Its journey before the restart is stored, but not the times of its pages: no longer known.
    assert.equal(next.journeyLength, 0);
    assert.deepEqual(next.journeyPages, []);
    // The seeded record itself is not changed.
    assert.equal(stored.pageviews, 2);

    const late = make();
    late.seed([stored]);
    const fresh = await late.record(SITE, A, undefined, hit(T0 + 40 * MIN + 1));
    assert.notEqual(fresh.visitId, 123456789n);
    assert.equal(fresh.pageviews, 1);
  });

  it('seed() keeps the latest of two records for the same visitor', async () => {
    const base: VisitRecord = {
      siteId: SITE, visitId: 1n, visitorId: A, startedAt: new Date(T0), lastSeenAt: new Date(T0),
      entryPage: '/', exitPage: '/', exitHostname: 'https://example.com', pageviews: 1, events: 0, pathsExact: true,
      journeyLength: 1, journeyPages: [], ...NO_ATTRIBUTION,
    };
    const newer: VisitRecord = { ...base, visitId: 2n, startedAt: new Date(T0 + 40 * MIN), lastSeenAt: new Date(T0 + 45 * MIN) };
    const t = make();
    t.seed([newer, base]);
    assert.equal((await t.record(SITE, A, undefined, hit(T0 + 50 * MIN))).visitId, 2n);
  });

});

describe('SharedVisitTracker: several processes', () => {
  // Each tracker has its own Redis connection, as two Plumb processes would; they share only the store's prefix.
  const twoProcesses = () => {
    const prefix = `plumb-test-visits-${randomBytes(6).toString('hex')}:`;
    const stores2 = [new RedisVisitStateStore(REDIS_URL, prefix), new RedisVisitStateStore(REDIS_URL, prefix)];
    stores.push(...stores2);
    return stores2.map((s) => new SharedVisitTracker(s));
  };

  it('makes one visit of hits sent alternately to two processes, in order', async () => {
    const [p1, p2] = twoProcesses();
    const results = [];
    for (let i = 0; i < 10; i++) {
      results.push(await (i % 2 === 0 ? p1! : p2!).record(SITE, A, undefined, hit(T0 + i * MIN, { pathname: `/p${i % 3}` })));
    }
    assert.equal(new Set(results.map((r) => r.visitId)).size, 1);
    const last = results.at(-1)!;
    assert.equal(last.pageviews, 10);
    assert.equal(last.entryPage, '/p0');
    assert.equal(last.exitPage, '/p0');
    assert.deepEqual(results.map((r) => r.firstView), [true, true, true, false, false, false, false, false, false, false]);
  });

  it("carries the visit's first-touch attribution to hits another process records", async () => {
    const [p1, p2] = twoProcesses();
    const first = await p1!.record(SITE, A, undefined, hit(T0, { referrerHostname: 'https://news.ycombinator.com', referrerSource: 'Hacker News', utmSource: 'hn' }));
    const page = await p2!.record(SITE, A, undefined, hit(T0 + MIN, { referrerHostname: 'https://www.google.com', referrerSource: 'Google', utmSource: 'ads' }));
    const event = await p1!.record(SITE, A, undefined, hit(T0 + 2 * MIN, { type: 'event' }));
    for (const v of [page, event]) {
      assert.equal(v.visitId, first.visitId);
      assert.deepEqual([v.referrerHostname, v.referrerSource, v.utmSource], ['https://news.ycombinator.com', 'Hacker News', 'hn']);
    }
  });

  it('makes one visit with exact counts of 60 concurrent hits racing on two processes, also for the first hit', async () => {
    const [p1, p2] = twoProcesses();
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        (i % 2 === 0 ? p1! : p2!).record(SITE, A, undefined, hit(T0 + i * 1000, { pathname: `/p${i % 5}`, type: i % 10 === 9 ? 'event' : 'pageview' })),
      ),
    );
    assert.equal(new Set(results.map((r) => r.visitId)).size, 1, 'one visit');
    // Every hit got a distinct version: none was applied twice or lost.
    const versions = results.map((r) => r.pageviews + r.events).sort((a, b) => a - b);
    assert.deepEqual(versions, Array.from({ length: 60 }, (_, i) => i + 1));
    const newest = results.find((r) => r.pageviews + r.events === 60)!;
    assert.equal(newest.pageviews, 54);
    assert.equal(newest.events, 6);
    assert.equal(newest.startedAt.getTime(), T0);
    assert.equal(newest.lastSeenAt.getTime(), T0 + 59_000);
    // Hits raced, so first views may have arrived out of order; when the flags are kept, they are exact.
    if (newest.pathsExact) assert.equal(results.filter((r) => r.firstView).length, 5);
  });

  it('keeps visitors and sites apart under concurrency', async () => {
    const [p1, p2] = twoProcesses();
    const jobs = [];
    for (const site of ['SITEONEE', 'SITETWOO']) {
      for (const visitor of [A, B]) {
        for (let i = 0; i < 5; i++) jobs.push((i % 2 ? p1! : p2!).record(site, visitor, undefined, hit(T0 + i * MIN)));
      }
    }
    const results = await Promise.all(jobs);
    assert.equal(new Set(results.map((r) => r.visitId)).size, 4);
  });
});

describe('SharedVisitTracker: visit docs of the version before', () => {
  it('reads an empty page list as no pages viewed yet', async () => {
    // Written before visits listed their pages from the second pageview on: a visit of one event.
    const store = redisStore();
    const doc = {
      r: { ...NO_ATTRIBUTION, siteId: SITE, visitId: '77', visitorId: A.toString(), startedAt: T0, lastSeenAt: T0, entryPage: '', exitPage: '', exitHostname: '', pageviews: 0, events: 1, pathsExact: true },
      k: [visitorKey(SITE, A)],
      f: null,
      l: null,
      p: [],
    };
    const [committed] = await store.commitAll([{ visitId: '77', expectedVersion: 0, version: 1, doc: JSON.stringify(doc), pointers: [{ key: visitorKey(SITE, A), expected: null }], ttlMs: VISIT_TIMEOUT_MS }]);
    assert.equal(committed, true);
    const t = new SharedVisitTracker(store);
    const views = [await t.record(SITE, A, undefined, hit(T0 + MIN)), await t.record(SITE, A, undefined, hit(T0 + 2 * MIN))];
    assert.deepEqual(views.map((v) => [v.visitId, v.firstView]), [[77n, true], [77n, false]]);
  });
});

describe('SharedVisitTracker: hits of one turn handled together', () => {
  // Visitor A's day-one and day-two ids (a visit crossing midnight), and more visitors, sites and pages, with
  // repeats, gaps over 30 minutes and events: whatever one turn of the event loop may hand over at once.
  const D1 = Date.parse('2026-03-04T23:40:00Z');
  const hits: [site: string, current: bigint, previous: bigint | undefined, hit: VisitHit][] = [];
  for (let i = 0; i < 120; i++) {
    const site = i % 7 === 0 ? 'SITETWOO' : SITE;
    const visitor = BigInt(1 + (i % 9));
    const at = D1 + i * 37_000 + (i % 11 === 0 ? 31 * MIN : 0);
    const nextDay = at >= Date.parse('2026-03-05T00:00:00Z');
    hits.push([
      site,
      nextDay ? visitor + 1000n : visitor,
      nextDay ? visitor : undefined,
      hit(at, { pathname: `/p${i % 4}`, type: i % 5 === 4 ? 'event' : 'pageview', hostname: `https://h${i % 2}.example`, utmSource: `s${i}` }),
    ]);
  }
  // Visit ids are random: compare them by the order in which each first appears.
  const shape = (visits: VisitRecord[]) => {
    const ids = new Map<bigint, number>();
    return visits.map((v) => ({ ...v, visitId: ids.get(v.visitId) ?? (ids.set(v.visitId, ids.size), ids.size - 1) }));
  };

  it('gives every hit the visit state the memory tracker gives it one hit at a time', async () => {
    const memory = new VisitTracker();
    const expected = hits.map(([site, current, previous, h]) => memory.record(site, current, previous, h));
    const shared = new SharedVisitTracker(redisStore());
    // All in one turn: one lookup and one compare-and-set for the lot.
    const together = await Promise.all(hits.map(([site, current, previous, h]) => shared.record(site, current, previous, h)));
    assert.deepEqual(shape(together), shape(expected));
    // And the state it left in Redis continues as the memory tracker's does.
    const next = (t: VisitState) => t.record(SITE, 1001n, 1n, hit(D1 + 121 * 37_000, { pathname: '/p0' }));
    assert.deepEqual(shape([...together, await next(shared)]).at(-1), shape([...expected, await next(memory)]).at(-1));
  });

  it("keeps each visitor's hits in order when a turn brings more hits than one round takes", async () => {
    const many = Array.from({ length: 2500 }, (_, i) => hit(T0 + i * 500, { pathname: `/p${i % 7}` }));
    const memory = new VisitTracker();
    const expected = many.map((h, i) => memory.record(SITE, BigInt(1 + (i % 40)), undefined, h));
    const shared = new SharedVisitTracker(redisStore());
    const together = await Promise.all(many.map((h, i) => shared.record(SITE, BigInt(1 + (i % 40)), undefined, h)));
    assert.deepEqual(shape(together), shape(expected));
  });
});

describe('randomVisitId', () => {
  it('puts the UTC day modulo 4,096 above 52 random bits', () => {
    const day = Date.parse('2026-12-07T13:00:00Z');
    const ids = Array.from({ length: 10_000 }, () => randomVisitId(day));
    assert.equal(new Set(ids).size, ids.length);
    for (const id of ids) assert.equal(id >> 52n, BigInt(Math.floor(day / 86_400_000) % 4096));
    // The random bits are random: each of the 52 is set in some id and clear in another.
    const all = ids.reduce((a, b) => a | b, 0n);
    const none = ids.reduce((a, b) => a & b, (1n << 64n) - 1n);
    assert.equal(all & ((1n << 52n) - 1n), (1n << 52n) - 1n);
    assert.equal(none & ((1n << 52n) - 1n), 0n);
  });

  it('wraps after 4,096 days and numbers times before a day by that day', () => {
    assert.equal(visitIdDay(0), 0n);
    assert.equal(visitIdDay(86_400_000 - 1), 0n);
    assert.equal(visitIdDay(86_400_000), 1n);
    assert.equal(visitIdDay(4096 * 86_400_000), 0n);
    assert.equal(visitIdDay(4097 * 86_400_000 + 5), 1n);
  });
});
