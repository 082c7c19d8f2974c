// Timestamp formatting and parsing, calendar dates and time zone names.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatTimestamp, isCalendarDate, isTimeZone, parseTimestamp } from '../../src/domain/time.js';

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
