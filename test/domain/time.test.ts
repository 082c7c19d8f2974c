// Timestamp formatting and parsing, calendar dates and time zone names.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTimestamp, isCalendarDate, isTimeZone, parseInstant, parseTimestamp } from '../../src/domain/time.js';

describe('time', () => {
  it('formats UTC timestamps with second precision', () => {
    assert.equal(formatTimestamp(new Date('2026-03-04T05:06:07.890Z')), '2026-03-04 05:06:07');
  });

  it('parses only real timestamps', () => {
    assert.equal(parseTimestamp('2024-02-29 23:59:59')?.toISOString(), '2024-02-29T23:59:59.000Z');
    for (const bad of ['2023-02-29 00:00:00', '2024-01-01 24:00:00', '2024-01-01T00:00:00', '2024-1-1 00:00:00', '', 'now']) {
      assert.equal(parseTimestamp(bad), undefined, bad);
    }
  });

  it('reads years before 100 as written (Date.UTC would make 0100 into 1900 and 0001 into 1901)', () => {
    assert.equal(parseTimestamp('0100-01-01 00:00:00')?.getUTCFullYear(), 100);
    assert.equal(parseTimestamp('0001-01-01 00:00:00')?.getUTCFullYear(), 1);
    assert.equal(parseTimestamp('9999-12-31 23:59:59')?.toISOString(), '9999-12-31T23:59:59.000Z');
    assert.equal(parseTimestamp('0000-02-29 00:00:00')?.getUTCFullYear(), 0, 'year 0 is a leap year');
    assert.equal(parseTimestamp('0001-02-29 00:00:00'), undefined);
  });

  it('reads timestamps as a regular expression and a Date checked part by part would', () => {
    // The reference: what parseTimestamp was before it read the text character by character.
    const reference = (text: string): Date | undefined => {
      const m = /^(\d{4})-(\d{2})-(\d{2}) (\d{2}):(\d{2}):(\d{2})$/.exec(text);
      if (!m) return undefined;
      const [y, mo, d, h, mi, s] = m.slice(1).map(Number) as [number, number, number, number, number, number];
      const date = new Date(Date.UTC(2000, mo - 1, d, h, mi, s));
      date.setUTCFullYear(y, mo - 1, d);
      const real = date.getUTCFullYear() === y && date.getUTCMonth() === mo - 1 && date.getUTCDate() === d &&
        date.getUTCHours() === h && date.getUTCMinutes() === mi && date.getUTCSeconds() === s;
      return real ? date : undefined;
    };
    // Deterministic pseudo-random texts: digits around every limit, and characters that are not digits.
    let seed = 7;
    const next = (n: number) => ((seed = (seed * 1103515245 + 12345) % 2 ** 31), seed % n);
    const two = () => String(next(40)).padStart(2, '0');
    const texts: string[] = [];
    for (const y of ['0000', '0001', '0099', '0100', '0399', '0400', '1600', '1899', '1900', '1969', '1970', '2000', '2023', '2024', '2100', '2400', '7777', '9999']) {
      // Every month's last days and the times around each limit, then random ones.
      for (let mo = 0; mo <= 13; mo++) {
        for (const d of ['00', '01', '28', '29', '30', '31', '32']) texts.push(`${y}-${String(mo).padStart(2, '0')}-${d} 12:00:00`);
      }
      for (const time of ['23:59:59', '24:00:00', '00:60:00', '00:00:60', '00:00:00']) texts.push(`${y}-02-28 ${time}`);
      for (let i = 0; i < 400; i++) texts.push(`${y}-${String(next(14)).padStart(2, '0')}-${two()} ${String(next(26)).padStart(2, '0')}:${two()}:${two()}`);
    }
    const odd = ['٣', '+', ' ', '/', ':', '-', 'T', 'a', '\u0000', '５'];
    for (let i = 0; i < 2000; i++) {
      const base = texts[next(texts.length)]!;
      const at = next(base.length);
      texts.push(base.slice(0, at) + odd[next(odd.length)]! + base.slice(at + 1), base.slice(0, at) + base.slice(at + 1), `${base} `);
    }
    let real = 0;
    for (const text of texts) {
      const want = reference(text);
      assert.equal(parseTimestamp(text)?.getTime(), want?.getTime(), text);
      if (want) real++;
    }
    assert.ok(real > 1000 && real < texts.length / 2, `${real} of ${texts.length} real`);
  });

  it('parses ISO 8601 instants with an offset, to the whole second', () => {
    const cases: [string, string, number][] = [
      ['2026-10-01T00:00:00.000Z', '2026-10-01T00:00:00.000Z', 2026],
      ['2026-10-01T00:00:00Z', '2026-10-01T00:00:00.000Z', 2026],
      ['2026-10-01t00:00:00.5z', '2026-10-01T00:00:00.000Z', 2026],
      ['2026-10-01T00:00:00.999999999Z', '2026-10-01T00:00:00.000Z', 2026],
      ['2026-10-01T00:00:00+02:00', '2026-09-30T22:00:00.000Z', 2026],
      ['2026-10-01T00:00:00 02:00', '2026-09-30T22:00:00.000Z', 2026],
      ['2026-10-01T00:00:00+0200', '2026-09-30T22:00:00.000Z', 2026],
      ['2026-10-01T00:00:00.123-05:30', '2026-10-01T05:30:00.000Z', 2026],
      ['2026-10-01T00:00:00-00:00', '2026-10-01T00:00:00.000Z', 2026],
      ['2000-01-01T00:00:00+14:00', '1999-12-31T10:00:00.000Z', 2000],
      ['2026-10-01T00:00:00+23:59', '2026-09-30T00:01:00.000Z', 2026],
    ];
    for (const [text, iso, year] of cases) {
      const parsed = parseInstant(text);
      assert.equal(parsed?.date.toISOString(), iso, text);
      assert.equal(parsed?.year, year, text);
    }
    for (const bad of [
      '2026-10-01T00:00:00', '2026-10-01 00:00:00Z', '2026-10-01T00:00Z', '2026-10-01T24:00:00Z', '2026-02-30T00:00:00Z',
      '2026-10-01T00:00:00.Z', '2026-10-01T00:00:00.1234567890Z', '2026-10-01T00:00:00+24:00', '2026-10-01T00:00:00+02:60',
      '2026-10-01T00:00:00+2:00', '2026-10-01T00:00:00+02', '2026-10-01T00:00:00 Z', '2026-10-01T00:00:00UTC', '+2026-10-01T00:00:00Z',
      '2026-10-01T00:00:00Z ', '1772668800', '',
    ]) {
      assert.equal(parseInstant(bad), undefined, bad);
    }
  });

  it('knows calendar dates', () => {
    assert.equal(isCalendarDate('2024-02-29'), true);
    for (const bad of ['2023-02-29', '2024-13-01', '2024-00-10', '2024-1-1', '01/02/2024', '2024-01-01 00:00:00']) {
      assert.equal(isCalendarDate(bad), false, bad);
    }
  });

  it('accepts TZ database names only', () => {
    for (const ok of ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5', 'US/Eastern']) {
      assert.equal(isTimeZone(ok), true, ok);
    }
    for (const bad of ['Mars/Olympus', '+05:00', 'GMT+5:30', '', '../etc/passwd', 'Europe/Berlin; DROP']) {
      assert.equal(isTimeZone(bad), false, bad);
    }
  });
});
