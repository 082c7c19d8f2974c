// Imports: generated traffic imported through /admin/import (whole, chunked, shuffled) reproduces the counts
// it was generated with; bad lines are reported by number and do not stop the rest.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { AdminClient } from '../../src/cli/admin-client.js';
import { importLines, importNdjson } from '../../src/cli/import.js';
import { NdjsonFile } from '../../src/cli/ndjson-file.js';
import { demoTraffic, emptyTotals, type DemoTotals } from '../../src/cli/demo-traffic.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

function generate(siteId: string, seed: number): { lines: string[]; totals: DemoTotals } {
  const totals = emptyTotals();
  const lines = [...demoTraffic({ siteId, start: new Date('2026-03-28T00:00:00Z'), days: 3, visitsPerDay: 150, seed }, totals)].map((h) =>
    JSON.stringify(h),
  );
  return { lines, totals };
}

/** What the stored hits and visits of a site add up to, in the generator's terms. */
async function observed(t: TestApp, siteId: string): Promise<DemoTotals> {
  await t.flushHits();
  const hits = await t.events.listHits(siteId);
  const visits = await t.events.listVisits(siteId);
  const pageviews = hits.filter((h) => h.type === 'pageview');
  const events: DemoTotals['events'] = {};
  for (const e of hits.filter((h) => h.type === 'event')) {
    const total = (events[e.eventName] ??= { conversions: 0, value: 0 });
    total.conversions++;
    total.value += e.value;
  }
  return {
    pageviews: pageviews.length,
    visits: new Set(pageviews.map((h) => h.visitId)).size,
    bounces: visits.filter((v) => v.pageviews === 1).length,
    bots: 0,
    events,
  };
}

