// The hit log keeps every accepted hit whole until the store confirms it, custom properties included: what a
// restart replays is exactly what was appended.

import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import type { VisitRecord } from '../../../src/domain/hits.js';
import { HitLog, type LoggedGroup } from '../../../src/ingest/live/hit-log.js';
import { decodeRecord } from '../../../src/ingest/live/hit-record.js';
import { LoadBatches, type LoadFile } from '../../../src/ingest/live/load-batches.js';
import { storedHit } from '../../helpers/stored-hits.js';

const visitOf = (siteId: string, visitId: bigint, at: Date): VisitRecord => ({
  siteId, visitId, visitorId: 7n, startedAt: at, lastSeenAt: at, entryPage: '/a', exitPage: '/a', exitHostname: 'https://example.com',
  pageviews: 1, events: 1, pathsExact: true, journeyLength: 2, journeyPages: ['/next'], referrerHostname: '', referrerPathname: '', referrerSource: '', utmCampaign: '',
  utmContent: '', utmMedium: '', utmSource: '', utmTerm: '', ref: '', keyword: '',
});

describe('hit log', () => {
  const dir = mkdtempSync(join(tmpdir(), 'plumb-hitlog-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('replays unconfirmed hits with their custom properties, hostile keys and values included', async () => {
    const hits = [
      storedHit('S', '2026-03-01T00:00:00Z', {
        type: 'event', eventName: 'Signup', value: 500,
        props: [['plan', 'pro'], ['__proto__', '{"polluted":true}'], ['constructor', 'x'], ['ü 😀', "it's \\ \n\u0000"]],
      }),
      storedHit('S', '2026-03-01T00:00:01Z'),
    ];
    const { log } = await HitLog.open(dir, 0, { sync: false });
    for (const h of hits) await log.append(h, visitOf('S', h.visitId, h.timestamp));
    await log.close();

    const { log: reopened, unconfirmed } = await HitLog.open(dir, 0, { sync: false });
    await reopened.close();
    assert.deepEqual(unconfirmed.map((r) => r.hit), hits);
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'no prototype was touched');
  });

  it('keeps segments zero-filled ahead of their records, replays only whole records before the zeroes, and rotates whole groups', async () => {
    const own = mkdtempSync(join(tmpdir(), 'plumb-hitlog-'));
    try {
      const { log } = await HitLog.open(own, 0, { sync: false, segmentBytes: 100 * 1024 });
      const hits = Array.from({ length: 300 }, (_, i) => storedHit('S', new Date(Date.UTC(2026, 2, 1, 0, 0, i)).toISOString()));
      // Six groups of 50 (about 35 KB each): each turn's appends are written together, two groups to a segment.
      for (let g = 0; g < 6; g++) {
        await Promise.all(hits.slice(g * 50, g * 50 + 50).map((h) => log.append(h, visitOf('S', h.visitId, h.timestamp))));
      }
      await log.close();

      const segments = readdirSync(own).sort();
      assert.ok(segments.length >= 2, `several segments of 100 KiB (got ${segments.join(', ')})`);
      for (const name of segments.slice(0, -1)) {
        const bytes = readFileSync(join(own, name));
        const end = bytes.indexOf(0);
        assert.ok(end > 0, `${name} is zero-filled after its records`);
        assert.equal(bytes.subarray(end).every((b) => b === 0), true, `${name}: nothing but zeroes after the records`);
        assert.equal(bytes[end - 1], 0x0a, `${name} ends its records with a whole line`);
      }
      // A process that died while writing a group left half a record before the zeroes: never acknowledged, dropped.
      const last = join(own, segments.at(-1)!);
      const lastBytes = readFileSync(last);
      const tail = lastBytes.indexOf(0);
      const torn = Buffer.from('{"s":999999,"h":{"siteId":"S","ty');
      const withTorn = Buffer.concat([lastBytes.subarray(0, tail), torn, Buffer.alloc(Math.max(0, lastBytes.length - tail - torn.length))]);
      rmSync(last);
      appendFileSync(last, withTorn);
      assert.equal(statSync(last).size, lastBytes.length);

      const { log: reopened, unconfirmed } = await HitLog.open(own, 0, { sync: false, segmentBytes: 100 * 1024 });
      assert.deepEqual(unconfirmed.map((r) => r.hit), hits, 'every whole record, in order, none twice');
      assert.deepEqual(unconfirmed.map((r) => r.seq), hits.map((_, i) => i + 1));
      // Confirming everything deletes every segment but the one being written.
      await reopened.confirm(300);
      assert.equal(readdirSync(own).length, 1);
      await reopened.close();
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('hands each synced group to `synced` before its appends resolve, and a record file holds the groups as written', async () => {
    const own = mkdtempSync(join(tmpdir(), 'plumb-hitlog-'));
    try {
      const files: LoadFile[] = [];
      const batches = new LoadBatches(join(own, 'load'), (file) => files.push(file), (err) => assert.fail(String(err)), { maxRecords: 1000, maxWaitMs: 60_000 });
      const groups: LoggedGroup[] = [];
      const { log } = await HitLog.open(join(own, 'log'), 40, {
        sync: false,
        synced: (group) => {
          groups.push(group);
          batches.addGroup(group);
        },
      });
      const hits = Array.from({ length: 30 }, (_, i) => storedHit('S', new Date(Date.UTC(2026, 2, 1, 0, 0, i)).toISOString()));
      for (const part of [hits.slice(0, 10), hits.slice(10, 11), hits.slice(11)]) {
        const seqs = await Promise.all(part.map((h) => log.append(h, visitOf('S', h.visitId, h.timestamp))));
        // Every append of the group resolved after its group was handed over, with its own sequence number.
        assert.equal(groups.at(-1)!.seq, seqs.at(-1));
        assert.equal(batches.waiting, seqs.at(-1)! - 40);
      }
      await log.close();
      assert.deepEqual(groups.map((g) => [g.records, g.seq]), [[10, 50], [1, 51], [19, 70]]);

      await batches.cut();
      assert.equal(files.length, 1);
      assert.deepEqual({ hits: files[0]!.hits, seq: files[0]!.seq }, { hits: 30, seq: 70 });
      // The record file is the log's lines: the store loads what a replay would read.
      const lines = readFileSync(files[0]!.file, 'utf8').split('\n').filter((l) => l !== '');
      assert.deepEqual(lines.map((l) => decodeRecord(l).hit), hits);
      assert.deepEqual(lines.map((l) => decodeRecord(l).seq), hits.map((_, i) => 41 + i));
      assert.equal(batches.waiting, 0);
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });

  it('writes a record file of more parts than one system call takes, lines and groups mixed, in their order', async () => {
    const own = mkdtempSync(join(tmpdir(), 'plumb-hitlog-'));
    try {
      const files: LoadFile[] = [];
      const batches = new LoadBatches(own, (file) => files.push(file), (err) => assert.fail(String(err)), { maxRecords: 10_000, maxWaitMs: 60_000 });
      // Linux takes at most 1,024 buffers a writev: 3,000 parts need three.
      const expected: string[] = [];
      for (let i = 0; i < 3000; i++) {
        const line = `{"n":${i},"text":"${'é'.repeat(i % 7)}"}\n`;
        expected.push(line);
        if (i % 2 === 0) batches.add(line, 0);
        else batches.addGroup({ data: Buffer.from(line), records: 1, seq: i });
      }
      await batches.cut();
      assert.equal(files.length, 1);
      assert.deepEqual({ hits: files[0]!.hits, seq: files[0]!.seq }, { hits: 3000, seq: 2999 });
      assert.equal(readFileSync(files[0]!.file, 'utf8'), expected.join(''));
    } finally {
      rmSync(own, { recursive: true, force: true });
    }
  });
});
