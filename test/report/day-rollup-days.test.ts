// Which UTC days a report's day rollups may answer (src/report/day-rollups/days.ts): whole days of the range, each
// inside one date bucket of the report's zone, and what is left to the hits, in few enough intervals; and where a
// day's crossing visits have their hits in it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { utcDayStart } from '../../src/domain/time.js';
import { bucketOfDay, crossingBounds, crossingWindows, hoursAlign, limitIntervals, localHourBucket, mergedWindows, uncoveredIntervals, wholeDays } from '../../src/report/day-rollups/days.js';

const at = (iso: string) => Date.parse(iso);

describe('day rollups: days of a range', () => {
  it('finds the UTC days wholly inside a range', () => {
    assert.deepEqual(wholeDays(at('2026-03-01T00:00:00Z'), at('2026-03-04T00:00:00Z')), { first: '2026-03-01', afterLast: '2026-03-04' });
    // New York's March 1-3: from 05:00 UTC, so the 1st is cut; until the 4th 05:00, so the 4th is cut too.
    assert.deepEqual(wholeDays(at('2026-03-01T05:00:00Z'), at('2026-03-04T05:00:00Z')), { first: '2026-03-02', afterLast: '2026-03-04' });
    // Within one day: none.
    const none = wholeDays(at('2026-03-01T01:00:00Z'), at('2026-03-01T20:00:00Z'));
    assert.equal(none.first, none.afterLast);
  });

  it('puts a UTC day in the bucket it lies wholly in, or in none', () => {
    assert.equal(bucketOfDay('2026-03-05', 'day', 'UTC'), '2026-03-05 00:00:00');
    assert.equal(bucketOfDay('2026-03-05', 'day', 'Europe/Berlin'), undefined);
    assert.equal(bucketOfDay('2026-03-05', 'month', 'Europe/Berlin'), '2026-03-01 00:00:00');
    // Berlin's March starts on Feb 28 at 23:00 UTC: that UTC day holds an hour of March.
    assert.equal(bucketOfDay('2026-02-28', 'month', 'Europe/Berlin'), undefined);
    assert.equal(bucketOfDay('2026-03-31', 'month', 'Asia/Kolkata'), undefined);
    assert.equal(bucketOfDay('2026-03-30', 'month', 'Asia/Kolkata'), '2026-03-01 00:00:00');
    // New York's 2027 starts at 05:00 UTC on January 1st: that UTC day is cut, December 31st is not.
    assert.equal(bucketOfDay('2027-01-01', 'year', 'America/New_York'), undefined);
    assert.equal(bucketOfDay('2026-12-31', 'year', 'America/New_York'), '2026-01-01 00:00:00');
    assert.equal(bucketOfDay('2026-07-14', 'year', 'Pacific/Chatham'), '2026-01-01 00:00:00');
    // London is UTC in winter, an hour ahead in summer.
    assert.equal(bucketOfDay('2026-01-10', 'day', 'Europe/London'), '2026-01-10 00:00:00');
    assert.equal(bucketOfDay('2026-07-10', 'day', 'Europe/London'), undefined);
  });

  it('reads a UTC day by hour only where each of its hours is one of the zone\'s', () => {
    assert.equal(hoursAlign('2026-03-07', 'America/New_York'), true);
    // The clocks go forward at 07:00 UTC that day; back on 2026-11-01 at 06:00 UTC (02:00 local twice over).
    assert.equal(hoursAlign('2026-03-08', 'America/New_York'), false);
    assert.equal(hoursAlign('2026-11-01', 'America/New_York'), false);
    assert.equal(hoursAlign('2026-11-02', 'America/New_York'), true);
    assert.equal(hoursAlign('2026-03-08', 'UTC'), true);
    assert.equal(hoursAlign('2026-03-08', 'Asia/Kolkata'), false);
    assert.equal(hoursAlign('2026-03-08', 'Asia/Kathmandu'), false);
    assert.equal(hoursAlign('2026-03-08', 'Pacific/Kiritimati'), true);
    assert.equal(localHourBucket('2026-03-09 13:00:00', 'America/New_York'), '2026-03-09 09:00:00');
    assert.equal(localHourBucket('2026-03-09 03:00:00', 'America/New_York'), '2026-03-08 23:00:00');
    assert.equal(localHourBucket('2026-12-31 23:00:00', 'Europe/Berlin'), '2027-01-01 00:00:00');
    assert.equal(localHourBucket('2026-03-09 13:00:00', 'UTC'), '2026-03-09 13:00:00');
  });

  it('leaves the rest of the range to the hits, merged into few intervals', () => {
    const from = at('2026-03-01T05:00:00Z');
    const until = at('2026-03-09T05:00:00Z');
    const days = ['2026-03-02', '2026-03-03', '2026-03-05', '2026-03-07'];
    assert.deepEqual(uncoveredIntervals(from, until, days), [
      [from, utcDayStart('2026-03-02')],
      [utcDayStart('2026-03-04'), utcDayStart('2026-03-05')],
      [utcDayStart('2026-03-06'), utcDayStart('2026-03-07')],
      [utcDayStart('2026-03-08'), until],
    ]);
    assert.deepEqual(uncoveredIntervals(utcDayStart('2026-03-02'), utcDayStart('2026-03-04'), ['2026-03-02', '2026-03-03']), []);
    // At most 3 intervals: the shortest inner run (the 5th, then the 7th) goes back to the hits.
    assert.deepEqual(limitIntervals(from, until, days, 3), ['2026-03-02', '2026-03-03', '2026-03-07']);
    assert.deepEqual(limitIntervals(from, until, days, 2), ['2026-03-02', '2026-03-03']);
    assert.equal(uncoveredIntervals(from, until, limitIntervals(from, until, days, 2)).length, 2);
    // A run touching an end removes no interval: kept.
    assert.deepEqual(limitIntervals(utcDayStart('2026-03-02'), until, days, 1), ['2026-03-02', '2026-03-03']);
    assert.deepEqual(limitIntervals(from, until, days, 4), days);
  });

  it('finds where the crossing visits have their hits in a day', () => {
    const start = utcDayStart('2026-03-05');
    const end = start + 86_400_000;
    const visit = (from: string, to: string) => ({ visitId: 1n, startedMs: at(from), lastSeenMs: at(to) });
    const windows = (visits: ReturnType<typeof visit>[]) => crossingWindows(start, end, crossingBounds(start, end, visits)).map(([a, b]) => [a.toISOString(), b.toISOString()]);
    assert.deepEqual(windows([]), []);
    // From the day before until 00:20, and from 23:10 into the next day: the head ends just after the last hit.
    assert.deepEqual(windows([visit('2026-03-04T23:50:00Z', '2026-03-05T00:20:00Z'), visit('2026-03-04T23:55:00Z', '2026-03-05T00:05:00Z'), visit('2026-03-05T23:10:00Z', '2026-03-06T00:10:00Z')]), [
      ['2026-03-05T00:00:00.000Z', '2026-03-05T00:20:00.001Z'],
      ['2026-03-05T23:10:00.000Z', '2026-03-06T00:00:00.000Z'],
    ]);
    assert.deepEqual(windows([visit('2026-03-05T23:59:59.999Z', '2026-03-06T00:10:00Z')]), [['2026-03-05T23:59:59.999Z', '2026-03-06T00:00:00.000Z']]);
    // A visit over the whole day, or windows that meet: the whole day, once.
    assert.deepEqual(windows([visit('2026-03-04T23:00:00Z', '2026-03-06T01:00:00Z')]), [['2026-03-05T00:00:00.000Z', '2026-03-06T00:00:00.000Z']]);
    assert.deepEqual(windows([visit('2026-03-04T23:00:00Z', '2026-03-05T14:00:00Z'), visit('2026-03-05T13:00:00Z', '2026-03-06T01:00:00Z')]), [['2026-03-05T00:00:00.000Z', '2026-03-06T00:00:00.000Z']]);
  });

  it('merges windows that meet or overlap', () => {
    const w = (a: string, b: string) => [new Date(`2026-03-05T${a}Z`), new Date(`2026-03-05T${b}Z`)] as const;
    const iso = (windows: [Date, Date][]) => windows.map(([a, b]) => `${a.toISOString().slice(11, 19)}-${b.toISOString().slice(11, 19)}`);
    assert.deepEqual(iso(mergedWindows([w('10:00:00', '11:00:00'), w('00:00:00', '01:00:00'), w('01:00:00', '02:00:00'), w('10:30:00', '10:45:00'), w('12:00:00', '13:00:00')])), [
      '00:00:00-02:00:00', '10:00:00-11:00:00', '12:00:00-13:00:00',
    ]);
    assert.deepEqual(mergedWindows([]), []);
  });
});
