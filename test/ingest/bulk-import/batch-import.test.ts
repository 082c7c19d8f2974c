// The set-based import against the live pipeline: the same NDJSON (generated traffic of several sites plus the
// awkward cases: visits past the timeout and across midnight, bots, bad lines, campaigns, events, multi-domain
// sites, text that CSV must quote) imported both ways, with the same salts, into two fresh DuckDB stores; every
// stored hit and visit, every answer and the goals made must be the same.

import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { StoredHit, VisitRecord } from '../../../src/domain/hits.js';
import { BatchImport, type ImportLookups } from '../../../src/ingest/bulk-import/batch-import.js';
import { readColumns, type ChunkColumns } from '../../../src/ingest/bulk-import/chunk-columns.js';
import { directoryLookups } from '../../../src/ingest/bulk-import/bulk-importer.js';
import { CsvLoad, PendingVisits } from '../../../src/ingest/bulk-import/csv-load.js';
import { demoTraffic } from '../../../src/cli/demo-traffic.js';
import { Enricher, GeoLookup } from '../../../src/ingest/enrich/index.js';
import { importLines, type ImportResult } from '../../../src/ingest/line-import.js';
import { HitPipeline, metricsCounters } from '../../../src/ingest/pipeline.js';
import { EphemeralSalts } from '../../../src/ingest/salts.js';
import { SiteDirectory } from '../../../src/ingest/site-directory.js';
import { VisitTracker } from '../../../src/ingest/visits.js';
import { WriteBuffer } from '../../../src/ingest/live/write-buffer.js';
import { Metrics } from '../../../src/metrics.js';
import { DuckDatabase } from '../../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../../src/store/duckdb/event-store.js';
import { migrate } from '../../../src/store/duckdb/migrations.js';
import { placeCsv, type CsvRows } from '../../../src/store/event-csv.js';
import { SqlMetaStore } from '../../../src/store/sql-meta-store.js';
import type { Site } from '../../../src/store/types.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const SAFARI_IPHONE = 'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1';
const FIREFOX = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const EXCLUDED = ['*.internal.test'];

/** Salts fixed per day, the same for both imports (each import makes its own otherwise). */
const fixedSalt = (day: string) => `test-salt-${day}`;

async function eventStore(): Promise<{ db: DuckDatabase; events: DuckEventStore }> {
  const db = await DuckDatabase.open(':memory:');
  await migrate(db);
  return { db, events: await DuckEventStore.open(db) };
}

