// HitPipeline end to end on real DuckDB stores: enrichment, no IP or agent stored, drops, goals, multi-domain visits.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { IncomingHit } from '../../src/domain/hits.js';
import { Ingest } from '../../src/ingest/ingest.js';
import { InvalidHit } from '../../src/ingest/pipeline.js';
import { utcDay } from '../../src/domain/time.js';
import { Metrics } from '../../src/metrics.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { DuckEventStore } from '../../src/store/duckdb/event-store.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import type { MultiDomainOption, Site } from '../../src/store/types.js';

const CHROME_WINDOWS =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const GOOGLEBOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const IP = '81.2.69.142';
const HISTORY = Date.parse('2025-06-01T10:00:00Z');

describe('HitPipeline', () => {
  let db: DuckDatabase;
  let meta: SqlMetaStore;
  let events: DuckEventStore;
  let metrics: Metrics;
  let ingest: Ingest;
  let accountId: number;

  before(async () => {
    db = await DuckDatabase.open(':memory:');
    await migrate(db);
    meta = new SqlMetaStore(db);
    events = await DuckEventStore.open(db);
    metrics = new Metrics();
    ingest = await Ingest.start(meta, events, metrics, { excludedHosts: ['*.internal.test'] });
    const account = await meta.createAccount({ name: 'A', email: 'a@a.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    accountId = account.id;
  });
  after(async () => {
    await ingest.close();
    await events.close();
    await meta.close();
  });

  const newSite = (multiDomain = false, multiDomainOption: MultiDomainOption | null = null): Promise<Site> =>
    meta.createSite({ accountId, name: 'S', sharing: 'none', sharePasswordHash: null, timezone: 'UTC', multiDomain, multiDomainOption });

  const hit = (siteId: string, overrides: Partial<IncomingHit> = {}): IncomingHit => ({
    type: 'pageview',
    siteId,
    timestamp: new Date(HISTORY),
    url: 'https://example.com/',
    referrer: '',
    userAgent: CHROME_WINDOWS,
    ip: IP,
    ...overrides,
  });

  /** The current value of plumb_hits_dropped_total for a reason (0 when never counted). */
  const dropped = async (reason: string): Promise<number> => {
    const text = await metrics.registry.getSingleMetricAsString('plumb_hits_dropped_total');
    const line = text.split('\n').find((l) => l.startsWith(`plumb_hits_dropped_total{reason="${reason}"}`));
    return line ? Number(line.split(' ').at(-1)) : 0;
  };

  it('records an enriched pageview', async () => {
    const site = await newSite();
    const outcome = await (await ingest.importPipeline()).process(
      hit(site.id, { url: 'https://Example.com/Docs/?utm_source=x', referrer: 'https://www.google.com/' }),
    );
    assert.deepEqual(outcome, { recorded: true });
    await ingest.flush();
    const [stored, ...rest] = await events.listHits(site.id);
    assert.equal(rest.length, 0);
    assert.ok(stored);
    assert.equal(stored.siteId, site.id);
    assert.equal(stored.type, 'pageview');
    assert.equal(stored.timestamp.getTime(), HISTORY);
    assert.equal(stored.hostname, 'https://example.com');
    assert.equal(stored.pathname, '/Docs');
    assert.equal(stored.utmSource, 'x');
    assert.equal(stored.referrerHostname, 'https://www.google.com');
    assert.equal(stored.referrerPathname, '/');
    assert.equal(stored.referrerSource, 'Google');
    assert.equal(stored.browser, 'Chrome');
    assert.equal(stored.operatingSystem, 'Windows');
    assert.equal(stored.deviceType, 'Desktop');
    assert.equal(stored.countryCode, 'GB');
    assert.equal(stored.eventName, '');
    assert.equal(stored.value, 0);

    const [visit, ...more] = await events.listVisits(site.id);
    assert.equal(more.length, 0);
    assert.ok(visit);
    assert.equal(visit.visitId, stored.visitId);
    assert.equal(visit.visitorId, stored.visitorId);
    assert.equal(visit.entryPage, '/Docs');
    assert.equal(visit.exitHostname, 'https://example.com');
    assert.equal(visit.pageviews, 1);
    assert.equal(visit.referrerHostname, 'https://www.google.com');
  });

  it("stores every hit of a visit, pageviews and events, with the visit's first-touch attribution", async () => {
    const site = await newSite();
    const pipeline = await ingest.importPipeline();
    await pipeline.process(hit(site.id, { url: 'https://example.com/?utm_source=hn&utm_campaign=launch', referrer: 'https://news.ycombinator.com/item?id=1' }));
    await pipeline.process(hit(site.id, { url: 'https://example.com/pricing', referrer: 'https://example.com/', timestamp: new Date(HISTORY + 60_000) }));
    // A later external referrer and campaign within the visit: attribution stays, no new visit.
    await pipeline.process(hit(site.id, { url: 'https://example.com/docs?utm_source=newsletter', referrer: 'https://www.google.com/', timestamp: new Date(HISTORY + 120_000) }));
    await pipeline.process(hit(site.id, { type: 'event', eventName: 'Signup', value: 900, timestamp: new Date(HISTORY + 180_000) }));
    await ingest.flush();
    const stored = await events.listHits(site.id);
    assert.equal(stored.length, 4);
    assert.equal(new Set(stored.map((h) => h.visitId)).size, 1);
    for (const h of stored) {
      assert.deepEqual([h.referrerHostname, h.referrerPathname, h.referrerSource, h.utmSource, h.utmCampaign], ['https://news.ycombinator.com', '/item', 'Hacker News', 'hn', 'launch'], h.pathname);
    }
    const [visit] = await events.listVisits(site.id);
    assert.deepEqual([visit?.referrerSource, visit?.utmSource, visit?.utmCampaign], ['Hacker News', 'hn', 'launch']);
  });

  it("gives each hit its own UTC day's visitor id, also within a visit that crosses midnight", async () => {
    const site = await newSite();
    const pipeline = await ingest.importPipeline();
    const midnight = Date.parse('2025-06-02T00:00:00Z');
    await pipeline.process(hit(site.id, { url: 'https://example.com/late', timestamp: new Date(midnight - 60_000) }));
    await pipeline.process(hit(site.id, { url: 'https://example.com/later', timestamp: new Date(midnight + 60_000) }));
    await pipeline.process(hit(site.id, { url: 'https://example.com/again', timestamp: new Date(midnight + 120_000) }));
    await ingest.flush();
    const [before, after, again] = await events.listHits(site.id);
    assert.equal(before!.visitId, after!.visitId, 'one visit across midnight');
    assert.notEqual(before!.visitorId, after!.visitorId, 'two visitor-days');
    assert.equal(after!.visitorId, again!.visitorId);
    const [visit] = await events.listVisits(site.id);
    assert.equal(visit!.visitorId, before!.visitorId, 'the visit keeps the visitor id it started under');
  });

  it('stores no field containing the IP or the user agent', async () => {
    const site = await newSite();
    const pipeline = await ingest.importPipeline();
    await pipeline.process(hit(site.id, { url: 'https://example.com/a', referrer: 'https://www.google.com/' }));
    await pipeline.process(hit(site.id, { type: 'event', eventName: 'Signup', value: 100, timestamp: new Date(HISTORY + 60_000) }));
    await ingest.collect(hit(site.id, { url: 'https://example.com/live', timestamp: new Date() }));
    await ingest.flush();
    const tables = {
      hits: await db.serial((q) => q.rows<Record<string, unknown>>('SELECT * FROM hits WHERE site_id = ?', [site.id])),
      visits: await db.serial((q) => q.rows<Record<string, unknown>>('SELECT * FROM visits WHERE site_id = ?', [site.id])),
    };
    assert.equal(tables.hits.length, 3);
    assert.equal(tables.visits.length, 2);
    for (const [table, rows] of Object.entries(tables)) {
      for (const row of rows) {
        for (const [column, value] of Object.entries(row)) {
          const text = value instanceof Date ? value.toISOString() : String(value);
          for (const secret of [IP, '81.2.69', CHROME_WINDOWS, 'Mozilla', 'Win64', 'AppleWebKit']) {
            assert.ok(!text.includes(secret), `${table}.${column} = ${JSON.stringify(text)} contains ${secret}`);
          }
        }
      }
    }
  });

  it('stores salts for live hits only, never for imported days', async () => {
    const site = await newSite();
    await (await ingest.importPipeline()).process(hit(site.id, { timestamp: new Date('2019-01-01T12:00:00Z') }));
    await ingest.collect(hit(site.id, { timestamp: new Date() }));
    assert.equal(await meta.findSalt('2019-01-01'), undefined);
    assert.ok(await meta.findSalt(utcDay(new Date())));
  });

  it('drops hits from bots, counted by reason', async () => {
    const site = await newSite();
    const before = await dropped('bot');
    const outcome = await (await ingest.importPipeline()).process(hit(site.id, { userAgent: GOOGLEBOT }));
    assert.deepEqual(outcome, { recorded: false, reason: 'bot' });
    const empty = await (await ingest.importPipeline()).process(hit(site.id, { userAgent: '' }));
    assert.deepEqual(empty, { recorded: false, reason: 'bot' });
    assert.equal(await dropped('bot'), before + 2);
    await ingest.flush();
    assert.deepEqual(await events.listHits(site.id), []);
  });

  it('drops hits for an unknown site, counted by reason', async () => {
    const before = await dropped('unknown-site');
    const outcome = await (await ingest.importPipeline()).process(hit('NOSUCHSI'));
    assert.deepEqual(outcome, { recorded: false, reason: 'unknown-site' });
    assert.equal(await dropped('unknown-site'), before + 1);
  });

  it('drops hits for excluded hosts, counted by reason', async () => {
    const site = await newSite();
    const before = await dropped('excluded-host');
    const pipeline = await ingest.importPipeline();
    assert.deepEqual(await pipeline.process(hit(site.id, { url: 'https://app.internal.test/x' })), { recorded: false, reason: 'excluded-host' });
    assert.deepEqual(await pipeline.process(hit(site.id, { url: 'http://A.B.Internal.Test:8080/' })), { recorded: false, reason: 'excluded-host' });
    assert.equal(await dropped('excluded-host'), before + 2);
    // A host that merely ends in the same letters is not excluded.
    assert.deepEqual(await pipeline.process(hit(site.id, { url: 'https://notinternal.test/' })), { recorded: true });
    await ingest.flush();
    assert.deepEqual((await events.listHits(site.id)).map((h) => h.hostname), ['https://notinternal.test']);
  });

  it('rejects a non-http page URL and malformed events with InvalidHit', async () => {
    const site = await newSite();
    const pipeline = await ingest.importPipeline();
    await assert.rejects(pipeline.process(hit(site.id, { url: 'ftp://example.com/file' })), InvalidHit);
    await assert.rejects(pipeline.process(hit(site.id, { url: '/relative/path' })), InvalidHit);
    await assert.rejects(pipeline.process(hit(site.id, { type: 'event' })), InvalidHit);
    await assert.rejects(pipeline.process(hit(site.id, { type: 'event', eventName: 'x'.repeat(256) })), InvalidHit);
    await assert.rejects(pipeline.process(hit(site.id, { type: 'event', eventName: 'Buy', value: -1 })), InvalidHit);
    await assert.rejects(pipeline.process(hit(site.id, { type: 'event', eventName: 'Buy', value: 1.5 })), InvalidHit);
    await ingest.flush();
    assert.deepEqual(await events.listHits(site.id), []);
    assert.deepEqual((await meta.listGoals(site.id, { limit: 100 })).items, []);
  });

  it('stores custom properties within the limits, whatever the caller handed over, on the live and import paths', async () => {
    const site = await newSite();
    // 40 pairs after one too long and one blank: the usable ones, first 30, keys unique.
    const many = Array.from({ length: 40 }, (_, i) => [`k${i}`, `v${i}`] as [string, string]);
    const props = [['long', 'x'.repeat(2001)], ['blank', ' '], ['k0', 'first'], ...many] as [string, string][];
    const expected = [['k0', 'first'], ...many.slice(1, 30)];
    await ingest.collect(hit(site.id, { type: 'event', eventName: 'Signup', timestamp: new Date(), props }));
    await (await ingest.importPipeline()).process(hit(site.id, { type: 'event', eventName: 'Signup', props }));
    await ingest.flush();
    const stored = await events.listHits(site.id);
    assert.equal(stored.length, 2);
    for (const h of stored) assert.deepEqual(h.props, expected);
  });

  it('creates a goal for a new event name once, even for concurrent hits', async () => {
    const site = await newSite();
    const pipeline = await ingest.importPipeline();
    const outcomes = await Promise.all(
      [0, 1, 2].map((i) =>
        pipeline.process(hit(site.id, { type: 'event', eventName: 'Newsletter signup', value: 250, timestamp: new Date(HISTORY + i * 1000) })),
      ),
    );
    assert.deepEqual(outcomes, [{ recorded: true }, { recorded: true }, { recorded: true }]);
    let goals = (await meta.listGoals(site.id, { limit: 100 })).items;
    assert.deepEqual(goals.map((g) => g.name), ['Newsletter signup']);

    // Later hits with the same name use the same goal.
    await pipeline.process(hit(site.id, { type: 'event', eventName: 'Newsletter signup', timestamp: new Date(HISTORY + 5000) }));
    goals = (await meta.listGoals(site.id, { limit: 100 })).items;
    assert.equal(goals.length, 1);

    await ingest.flush();
    const stored = await events.listHits(site.id);
    assert.equal(stored.length, 4);
    assert.ok(stored.every((h) => h.type === 'event' && h.eventName === 'Newsletter signup'));
    assert.deepEqual(stored.map((h) => h.value), [250, 250, 250, 0]);
    const [visit] = await events.listVisits(site.id);
    assert.equal(visit?.events, 4);
    assert.equal(visit?.pageviews, 0);
    assert.equal(visit?.entryPage, '');
  });

  describe('multi-domain sites', () => {
    const twoDomains = async (site: Site) => {
      const pipeline = await ingest.importPipeline();
      await pipeline.process(hit(site.id, { url: 'https://a.example/a-page' }));
      await pipeline.process(hit(site.id, { url: 'https://b.example/b-page', timestamp: new Date(HISTORY + 60_000) }));
      await ingest.flush();
      return { hits: await events.listHits(site.id), visits: await events.listVisits(site.id) };
    };

    it("puts one person's hits on two domains into one visit when combined", async () => {
      const { hits, visits } = await twoDomains(await newSite(true, 'combined'));
      assert.equal(hits.length, 2);
      assert.equal(hits[0]!.visitorId, hits[1]!.visitorId);
      assert.equal(visits.length, 1);
      assert.equal(visits[0]!.pageviews, 2);
      assert.equal(visits[0]!.entryPage, '/a-page');
      assert.equal(visits[0]!.exitPage, '/b-page');
      assert.equal(visits[0]!.exitHostname, 'https://b.example');
    });

    it('keeps each domain to its own visits when separate', async () => {
      const { hits, visits } = await twoDomains(await newSite(true, 'separate'));
      assert.equal(hits.length, 2);
      assert.notEqual(hits[0]!.visitorId, hits[1]!.visitorId);
      assert.notEqual(hits[0]!.visitId, hits[1]!.visitId);
      assert.equal(visits.length, 2);
      assert.deepEqual(visits.map((v) => [v.exitHostname, v.entryPage, v.pageviews]), [
        ['https://a.example', '/a-page', 1],
        ['https://b.example', '/b-page', 1],
      ]);
    });

    it('treats a site that is not multi-domain like combined', async () => {
      const { hits, visits } = await twoDomains(await newSite(false, null));
      assert.equal(hits[0]!.visitorId, hits[1]!.visitorId);
      assert.equal(visits.length, 1);
      assert.equal(visits[0]!.pageviews, 2);
    });

    it("does not count moving between a multi-domain site's own domains as a referral", async () => {
      const site = await newSite(true, 'combined');
      const pipeline = await ingest.importPipeline();
      await pipeline.process(hit(site.id, { url: 'https://a.example/', referrer: 'https://www.google.com/' }));
      // Other visitors, so that each hit starts a visit and keeps its own referrer as the visit's attribution.
      await pipeline.process(hit(site.id, { url: 'https://b.example/shop', referrer: 'https://a.example/', timestamp: new Date(HISTORY + 60_000), ip: '203.0.113.7' }));
      await pipeline.process(hit(site.id, { url: 'https://b.example/shop/cart', referrer: 'https://c.example/', timestamp: new Date(HISTORY + 90_000), ip: '203.0.113.8' }));
      await ingest.flush();
      const stored = await events.listHits(site.id);
      assert.deepEqual(stored.map((h) => h.referrerHostname), ['https://www.google.com', '', 'https://c.example']);
    });

    it('ignores a leftover "separate" option on a site that is not multi-domain', async () => {
      const { visits } = await twoDomains(await newSite(false, 'separate'));
      assert.equal(visits.length, 1);
    });
  });

  it('keeps visitors of different people and of different sites apart', async () => {
    const one = await newSite();
    const two = await newSite();
    const pipeline = await ingest.importPipeline();
    await pipeline.process(hit(one.id));
    await pipeline.process(hit(one.id, { ip: '8.8.8.8', timestamp: new Date(HISTORY + 1000) }));
    await pipeline.process(hit(two.id, { timestamp: new Date(HISTORY + 2000) }));
    await ingest.flush();
    const hitsOne = await events.listHits(one.id);
    const hitsTwo = await events.listHits(two.id);
    assert.notEqual(hitsOne[0]!.visitorId, hitsOne[1]!.visitorId);
    assert.notEqual(hitsOne[0]!.visitorId, hitsTwo[0]!.visitorId);
    assert.equal((await events.listVisits(one.id)).length, 2);
    assert.equal((await events.listVisits(two.id)).length, 1);
  });
});
