// The one rule by which the three importers read an export's days and times: every form they take, and no day or
// time the calendar lacks (Date's parser would roll 2025-02-29 over to 1 March).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseExportDay, parseExportTime } from '../../../src/ingest/peer-imports/export-time.js';

const iso = (text: string) => {
  const t = parseExportTime(text);
  return t && [new Date(t.ms).toISOString(), t.offsetMinutes];
};

describe('export times', () => {
  it('reads the forms the exports write', () => {
    const table: [string, [string, number]][] = [
      // Umami Cloud's export and psql's text for a timestamptz.
      ['2025-03-01 10:00:00', ['2025-03-01T10:00:00.000Z', 0]],
      ['2025-03-01 10:00:00.123456+00', ['2025-03-01T10:00:00.123Z', 0]],
      ['2025-03-01 10:00:00.5+05:30', ['2025-03-01T04:30:00.500Z', 330]],
      ['2025-03-01 10:00:00-0800', ['2025-03-01T18:00:00.000Z', -480]],
      ['2025-03-01 00:30:00+01', ['2025-02-28T23:30:00.000Z', 60]],
      // ISO 8601, and Fathom's hours (seconds optional, `UTC`).
      ['2025-03-01T10:00:00Z', ['2025-03-01T10:00:00.000Z', 0]],
      ['2025-03-01t10:00z', ['2025-03-01T10:00:00.000Z', 0]],
      ['2025-03-01 10:00 UTC', ['2025-03-01T10:00:00.000Z', 0]],
      [' 2024-02-29 23:59:59 ', ['2024-02-29T23:59:59.000Z', 0]],
      ['2000-02-29 12:00:00', ['2000-02-29T12:00:00.000Z', 0]],
    ];
    for (const [text, expected] of table) assert.deepEqual(iso(text), expected, text);
  });

  it('refuses days and times the calendar lacks, in every form, and what is malformed', () => {
    for (const text of [
      '2025-02-29 10:00:00', '2025-02-29 10:00:00.000+00', '2025-02-29T10:00:00Z', '2025-02-29 10:00 UTC', '1900-02-29 10:00:00',
      '2025-04-31 10:00:00', '2025-13-01 10:00:00', '2025-00-10 10:00:00', '2025-03-00 10:00:00', '2025-03-01 24:00:00',
      '2025-03-01 10:60:00', '2025-03-01 10:00:60', '2025-03-01 10:00:00+24:00', '2025-03-01 10:00:00+05:60',
      '2025-03-01', '2025-3-1 10:00:00', '2025-03-01 10:00:00.', '2025-03-01 10:00.5', 'yesterday', '',
    ]) {
      assert.equal(parseExportTime(text), undefined, text);
    }
  });

  it('reads days by the same calendar', () => {
    assert.equal(parseExportDay('2024-02-29'), '2024-02-29');
    assert.equal(parseExportDay('2025-02-28'), '2025-02-28');
    for (const text of ['2025-02-29', '2100-02-29', '2025-04-31', '2025-13-01', '2025-1-01', '2025-01-01 ', '']) assert.equal(parseExportDay(text), undefined, text);
  });
});
