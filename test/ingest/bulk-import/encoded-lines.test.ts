// An import slice's hit lines, encoded as they are made (EncodedLines): every line whole, in order, one per line,
// whatever its characters, however the buffer grows, and the buffer reused after clear().

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EncodedLines } from '../../../src/ingest/bulk-import/encoded-lines.js';

const of = (lines: string[], into = new EncodedLines()) => {
  for (const line of lines) into.push(line);
  return into;
};

describe('EncodedLines', () => {
  it('joins lines with line breaks only between them, and counts them', () => {
    const encoded = of(['a,1', 'b,2', '', 'c,3']);
    assert.equal(encoded.bytes().toString(), 'a,1\nb,2\n\nc,3');
    assert.equal(encoded.length, 4);
    assert.equal(new EncodedLines().bytes().length, 0);
  });

  it('keeps every character: two-, three- and four-byte UTF-8, quotes, NUL, empty lines', () => {
    const lines = ['"Zürich",Ünïcödé', '東京,大阪', '😀 emoji,🇭🇺', '"say ""hi""",', '', 'a\u0000b', 'x'.repeat(5000) + '✓'];
    assert.equal(of(lines).bytes().toString(), lines.join('\n'));
    // A line made of nothing but four-byte characters needs two UTF-16 units for every four bytes.
    const wide = '😀'.repeat(3000);
    assert.equal(of(['a', wide, wide, 'b']).bytes().toString(), ['a', wide, wide, 'b'].join('\n'));
  });

  it('grows when a later batch of lines needs more room than the ones before', () => {
    const small = Array.from({ length: 10 }, (_, i) => `row ${i}`);
    const large = Array.from({ length: 20_000 }, (_, i) => `row ${i},${'é'.repeat(i % 50)}`);
    const encoded = of(small);
    encoded.clear();
    assert.equal(of([...large, ...small], encoded).bytes().toString(), [...large, ...small].join('\n'));
  });

  it('grows past its first buffer, keeping what it holds', () => {
    // Four-byte characters only: two UTF-16 units for every four bytes; well over the first 1 MiB in all.
    const lines = Array.from({ length: 400 }, (_, i) => `${i},${'😀'.repeat(1000 + i)}`);
    const encoded = of(lines);
    assert.equal(encoded.bytes().toString(), lines.join('\n'));
    assert.equal(encoded.length, 400);
  });

  it('starts afresh after clear(), in the same buffer', () => {
    const encoded = of(['x'.repeat(10_000), 'y']);
    encoded.clear();
    assert.equal(encoded.length, 0);
    assert.equal(of(['z', 'w'], encoded).bytes().toString(), 'z\nw');
  });
});
