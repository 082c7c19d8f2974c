// plumb import's reading of a line's time: flatTimestampsIn (from a file block's bytes, line after line) gives what
// timestampOf (from the line's text) gives, on lines made to tell them apart, and answers the common line itself.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { flatTimestampsIn, timestampOf } from '../../src/cli/line-time.js';

/** The time of the one line at [start, end) of `block`, asked for alone. */
const flatTimestampAt = (block: string, start: number, end: number) => flatTimestampsIn(block)(start, end);

/**
 * The time of `line` in a block as the index has it (UTF-8 bytes read as latin1, between other lines), asked for as
 * the index asks, after the line before it and before the one after; the same as asked for that line alone.
 */
function quick(line: string): number | undefined {
  const before = '{"timestamp":"1999-01-01 00:00:00","url":"x"}';
  const after = '{"timestamp":"2001-01-01 00:00:00"}';
  const block = Buffer.from(`${before}\n${line}\n${after}`).toString('latin1');
  const start = before.length + 1;
  const end = start + Buffer.byteLength(line);
  const times = flatTimestampsIn(block);
  assert.equal(times(0, before.length), Date.UTC(1999, 0, 1), line);
  const t = times(start, end);
  assert.equal(times(end + 1, block.length), Date.UTC(2001, 0, 1), line);
  assert.equal(flatTimestampAt(block, start, end), t, line);
  return t;
}

const flat = (t: string) => `{"site_id":"S","type":"pageview","timestamp":"${t}","url":"https://a.example/é"}`;

describe('flatTimestampsIn', () => {
  it('reads the common line as timestampOf does', () => {
    for (const t of ['2026-01-02 03:04:05', '1970-01-01 00:00:00', '2024-02-29 23:59:59', '9999-12-31 23:59:59', '1000-01-01 00:00:00', '1969-12-31 23:59:59']) {
      const line = flat(t);
      assert.equal(quick(line), timestampOf(line), t);
      assert.equal(quick(line), Date.parse(`${t.replace(' ', 'T')}Z`), t);
    }
  });

  it('leaves to timestampOf every line it cannot read exactly as timestampOf would', () => {
    const lines = [
      flat('2026-01-02T03:04:05Z'),
      flat('2026-01-02T03:04:05+02:00'),
      flat('2026-01-02 03:04'),
      flat('2026-01-02 03:04:05.250'),
      flat('2023-02-29 00:00:00'),
      flat('2026-04-31 00:00:00'),
      flat('2026-13-01 00:00:00'),
      flat('2026-00-01 00:00:00'),
      flat('2026-01-00 00:00:00'),
      flat('2026-01-01 24:00:00'),
      flat('2026-01-01 23:60:00'),
      flat('2026-12-31 23:59:60'),
      flat('0099-01-01 00:00:00'),
      flat('2026-01-02 03:04:0x'),
      flat('2026-01-02\\u002003:04:05'),
      flat('2026/01/02 03:04:05'),
      flat('٢٠٢٦-01-02 03:04:05'),
      '{"timestamp":"2026-01-02 03:04:05","timestamp":"2027-01-02 03:04:05"}',
      '{"timestamp":"timestamp":"2026-01-02 03:04:05"}',
      '{"x":"amp\\":\\"","timestamp":"2026-01-02 03:04:05","timestamp":"2027-01-02 03:04:05"}',
      '{"a":{"b":1},"timestamp":"2026-01-02 03:04:05"}',
      '{"timestamp": "2026-01-02 03:04:05"}',
      ' {"timestamp":"2026-01-02 03:04:05"}',
      '\uFEFF{"timestamp":"2026-01-02 03:04:05"}',
      '["timestamp","2026-01-02 03:04:05"]',
      '{"timestamp":"2026-01-02 03:04:05',
      '{"timestamp":"2026-01-02 03:04:05\\"","x":1}',
      '{"timestamp":2026}',
      '{"x":"\\"timestamp\\":\\"2026-01-02 03:04:05\\""}',
      'not json',
      '',
    ];
    for (const line of lines) {
      const q = quick(line);
      if (q !== undefined) assert.equal(q, timestampOf(line), line);
    }
    // Those that are not the common line are all left (none is read a way timestampOf might not).
    assert.deepEqual(lines.filter((l) => quick(l) !== undefined), []);
  });

  it('keeps to the line: a key or a brace in the next line does not count', () => {
    const block = '{"timestamp":"2026-01-02 03:04:05"}\n{"timestamp":"2027-01-01 00:00:00"}\n{"a":{}}';
    assert.equal(flatTimestampAt(block, 0, block.indexOf('\n')), Date.UTC(2026, 0, 2, 3, 4, 5));
    // A line cut short before its closing quote.
    assert.equal(flatTimestampAt(block, 0, 33), undefined);
  });

  it('reads lines asked for out of order as it reads them in order', () => {
    const lines = ['{"timestamp":"2026-01-02 03:04:05"}', '{"a":1}', '{"timestamp":"2027-01-01 00:00:00"}', '{"x":"y","timestamp":"2028-01-01 00:00:00"}'];
    const block = lines.join('\n');
    const starts = lines.map((_, i) => lines.slice(0, i).join('\n').length + (i > 0 ? 1 : 0));
    const expected = [Date.UTC(2026, 0, 2, 3, 4, 5), undefined, Date.UTC(2027, 0, 1), Date.UTC(2028, 0, 1)];
    for (const order of [[0, 1, 2, 3], [3, 2, 1, 0], [2, 0, 3, 1], [1, 3, 0, 2]]) {
      const times = flatTimestampsIn(block);
      for (const i of order) assert.equal(times(starts[i]!, starts[i]! + lines[i]!.length), expected[i], `line ${i} in order ${order.join(',')}`);
    }
  });
});