/** The awkward cases, by hand, for three sites: one plain, two multi-domain (reported combined and separately). */
function handWritten(plain: string, combined: string, separate: string): string[] {
  const line = (o: Record<string, unknown>) => JSON.stringify(o);
  const pv = (site: string, timestamp: string, url: string, more: Record<string, unknown> = {}) =>
    line({ type: 'pageview', site_id: site, timestamp, url, referrer: '', user_agent: CHROME, ip: '81.2.69.142', ...more });
  return [
    // One visitor, a visit, then past the 30-minute timeout a second one; then a visit across midnight.
    pv(plain, '2026-03-28 10:00:00', 'https://plain.test/?utm_source=news&utm_medium=email&utm_campaign=spring', { referrer: 'https://www.google.com/search?q=x' }),
    pv(plain, '2026-03-28 10:10:00', 'https://plain.test/pricing', { referrer: 'https://plain.test/' }),
    pv(plain, '2026-03-28 10:10:00', 'https://plain.test/pricing'),
    line({ type: 'event', site_id: plain, timestamp: '2026-03-28 10:11:00', url: 'https://plain.test/pricing', name: 'Signup', user_agent: CHROME, ip: '81.2.69.142' }),
    pv(plain, '2026-03-28 10:45:00', 'https://plain.test/docs', { referrer: 'https://news.ycombinator.com/item?id=1' }),
    pv(plain, '2026-03-28 23:50:00', 'https://plain.test/a'),
    pv(plain, '2026-03-29 00:10:00', 'https://plain.test/b'),
    pv(plain, '2026-03-29 00:20:00', 'https://plain.test/a'),
    pv(plain, '2026-03-29 09:00:00', 'https://plain.test/a'),
    // Across midnight at the timeout's edges: exactly 30 minutes continues the visit, 31 do not; a visitor first seen
    // late in the day (past the first 30 minutes) after an evening visit starts a new one.
    pv(plain, '2026-03-28 23:59:59', 'https://plain.test/a', { ip: '198.51.100.7' }),
    pv(plain, '2026-03-29 00:29:59', 'https://plain.test/b', { ip: '198.51.100.7' }),
    pv(plain, '2026-03-29 00:45:00', 'https://plain.test/c', { ip: '198.51.100.7' }),
    pv(plain, '2026-03-28 23:59:00', 'https://plain.test/a', { ip: '198.51.100.8' }),
    pv(plain, '2026-03-29 00:30:00', 'https://plain.test/b', { ip: '198.51.100.8' }),
    pv(plain, '2026-03-28 23:00:00', 'https://plain.test/a', { ip: '198.51.100.9' }),
    pv(plain, '2026-03-29 01:00:00', 'https://plain.test/b', { ip: '198.51.100.9' }),
    // One address, three agents in turn, then the first again: three visitors, the first one's visit goes on.
    pv(plain, '2026-03-28 16:00:00', 'https://plain.test/a', { ip: '198.51.100.10' }),
    pv(plain, '2026-03-28 16:01:00', 'https://plain.test/a', { ip: '198.51.100.10', user_agent: FIREFOX }),
    pv(plain, '2026-03-28 16:02:00', 'https://plain.test/a', { ip: '198.51.100.10', user_agent: SAFARI_IPHONE }),
    pv(plain, '2026-03-28 16:03:00', 'https://plain.test/b', { ip: '198.51.100.10' }),
    pv(plain, '2026-03-28 16:04:00', 'https://plain.test/c', { ip: '198.51.100.10', user_agent: FIREFOX }),
    // A visit that starts with an event; the same address with other agents are other visitors.
    line({ type: 'event', site_id: plain, timestamp: '2026-03-28 12:00:00', url: 'https://plain.test/x', name: 'Purchase', value: 1299, user_agent: FIREFOX, ip: '2001:db8::1' }),
    pv(plain, '2026-03-28 12:00:30', 'https://plain.test/x', { user_agent: FIREFOX, ip: '2001:db8::1' }),
    pv(plain, '2026-03-28 12:00:30', 'https://plain.test/x', { user_agent: SAFARI_IPHONE, ip: '::ffff:81.2.69.142' }),
    // Text CSV must quote: commas, quotes, a campaign with both, unicode, a hash route.
    pv(plain, '2026-03-28 13:00:00', 'https://plain.test/a,b"c/?utm_campaign=he%20said%20%22hi%22%2C%20ok&ref=a,b', { user_agent: SAFARI_IPHONE, ip: '203.0.113.9' }),
    pv(plain, '2026-03-28 13:00:05', 'https://plain.test/caf%C3%A9/%E2%9C%93#/route?kw=x,y', { user_agent: SAFARI_IPHONE, ip: '203.0.113.9', referrer: 'https://t.co/abc,def' }),
    // Dropped: a bot, an empty agent, an excluded host, an unknown site.
    pv(plain, '2026-03-28 14:00:00', 'https://plain.test/', { user_agent: GOOGLEBOT }),
    pv(plain, '2026-03-28 14:00:00', 'https://plain.test/', { user_agent: '' }),
    pv(plain, '2026-03-28 14:00:00', 'https://app.internal.test/'),
    pv('NOSUCHID', '2026-03-28 14:00:00', 'https://plain.test/'),
    // Refused: bad JSON, bad fields, a bad URL, a bad value, a bot with a bad URL.
    '{not json',
    '[]',
    line({ type: 'click', site_id: plain, timestamp: '2026-03-28 10:00:00', url: 'https://plain.test/' }),
    line({ type: 'pageview', site_id: plain, timestamp: 'yesterday', url: 'https://plain.test/' }),
    pv(plain, '2026-03-28 10:00:00', 'ftp://plain.test/'),
    pv(plain, '2026-03-28 10:00:00', 'ftp://plain.test/', { user_agent: GOOGLEBOT }),
    line({ type: 'event', site_id: plain, timestamp: '2026-03-28 10:00:00', url: 'https://plain.test/', name: 'x', value: -1 }),
    line({ type: 'event', site_id: plain, timestamp: '2026-03-28 10:00:00', url: 'https://plain.test/', name: 'n'.repeat(256) }),
    '',
    // Multi-domain: moving between the site's domains is no referral once Plumb has seen the other domain.
    pv(combined, '2026-03-28 15:00:00', 'https://shop.multi.test/', { referrer: 'https://blog.multi.test/post' }),
    pv(combined, '2026-03-28 15:01:00', 'https://blog.multi.test/post', { referrer: 'https://www.bing.com/' }),
    pv(combined, '2026-03-28 15:02:00', 'https://shop.multi.test/cart', { referrer: 'https://blog.multi.test/post' }),
    pv(combined, '2026-03-28 15:03:00', 'https://other.test/', { referrer: 'https://shop.multi.test/cart' }),
    pv(separate, '2026-03-28 15:00:00', 'https://one.sep.test/', { referrer: 'https://two.sep.test/' }),
    pv(separate, '2026-03-28 15:01:00', 'https://two.sep.test/', { referrer: 'https://one.sep.test/' }),
    pv(separate, '2026-03-28 15:02:00', 'https://one.sep.test/again', { referrer: 'https://two.sep.test/' }),
  ];
}

