// Daily salts on a real DuckDB MetaStore (shared per day, previous day, rotation), import salts, the visitor hash.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { utcDay } from '../../src/domain/time.js';
import { EphemeralSalts, StoredSalts } from '../../src/ingest/salts.js';
import { visitorHash } from '../../src/ingest/visitor.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import { migrate } from '../../src/store/duckdb/migrations.js';

describe('StoredSalts', () => {
  let db: DuckDatabase;
  let meta: SqlMetaStore;
  before(async () => {
    db = await DuckDatabase.open(':memory:');
    await migrate(db);
    meta = new SqlMetaStore(db);
  });
  after(async () => {
    await meta.close();
    await db.close();
  });

  it('names days in UTC', () => {
    assert.equal(utcDay(new Date('2026-03-04T23:59:59.999Z')), '2026-03-04');
    assert.equal(utcDay(new Date('2026-03-05T00:00:00Z')), '2026-03-05');
    assert.equal(utcDay(new Date('2026-03-05T01:30:00+02:00')), '2026-03-04');
  });

  it('gives every process the same salt for a day, and a new day a different one', async () => {
    const one = new StoredSalts(meta);
    const two = new StoredSalts(meta);
    const [a, b] = await Promise.all([
      one.saltsFor(new Date('2030-01-10T08:00:00Z')),
      two.saltsFor(new Date('2030-01-10T21:00:00Z')),
    ]);
    assert.ok(a.current.length >= 32);
    assert.equal(a.current, b.current);
    assert.equal(await meta.findSalt('2030-01-10'), a.current);
    // Asked again (cached or not), the same.
    assert.equal((await one.saltsFor(new Date('2030-01-10T23:59:59Z'))).current, a.current);
    assert.equal((await new StoredSalts(meta).saltsFor(new Date('2030-01-10T00:00:00Z'))).current, a.current);

    const next = await two.saltsFor(new Date('2030-01-11T00:00:00Z'));
    assert.notEqual(next.current, a.current);
    assert.equal((await one.saltsFor(new Date('2030-01-11T12:00:00Z'))).current, next.current);
  });

  it('gives the previous day\'s salt when it exists, undefined otherwise', async () => {
    const salts = new StoredSalts(meta);
    const first = await salts.saltsFor(new Date('2031-05-01T12:00:00Z'));
    assert.equal(first.previous, undefined, 'no salt for 2031-04-30');
    const second = await salts.saltsFor(new Date('2031-05-02T00:10:00Z'));
    assert.equal(second.previous, first.current);
    // A gap day: two days later has no previous.
    const later = await salts.saltsFor(new Date('2031-05-04T00:10:00Z'));
    assert.equal(later.previous, undefined);
    // Another process sees the same pair.
    const other = await new StoredSalts(meta).saltsFor(new Date('2031-05-02T23:00:00Z'));
    assert.deepEqual(other, second);
  });

  it('rotate() deletes salts of days before yesterday and keeps yesterday and today', async () => {
    const salts = new StoredSalts(meta);
    const days = ['2032-07-01', '2032-07-02', '2032-07-03', '2032-07-04'];
    for (const day of days) await salts.saltsFor(new Date(`${day}T12:00:00Z`));
    for (const day of days) assert.ok(await meta.findSalt(day), `${day} exists`);

    const deleted = await salts.rotate(new Date('2032-07-04T00:00:01Z'));
    assert.ok(deleted >= 2, `deleted ${deleted}`);
    assert.equal(await meta.findSalt('2032-07-01'), undefined);
    assert.equal(await meta.findSalt('2032-07-02'), undefined);
    assert.ok(await meta.findSalt('2032-07-03'), 'yesterday is kept');
    assert.ok(await meta.findSalt('2032-07-04'), 'today is kept');

    // A fresh process asking for today still gets the kept salt and yesterday's as previous.
    const kept = await new StoredSalts(meta).saltsFor(new Date('2032-07-04T09:00:00Z'));
    assert.equal(kept.current, await meta.findSalt('2032-07-04'));
    assert.equal(kept.previous, await meta.findSalt('2032-07-03'));
  });
});

describe('EphemeralSalts', () => {
  it('never touches a store and gives stable per-day salts, with previous set after the first day', async () => {
    const salts = new EphemeralSalts();
    const d1 = await salts.saltsFor(new Date('2020-02-28T10:00:00Z'));
    assert.equal(d1.previous, undefined);
    assert.equal((await salts.saltsFor(new Date('2020-02-28T23:59:59Z'))).current, d1.current);
    const d2 = await salts.saltsFor(new Date('2020-02-29T00:00:00Z'));
    assert.notEqual(d2.current, d1.current);
    assert.equal(d2.previous, d1.current);
    const d3 = await salts.saltsFor(new Date('2020-03-01T05:00:00Z'));
    assert.equal(d3.previous, d2.current);
    // Going back to an earlier day still gives that day's salt.
    assert.deepEqual(await salts.saltsFor(new Date('2020-02-29T18:00:00Z')), d2);
    // Another import has salts of its own.
    assert.notEqual((await new EphemeralSalts().saltsFor(new Date('2020-02-28T10:00:00Z'))).current, d1.current);
  });
});

describe('visitorHash', () => {
  const base = ['salt-1', 'SITEAAAA', '1.2.3.4', 'Mozilla/5.0 Test'] as const;

  it('is a stable 64-bit value for the same inputs', () => {
    const h = visitorHash(...base);
    assert.equal(typeof h, 'bigint');
    assert.ok(h >= 0n && h < 2n ** 64n);
    assert.equal(visitorHash(...base), h);
    assert.equal(visitorHash(...base, 'https://a.example'), visitorHash(...base, 'https://a.example'));
  });

  it('changes when any one input changes', () => {
    const h = visitorHash(...base);
    const [salt, site, ip, ua] = base;
    const variants = [
      visitorHash('salt-2', site, ip, ua),
      visitorHash(salt, 'SITEBBBB', ip, ua),
      visitorHash(salt, site, '1.2.3.5', ua),
      visitorHash(salt, site, ip, 'Mozilla/5.0 Other'),
      visitorHash(salt, site, ip, ua, 'https://a.example'),
    ];
    for (const v of variants) assert.notEqual(v, h);
    assert.equal(new Set([h, ...variants]).size, variants.length + 1);
    assert.notEqual(visitorHash(salt, site, ip, ua, 'https://a.example'), visitorHash(salt, site, ip, ua, 'https://b.example'));
  });

  it('keeps fields apart (no run-together collisions)', () => {
    assert.notEqual(visitorHash('s', 'SITE', '1.2.3.4', '5x'), visitorHash('s', 'SITE', '1.2.3.45', 'x'));
    assert.notEqual(visitorHash('ab', 'c', 'ip', 'ua'), visitorHash('a', 'bc', 'ip', 'ua'));
    assert.notEqual(visitorHash('s', 'SITE', 'ip', 'ua', ''), visitorHash('s', 'SITE', 'ip', 'ua'));
  });
});