describe('/admin/import', () => {
  let t: TestApp;
  let address: string;
  const newSite = async (name: string) => (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name })).body.id as string;
  const post = (body: string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson', ...headers },
      payload: body,
    });

  before(async () => {
    t = await startTestApp();
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
  });
  after(() => t.close());

  it('reproduces the generated counts in one request', async () => {
    const site = await newSite('Import');
    const { lines, totals } = generate(site, 1);
    const res = await post(lines.join('\n'));
    assert.equal(res.statusCode, 200, res.body);
    const body = JSON.parse(res.body);
    const events = Object.values(totals.events).reduce((s, e) => s + e.conversions, 0);
    assert.equal(body.imported, totals.pageviews + events);
    assert.equal(body.rejected, totals.bots, 'only the crawler lines are refused');
    assert.ok(body.errors.every((e: { message: string }) => e.message === 'user_agent is a bot'));
    assert.deepEqual(await observed(t, site), { ...totals, bots: 0 });
    assert.ok(totals.visits > 300 && totals.pageviews > totals.visits && totals.bounces > 0);
  });

  it('keeps answering other requests while a 10 MB import runs (it runs off the event loop)', async () => {
    const site = await newSite('Large import');
    const lines: string[] = [];
    const totals = emptyTotals();
    for (const hit of demoTraffic({ siteId: site, start: new Date('2026-02-01T00:00:00Z'), days: 20, visitsPerDay: 800, seed: 5 }, totals)) {
      lines.push(JSON.stringify(hit));
    }
    const body = lines.join('\n');
    assert.ok(body.length > 10_000_000, `${body.length} bytes`);
    let done = false;
    const imported = fetch(`${address}/admin/import`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      body,
    }).then(async (res) => {
      done = true;
      assert.equal(res.status, 200);
      return (await res.json()) as { imported: number };
    });
    // Counted in answers, not milliseconds (a loaded machine makes a time budget flaky): before the ingest thread
    // the whole request held the event loop and no health check was answered until it ended.
    let answered = 0;
    while (!done) {
      assert.equal((await fetch(`${address}/healthz`)).status, 200);
      answered++;
    }
    const events = Object.values(totals.events).reduce((n, e) => n + e.conversions, 0);
    assert.equal((await imported).imported, totals.pageviews + events);
    assert.ok(answered >= 10, `only ${answered} health checks were answered during the import`);
  });

  it('gives the same counts for a shuffled file sent in chunks by the CLI', async () => {
    const site = await newSite('Chunked');
    const { lines, totals } = generate(site, 2);
    // A deterministic shuffle: the CLI must restore time order before the server sees the hits.
    const shuffled = lines.map((l, i) => ({ l, k: (i * 7919) % lines.length })).sort((a, b) => a.k - b.k).map((x) => x.l);
    // Chunks of 100 lines, the first of 25 (the server starts sooner): visits run across them, and the CLI has ten
    // numbered chunks in flight at a time (so the server reads the next ones while it works on the oldest).
    let inFlight = 0;
    let mostInFlight = 0;
    const sizes: number[] = [];
    const client = new (class extends AdminClient {
      override async requestText<T>(path: string, body: string | Uint8Array, headers: Record<string, string>): Promise<T> {
        sizes[Number(headers['x-plumb-import-seq']) - 1] = Buffer.from(body).toString().split('\n').length;
        mostInFlight = Math.max(mostInFlight, ++inFlight);
        try {
          return await super.requestText<T>(path, body, headers);
        } finally {
          inFlight--;
        }
      }
    })(address, ADMIN_TOKEN);
    const progress: number[] = [];
    const summary = await importNdjson(client, shuffled.join('\n'), (done) => progress.push(done), 100);
    assert.equal(mostInFlight, 10);
    assert.deepEqual(sizes, [25, ...Array.from({ length: Math.ceil((lines.length - 25) / 100) }, (_, i) => Math.min(100, lines.length - 25 - i * 100))]);
    assert.equal(summary.rejected, totals.bots);
    // Each refused line is named by its number in the shuffled file, whichever chunk it went in.
    assert.equal(summary.errors.length, totals.bots);
    for (const e of summary.errors) assert.match(JSON.parse(shuffled[e.line - 1]!).user_agent, /bot|crawl|spider/i, `line ${e.line}`);
    assert.ok(progress.length > 5, `${progress.length} progress steps`);
    assert.deepEqual(progress, [...progress].sort((a, b) => a - b));
    assert.deepEqual(progress.at(-1), lines.length);
    assert.deepEqual(await observed(t, site), { ...totals, bots: 0 });
  });

  it('sends the chunks of a file in time order from the file as they go, others from memory, to the same counts', async () => {
    const site = await newSite('Streamed');
    const { lines, totals } = generate(site, 4);
    const dir = mkdtempSync(join(tmpdir(), 'plumb-import-stream-'));
    try {
      const path = join(dir, 'hits.ndjson');
      // A blank line inside the fourth chunk: its lines no longer follow one another in the file.
      writeFileSync(path, [...lines.slice(0, 400), '', ...lines.slice(400)].join('\n'));
      const sent = { streamed: 0, held: 0 };
      const client = new (class extends AdminClient {
        override requestStream<T>(path: string, body: AsyncIterable<Uint8Array>, headers: Record<string, string>): Promise<T> {
          sent.streamed++;
          return super.requestStream<T>(path, body, headers);
        }
        override requestText<T>(path: string, body: string | Uint8Array, headers: Record<string, string>): Promise<T> {
          sent.held++;
          return super.requestText<T>(path, body, headers);
        }
      })(address, ADMIN_TOKEN);
      const file = await NdjsonFile.forImport(path);
      const summary = await importLines(client, file, undefined, 100).finally(() => file.close());
      assert.equal(summary.imported + summary.rejected, lines.length);
      assert.equal(sent.held, 1, 'the chunk with a blank line among its lines');
      assert.ok(sent.streamed >= 3, `${sent.streamed} chunks streamed`);
      assert.deepEqual(await observed(t, site), { ...totals, bots: 0 });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('stops with the file as the reason when the file is cut short after it was indexed', async () => {
    const site = await newSite('Cut short');
    const { lines } = generate(site, 5);
    const dir = mkdtempSync(join(tmpdir(), 'plumb-import-cut-'));
    try {
      const path = join(dir, 'hits.ndjson');
      writeFileSync(path, lines.join('\n'));
      const file = await NdjsonFile.forImport(path);
      try {
        truncateSync(path, Buffer.byteLength(lines.slice(0, 300).join('\n')));
        await assert.rejects(importLines(new AdminClient(address, ADMIN_TOKEN), file), /^Error: the file changed while it was imported$/);
        // The server saw a body end before its length: nothing of it is stored.
        await t.flushHits();
        assert.equal((await t.events.listHits(site)).length, 0);
      } finally {
        await file.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('takes numbered chunks in their order whichever arrives first (visits continue across them)', async () => {
    const site = await newSite('Numbered');
    const { lines, totals } = generate(site, 3);
    const sorted = [...lines].sort((a, b) => (JSON.parse(a).timestamp < JSON.parse(b).timestamp ? -1 : 1));
    const third = Math.ceil(sorted.length / 3);
    const chunks = [sorted.slice(0, third), sorted.slice(third, 2 * third), sorted.slice(2 * third)];
    const send = (seq: number) =>
      fetch(`${address}/admin/import`, {
        method: 'POST',
        headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson', 'x-plumb-import-id': `numbered-${site}`, 'x-plumb-import-seq': String(seq) },
        body: chunks[seq - 1]!.join('\n'),
      });
    // The last chunk first, the first one last: each waits for its predecessors.
    const third3 = send(3);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const third2 = send(2);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const answers = await Promise.all([send(1), third2, third3]);
    assert.deepEqual(answers.map((a) => a.status), [200, 200, 200]);
    const imported = (await Promise.all(answers.map((a) => a.json() as Promise<{ imported: number }>))).reduce((n, a) => n + a.imported, 0);
    const events = Object.values(totals.events).reduce((n, e) => n + e.conversions, 0);
    assert.equal(imported, totals.pageviews + events);
    assert.deepEqual(await observed(t, site), { ...totals, bots: 0 });
  });

  it('refuses chunk numbers that are malformed, taken, too far ahead or without an import id', async () => {
    const site = await newSite('Numbers');
    const line = JSON.stringify({
      type: 'pageview', site_id: site, timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/', ip: '81.2.69.142',
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
    });
    for (const seq of ['0', '-1', 'two', '1.5', '12345678901']) {
      const res = await post(line, { 'x-plumb-import-id': 'numbers', 'x-plumb-import-seq': seq });
      assert.equal(res.statusCode, 400, seq);
      assert.ok(JSON.parse(res.body).errors['x-plumb-import-seq'], res.body);
    }
    const alone = await post(line, { 'x-plumb-import-seq': '1' });
    assert.equal(alone.statusCode, 400);
    assert.match(JSON.parse(alone.body).errors['x-plumb-import-seq'][0], /X-Plumb-Import-Id/);
    assert.equal((await post(line, { 'x-plumb-import-id': 'numbers', 'x-plumb-import-seq': '1' })).statusCode, 200);
    const again = await post(line, { 'x-plumb-import-id': 'numbers', 'x-plumb-import-seq': '1' });
    assert.equal(again.statusCode, 409);
    assert.match(JSON.parse(again.body).error, /already received/);
    const far = await post(line, { 'x-plumb-import-id': 'numbers', 'x-plumb-import-seq': '15' });
    assert.equal(far.statusCode, 400);
    assert.match(JSON.parse(far.body).errors['x-plumb-import-seq'][0], /ahead/);
    assert.equal((await post(line, { 'x-plumb-import-id': 'numbers', 'x-plumb-import-seq': '2' })).statusCode, 200);
    await t.flushHits();
    assert.equal((await t.events.listHits(site)).length, 2);
  });

  it('reports each bad line by number and imports the rest', async () => {
    const site = await newSite('Errors');
    const good = (ts: string, path: string) =>
      JSON.stringify({ type: 'pageview', site_id: site, timestamp: ts, url: `https://ex.test${path}`, referrer: '', user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', ip: '81.2.69.142' });
    const lines = [
      good('2026-01-01 10:00:00', '/a'),
      '{not json',
      JSON.stringify({ type: 'click', site_id: site, timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/' }),
      JSON.stringify({ type: 'pageview', site_id: site, timestamp: 'yesterday', url: 'https://ex.test/' }),
      JSON.stringify({ type: 'pageview', site_id: site, timestamp: '2026-01-01 10:00:00' }),
      JSON.stringify({ type: 'event', site_id: site, timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/' }),
      JSON.stringify({ type: 'event', site_id: site, timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/', name: 'x', value: -1 }),
      JSON.stringify({ type: 'pageview', site_id: 'NOSUCHID', timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/' }),
      JSON.stringify({ type: 'pageview', site_id: site, timestamp: '2026-01-01 10:00:00', url: 'ftp://ex.test/' }),
      '[]',
      '',
      good('2026-01-01T10:05:00Z', '/b'),
    ];
    const res = JSON.parse((await post(lines.join('\n'))).body);
    assert.equal(res.imported, 2);
    assert.equal(res.rejected, 9);
    assert.deepEqual(res.errors.map((e: { line: number }) => e.line), [2, 3, 4, 5, 6, 7, 8, 9, 10]);
    for (const e of res.errors) assert.equal(typeof e.message, 'string');
    const hits = await (async () => (await t.flushHits(), t.events.listHits(site)))();
    assert.deepEqual(hits.map((h) => [h.pathname, h.countryCode]), [['/a', 'GB'], ['/b', 'GB']]);
    assert.equal(new Set(hits.map((h) => h.visitId)).size, 1, 'five minutes apart: one visit');
  });

  it('refuses a body over 64 MiB with a 413 and the error shape, and stores none of it', async () => {
    const site = await newSite('Too large');
    const line = JSON.stringify({
      type: 'pageview', site_id: site, timestamp: '2026-01-01 10:00:00', url: 'https://ex.test/', ip: '81.2.69.142',
      user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
    });
    // 65 MiB made as it is sent: the test never holds the body either.
    const piece = Buffer.from(`${`${line}\n`.repeat(Math.floor(1024 * 1024 / (line.length + 1)))}`);
    const pieces = Math.ceil((65 * 1024 * 1024) / piece.length);
    const res = await t.app.inject({
      method: 'POST',
      url: '/admin/import',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' },
      payload: Readable.from((function* () {
        for (let i = 0; i < pieces; i++) yield piece;
      })()),
    });
    assert.equal(res.statusCode, 413, res.body);
    assert.match(JSON.parse(res.body).error, /too large/);
    await t.flushHits();
    assert.equal((await t.events.listHits(site)).length, 0);
    // The server goes on importing.
    const ok = JSON.parse((await post(line)).body);
    assert.deepEqual([ok.imported, ok.rejected], [1, 0]);
  });

  it('refuses bodies that are not NDJSON and requests without the admin token', async () => {
    const json = await t.app.inject({
      method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' }, payload: '{}',
    });
    assert.equal(json.statusCode, 400);
    assert.ok(JSON.parse(json.body).errors.body);
    const anon = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { 'content-type': 'application/x-ndjson' }, payload: '' });
    assert.equal(anon.statusCode, 401);
    assert.equal((await post('', { 'x-plumb-first-line': 'ten' })).statusCode, 400);
  });
});
