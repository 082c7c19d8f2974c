// One MetaStore contract, two databases: the embedded DuckDB file and PostgreSQL (the scale-out metadata store).

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ValidationError } from '../../src/domain/errors.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { migrate } from '../../src/store/duckdb/migrations.js';
import { PgDatabase } from '../../src/store/postgres/database.js';
import { migratePostgres, PG_MIGRATIONS } from '../../src/store/postgres/migrations.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import { DATABASE_URL, freshSchema } from '../helpers/postgres.js';

interface Backend {
  name: string;
  open(): Promise<{ store: SqlMetaStore; done: () => Promise<void> }>;
}

const backends: Backend[] = [
  {
    name: 'DuckDB',
    async open() {
      const db = await DuckDatabase.open(':memory:');
      await migrate(db);
      const store = new SqlMetaStore(db);
      return { store, done: () => store.close() };
    },
  },
  {
    name: 'PostgreSQL',
    async open() {
      const { schema, drop } = await freshSchema();
      const db = new PgDatabase(DATABASE_URL, { schema });
      // Several processes start at once: concurrent migrations must leave one schema.
      const ran = await Promise.all([migratePostgres(db), migratePostgres(db), migratePostgres(db)]);
      assert.equal(ran.flat().length, PG_MIGRATIONS.length, 'each migration ran exactly once');
      const store = new SqlMetaStore(db);
      return { store, done: async () => (await store.close(), await drop()) };
    },
  },
];