/** Lines as the CLI sends them (oldest first, in chunks), but each chunk shuffled: the server sorts it again. */
function chunks(lines: string[], size: number): string[][] {
  const at = (l: string) => {
    const m = /"timestamp":"([^"]*)"/.exec(l);
    const t = m ? Date.parse(`${m[1]!.replace(' ', 'T')}Z`) : NaN;
    return Number.isNaN(t) ? -Infinity : t;
  };
  const sorted = lines.map((l, i) => ({ l, t: at(l), i })).sort((a, b) => a.t - b.t || a.i - b.i).map((x) => x.l);
  const out: string[][] = [];
  for (let i = 0; i < sorted.length; i += size) {
    const chunk = sorted.slice(i, i + size);
    out.push(chunk.map((l, k) => ({ l, k: (k * 7919) % chunk.length })).sort((a, b) => a.k - b.k).map((x) => x.l));
  }
  return out;
}

/** Hits and visits with visit ids (random per import) replaced by what identifies a visit: visitor and start. */
async function canonical(events: DuckEventStore, siteId: string): Promise<{ hits: string[]; visits: string[] }> {
  const visits = await events.listVisits(siteId);
  const key = new Map<bigint, string>(visits.map((v) => [v.visitId, `${v.visitorId}@${v.startedAt.toISOString()}`]));
  assert.equal(new Set(key.values()).size, visits.length, 'visits are told apart by visitor and start');
  const text = (o: StoredHit | VisitRecord) =>
    JSON.stringify({ ...o, visitId: key.get(o.visitId) ?? `unknown ${o.visitId}` }, (_k, v: unknown) => (typeof v === 'bigint' ? v.toString() : v));
  return { hits: (await events.listHits(siteId)).map(text).sort(), visits: visits.map(text).sort() };
}

/** Hits per load here: small, so that a chunk makes several loads and visits continue across them. */
const LOAD_HITS = 300;

/** Visits per load of their own here: fewer than a chunk's, more than a load's, so that visits wait across loads. */
const VISIT_LOAD_ROWS = 200;

/**
 * One import as the import thread runs it (src/ingest/bulk-import/import-thread.ts): its chunks in order, each written
 * to a file and parsed into columns as the reader thread parses it (or, `lines`, parsed line by line by BatchImport
 * itself), each chunk's rows in slices gathered into loads of LOAD_HITS hits or more (a chunk's last load may be
 * smaller), the visits they touched waiting across loads until there are VISIT_LOAD_ROWS of them (or the chunk is
 * done), each load stored by writeCsv before the chunk is answered. Every load's counts are kept in `loads`.
 */
class ThreadLikeImport {
  readonly batch: BatchImport;
  private readonly visits = new PendingVisits();
  private readonly name = Math.random().toString(36).slice(2);
  private loadsMade = 0;
  readonly loads: CsvRows[] = [];

  constructor(
    private readonly geo: GeoLookup,
    private readonly events: DuckEventStore,
    private readonly lookups: ImportLookups,
    private readonly dir: string,
    private readonly read: 'columns' | 'lines' = 'columns',
  ) {
    this.batch = new BatchImport({ geo, salts: new EphemeralSalts(fixedSalt), excludedHosts: EXCLUDED });
  }

