// Import request bodies as streams: lines read back from a spooled file exactly as split('\n') would give them (across
// read boundaries and multi-byte characters), and bodies over the size limit refused with a 413 either way.

import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { GeneralError } from '../../../src/domain/errors.js';
import { bodyText, eachLine, PIECE_BYTES, spoolBody } from '../../../src/ingest/bulk-import/import-body.js';

describe('import bodies', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'plumb-import-body-'));
  });
  after(() => rm(dir, { recursive: true, force: true }));

  const linesOf = async (text: string) => {
    const file = join(dir, 'lines.ndjson');
    await writeFile(file, text);
    const lines: string[] = [];
    await eachLine(file, (line) => lines.push(line));
    return lines;
  };

  it('reads lines as split would, across read boundaries and multi-byte characters', async () => {
    // Lines of about 700 KB, so that reads (PIECE_BYTES) end mid-line and, with the 3-byte character, mid-character.
    const long = (n: number) => `{"url":"https://ex.test/${'€'.repeat(n)}"}`;
    const text = ['', long(233_333), 'a\r', long(250_000), '', 'ü', long(1)].join('\n');
    assert.deepEqual(await linesOf(text), text.split('\n'));
    assert.deepEqual(await linesOf(`${text}\n`), `${text}\n`.split('\n'));
    assert.deepEqual(await linesOf(''), ['']);
  });

  it('reads ASCII pieces and pieces with other characters alike, as decoding the whole file would', async () => {
    // Piece boundaries fall at multiples of PIECE_BYTES, the read size.
    const bytesOf = async (bytes: Buffer) => {
      const file = join(dir, 'bytes.ndjson');
      await writeFile(file, bytes);
      const lines: string[] = [];
      await eachLine(file, (line) => lines.push(line));
      assert.deepEqual(lines, bytes.toString('utf8').split('\n'));
      return lines;
    };
    const ascii = (n: number, fill = 'a') => Buffer.alloc(n, fill);
    // All ASCII, a line running across three pieces.
    await bytesOf(Buffer.concat([ascii(10), Buffer.from('\n'), ascii(2 * PIECE_BYTES + 5, 'b'), Buffer.from('\nend')]));
    // A 3-byte character split across pieces, then ASCII pieces again.
    const euro = Buffer.from('€');
    const split = await bytesOf(Buffer.concat([ascii(PIECE_BYTES - 1), euro, ascii(PIECE_BYTES), Buffer.from('\nü\n'), ascii(PIECE_BYTES)]));
    assert.equal(split[0]!.at(-1 - PIECE_BYTES), '€');
    // A character cut short at a piece's end, before an ASCII piece: one U+FFFD there, as decoding straight through.
    const cut = await bytesOf(Buffer.concat([ascii(PIECE_BYTES - 2), euro.subarray(0, 2), ascii(10, 'c'), Buffer.from('\n'), ascii(PIECE_BYTES)]));
    assert.equal(cut[0], `${'a'.repeat(PIECE_BYTES - 2)}\ufffd${'c'.repeat(10)}`);
    // And cut short at the file's end.
    assert.equal((await bytesOf(Buffer.concat([ascii(5), euro.subarray(0, 1)])))[0], 'aaaaa\ufffd');
  });

  it('spools a body byte for byte and reads one as text', async () => {
    const text = 'line one\nzwei ü\n€';
    const file = join(dir, 'body.ndjson');
    await spoolBody(Readable.from([Buffer.from(text).subarray(0, 13), Buffer.from(text).subarray(13)]), file);
    assert.equal(await readFile(file, 'utf8'), text);
    assert.equal(await bodyText(Readable.from([Buffer.from(text)])), text);
  });

  it('refuses a body over the limit with a 413', async () => {
    const body = () => Readable.from([Buffer.alloc(600, 'a'), Buffer.alloc(600, 'b')]);
    for (const read of [() => spoolBody(body(), join(dir, 'big.ndjson'), 1000), () => bodyText(body(), 1000)]) {
      await assert.rejects(read(), (err: unknown) => err instanceof GeneralError && err.status === 413 && /too large/.test(err.message));
    }
    assert.equal((await bodyText(body(), 1200)).length, 1200, 'exactly at the limit is taken');
  });
});
