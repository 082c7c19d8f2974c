// /v1/sites/{site_id}/milestones: create (201), read, update (both fields required), delete, body rules, 404s and pagination.

import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type Reply, type TestApp } from '../helpers/app.js';
import { assertError, assertFieldErrors } from '../helpers/error-shapes.js';

const UUID_V4_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
const TIMESTAMP_RE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;
const UNKNOWN_UUID = '3f2b8a4e-9c1d-4e5f-a6b7-c8d9e0f1a2b3';

describe('/v1/sites/{site_id}/milestones', () => {
  let t: TestApp;
  let site: string;
  let otherSite: string;
  before(async () => {
    t = await startTestApp();
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Blog' })).body.id;
    otherSite = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Shop' })).body.id;
  });
  after(() => t.close());

  const base = () => `/v1/sites/${site}/milestones`;
  const create = (body: unknown, s = site) => t.call(OWNER_TOKEN, 'POST', `/v1/sites/${s}/milestones`, body);
  const count = async () => (await t.meta.listMilestones(site, { limit: 100 })).items.length;

  describe('create', () => {
    it('returns 201 and the milestone object, date at 00:00:00, id a UUID', async () => {
      const res = await create({ name: 'Launch', milestone_date: '2024-03-15' });
      assert.equal(res.status, 201);
      assert.match(res.body.id, UUID_V4_RE);
      assert.match(res.body.created_at, TIMESTAMP_RE);
      assert.equal(res.body.updated_at, res.body.created_at);
      assert.deepEqual(res.body, {
        id: res.body.id,
        object: 'milestone',
        name: 'Launch',
        milestone_date: '2024-03-15 00:00:00',
        created_at: res.body.created_at,
        updated_at: res.body.updated_at,
      });
      assert.deepEqual(Object.keys(res.body).sort(), ['created_at', 'id', 'milestone_date', 'name', 'object', 'updated_at']);
    });

    it('accepts a leap day, far past and far future dates', async () => {
      for (const date of ['2024-02-29', '2000-02-29', '1999-12-31', '2099-01-01']) {
        const res = await create({ name: date, milestone_date: date });
        assert.equal(res.status, 201, `${date}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.milestone_date, `${date} 00:00:00`);
      }
    });

    it('accepts a name of exactly 30 characters, multi-byte ones counted as one', async () => {
      for (const name of ['n'.repeat(30), 'é'.repeat(30), '🚀'.repeat(30)]) {
        const res = await create({ name, milestone_date: '2024-01-01' });
        assert.equal(res.status, 201, name);
        assert.equal(res.body.name, name);
      }
    });

    const bad: [string, unknown, string[]][] = [
      ['a missing name', { milestone_date: '2024-01-01' }, ['name']],
      ['a missing date', { name: 'x' }, ['milestone_date']],
      ['an empty body', {}, ['name', 'milestone_date']],
      ['a name over 30 characters', { name: 'n'.repeat(31), milestone_date: '2024-01-01' }, ['name']],
      ['31 multi-byte characters', { name: 'é'.repeat(31), milestone_date: '2024-01-01' }, ['name']],
      ['an empty name', { name: '', milestone_date: '2024-01-01' }, ['name']],
      ['a numeric name', { name: 7, milestone_date: '2024-01-01' }, ['name']],
      ['a null name', { name: null, milestone_date: '2024-01-01' }, ['name']],
      ['a numeric date', { name: 'x', milestone_date: 20240101 }, ['milestone_date']],
      ['a null date', { name: 'x', milestone_date: null }, ['milestone_date']],
      ['a timestamp instead of a date', { name: 'x', milestone_date: '2024-01-01 00:00:00' }, ['milestone_date']],
      ['an ISO datetime', { name: 'x', milestone_date: '2024-01-01T00:00:00Z' }, ['milestone_date']],
    ];
    for (const date of ['2024-02-30', '2023-02-29', '2024-13-01', '2024-00-10', '2024-04-31', '2024-1-1', '01/02/2024', '', 'tomorrow', '2024-01-01x']) {
      bad.push([`milestone_date '${date}'`, { name: 'x', milestone_date: date }, ['milestone_date']]);
    }
    for (const [label, body, fields] of bad) {
      it(`refuses ${label}: 400 {errors} naming ${fields.join(', ')}`, async () => {
        const before = await count();
        assertFieldErrors(await create(body), fields);
        assert.equal(await count(), before);
      });
    }

    it('refuses a create with no body at all', async () => {
      assertFieldErrors(await t.call(OWNER_TOKEN, 'POST', base()), ['name', 'milestone_date']);
    });
  });

  describe('get, update, delete', () => {
    it('gets a milestone by id, identical to the create response', async () => {
      const created = await create({ name: 'Redesign', milestone_date: '2023-11-05' });
      const res = await t.call(OWNER_TOKEN, 'GET', `${base()}/${created.body.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, created.body);
    });

    it('lists milestones with the same objects', async () => {
      const created = await create({ name: 'Listed', milestone_date: '2022-06-01' });
      const res = await t.call(OWNER_TOKEN, 'GET', `${base()}?limit=100`);
      assert.equal(res.status, 200);
      assert.equal(res.body.object, 'list');
      assert.equal(res.body.url, base());
      assert.equal(res.body.has_more, false);
      assert.deepEqual(res.body.data.find((m: { id: string }) => m.id === created.body.id), created.body);
      for (const m of res.body.data) assert.match(m.milestone_date, /^\d{4}-\d\d-\d\d 00:00:00$/);
    });

    it('an update changes name, date and updated_at, never created_at', async () => {
      const created = await create({ name: 'Before', milestone_date: '2024-01-01' });
      await sleep(1100);
      const url = `${base()}/${created.body.id}`;
      const res = await t.call(OWNER_TOKEN, 'POST', url, { name: 'After', milestone_date: '2024-07-04' });
      assert.equal(res.status, 200);
      assert.equal(res.body.id, created.body.id);
      assert.equal(res.body.object, 'milestone');
      assert.equal(res.body.name, 'After');
      assert.equal(res.body.milestone_date, '2024-07-04 00:00:00');
      assert.equal(res.body.created_at, created.body.created_at);
      assert.match(res.body.updated_at, TIMESTAMP_RE);
      assert.ok(res.body.updated_at > created.body.updated_at, `${res.body.updated_at} > ${created.body.updated_at}`);
      const got = await t.call(OWNER_TOKEN, 'GET', url);
      assert.deepEqual(got.body, res.body);
    });

    it('an update with the same values is still an update (updated_at never goes back)', async () => {
      const created = await create({ name: 'Same', milestone_date: '2024-01-01' });
      const res = await t.call(OWNER_TOKEN, 'POST', `${base()}/${created.body.id}`, { name: 'Same', milestone_date: '2024-01-01' });
      assert.equal(res.status, 200);
      assert.equal(res.body.created_at, created.body.created_at);
      assert.ok(res.body.updated_at >= created.body.updated_at);
    });

    const badUpdates: [string, unknown, string[]][] = [
      ['no name', { milestone_date: '2024-02-02' }, ['name']],
      ['no date', { name: 'Only name' }, ['milestone_date']],
      ['an empty body', {}, ['name', 'milestone_date']],
      ['a name over 30 characters', { name: 'x'.repeat(31), milestone_date: '2024-02-02' }, ['name']],
      ['an impossible date', { name: 'x', milestone_date: '2024-02-30' }, ['milestone_date']],
      ['a badly formatted date', { name: 'x', milestone_date: '2024-2-2' }, ['milestone_date']],
    ];
    for (const [label, body, fields] of badUpdates) {
      it(`refuses an update with ${label}, changing nothing`, async () => {
        const created = await create({ name: 'Stable', milestone_date: '2024-01-01' });
        const url = `${base()}/${created.body.id}`;
        assertFieldErrors(await t.call(OWNER_TOKEN, 'POST', url, body), fields);
        assert.deepEqual((await t.call(OWNER_TOKEN, 'GET', url)).body, created.body);
      });
    }

    it('refuses an update with no body at all', async () => {
      const created = await create({ name: 'Stable', milestone_date: '2024-01-01' });
      assertFieldErrors(await t.call(OWNER_TOKEN, 'POST', `${base()}/${created.body.id}`), ['name', 'milestone_date']);
    });

    it('deletes a milestone: the deleted object, then 404 everywhere', async () => {
      const created = await create({ name: 'Doomed', milestone_date: '2024-01-01' });
      const url = `${base()}/${created.body.id}`;
      const res = await t.call(OWNER_TOKEN, 'DELETE', url);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { id: created.body.id, object: 'milestone', deleted: true });
      assertError(await t.call(OWNER_TOKEN, 'GET', url), 404);
      assertError(await t.call(OWNER_TOKEN, 'POST', url, { name: 'Back', milestone_date: '2024-01-01' }), 404);
      assertError(await t.call(OWNER_TOKEN, 'DELETE', url), 404);
      const list = await t.call(OWNER_TOKEN, 'GET', `${base()}?limit=100`);
      assert.ok(!list.body.data.some((m: { id: string }) => m.id === created.body.id));
    });

    for (const [label, id] of [
      ['a non-UUID id', 'not-a-uuid'],
      ['a tracking-code-shaped id', 'ABCDEFGH'],
      ['a number', '12345'],
      ['an almost-UUID', '3f2b8a4e-9c1d-4e5f-a6b7-c8d9e0f1a2b'],
      ['an unknown UUID', UNKNOWN_UUID],
      ['the nil UUID', '00000000-0000-0000-0000-000000000000'],
    ] as const) {
      it(`${label} -> 404 {error} on get, update and delete`, async () => {
        const url = `${base()}/${id}`;
        assertError(await t.call(OWNER_TOKEN, 'GET', url), 404);
        assertError(await t.call(OWNER_TOKEN, 'POST', url, { name: 'x', milestone_date: '2024-01-01' }), 404);
        assertError(await t.call(OWNER_TOKEN, 'DELETE', url), 404);
      });
    }

    it('a milestone addressed under another site of the same account -> 404, and is left alone', async () => {
      const created = await create({ name: 'Theirs', milestone_date: '2024-01-01' }, otherSite);
      const wrong = `${base()}/${created.body.id}`;
      assertError(await t.call(OWNER_TOKEN, 'GET', wrong), 404);
      assertError(await t.call(OWNER_TOKEN, 'POST', wrong, { name: 'Hijack', milestone_date: '2024-01-02' }), 404);
      assertError(await t.call(OWNER_TOKEN, 'DELETE', wrong), 404);
      const right = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${otherSite}/milestones/${created.body.id}`);
      assert.deepEqual(right.body, created.body);
    });

    it('deleting a site removes its milestones', async () => {
      const doomed = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Temp' })).body.id;
      const m = (await create({ name: 'Gone soon', milestone_date: '2024-01-01' }, doomed)).body.id;
      assert.equal((await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${doomed}`)).status, 200);
      assert.equal(await t.meta.getMilestone(doomed, m), undefined);
    });
  });
});