for (const backend of backends) {
  describe(`MetaStore on ${backend.name}`, () => {
    let store: SqlMetaStore;
    let done: () => Promise<void>;
    before(async () => ({ store, done } = await backend.open()));
    after(() => done());

    const account = () => store.createAccount({ name: 'A', email: 'a@a.test', timezone: 'Europe/Paris', tier: 2, subscriptionStatus: 'active' });
    const site = (accountId: number, name = 'S') =>
      store.createSite({ accountId, name, sharing: 'none', sharePasswordHash: null, timezone: 'UTC', multiDomain: false, multiDomainOption: null });

    it('creates, reads, lists and updates accounts', async () => {
      const a = await account();
      assert.deepEqual(await store.getAccount(a.id), a);
      const updated = await store.updateAccount(a.id, { tier: 5, subscriptionStatus: 'lapsed' });
      assert.deepEqual([updated?.tier, updated?.subscriptionStatus, updated?.name], [5, 'lapsed', 'A']);
      assert.ok(updated!.updatedAt.getTime() >= a.updatedAt.getTime());
      assert.ok((await store.listAccounts()).some((x) => x.id === a.id));
      assert.equal(await store.getAccount(999_999), undefined);
    });

    it('keeps tokens as hashes, revokes them once and records last use forward only', async () => {
      const a = await account();
      const token = await store.createToken({ accountId: a.id, name: 't', abilities: ['*', 'read:ABCDEFGH'], hash: `h-${a.id}`, expiresAt: new Date('2030-01-02T03:04:05.678Z') });
      const found = await store.findTokenByHash(`h-${a.id}`);
      assert.deepEqual(found, token);
      assert.deepEqual(found?.abilities, ['*', 'read:ABCDEFGH']);
      assert.equal(found?.expiresAt?.toISOString(), '2030-01-02T03:04:05.678Z');
      await store.touchTokens(new Map([[token.id, new Date('2026-05-05T05:05:05.005Z')]]));
      await store.touchTokens(new Map([[token.id, new Date('2026-01-01T00:00:00Z')]]));
      assert.equal((await store.findTokenByHash(`h-${a.id}`))?.lastUsedAt?.toISOString(), '2026-05-05T05:05:05.005Z');
      assert.equal(await store.revokeToken(a.id, token.id), true);
      assert.equal(await store.revokeToken(a.id, token.id), false);
      assert.ok((await store.listTokens(a.id))[0]?.revokedAt);
    });

    it('pages sites forward and backward in creation order, and refuses unknown cursors', async () => {
      const a = await account();
      const ids: string[] = [];
      for (let i = 0; i < 7; i++) ids.push((await site(a.id, `s${i}`)).id);
      const first = await store.listSites(a.id, { limit: 3 });
      assert.deepEqual([first.items.map((s) => s.id), first.hasMore], [ids.slice(0, 3), true]);
      const next = await store.listSites(a.id, { limit: 3, startingAfter: ids[2] });
      assert.deepEqual(next.items.map((s) => s.id), ids.slice(3, 6));
      const back = await store.listSites(a.id, { limit: 3, endingBefore: ids[6] });
      assert.deepEqual([back.items.map((s) => s.id), back.hasMore], [ids.slice(3, 6), true]);
      await assert.rejects(store.listSites(a.id, { limit: 3, startingAfter: 'NOPENOPE' }), ValidationError);
      const other = await account();
      await assert.rejects(store.listSites(other.id, { limit: 3, startingAfter: ids[0] }), ValidationError);
    });

    it('updates and deletes sites with their events and milestones', async () => {
      const a = await account();
      const s = await site(a.id);
      const updated = await store.updateSite(s.id, { name: 'T', sharing: 'private', sharePasswordHash: 'x', multiDomain: true, multiDomainOption: 'separate' });
      assert.deepEqual([updated.name, updated.sharing, updated.sharePasswordHash, updated.multiDomainOption], ['T', 'private', 'x', 'separate']);
      const g = await store.createGoal({ siteId: s.id, name: 'Buy', currency: 'euro' });
      assert.deepEqual(await store.findGoalByName(s.id, 'Buy'), g);
      assert.equal((await store.updateGoal(s.id, g.id, { currency: 'yen' })).currency, 'yen');
      const m = await store.createMilestone({ siteId: s.id, name: 'Leap', milestoneDate: '2024-02-29' });
      assert.equal((await store.getMilestone(s.id, m.id))?.milestoneDate, '2024-02-29');
      assert.equal((await store.updateMilestone(s.id, m.id, { name: 'New', milestoneDate: '2025-12-31' })).milestoneDate, '2025-12-31');
      assert.equal((await store.listGoals(s.id, { limit: 10 })).items.length, 1);
      await store.deleteSite(s.id);
      assert.equal(await store.getSite(s.id), undefined);
      assert.equal(await store.getGoal(s.id, g.id), undefined);
      assert.equal(await store.getMilestone(s.id, m.id), undefined);
    });

    it('finds sites by domain and Umami id, one site per domain even when created at once', async () => {
      const a = await account();
      const created = await Promise.allSettled(
        ['One', 'Two', 'Three'].map((name) =>
          store.createSite({ accountId: a.id, name, sharing: 'none', sharePasswordHash: null, timezone: 'UTC', multiDomain: false, multiDomainOption: null, domains: [`race-${backend.name}.example`] }),
        ),
      );
      const won = created.filter((r) => r.status === 'fulfilled');
      assert.equal(won.length, 1);
      for (const r of created) if (r.status === 'rejected') assert.ok(r.reason instanceof ValidationError, String(r.reason));
      const winner = (won[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof site>>>).value;
      assert.deepEqual(winner.domains, [`race-${backend.name}.example`]);
      assert.deepEqual(await store.findSiteByDomain(`race-${backend.name}.example`), winner);
      const other = await site(a.id, 'Other');
      assert.deepEqual([other.domains, other.umamiWebsiteId], [[], null]);
      const uuid = backend.name === 'DuckDB' ? '00000000-0000-4000-8000-000000000001' : '00000000-0000-4000-8000-000000000002';
      const updated = await store.updateSite(other.id, { domains: ['b.example', 'a.example'], umamiWebsiteId: uuid });
      assert.deepEqual([updated.domains, updated.umamiWebsiteId], [['b.example', 'a.example'], uuid]);
      assert.equal((await store.findSiteByUmamiId(uuid))?.id, other.id);
      await assert.rejects(store.updateSite(winner.id, { umamiWebsiteId: uuid }), ValidationError);
      await assert.rejects(store.updateSite(winner.id, { domains: ['a.example'] }), ValidationError);
      assert.deepEqual((await store.getSite(winner.id))?.domains, [`race-${backend.name}.example`], 'a refused update changes nothing');
      await store.deleteSite(other.id);
      assert.equal(await store.findSiteByDomain('a.example'), undefined);
      assert.equal(await store.findSiteByUmamiId(uuid), undefined);
    });

    it('adds usage per month and keeps one salt per day', async () => {
      const a = await account();
      await store.addUsage(new Map([[a.id, new Map([['2026-10', 3], ['2026-11', 2]])]]));
      await store.addUsage(new Map([[a.id, new Map([['2026-11', 5]])]]));
      assert.deepEqual(await store.getUsage(a.id), [{ month: '2026-10', apiRequests: 3 }, { month: '2026-11', apiRequests: 7 }]);
      const salt = await store.saltForDay('2026-11-20', 'first');
      assert.equal(salt, 'first');
      assert.equal(await store.saltForDay('2026-11-20', 'second'), 'first', 'whoever came first wins');
      await store.saltForDay('2026-11-21', 'today');
      assert.equal(await store.findSalt('2026-11-19'), undefined);
      assert.equal(await store.deleteSaltsBefore('2026-11-21'), 1);
      assert.equal(await store.findSalt('2026-11-20'), undefined);
      assert.equal(await store.findSalt('2026-11-21'), 'today');
    });

    it("keeps the password of each account's owner (a user) and finds logins by email, case-insensitively", async () => {
      const unique = `Owner.${Date.now()}.${Math.random().toString(36).slice(2)}@Example.test`;
      const a = await store.createAccount({ name: 'P', email: unique, timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
      const b = await store.createAccount({ name: 'Q', email: unique, timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
      assert.equal(await store.getPasswordHash(a.id), undefined);
      assert.equal(await store.findLogin(unique), undefined, 'no password, no login');
      await store.setPasswordHash(b.id, 'scrypt$b');
      assert.equal((await store.findLogin(unique.toLowerCase()))?.account?.id, b.id);
      await store.setPasswordHash(a.id, 'scrypt$first');
      await store.setPasswordHash(a.id, 'scrypt$second');
      assert.equal(await store.getPasswordHash(a.id), 'scrypt$second');
      // The same email is the same person: one user, owner of both accounts, landing in the lowest id.
      const login = await store.findLogin(unique.toUpperCase());
      assert.deepEqual(login?.account, await store.getAccount(a.id), 'the lowest id wins');
      assert.equal(login?.passwordHash, 'scrypt$second');
      assert.equal(await store.getPasswordHash(b.id), 'scrypt$second', 'one user, one password');
      assert.equal(await store.findLogin(`x${unique}`), undefined);
    });

    it('keeps the origins that may embed a site, replaces them, and forgets them with the site', async () => {
      const a = await account();
      const s = await site(a.id);
      const other = await site(a.id);
      assert.deepEqual(await store.getEmbedOrigins(s.id), []);
      await store.setEmbedOrigins(s.id, ['https://blog.example.test', 'https://*.example.org']);
      assert.deepEqual(await store.getEmbedOrigins(s.id), ['https://blog.example.test', 'https://*.example.org']);
      await store.setEmbedOrigins(s.id, ['http://localhost:3000']);
      assert.deepEqual(await store.getEmbedOrigins(s.id), ['http://localhost:3000']);
      assert.deepEqual(await store.getEmbedOrigins(other.id), [], 'per site');
      await store.setEmbedOrigins(other.id, ['https://other.example.test']);
      await store.setEmbedOrigins(s.id, []);
      assert.deepEqual(await store.getEmbedOrigins(s.id), []);
      await store.deleteSite(other.id);
      assert.deepEqual(await store.getEmbedOrigins(other.id), []);
    });

    it('stores sessions by id hash, ends them per account, per site and on expiry', async () => {
      const a = await account();
      const s = await site(a.id);
      const expiresAt = new Date('2030-01-01T00:00:00.123Z');
      const owner = await store.createSession({
        idHash: `owner-${a.id}`, kind: 'owner', accountId: a.id, siteId: null, csrf: 'c1', binding: null, expiresAt,
      });
      assert.deepEqual(await store.findSession(`owner-${a.id}`), owner);
      assert.deepEqual([owner.kind, owner.accountId, owner.siteId, owner.csrf, owner.expiresAt.toISOString()], ['owner', a.id, null, 'c1', expiresAt.toISOString()]);
      const share = await store.createSession({
        idHash: `share-${a.id}`, kind: 'share', accountId: a.id, siteId: s.id, csrf: 'c2', binding: 'b', expiresAt,
      });
      assert.deepEqual([share.siteId, share.binding], [s.id, 'b']);
      await store.createSession({
        idHash: `old-${a.id}`, kind: 'owner', accountId: a.id, siteId: null, csrf: 'c3', binding: null, expiresAt: new Date('2020-01-01T00:00:00Z'),
      });
      assert.ok((await store.deleteExpiredSessions(new Date('2026-01-01T00:00:00Z'))) >= 1);
      assert.equal(await store.findSession(`old-${a.id}`), undefined);
      assert.ok(await store.findSession(`owner-${a.id}`), 'a live session survives the sweep');
      await store.deleteSite(s.id);
      assert.equal(await store.findSession(`share-${a.id}`), undefined, 'deleting a site ends its share sessions');
      await store.createSession({ idHash: `second-${a.id}`, kind: 'owner', accountId: a.id, siteId: null, csrf: 'c4', binding: null, expiresAt });
      assert.equal(await store.deleteAccountSessions(a.id), 2);
      assert.equal(await store.findSession(`owner-${a.id}`), undefined);
      await store.createSession({ idHash: `third-${a.id}`, kind: 'owner', accountId: a.id, siteId: null, csrf: 'c5', binding: null, expiresAt });
      await store.deleteSession(`third-${a.id}`);
      assert.equal(await store.findSession(`third-${a.id}`), undefined);
    });

    it('keeps a running import to its owner: renewed and finished by it alone, taken over by exactly one of several', async () => {
      const s = await site((await account()).id, 'Imports');
      const outcome = { status: 'failed' as const, digest: null, imported: 0, rejected: 0, firstHitAt: null, lastHitAt: null, failure: 'interrupted' };
      const running = await store.createImport({ siteId: s.id, kind: 'umami', fileName: 'e.csv', visitIdBase: 1n << 40n, owner: 'alive' });
      assert.deepEqual([running.status, running.owner, running.failure], ['running', 'alive', null]);
      assert.ok((await store.runningImports()).some((i) => i.id === running.id));

      const later = new Date(running.heartbeatAt!.getTime() + 10_000);
      assert.equal(await store.renewImport(running.id, 'alive', later), true);
      assert.equal(await store.renewImport(running.id, 'someone-else', later), false);
      const seen = (await store.getImport(running.id))!;
      assert.equal(seen.heartbeatAt?.toISOString(), later.toISOString());

      // Three sweepers saw the same record; one takes it over, the others find it changed.
      const claims = await Promise.all(['a', 'b', 'c'].map((who) => store.claimImport(seen, who, new Date())));
      const winners = claims.filter((c) => c !== undefined);
      assert.equal(winners.length, 1);
      const winner = winners[0]!.owner!;
      // What the earlier owner sees from now on: no renewal, no finishing as done.
      assert.equal(await store.renewImport(running.id, 'alive', new Date()), false);
      assert.equal(await store.finishImport(running.id, 'alive', { ...outcome, status: 'done', failure: null }), undefined);
      // An old view of it no longer claims it either.
      assert.equal(await store.claimImport(seen, 'late', new Date()), undefined);

      const failed = await store.finishImport(running.id, winner, outcome);
      assert.deepEqual([failed?.status, failed?.failure, failed?.owner], ['failed', 'interrupted', winner]);
      assert.ok(!(await store.runningImports()).some((i) => i.id === running.id));
      assert.equal(await store.finishImport(running.id, winner, outcome), undefined, 'finished once');
      assert.equal(await store.claimImport(failed!, 'late', new Date()), undefined, 'a finished import is no one\'s to take');
    });

    it("keeps segments per site: a person's own and the shared ones, bounded per person, updated, deleted and gone with the site", async () => {
      const a = await account();
      const s = await site(a.id);
      const other = await site(a.id);
      const filters = [{ property: 'country_code', operator: 'is', value: 'DE' }, { property: 'prop', key: 'plan', operator: 'is', value: 'pro' }];
      const mine = await store.createSegment({ siteId: s.id, userId: 7, name: 'germany pro', shared: false, filters }, 3);
      assert.deepEqual([mine?.siteId, mine?.userId, mine?.name, mine?.shared, mine?.filters], [s.id, 7, 'germany pro', false, filters]);
      assert.deepEqual(await store.getSegment(s.id, mine!.id), mine);
      assert.equal(await store.getSegment(other.id, mine!.id), undefined, 'a segment is found through its own site only');
      const shared = await store.createSegment({ siteId: s.id, userId: 8, name: 'Blog', shared: true, filters: [{ property: 'pathname', operator: 'is like', value: '/blog*' }] }, 3);
      await store.createSegment({ siteId: s.id, userId: 8, name: 'Private of 8', shared: false, filters }, 3);
      // Person 7 sees their own and the shared one, by name; person 8 their two; person 9 the shared one only.
      assert.deepEqual((await store.listSegments(s.id, 7)).map((x) => x.name), ['Blog', 'germany pro']);
      assert.deepEqual((await store.listSegments(s.id, 8)).map((x) => x.name), ['Blog', 'Private of 8']);
      assert.deepEqual((await store.listSegments(s.id, 9)).map((x) => x.id), [shared!.id]);
      assert.deepEqual(await store.listSegments(other.id, 8), [], 'per site');

      await store.createSegment({ siteId: s.id, userId: 7, name: 'two', shared: false, filters }, 3);
      await store.createSegment({ siteId: s.id, userId: 7, name: 'three', shared: false, filters }, 3);
      assert.equal(await store.createSegment({ siteId: s.id, userId: 7, name: 'four', shared: false, filters }, 3), undefined, 'at most 3 each');
      assert.ok(await store.createSegment({ siteId: other.id, userId: 7, name: 'elsewhere', shared: false, filters }, 3), 'counted per site');

      const renamed = await store.updateSegment(s.id, mine!.id, { name: 'Germany pro', shared: true });
      assert.deepEqual([renamed?.name, renamed?.shared, renamed?.filters], ['Germany pro', true, filters], 'what the patch leaves out stays');
      const refiltered = await store.updateSegment(s.id, mine!.id, { filters: [{ property: 'browser', operator: 'is not', value: 'Chrome' }] });
      assert.deepEqual([refiltered?.name, refiltered?.filters], ['Germany pro', [{ property: 'browser', operator: 'is not', value: 'Chrome' }]]);
      assert.ok(refiltered!.updatedAt.getTime() >= mine!.updatedAt.getTime());
      assert.equal(await store.updateSegment(other.id, mine!.id, { name: 'x' }), undefined);

      assert.equal(await store.deleteSegment(other.id, mine!.id), false, 'not through another site');
      assert.equal(await store.deleteSegment(s.id, mine!.id), true);
      assert.equal(await store.deleteSegment(s.id, mine!.id), false, 'deleted once');
      assert.equal(await store.getSegment(s.id, mine!.id), undefined);
      await store.deleteSite(s.id);
      assert.deepEqual(await store.listSegments(s.id, 8), [], 'deleting a site deletes its segments');
      assert.equal((await store.listSegments(other.id, 7)).length, 1);
    });
  });
}
