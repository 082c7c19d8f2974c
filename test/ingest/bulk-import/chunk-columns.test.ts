// A chunk's lines as the reader thread parses them (columns) against the import's line parser on each: the same hits
// with the same line numbers, the same errors, for good lines, bad ones, blank ones and empty chunks, and each
// address's place; and the reader thread itself (src/ingest/bulk-import/chunk-reader.ts), including a file it cannot
// read.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { columnsOf, hitAt, placeAt, readColumns, timeOrder, type ChunkColumns } from '../../../src/ingest/bulk-import/chunk-columns.js';
import { ChunkReader } from '../../../src/ingest/bulk-import/chunk-reader.js';
import { GeoLookup } from '../../../src/ingest/enrich/geo.js';
import { parseImportLine, type ImportError } from '../../../src/ingest/line-import.js';
import type { IncomingHit } from '../../../src/domain/hits.js';
import { placeCsv } from '../../../src/store/event-csv.js';

const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const line = (o: Record<string, unknown>) => JSON.stringify(o);
const pv = (i: number, more: Record<string, unknown> = {}) =>
  line({ type: 'pageview', site_id: 'SITEAAAA', timestamp: `2026-01-01 10:${String(i % 60).padStart(2, '0')}:00`, url: `https://ex.test/p${i % 7}`, referrer: '', user_agent: UA, ip: `81.2.69.${i % 5}`, ...more });

