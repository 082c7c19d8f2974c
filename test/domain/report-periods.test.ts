// Email report periods: the last complete week or month in the site's zone, and the one before it.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lastCompletePeriod, localDate } from '../../src/domain/report-periods.js';

describe('report periods', () => {
  it('takes the last complete Monday-to-Sunday week in the zone', () => {
    // Monday 2026-11-23 00:30 in Berlin is still Sunday 23:30 in UTC.
    const at = new Date('2026-11-22T23:30:00Z');
    assert.equal(localDate('Europe/Berlin', at), '2026-11-23');
    assert.deepEqual(lastCompletePeriod('weekly', 'Europe/Berlin', at), {
      frequency: 'weekly', from: '2026-11-16', to: '2026-11-22', previousFrom: '2026-11-09', previousTo: '2026-11-15',
    });
    assert.equal(lastCompletePeriod('weekly', 'UTC', at).from, '2026-11-09', 'in UTC that week is not over yet');
  });

  it('takes the last complete month, across a year and a short February', () => {
    assert.deepEqual(lastCompletePeriod('monthly', 'UTC', new Date('2027-01-05T12:00:00Z')), {
      frequency: 'monthly', from: '2026-12-01', to: '2026-12-31', previousFrom: '2026-11-01', previousTo: '2026-11-30',
    });
    assert.deepEqual(lastCompletePeriod('monthly', 'America/New_York', new Date('2026-03-01T03:00:00Z')), {
      frequency: 'monthly', from: '2026-01-01', to: '2026-01-31', previousFrom: '2025-12-01', previousTo: '2025-12-31',
    });
    assert.deepEqual(lastCompletePeriod('monthly', 'UTC', new Date('2026-03-01T03:00:00Z')), {
      frequency: 'monthly', from: '2026-02-01', to: '2026-02-28', previousFrom: '2026-01-01', previousTo: '2026-01-31',
    });
  });
});
