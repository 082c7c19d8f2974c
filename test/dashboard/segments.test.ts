// Segments over HTTP: a member's own and the account's shared ones, who may change which, every part of a body
// checked as a report checks its filters, a bounded number per person, and nothing seen across accounts, by a
// share page's session or without the anti-CSRF header.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { MAX_SEGMENTS_PER_PERSON } from '../../src/http/dashboard/segments.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { addMember, Browser, logIn, newLogin, pageCsrf } from './helpers.js';

interface Person {
  browser: Browser;
  csrf: string;
}

describe('segments', () => {
  let t: TestApp;
  let accountId: number;
  let owner: Person;
  let siteA: string;
  let siteB: string;
  const germany = [{ property: 'country_code', operator: 'is', value: 'DE' }];
  const blogPro = [{ property: 'pathname', operator: 'is like', value: '/blog*' }, { property: 'prop', key: 'plan', operator: 'is', value: 'pro' }];

  const person = async (email: string): Promise<Person> => {
    const browser = new Browser(t.app);
    return { browser, csrf: await logIn(browser, email) };
  };
  const member = async (role: 'owner' | 'admin' | 'viewer', sites: string[] | null = null) => person((await addMember(t.team, accountId, role, sites)).email);
  const call = (p: Person, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => p.browser.api(method, path, p.csrf, body);
  const list = async (p: Person, site = siteA) => {
    const res = await call(p, 'GET', `/dashboard/api/sites/${site}/segments`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body.data as { id: string; name: string; shared: boolean; mine: boolean; can_change: boolean; filters: unknown[] }[];
  };
  const create = (p: Person, body: unknown, site = siteA) => call(p, 'POST', `/dashboard/api/sites/${site}/segments`, body);

  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    accountId = login.id;
    owner = await person(login.email);
    siteA = (await call(owner, 'POST', '/v1/sites', { name: 'A' })).body.id;
    siteB = (await call(owner, 'POST', '/v1/sites', { name: 'B' })).body.id;
  });
  after(() => t.close());

  it("lists a member's own segments and the shared ones, by name, and keeps their filters as saved", async () => {
    const mine = await create(owner, { name: '  Germany  ', filters: germany });
    assert.equal(mine.status, 201, JSON.stringify(mine.body));
    assert.deepEqual([mine.body.name, mine.body.shared, mine.body.filters, mine.body.mine, mine.body.can_change], ['Germany', false, germany, true, true]);
    const shared = await create(owner, { name: 'Blog readers on pro', filters: blogPro, shared: true });
    assert.equal(shared.status, 201, JSON.stringify(shared.body));
    assert.deepEqual(shared.body.filters, blogPro, 'custom property filters keep their key');
    assert.deepEqual((await list(owner)).map((s) => s.name), ['Blog readers on pro', 'Germany']);
    assert.deepEqual(await list(owner, siteB), [], 'per site');

    const viewer = await member('viewer');
    const seen = await list(viewer);
    assert.deepEqual(seen.map((s) => [s.name, s.mine, s.can_change]), [['Blog readers on pro', false, false]], 'the shared one only');
    assert.deepEqual(seen[0]!.filters, blogPro);
  });

  it('lets a viewer save personal segments but share none, and change no one else\'s', async () => {
    const viewer = await member('viewer');
    const shared = (await create(owner, { name: 'Shared by owner', filters: germany, shared: true })).body;
    const refused = await create(viewer, { name: 'Mine for all', filters: germany, shared: true });
    assert.equal(refused.status, 400);
    assert.match(JSON.stringify(refused.body.errors.shared), /personal/);
    const own = await create(viewer, { name: 'Viewer only', filters: germany });
    assert.equal(own.status, 201);
    assert.equal((await call(viewer, 'PATCH', `/dashboard/api/sites/${siteA}/segments/${own.body.id}`, { shared: true })).status, 400);
    assert.ok((await list(viewer)).some((s) => s.id === own.body.id));
    assert.ok(!(await list(owner)).some((s) => s.id === own.body.id), "another's personal segment is not listed, even to an owner");
    assert.equal((await call(owner, 'DELETE', `/dashboard/api/sites/${siteA}/segments/${own.body.id}`)).status, 404, 'nor deleted');

    assert.equal((await call(viewer, 'PATCH', `/dashboard/api/sites/${siteA}/segments/${shared.id}`, { name: 'Taken' })).status, 400);
    assert.equal((await call(viewer, 'DELETE', `/dashboard/api/sites/${siteA}/segments/${shared.id}`)).status, 400);
    const renamed = await call(viewer, 'PATCH', `/dashboard/api/sites/${siteA}/segments/${own.body.id}`, { name: 'Renamed', filters: blogPro });
    assert.deepEqual([renamed.status, renamed.body.name, renamed.body.filters], [200, 'Renamed', blogPro]);
    assert.equal((await call(viewer, 'DELETE', `/dashboard/api/sites/${siteA}/segments/${own.body.id}`)).status, 200);
    assert.ok(!(await list(viewer)).some((s) => s.id === own.body.id));
  });

  it("lets an admin rename and delete a shared segment, but not change another's filters or audience", async () => {
    const admin = await member('admin');
    const shared = (await create(owner, { name: 'Campaign', filters: germany, shared: true })).body;
    const path = `/dashboard/api/sites/${siteA}/segments/${shared.id}`;
    assert.equal((await list(admin)).find((s) => s.id === shared.id)?.can_change, true);
    assert.equal((await call(admin, 'PATCH', path, { filters: blogPro })).status, 400);
    assert.equal((await call(admin, 'PATCH', path, { shared: false })).status, 400);
    const renamed = await call(admin, 'PATCH', path, { name: 'Autumn campaign' });
    assert.deepEqual([renamed.status, renamed.body.name, renamed.body.filters, renamed.body.mine], [200, 'Autumn campaign', germany, false]);
    assert.equal((await list(owner)).find((s) => s.id === shared.id)?.name, 'Autumn campaign');
    // Made personal by its creator, it is gone from the others' lists and out of their reach.
    const personal = (await create(owner, { name: 'Soon private', filters: germany, shared: true })).body;
    assert.equal((await call(owner, 'PATCH', `/dashboard/api/sites/${siteA}/segments/${personal.id}`, { shared: false })).status, 200);
    assert.ok(!(await list(admin)).some((s) => s.id === personal.id));
    assert.equal((await call(admin, 'DELETE', `/dashboard/api/sites/${siteA}/segments/${personal.id}`)).status, 404);
    assert.equal((await call(admin, 'DELETE', path)).status, 200);
    assert.ok(!(await list(owner)).some((s) => s.id === shared.id));
  });

  it('checks names and filters as the report checks filters', async () => {
    const refusals: [unknown, string, RegExp][] = [
      [{ name: '', filters: germany }, 'name', /1 to 100/],
      [{ name: 'x'.repeat(101), filters: germany }, 'name', /1 to 100/],
      [{ name: 'N', filters: [] }, 'filters', /non-empty/],
      [{ name: 'N', filters: 'country=DE' }, 'filters', /array/],
      [{ name: 'N', filters: Array.from({ length: 51 }, (_, i) => ({ property: 'pathname', operator: 'is', value: `/${i}` })) }, 'filters', /at most 50/],
      [{ name: 'N', filters: [{ property: 'country_code', operator: 'is like', value: 'D' }] }, 'filters', /country_code allows only "is" and "is not"/],
      [{ name: 'N', filters: [{ property: 'colour', operator: 'is', value: 'red' }] }, 'filters', /unknown property/],
      [{ name: 'N', filters: [{ property: 'pathname', operator: 'is', value: '' }] }, 'filters', /value must be 1 to/],
      [{ name: 'N', filters: [{ property: 'pathname', operator: 'is', value: '/', key: 'k' }] }, 'filters', /only a custom property/],
      [{ name: 'N', filters: [{ property: 'prop', key: 'plan', operator: 'matching', value: 'p.*' }] }, 'filters', /operator must be one of/],
      [{ name: 'N', filters: [{ property: 'prop', key: 'k'.repeat(301), operator: 'is', value: 'v' }] }, 'filters', /key must be 1 to 300 bytes/],
      [{ name: 'N', filters: [null] }, 'filters', /must be an object/],
      [{ name: 'N', filters: germany, shared: 'yes' }, 'shared', /true or false/],
    ];
    for (const [body, field, message] of refusals) {
      const res = await create(owner, body);
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 200));
      assert.match(String(res.body.errors?.[field]), message, JSON.stringify(res.body).slice(0, 300));
    }
    assert.equal((await create(owner, [germany])).status, 400, 'the body is an object');
  });

  it(`keeps at most ${MAX_SEGMENTS_PER_PERSON} segments per person and site`, async () => {
    const busy = await member('viewer');
    for (let i = 0; i < MAX_SEGMENTS_PER_PERSON; i++) assert.equal((await create(busy, { name: `S${i}`, filters: germany })).status, 201);
    const over = await create(busy, { name: 'One too many', filters: germany });
    assert.equal(over.status, 400);
    assert.match(over.body.error, /already have 100 segments/);
    assert.equal((await create(busy, { name: 'Other site', filters: germany }, siteB)).status, 201, 'counted per site');
    assert.equal((await create(owner, { name: 'Owner still can', filters: germany })).status, 201, 'counted per person');
  });

  it("shows no account another's segments, nor a site-limited viewer another site's", async () => {
    const shared = (await create(owner, { name: 'Ours', filters: germany, shared: true })).body;
    const stranger = await person((await newLogin(t.meta)).email);
    const theirSite = (await call(stranger, 'POST', '/v1/sites', { name: 'Theirs' })).body.id;
    assert.equal((await call(stranger, 'GET', `/dashboard/api/sites/${siteA}/segments`)).status, 404);
    assert.equal((await create(stranger, { name: 'Planted', filters: germany }, siteA)).status, 404);
    assert.equal((await call(stranger, 'PATCH', `/dashboard/api/sites/${siteA}/segments/${shared.id}`, { name: 'x' })).status, 404);
    assert.equal((await call(stranger, 'DELETE', `/dashboard/api/sites/${siteA}/segments/${shared.id}`)).status, 404);
    // Through their own site, the id names nothing.
    assert.equal((await call(stranger, 'DELETE', `/dashboard/api/sites/${theirSite}/segments/${shared.id}`)).status, 404);
    assert.deepEqual(await list(stranger, theirSite), []);
    assert.equal((await list(owner)).find((s) => s.id === shared.id)?.name, 'Ours', 'untouched');

    const limited = await member('viewer', [siteB]);
    assert.equal((await call(limited, 'GET', `/dashboard/api/sites/${siteA}/segments`)).status, 404);
    assert.deepEqual(await list(limited, siteB), []);
  });

  it("deletes a removed member's personal segments of the account's sites, and keeps the ones they shared", async () => {
    const leaving = await addMember(t.team, accountId, 'admin');
    const gone = await person(leaving.email);
    const personal = (await create(gone, { name: 'Only mine', filters: germany })).body;
    const shared = (await create(gone, { name: 'For everyone', filters: germany, shared: true })).body;
    // Their own account's segments are theirs and stay.
    const ownAccount = await newLogin(t.meta);
    await t.team.putMembership(ownAccount.id, leaving.userId, 'owner', null);
    const theirSite = await t.meta.createSite({ accountId: ownAccount.id, name: 'Theirs', sharing: 'none', sharePasswordHash: null, timezone: 'UTC', multiDomain: false, multiDomainOption: null });
    const kept = await t.meta.createSegment({ siteId: theirSite.id, userId: leaving.userId, name: 'In my account', shared: false, filters: germany }, 100);

    assert.equal((await call(owner, 'DELETE', `/dashboard/api/members/${leaving.userId}`)).status, 200);
    assert.equal(await t.meta.getSegment(siteA, personal.id), undefined, 'the personal one is gone');
    assert.equal((await t.meta.getSegment(siteA, shared.id))?.name, 'For everyone', 'the shared one stays');
    assert.equal((await list(owner)).find((s) => s.id === shared.id)?.can_change, true, "an owner may still change it");
    assert.equal((await t.meta.getSegment(kept!.siteId, kept!.id))?.name, 'In my account');
  });

  it('answers nothing without the anti-CSRF header or to a share page', async () => {
    assert.equal((await owner.browser.api('GET', `/dashboard/api/sites/${siteA}/segments`, undefined)).status, 401);
    assert.equal((await owner.browser.api('POST', `/dashboard/api/sites/${siteA}/segments`, undefined, { name: 'N', filters: germany })).status, 401);
    assert.equal((await call(owner, 'POST', `/v1/sites/${siteA}`, { sharing: 'public' })).status, 200);
    const visitor = new Browser(t.app);
    const page = await visitor.get(`/share/${siteA}`);
    assert.equal(page.statusCode, 200);
    const csrf = pageCsrf(page.body);
    assert.equal((await visitor.api('GET', `/dashboard/api/sites/${siteA}/segments`, csrf)).status, 401);
    assert.equal((await visitor.api('POST', `/dashboard/api/sites/${siteA}/segments`, csrf, { name: 'N', filters: germany })).status, 401);
  });
});
