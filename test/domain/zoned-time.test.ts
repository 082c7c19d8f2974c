// Zone offsets over a range: the same spans as walking the range a day at a time (the old, slow way), found per
// year and kept, so a long range costs a lookup per year; and the cache is filled without holding up the loop.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { localToUtc, offsetSpans, prepareOffsetSpans, zoneOffsetMs, type OffsetSpan } from '../../src/domain/zoned-time.js';

const DAY = 86_400_000;
const utc = (text: string) => Date.parse(text);

/** The reference: a day at a time over the range, each change bisected to the second. */
function walk(zone: string, fromMs: number, untilMs: number): OffsetSpan[] {
  const spans: OffsetSpan[] = [{ from: fromMs, offsetMs: zoneOffsetMs(zone, fromMs) }];
  for (let t = fromMs; t < untilMs; ) {
    const next = Math.min(t + DAY, untilMs);
    const current = spans[spans.length - 1]!.offsetMs;
    if (zoneOffsetMs(zone, next) !== current) {
      let lo = Math.floor(t / 1000) * 1000;
      let hi = Math.ceil(next / 1000) * 1000;
      while (hi - lo > 1000) {
        const mid = lo + Math.floor((hi - lo) / 2000) * 1000;
        if (zoneOffsetMs(zone, mid) === current) lo = mid;
        else hi = mid;
      }
      if (hi > fromMs && hi < untilMs) spans.push({ from: hi, offsetMs: zoneOffsetMs(zone, hi) });
    }
    t = next;
  }
  return spans;
}

describe('zone offsets', () => {
  it('knows offsets to the second, including zones with odd ones', () => {
    assert.equal(zoneOffsetMs('Europe/Berlin', utc('2026-07-01T00:00:00Z')), 2 * 3_600_000);
    assert.equal(zoneOffsetMs('Europe/Berlin', utc('2026-01-01T00:00:00Z')), 3_600_000);
    assert.equal(zoneOffsetMs('Asia/Kathmandu', utc('2026-01-01T00:00:00Z')), 5.75 * 3_600_000);
    assert.equal(zoneOffsetMs('America/St_Johns', utc('2026-01-01T00:00:00Z')), -3.5 * 3_600_000);
    assert.equal(zoneOffsetMs('UTC', utc('2026-01-01T00:00:00.999Z')), 0);
  });

  it('finds the same transitions as a walk a day at a time, in zones with every kind of rule', () => {
    const zones = [
      'Europe/Berlin', 'America/New_York', 'America/Santiago', 'Australia/Lord_Howe', 'Africa/Casablanca', 'Asia/Gaza',
      'America/Boa_Vista', 'Pacific/Apia', 'Asia/Tehran', 'Europe/Moscow', 'Antarctica/Troll', 'Asia/Kolkata', 'UTC',
    ];
    const ranges: [string, string][] = [
      ['2000-01-01T00:00:00Z', '2003-01-01T00:00:00Z'],
      ['2000-09-01T00:00:00Z', '2000-11-01T00:00:00Z'], // America/Boa_Vista: DST for one week in October 2000
      ['2011-12-29T00:00:00Z', '2012-01-02T00:00:00Z'], // Pacific/Apia skipped 30 December 2011
      ['2012-06-15T12:34:56Z', '2014-09-01T00:00:00Z'], // Casablanca's Ramadan suspensions
      ['2026-03-29T01:00:00Z', '2026-10-25T01:00:00Z'], // starting and ending exactly on EU transitions
      ['2026-03-29T00:59:59Z', '2026-10-25T01:00:01Z'],
      ['2095-06-01T00:00:00Z', '2100-01-01T14:00:00Z'],
    ];
    for (const zone of zones) {
      for (const [from, until] of ranges) {
        assert.deepEqual(offsetSpans(zone, utc(from), utc(until)), walk(zone, utc(from), utc(until)), `${zone} ${from} ${until}`);
      }
    }
    const boaVista = offsetSpans('America/Boa_Vista', utc('2000-09-01T00:00:00Z'), utc('2000-11-01T00:00:00Z'));
    assert.equal(boaVista.length, 3, 'both transitions a week apart');
  });

  it('a span starts exactly at the first second of the new offset', () => {
    const spans = offsetSpans('Europe/Berlin', utc('2026-01-01T00:00:00Z'), utc('2027-01-01T00:00:00Z'));
    assert.deepEqual(spans.map((s) => [new Date(s.from).toISOString(), s.offsetMs / 3_600_000]), [
      ['2026-01-01T00:00:00.000Z', 1],
      ['2026-03-29T01:00:00.000Z', 2],
      ['2026-10-25T01:00:00.000Z', 1],
    ]);
    // A range starting between seconds keeps its start; transitions stay on whole seconds.
    const odd = offsetSpans('Europe/Berlin', utc('2026-03-01T00:00:00.250Z'), utc('2026-04-01T00:00:00Z'));
    assert.deepEqual(odd.map((s) => s.from), [utc('2026-03-01T00:00:00.250Z'), utc('2026-03-29T01:00:00Z')]);
  });

  it('a century costs a lookup per year once its years are known: no more asking the time zone data', () => {
    const from = utc('1999-12-31T10:00:00Z');
    const until = utc('2100-01-01T14:00:00Z');
    // Counts what the platform's time zone data is asked (Intl's format, a getter): finding a year's transitions
    // asks it ~370 times; a known year, never. Counted rather than timed: a timed test fails on a busy machine.
    const format = Object.getOwnPropertyDescriptor(Intl.DateTimeFormat.prototype, 'format')!;
    let asked = 0;
    Object.defineProperty(Intl.DateTimeFormat.prototype, 'format', {
      ...format,
      get(this: Intl.DateTimeFormat) {
        asked++;
        return format.get!.call(this);
      },
    });
    try {
      offsetSpans('America/Chicago', from, until);
      const first = asked;
      asked = 0;
      for (let i = 0; i < 100; i++) offsetSpans('America/Chicago', from + i * 1000, until - i * 1000);
      assert.ok(first > 100 * 300, `finding a century's transitions asked ${first} times`);
      assert.ok(asked <= 100, `100 centuries once known asked ${asked} times (one each: the offset at the start)`);
    } finally {
      Object.defineProperty(Intl.DateTimeFormat.prototype, 'format', format);
    }
    assert.equal(offsetSpans('America/Chicago', from, until).length, 1 + 2 * 100);
  });

  it('prepareOffsetSpans fills the years a turn of the event loop at a time', async () => {
    const zone = 'America/Havana';
    const from = utc('2000-01-01T00:00:00Z');
    const until = utc('2099-12-31T23:59:59Z');
    // Counted in turns, not milliseconds: other callbacks must get the loop between the years.
    let turns = 0;
    let running = true;
    const tick = () => {
      turns++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    await prepareOffsetSpans(zone, from, until);
    running = false;
    assert.ok(turns >= 50, `other callbacks ran only ${turns} times while a century was computed`);
    assert.deepEqual(offsetSpans(zone, from, until), walk(zone, from, until));
  });

  it('localToUtc takes the earlier offset in gaps and overlaps', () => {
    assert.equal(new Date(localToUtc('Europe/Berlin', utc('2026-03-29T02:30:00Z'))).toISOString(), '2026-03-29T01:30:00.000Z');
    assert.equal(new Date(localToUtc('Europe/Berlin', utc('2026-10-25T02:30:00Z'))).toISOString(), '2026-10-25T00:30:00.000Z');
    assert.equal(new Date(localToUtc('Europe/Berlin', utc('2099-12-31T23:59:59Z'))).toISOString(), '2099-12-31T22:59:59.000Z');
  });
});
