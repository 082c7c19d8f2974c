// An import load's files are written through LineWriter's reused buffer: every line arrives whole, in order, one
// per line, whatever its characters (multi-byte UTF-8, surrogate pairs, quotes) and however the slices grow.

import assert from 'node:assert/strict';
import { mkdtemp, open, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { LineWriter } from '../../src/ingest/csv-load.js';

const dirs: string[] = [];
after(async () => Promise.all(dirs.map((d) => rm(d, { recursive: true, force: true }))));

async function written(slices: string[][]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'plumb-line-writer-'));
  dirs.push(dir);
  const path = join(dir, 'lines.csv');
  const file = await open(path, 'w');
  const writer = new LineWriter();
  let more = false;
  for (const slice of slices) {
    await writer.write(file, slice, more);
    more ||= slice.length > 0;
  }
  await file.close();
  return readFile(path, 'utf8');
}

describe('LineWriter', () => {
  it('writes slices as one line each, in order, with line breaks only between lines', async () => {
    assert.equal(await written([['a,1', 'b,2'], [], ['c,3']]), 'a,1\nb,2\nc,3');
    assert.equal(await written([[], ['only']]), 'only');
    assert.equal(await written([[]]), '');
  });

  it('keeps every character: two-, three- and four-byte UTF-8, quotes, empty lines', async () => {
    const lines = ['"Zürich",Ünïcödé', '東京,大阪', '😀 emoji,🇭🇺', '"say ""hi""",', '', 'a\u0000b', 'x'.repeat(5000) + '✓'];
    assert.equal(await written([lines]), lines.join('\n'));
    // A line made of nothing but four-byte characters needs two UTF-16 units for every four bytes.
    const wide = '😀'.repeat(3000);
    assert.equal(await written([['a'], [wide], [wide, 'b']]), ['a', wide, wide, 'b'].join('\n'));
  });

  it('grows its buffer when a slice needs more room than the ones before', async () => {
    const small = Array.from({ length: 10 }, (_, i) => `row ${i}`);
    const large = Array.from({ length: 20_000 }, (_, i) => `row ${i},${'é'.repeat(i % 50)}`);
    assert.equal(await written([small, large, small]), [...small, ...large, ...small].join('\n'));
  });
});