/** Good lines of every shape, bad lines of every kind, blank lines. */
const mixed = [
  pv(1),
  line({ type: 'event', site_id: 'SITEAAAA', timestamp: '2026-01-01 10:00:01', url: 'https://ex.test/', name: 'Signup', user_agent: UA, ip: '2001:db8::1' }),
  line({ type: 'event', site_id: 'SITEAAAA', timestamp: '2026-01-01T10:00:02Z', url: 'https://ex.test/', name: 'Buy', value: 1299 }),
  line({ type: 'event', site_id: 'SITEAAAA', timestamp: '2026-01-01 10:00:03', url: 'https://ex.test/', name: '', value: null }),
  line({ type: 'event', site_id: 'SITEAAAA', timestamp: '2026-01-01 10:00:04', url: 'https://ex.test/', name: 'x', value: -1.5 }),
  pv(2, { referrer: 'https://t.co/a,"b"', url: 'https://ex.test/caf%C3%A9?utm_source=x' }),
  pv(3, { user_agent: null, ip: null, referrer: null }),
  '',
  '   ',
  '{not json',
  '[]',
  'null',
  line({ type: 'click', site_id: 'SITEAAAA', timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/' }),
  line({ type: 'pageview', site_id: 'SITEAAAA', timestamp: 'yesterday', url: 'https://ex.test/' }),
  line({ type: 'pageview', timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/' }),
  pv(4, { user_agent: 5 }),
  line({ type: 'event', site_id: 'SITEAAAA', timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/' }),
  line({ type: 'event', site_id: 'SITEAAAA', timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/', name: 'x', value: '5' }),
  pv(5),
];

/** The same lines parsed one by one (parseImportLine), numbered from `first`: blank lines skipped but counted. */
function oneByOne(lines: readonly string[], first: number): { parsed: { line: number; hit: IncomingHit }[]; errors: ImportError[] } {
  const parsed: { line: number; hit: IncomingHit }[] = [];
  const errors: ImportError[] = [];
  lines.forEach((text, i) => {
    if (text.trim() === '') return;
    try {
      parsed.push({ line: first + i, hit: parseImportLine(text) });
    } catch (err) {
      errors.push({ line: first + i, message: (err as Error).message });
    }
  });
  return { parsed, errors };
}

/** The hits of `c` in line order, each with its line number and its address's place if the reader placed it. */
function hitsOf(c: ChunkColumns): { line: number; hit: IncomingHit; place?: string }[] {
  return Array.from({ length: c.count }, (_, i) => {
    const place = placeAt(c, i);
    return place === undefined ? { line: c.lines[i]!, hit: hitAt(c, i) } : { line: c.lines[i]!, hit: hitAt(c, i), place };
  });
}

describe('chunk columns', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'plumb-chunk-columns-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('give the hits and errors of the lines parsed one by one, line numbers included', () => {
    const expected = oneByOne(mixed, 41);
    const columns = columnsOf(mixed, 41);
    assert.ok(expected.parsed.length >= 8 && expected.errors.length >= 9, 'the lines hold good and bad ones');
    assert.deepEqual(hitsOf(columns), expected.parsed);
    assert.deepEqual(columns.errors, expected.errors);
  });

  it('carry each address\'s place when given a way to place addresses, worked out once per address', async () => {
    const geo = await GeoLookup.open();
    const asked: string[] = [];
    const place = (ip: string) => (asked.push(ip), placeCsv(geo.lookup(ip)));
    const columns = columnsOf([...mixed, pv(6, { ip: '81.2.69.142' }), pv(7, { ip: '81.2.69.142' })], 1, place);
    const parsed = hitsOf(columns);
    assert.deepEqual(parsed.map(({ line, hit }) => ({ line, hit })), oneByOne(mixed, 1).parsed.concat(oneByOne([pv(6, { ip: '81.2.69.142' }), pv(7, { ip: '81.2.69.142' })], mixed.length + 1).parsed));
    assert.deepEqual(parsed.map((p) => p.place), parsed.map((p) => placeCsv(geo.lookup(p.hit.ip))));
    assert.equal(asked.length, new Set(asked).size);
    assert.ok(parsed.some((p) => p.place !== placeCsv(geo.lookup(''))), 'an address with a place');
  });

  it('put the rows in time order, rows of the same time in line order', () => {
    const times = [5, 3, 5, 1, 3, 5, 0];
    const lines = times.map((t, i) => pv(i, { timestamp: `2026-01-01 10:00:0${t}` }));
    const columns = columnsOf(lines, 1);
    const order = [...timeOrder(columns)];
    assert.deepEqual(order, [6, 3, 1, 4, 0, 2, 5]);
    assert.deepEqual(order.map((i) => hitAt(columns, i)), oneByOne(lines, 1).parsed.map((p) => p.hit).sort((a, b) => a.timestamp.getTime() - b.timestamp.getTime()));
  });

  it('keep each distinct text once, past the first growth of the columns', () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => pv(i));
    const columns = columnsOf(lines, 1);
    assert.equal(columns.count, 10_000);
    // The site, 7 pages, '' (the referrer), the agent, 5 addresses.
    assert.equal(columns.texts.length, 15);
    assert.deepEqual(hitsOf(columns), oneByOne(lines, 1).parsed);
  });

  it('keep each distinct text once when sites alternate and an address changes agents', () => {
    // Equal texts that are different strings, as parsed lines' are; the agent is also an address's text elsewhere.
    const agents = ['Agent/1', 'Agent/2', '81.2.69.1'];
    const lines = Array.from({ length: 60 }, (_, i) =>
      pv(i, { site_id: i % 3 === 0 ? 'SITEBBBB' : 'SITEAAAA', user_agent: agents[(i * 7) % 3]!, ip: `81.2.69.${i % 2}` }),
    );
    const columns = columnsOf(lines, 1);
    assert.deepEqual(hitsOf(columns), oneByOne(lines, 1).parsed);
    assert.equal(new Set(columns.texts).size, columns.texts.length);
  });

  it('read a file as the lines of its text, an empty file and a file of blank lines as no hits', async () => {
    const file = join(dir, 'mixed.ndjson');
    await writeFile(file, `${mixed.join('\r\n')}\n`);
    // A carriage return before a line feed stays on the line, as JSON ignores it (blank lines are still blank).
    const expected = oneByOne([...mixed.map((l) => `${l}\r`), ''], 1);
    const read = await readColumns(file, 1);
    assert.deepEqual(hitsOf(read), expected.parsed);
    assert.deepEqual(read.errors, expected.errors);

    for (const text of ['', '\n\n  \n']) {
      await writeFile(file, text);
      const empty = await readColumns(file, 7);
      assert.equal(empty.count, 0);
      assert.deepEqual(empty.errors, []);
      assert.deepEqual(hitsOf(empty), []);
    }
  });

  it('are read on the reader thread, which reports a file it cannot read and reads the next', async () => {
    const reader = new ChunkReader();
    const file = join(dir, 'chunk.ndjson');
    await writeFile(file, mixed.join('\n'));
    const [a, b] = await Promise.all([reader.read(file, 1), reader.read(file, 1001)]);
    const geo = await GeoLookup.open();
    assert.deepEqual(hitsOf(a), oneByOne(mixed, 1).parsed.map((p) => ({ ...p, place: placeCsv(geo.lookup(p.hit.ip)) })));
    assert.deepEqual(b.errors, oneByOne(mixed, 1001).errors);
    await assert.rejects(reader.read(join(dir, 'missing.ndjson'), 1), /ENOENT/);
    assert.equal((await reader.read(file, 1)).count, a.count);
  });
});
