// Isolation, property-based: several accounts with sites, events and milestones, and random scoped tokens; every
// token sees exactly what SPEC.md section 5 allows and nothing of any other account.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import fc from 'fast-check';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

interface World {
  accounts: { id: number; token: string; sites: { id: string; event: string; milestone: string }[] }[];
}

type Op = { name: string; method: 'GET' | 'POST' | 'DELETE'; path: (s: World['accounts'][0]['sites'][0]) => string; body?: unknown; write: boolean };

// Writes leave the world as it was (renames to the same name), so every property run sees the same world.
const OPS: Op[] = [
  { name: 'get site', method: 'GET', path: (s) => `/v1/sites/${s.id}`, write: false },
  { name: 'list events', method: 'GET', path: (s) => `/v1/sites/${s.id}/events`, write: false },
  { name: 'get event', method: 'GET', path: (s) => `/v1/sites/${s.id}/events/${s.event}`, write: false },
  { name: 'list milestones', method: 'GET', path: (s) => `/v1/sites/${s.id}/milestones`, write: false },
  { name: 'get milestone', method: 'GET', path: (s) => `/v1/sites/${s.id}/milestones/${s.milestone}`, write: false },
  { name: 'aggregations', method: 'GET', path: (s) => `/v1/aggregations?entity=pageview&entity_id=${s.id}&aggregates=pageviews`, write: false },
  { name: 'current visitors', method: 'GET', path: (s) => `/v1/current_visitors?site_id=${s.id}`, write: false },
  { name: 'update site', method: 'POST', path: (s) => `/v1/sites/${s.id}`, body: {}, write: true },
  { name: 'update event', method: 'POST', path: (s) => `/v1/sites/${s.id}/events/${s.event}`, body: {}, write: true },
  { name: 'update milestone', method: 'POST', path: (s) => `/v1/sites/${s.id}/milestones/${s.milestone}`, body: { name: 'Same', milestone_date: '2026-01-01' }, write: true },
];

describe('isolation between accounts and scopes', () => {
  let t: TestApp;
  const world: World = { accounts: [] };

  before(async () => {
    t = await startTestApp();
    for (let a = 0; a < 3; a++) {
      const account = a === 0
        ? { id: 1 }
        : await t.meta.createAccount({ name: `A${a}`, email: `a${a}@x.test`, timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
      const token = a === 0 ? OWNER_TOKEN : await t.token(['*'], { accountId: account.id });
      const sites = [];
      for (let s = 0; s < 3; s++) {
        const site = (await t.call(token, 'POST', '/v1/sites', { name: `S${a}${s}` })).body.id as string;
        const event = (await t.call(token, 'POST', `/v1/sites/${site}/events`, { name: 'E' })).body.id as string;
        const milestone = (await t.call(token, 'POST', `/v1/sites/${site}/milestones`, { name: 'Same', milestone_date: '2026-01-01' })).body.id as string;
        sites.push({ id: site, event, milestone });
      }
      world.accounts.push({ id: account.id, token, sites });
    }
  });
  after(() => t.close());

  // A token: an account, and abilities drawn from everything that could be granted, its own sites' included.
  const tokenSpec = fc.record({
    account: fc.integer({ min: 0, max: 2 }),
    full: fc.boolean(),
    readonly: fc.boolean(),
    reads: fc.subarray([0, 1, 2]),
    manages: fc.subarray([0, 1, 2]),
  });

  it('every token reaches exactly what its abilities allow, in its own account only', async () => {
    await fc.assert(
      fc.asyncProperty(tokenSpec, fc.integer({ min: 0, max: 2 }), fc.integer({ min: 0, max: 2 }), fc.constantFrom(...OPS), async (spec, targetAccount, targetSite, op) => {
        const own = world.accounts[spec.account]!;
        const abilities = [
          ...(spec.full ? ['*'] : []),
          ...(spec.readonly ? ['all-sites-readonly'] : []),
          ...spec.reads.map((i) => `read:${own.sites[i]!.id}`),
          ...spec.manages.map((i) => `manage:${own.sites[i]!.id}`),
        ];
        fc.pre(abilities.length > 0);
        const token = await t.token(abilities, { accountId: own.id });
        const site = world.accounts[targetAccount]!.sites[targetSite]!;
        const mine = targetAccount === spec.account;
        const canRead = mine && (spec.full || spec.readonly || spec.reads.includes(targetSite) || spec.manages.includes(targetSite));
        const canManage = mine && (spec.full || spec.manages.includes(targetSite));
        const expected = !canRead ? 404 : op.write && !canManage ? 400 : 200;
        const res = await t.call(token, op.method, op.path(site), op.body);
        assert.equal(res.status, expected, `${JSON.stringify(abilities)} ${op.name} on account ${targetAccount} site ${targetSite}: ${JSON.stringify(res.body)}`);

        // The site list: only tokens that may list, and only their own account's sites.
        const list = await t.call(token, 'GET', '/v1/sites?limit=100');
        if (spec.full || spec.readonly) {
          assert.deepEqual(list.body.data.map((s: { id: string }) => s.id), own.sites.map((s) => s.id));
        } else {
          assert.equal(list.status, 400);
        }
        const account = await t.call(token, 'GET', '/v1/account');
        assert.equal(account.status, spec.full ? 200 : 400);
        if (spec.full) assert.equal(account.body.id, own.id);
      }),
      { numRuns: 300, seed: 20261121 },
    );
  });
});
