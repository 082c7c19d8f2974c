// NdjsonFile: plumb import's index of an NDJSON file (line places, lengths, numbers, timestamps) and the chunks read
// back from it, byte for byte what the file holds, in any order; lines longer than a read block, blank lines, CRLF,
// multi-byte text and a last line without a line break included; lines too long for any hit are passed over.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { flatTimestampsIn, timestampOf as lineTime } from '../../src/cli/line-time.js';
import { NdjsonFile } from '../../src/cli/ndjson-file.js';

const dir = mkdtempSync(join(tmpdir(), 'plumb-ndjson-'));
const timestampOf = (line: string) => {
  const m = /"t":(\d+)/.exec(line);
  return m ? Number(m[1]) : -Infinity;
};

describe('NdjsonFile', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('indexes non-blank lines with their file numbers and reads any of them back as they are', async () => {
    const long = `{"t":3,"pad":"${'x'.repeat(1_500_000)}"}`; // longer than a 1 MiB read block
    const lines = ['{"t":5,"name":"Zoë 日本"}', '', '   ', long, '{"t":1}\r', 'not json', '{"t":2}'];
    const path = join(dir, 'a.ndjson');
    writeFileSync(path, lines.join('\n')); // no line break after the last line
    const file = await NdjsonFile.open(path, timestampOf);
    try {
      assert.equal(file.count, 5);
      assert.deepEqual([0, 1, 2, 3, 4].map((i) => file.lineNumber(i)), [1, 4, 5, 6, 7]);
      assert.deepEqual([...file.timestamps], [5, 3, 1, -Infinity, 2]);
      assert.equal(file.bytes(0), Buffer.byteLength(lines[0]!) + 1);
      assert.equal((await file.read(Uint32Array.of(0, 1, 2, 3, 4))).toString(), [lines[0], long, lines[4], lines[5], lines[6]].join('\n'));
      // Out of file order (a file sorted by the CLI): each line where it is.
      assert.equal((await file.read(Uint32Array.of(2, 4, 1, 0))).toString(), [lines[4], lines[6], long, lines[0]].join('\n'));
      assert.equal((await file.read(Uint32Array.of(3))).toString(), 'not json');
      // Lines next to each other in the file (read in one piece), and the same lines with a gap between them.
      assert.equal((await file.read(Uint32Array.of(2, 3, 4))).toString(), [lines[4], lines[5], lines[6]].join('\n'));
      assert.equal((await file.read(Uint32Array.of(0, 1))).toString(), [lines[0], long].join('\n'));
      assert.equal((await file.read(new Uint32Array(0))).length, 0);
    } finally {
      await file.close();
    }
  });

  it('gives each line as its text, in blocks that are all ASCII and blocks that are not', async () => {
    // Lines of 100 KB: the second 1 MiB block is all ASCII, the first and third are not, and a 3-byte character
    // lies across the third block's start.
    const fill = (n: number, c: string) => c.repeat(n);
    const lines = [
      `{"x":"Zoë ${fill(100_000, 'a')}"}`,
      ...Array.from({ length: 9 }, (_, i) => `{"x":"${fill(100_000 + i, 'b')}"}`),
      `{"x":"${fill(1024 * 1024 * 2 - 1_000_000, 'c')}€${fill(50_000, 'c')}"}`,
      '{"x":"end"}',
    ];
    const path = join(dir, 'text.ndjson');
    writeFileSync(path, lines.join('\n'));
    const seen: string[] = [];
    const file = await NdjsonFile.open(path, (line) => (seen.push(line), line.length));
    try {
      assert.deepEqual(seen, lines);
      assert.deepEqual([...file.timestamps], lines.map((l) => l.length));
    } finally {
      await file.close();
    }
  });

  it('reads lines in file order but far apart without reading what lies between', async () => {
    const near = (t: number) => `{"t":${t}}`;
    const far = `{"t":0,"pad":"${'y'.repeat(3_000_000)}"}`;
    const path = join(dir, 'spread.ndjson');
    writeFileSync(path, [near(1), far, near(2)].join('\n'));
    const file = await NdjsonFile.open(path, timestampOf);
    try {
      assert.equal((await file.read(Uint32Array.of(0, 2))).toString(), `${near(1)}\n${near(2)}`);
    } finally {
      await file.close();
    }
  });

  it('reads an empty file and one ending in a line break', async () => {
    const empty = join(dir, 'empty.ndjson');
    writeFileSync(empty, '');
    const none = await NdjsonFile.open(empty, timestampOf);
    assert.equal(none.count, 0);
    await none.close();
    const trailing = join(dir, 'trailing.ndjson');
    writeFileSync(trailing, '{"t":1}\n{"t":2}\n');
    const two = await NdjsonFile.open(trailing, timestampOf);
    assert.equal(two.count, 2);
    assert.equal((await two.read(Uint32Array.of(0, 1))).toString(), '{"t":1}\n{"t":2}');
    await two.close();
  });

  it('reads times from the blocks where it can, and from the text of the others, to the same values', async () => {
    const at = (t: string, before = '') => `{${before}"type":"pageview","timestamp":"${t}","url":"https://a.example/"}`;
    const lines = [
      at('2026-01-02 03:04:05'),
      at('2026-01-02 03:04:06', '"name":"Zoë 日本 €",'), // multi-byte text before the key: offsets are bytes
      `${at('2026-01-02 03:04:07')}\r`,
      '',
      at('2026-01-02T03:04:08Z'), // ISO: read from the text
      at('2026-02-30 00:00:00'), // not a day: read from the text (Date.parse's answer)
      `{"nested":{"timestamp":"2020-01-01 00:00:00"},"timestamp":"2026-01-02 03:04:09"}`,
      `{"x":"${'é'.repeat(600_000)}","timestamp":"2026-01-02 03:04:10"}`, // across a 1 MiB read block
      'not json',
      at('2026-01-02 03:04:11'),
    ];
    const path = join(dir, 'times.ndjson');
    writeFileSync(path, lines.join('\n'));
    const asked: string[] = [];
    const quick = await NdjsonFile.open(path, (line) => (asked.push(line), lineTime(line)), flatTimestampsIn);
    const text = await NdjsonFile.open(path, lineTime);
    try {
      assert.deepEqual([...quick.timestamps], [...text.timestamps]);
      assert.equal(quick.timestamps[0], Date.UTC(2026, 0, 2, 3, 4, 5));
      assert.equal(quick.timestamps[1], Date.UTC(2026, 0, 2, 3, 4, 6));
      // Only the lines the quick reading leaves were read from their text.
      assert.deepEqual(asked, [lines[4], lines[5], lines[6], lines[8]]);
      assert.deepEqual(
        Array.from({ length: quick.count }, (_, i) => quick.lineNumber(i)),
        Array.from({ length: text.count }, (_, i) => text.lineNumber(i)),
      );
      assert.equal((await quick.read(Uint32Array.of(1, 6))).toString(), [lines[1], lines[7]].join('\n'));
    } finally {
      await quick.close();
      await text.close();
    }
  });

  it('refuses a file that cannot be read', async () => {
    await assert.rejects(NdjsonFile.open(join(dir, 'missing.ndjson'), timestampOf), /ENOENT/);
  });

  it('indexes a file in parts on several threads to the same index as in one, wherever the parts are cut, telling how far it has read', async () => {
    const at = (i: number) => `{"type":"pageview","timestamp":"2026-01-02 03:${String(i % 60).padStart(2, '0')}:00","url":"https://a.example/${i}"}`;
    const lines: string[] = [];
    for (let i = 0; i < 60; i++) {
      // Blank lines, CRLF, text read from its text (ISO), multi-byte text and a line far longer than a part.
      if (i % 7 === 3) lines.push('', '  ');
      lines.push(i % 11 === 5 ? `${at(i)}\r` : i % 13 === 6 ? at(i).replace(' 03:', 'T03:').replace(':00"', ':00Z"') : i === 30 ? `{"x":"${'é'.repeat(2_000)}","timestamp":"2026-01-02 03:30:00"}` : i % 9 === 2 ? `{"name":"Zoë 日本",${at(i).slice(1)}` : at(i));
    }
    for (const [name, text] of [['no-break', lines.join('\n')], ['break', `${lines.join('\n')}\n`], ['blank-end', `${lines.join('\n')}\n\n  `]] as const) {
      const path = join(dir, `parts-${name}.ndjson`);
      writeFileSync(path, text);
      const one = await NdjsonFile.open(path, lineTime, flatTimestampsIn);
      try {
        for (const [partBytes, most] of [[300, 2], [300, 4], [1_000, 4], [Buffer.byteLength(text), 4]] as const) {
          // How far the index has read, all parts together: never back, and the whole file at the end.
          const reads: number[] = [];
          const parts = await NdjsonFile.forImport(path, { partBytes, most, onRead: (bytes, size) => reads.push(size === Buffer.byteLength(text) ? bytes : NaN) });
          try {
            assert.ok(reads.every(Number.isFinite), `${name}: a report gave another size`);
            assert.deepEqual(reads, [...reads].sort((a, b) => a - b), `${name}: ${reads.join(', ')}`);
            assert.equal(reads.at(-1), Buffer.byteLength(text));
            assert.equal(parts.parts, partBytes < Buffer.byteLength(text) ? most : 1, `${name}: ${partBytes}-byte parts, ${most} at most`);
            assert.equal(parts.count, one.count);
            assert.deepEqual([...parts.timestamps], [...one.timestamps]);
            const all = Uint32Array.from({ length: one.count }, (_, i) => i);
            assert.deepEqual([...all].map((i) => parts.lineNumber(i)), [...all].map((i) => one.lineNumber(i)));
            assert.deepEqual([...all].map((i) => parts.bytes(i)), [...all].map((i) => one.bytes(i)));
            assert.equal((await parts.read(all)).toString(), (await one.read(all)).toString());
          } finally {
            await parts.close();
          }
        }
      } finally {
        await one.close();
      }
    }
  });

  it('passes over lines too long for any hit as it reads them, and names them; the lines around them are kept', async () => {
    // Over 4 MiB: more than MAX_IMPORT_LINE_CHARS characters whatever they are. One ends at a line break, one
    // runs to the end of the file; a line just under the bound is kept (the server judges it by its characters).
    const huge = `{"t":9,"pad":"${'x'.repeat(4 * 1024 * 1024 + 10)}"}`;
    const near = `{"t":4,"pad":"${'y'.repeat(4 * 1024 * 1024 - 40)}"}`;
    const lines = ['{"t":5}', huge, '{"t":1}', '', near, huge, '{"t":2}', huge];
    const path = join(dir, 'too-long.ndjson');
    writeFileSync(path, lines.join('\n'));
    for (const open of [() => NdjsonFile.open(path, timestampOf), () => NdjsonFile.forImport(path, { partBytes: 1024 * 1024, most: 3 })]) {
      const file = await open();
      try {
        assert.deepEqual([...file.tooLong], [2, 6, 8]);
        assert.equal(file.count, 4);
        assert.deepEqual([0, 1, 2, 3].map((i) => file.lineNumber(i)), [1, 3, 5, 7]);
        assert.equal((await file.read(Uint32Array.of(0, 1, 2, 3))).toString(), [lines[0], lines[2], near, lines[6]].join('\n'));
      } finally {
        await file.close();
      }
    }
  });

  it('refuses a file that cannot be read when it would be indexed in parts', async () => {
    await assert.rejects(NdjsonFile.forImport(join(dir, 'missing.ndjson'), { partBytes: 100, most: 4 }), /ENOENT/);
  });
});