describe('milestones list pagination', () => {
  let t: TestApp;
  let site: string;
  let ids: string[];
  before(async () => {
    t = await startTestApp();
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Timeline' })).body.id;
    const other = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Other' })).body.id;
    ids = [];
    for (let i = 0; i < 12; i++) {
      // Dates in reverse order: lists follow created_at, not milestone_date.
      const date = `2024-01-${String(28 - i).padStart(2, '0')}`;
      ids.push((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/milestones`, { name: `M${i}`, milestone_date: date })).body.id);
      if (i % 4 === 0) await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${other}/milestones`, { name: 'Other', milestone_date: date });
    }
  });
  after(() => t.close());

  const list = (query = '') => t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/milestones${query}`);
  const idsOf = (res: Reply) => (res.body.data as { id: string }[]).map((m) => m.id);

  function assertPage(res: Reply, expectedIds: string[], hasMore: boolean): void {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['data', 'has_more', 'object', 'url']);
    assert.equal(res.body.object, 'list');
    assert.equal(res.body.url, `/v1/sites/${site}/milestones`);
    assert.equal(res.body.has_more, hasMore);
    assert.deepEqual(idsOf(res), expectedIds);
    const created = (res.body.data as { created_at: string }[]).map((m) => m.created_at);
    assert.deepEqual(created, [...created].sort());
  }

  it('defaults to 10 items in creation order', async () => {
    assertPage(await list(), ids.slice(0, 10), true);
  });

  it('walks forward with starting_after', async () => {
    const p1 = await list('?limit=5');
    assertPage(p1, ids.slice(0, 5), true);
    const p2 = await list(`?limit=5&starting_after=${idsOf(p1).at(-1)}`);
    assertPage(p2, ids.slice(5, 10), true);
    const p3 = await list(`?limit=5&starting_after=${idsOf(p2).at(-1)}`);
    assertPage(p3, ids.slice(10, 12), false);
  });

  it('walks backward with ending_before, each page ascending', async () => {
    const p1 = await list(`?limit=5&ending_before=${ids[11]}`);
    assertPage(p1, ids.slice(6, 11), true);
    const p2 = await list(`?limit=5&ending_before=${idsOf(p1)[0]}`);
    assertPage(p2, ids.slice(1, 6), true);
    const p3 = await list(`?limit=5&ending_before=${idsOf(p2)[0]}`);
    assertPage(p3, ids.slice(0, 1), false);
  });

  it('an update does not move a milestone in the list', async () => {
    const res = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/milestones/${ids[0]}`, { name: 'Edited', milestone_date: '2030-01-01' });
    assert.equal(res.status, 200);
    assertPage(await list('?limit=100'), ids, false);
  });

  for (const limit of ['0', '101', 'abc', '-1']) {
    it(`limit=${limit} -> 400 {errors: {limit}}`, async () => {
      const res = await list(`?limit=${limit}`);
      assert.equal(res.status, 400);
      assert.deepEqual(Object.keys(res.body), ['errors']);
      assert.deepEqual(Object.keys(res.body.errors), ['limit']);
    });
  }

  for (const field of ['starting_after', 'ending_before']) {
    it(`an unknown ${field} -> 400 {errors: {${field}}}`, async () => {
      for (const cursor of [UNKNOWN_UUID, 'nope']) {
        const res = await list(`?${field}=${cursor}`);
        assert.equal(res.status, 400, JSON.stringify(res.body));
        assert.deepEqual(Object.keys(res.body), ['errors']);
        assert.deepEqual(Object.keys(res.body.errors), [field]);
      }
    });
  }

  it('both cursors -> 400 {errors}', async () => {
    const res = await list(`?starting_after=${ids[1]}&ending_before=${ids[5]}`);
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.body), ['errors']);
    assert.ok(['starting_after', 'ending_before'].includes(Object.keys(res.body.errors)[0]!));
  });
});