  async chunk(lines: string[], first: number): Promise<ImportResult> {
    const store = async (load: CsvLoad, last: boolean) => {
      const rows = await load.finish(last || this.visits.size >= VISIT_LOAD_ROWS ? this.visits : undefined);
      this.loads.push(rows);
      await this.events.writeCsv(rows);
    };
    const newLoad = () => new CsvLoad(this.dir, `${this.name}-${++this.loadsMade}`);
    let load = newLoad();
    let chunk: string[] | ChunkColumns = lines;
    if (this.read === 'columns') {
      const file = join(this.dir, `${this.name}-body-${this.loadsMade}.ndjson`);
      await writeFile(file, lines.join('\n'));
      // Addresses placed as the reader thread places them.
      chunk = await readColumns(file, first, (ip) => placeCsv(this.geo.lookup(ip)));
    }
    const { result } = await this.batch.chunk(chunk, first, this.lookups, async (hits, visits) => {
      await load.add(hits);
      this.visits.add(visits);
      if (load.size >= LOAD_HITS) {
        await store(load, false);
        load = newLoad();
      }
    }, 150);
    if (load.size > 0 || this.visits.size > 0) await store(load, true);
    return result;
  }
}

describe('set-based import (BatchImport) against the live pipeline', () => {
  let metaDb: DuckDatabase;
  let meta: SqlMetaStore;
  let live: { db: DuckDatabase; events: DuckEventStore };
  let batch: { db: DuckDatabase; events: DuckEventStore };
  let dir: string;
  let sites: Site[];
  let files: string[][];
  /** The lines of two imports that share no site (the demo site's, and the rest). */
  let apart: [string[], string[]];

  before(async () => {
    metaDb = await DuckDatabase.open(':memory:');
    await migrate(metaDb);
    meta = new SqlMetaStore(metaDb);
    live = await eventStore();
    batch = await eventStore();
    dir = await mkdtemp(join(tmpdir(), 'plumb-batch-import-'));
    const account = await meta.createAccount({ name: 'A', email: 'a@a.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const site = (name: string, multiDomain: boolean, multiDomainOption: 'combined' | 'separate' | null) =>
      meta.createSite({ accountId: account.id, name, sharing: 'none', sharePasswordHash: null, timezone: 'UTC', multiDomain, multiDomainOption });
    sites = [await site('Plain', false, null), await site('Combined', true, 'combined'), await site('Separate', true, 'separate'), await site('Demo', false, null)];
    const [plain, combined, separate, demo] = sites.map((s) => s.id) as [string, string, string, string];
    const generated = (siteId: string, seed: number, hostname?: string) =>
      [...demoTraffic({ siteId, start: new Date('2026-03-27T00:00:00Z'), days: 3, visitsPerDay: 120, seed, ...(hostname ? { hostname } : {}) })].map((h) =>
        JSON.stringify(h),
      );
    apart = [generated(demo, 3), [...generated(plain, 4, 'https://plain.test'), ...handWritten(plain, combined, separate)]];
    files = chunks(apart.flat(), 700);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
    for (const { db, events } of [live, batch]) {
      await events.close();
      await db.close();
    }
    await meta.close();
  });

  /** Every site's hits and visits in `a` and `b` are the same (visit ids aside). */
  async function sameRows(a: DuckEventStore, b: DuckEventStore, when: string): Promise<void> {
    for (const site of sites) {
      const x = await canonical(a, site.id);
      const y = await canonical(b, site.id);
      assert.deepEqual(y.visits, x.visits, `${site.name}: visits ${when}`);
      assert.deepEqual(y.hits, x.hits, `${site.name}: hits ${when}`);
    }
  }

  it('stores the same hits and visits, with the same answers, as the live pipeline, after every chunk', async () => {
    const metrics = new Metrics();
    const buffer = new WriteBuffer(live.events, { flushIntervalMs: 60_000 });
    const pipeline = new HitPipeline({
      enricher: await Enricher.create(),
      sites: new SiteDirectory(meta),
      salts: new EphemeralSalts(fixedSalt),
      visits: new VisitTracker(),
      sink: buffer,
      counters: metricsCounters(metrics),
      excludedHosts: EXCLUDED,
    });
    const importer = new ThreadLikeImport(await GeoLookup.open(), batch.events, directoryLookups(new SiteDirectory(meta)), dir);
    const liveAnswers: ImportResult[] = [];
    const batchAnswers: ImportResult[] = [];
    let first = 1;
    for (const [i, lines] of files.entries()) {
      liveAnswers.push(await importLines(lines, pipeline, buffer, first));
      await buffer.flush();
      batchAnswers.push(await importer.chunk(lines, first));
      first += lines.length;
      // An import stopped here (or a report read now) finds the rows the live pipeline would have stored so far.
      await sameRows(live.events, batch.events, `after chunk ${i + 1}`);
    }
    await buffer.close();

    assert.deepEqual(batchAnswers, liveAnswers);
    // Chunks come oldest first: visits idle for half an hour before a chunk are forgotten, not kept to the end.
    const stored = (await Promise.all(sites.map((s) => batch.events.listVisits(s.id)))).flat().length;
    assert.ok(importer.batch.activeVisits > 0 && importer.batch.activeVisits < stored / 4, `${importer.batch.activeVisits} of ${stored} visits still held`);
    const imported = liveAnswers.reduce((n, r) => n + r.imported, 0);
    const messages = new Set(liveAnswers.flatMap((r) => r.errors.map((e) => e.message)));
    assert.ok(imported > 1200, `${imported} hits imported`);
    assert.ok(importer.loads.length > files.length, 'chunks were stored in several loads');
    // Both ways of storing a visit were taken: appended (no earlier load stored it) and replaced (one did).
    // Visits waited across loads of hits (stored with a later load of the chunk, before it was answered).
    assert.ok(importer.loads.some((l) => l.hits === LOAD_HITS && l.newVisits + l.visits === 0), 'a load stored hits alone');
    assert.ok(importer.loads.filter((l) => l.visits > 0).length >= files.length, 'visits continued across loads and chunks');
    assert.equal(importer.loads.reduce((n, l) => n + l.newVisits, 0), stored, 'each visit appended once');
    for (const m of ['user_agent is a bot', 'site_id names no site', 'the page host is excluded', 'not valid JSON', 'the page URL must be an absolute http(s) URL']) {
      assert.ok(messages.has(m), `a line was refused with "${m}"`);
    }
    for (const site of sites) assert.ok((await live.events.listHits(site.id)).length > 0, `${site.name} has hits`);
  });

  it('stores two imports whose chunks interleave as the live pipeline stores them', async () => {
    const both = await eventStore();
    try {
      const lookups = directoryLookups(new SiteDirectory(meta));
      const geo = await GeoLookup.open();
      // One parsed by the reader's columns, one line by line by BatchImport: both ways give the live pipeline's rows.
      const imports = apart.map((lines, i) => ({
        importer: new ThreadLikeImport(geo, both.events, lookups, dir, i === 0 ? 'columns' : 'lines'),
        chunks: chunks(lines, 300),
        first: 1,
      }));
      for (let i = 0; i < Math.max(...imports.map((x) => x.chunks.length)); i++) {
        for (const x of imports) {
          const lines = x.chunks[i];
          if (!lines) continue;
          await x.importer.chunk(lines, x.first);
          x.first += lines.length;
        }
      }
      assert.ok(imports.every((x) => x.chunks.length >= 2 && x.importer.loads.some((l) => l.visits > 0)), 'both imports continued visits across loads');
      await sameRows(live.events, both.events, 'of two interleaved imports');
    } finally {
      await both.events.close();
      await both.db.close();
    }
  });

  it('kept what makes the comparison worth something: visits of several pages, split by the timeout and across midnight', async () => {
    const plain = sites[0]!.id;
    const visits = await live.events.listVisits(plain);
    const hits = await live.events.listHits(plain);
    assert.ok(visits.some((v) => v.pageviews >= 3), 'a visit of three pages or more');
    assert.ok(visits.some((v) => v.startedAt.getUTCDate() !== v.lastSeenAt.getUTCDate()), 'a visit across midnight');
    const startedAt = (iso: string) => visits.find((v) => v.startedAt.toISOString() === iso);
    assert.equal(startedAt('2026-03-28T23:59:59.000Z')?.lastSeenAt.toISOString(), '2026-03-29T00:45:00.000Z', 'continued after exactly 30 minutes, across midnight');
    assert.ok(startedAt('2026-03-29T00:30:00.000Z') && startedAt('2026-03-29T01:00:00.000Z'), 'new visits after 31 minutes and after an hour');
    assert.deepEqual(
      ['16:00', '16:01', '16:02'].map((t) => startedAt(`2026-03-28T${t}:00.000Z`)?.pageviews),
      [2, 2, 1],
      'three visitors at one address, told apart by their agents',
    );
    const byVisitor = new Map<bigint, number>();
    for (const v of visits) byVisitor.set(v.visitorId, (byVisitor.get(v.visitorId) ?? 0) + 1);
    assert.ok([...byVisitor.values()].some((n) => n >= 2), 'a visitor with two visits');
    assert.ok(hits.some((h) => h.utmCampaign === 'he said "hi", ok'), 'a campaign value with a quote and a comma');
    assert.ok(hits.some((h) => h.eventName === 'Purchase' && h.value === 1299));
    assert.ok(hits.some((h) => h.firstView) && hits.some((h) => h.type === 'pageview' && !h.firstView));
  });
});
