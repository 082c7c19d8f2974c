// /v1/sites/{site_id}/events: create, read, update, delete, the retired data wipe, every body rule and list pagination.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type Reply, type TestApp } from '../helpers/app.js';
import { assertError, assertFieldErrors } from '../helpers/error-shapes.js';

const CURRENCIES = [
  'dollar', 'pound', 'euro', 'yuan', 'peso', 'shekel', 'yen', 'won', 'hryvnia', 'franc', 'rupee', 'integer', 'none',
];
const TIMESTAMP_RE = /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/;

describe('/v1/sites/{site_id}/events', () => {
  let t: TestApp;
  let site: string;
  let otherSite: string;
  before(async () => {
    t = await startTestApp();
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Blog' })).body.id;
    otherSite = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Shop' })).body.id;
  });
  after(() => t.close());

  const create = (body: unknown, s = site) => t.call(OWNER_TOKEN, 'POST', `/v1/sites/${s}/events`, body);

  describe('create', () => {
    it('returns the event object with the default currency dollar', async () => {
      const res = await create({ name: 'Signup' });
      assert.equal(res.status, 200);
      assert.match(res.body.id, /^[A-Z]{8}$/);
      assert.match(res.body.created_at, TIMESTAMP_RE);
      assert.deepEqual(res.body, { id: res.body.id, object: 'event', name: 'Signup', currency: 'dollar', created_at: res.body.created_at });
      assert.deepEqual(Object.keys(res.body).sort(), ['created_at', 'currency', 'id', 'name', 'object']);
    });

    it('created_at is the current UTC time', async () => {
      const before = Date.now();
      const res = await create({ name: 'Now' });
      const at = Date.parse(`${res.body.created_at.replace(' ', 'T')}Z`);
      assert.ok(at >= Math.floor(before / 1000) * 1000 - 1000 && at <= Date.now() + 1000, res.body.created_at);
    });

    it('gives each event its own id', async () => {
      const ids = new Set<string>();
      for (let i = 0; i < 5; i++) ids.add((await create({ name: 'Same name' })).body.id);
      assert.equal(ids.size, 5);
    });

    for (const currency of CURRENCIES) {
      it(`accepts currency ${currency} and returns it`, async () => {
        const res = await create({ name: `Paid in ${currency}`, currency });
        assert.equal(res.status, 200, JSON.stringify(res.body));
        assert.equal(res.body.currency, currency);
      });
    }

    it('returns currency null on get and in lists, whatever was stored', async () => {
      const created = await create({ name: 'Purchase', currency: 'euro' });
      const got = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events/${created.body.id}`);
      assert.equal(got.status, 200);
      assert.deepEqual(got.body, { ...created.body, currency: null });
      const list = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events?limit=100`);
      assert.equal(list.status, 200);
      const item = list.body.data.find((e: { id: string }) => e.id === created.body.id);
      assert.deepEqual(item, { ...created.body, currency: null });
      for (const e of list.body.data) assert.equal(e.currency, null);
      // The stored currency is still euro: an update that leaves it alone returns it.
      const updated = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events/${created.body.id}`, { name: 'Order' });
      assert.equal(updated.body.currency, 'euro');
    });

    it('accepts a name of exactly 255 characters', async () => {
      const name = 'a'.repeat(255);
      const res = await create({ name });
      assert.equal(res.status, 200);
      assert.equal(res.body.name, name);
    });

    it('counts multi-byte characters as one character each (255 é, 255 emoji)', async () => {
      for (const ch of ['é', '😀', '日']) {
        const name = ch.repeat(255);
        const res = await create({ name });
        assert.equal(res.status, 200, `${ch}: ${JSON.stringify(res.body).slice(0, 200)}`);
        assert.equal(res.body.name, name);
        const got = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events/${res.body.id}`);
        assert.equal(got.body.name, name);
        assertFieldErrors(await create({ name: ch.repeat(256) }), ['name']);
      }
    });

    it('keeps names exactly as sent (spaces, quotes, markup)', async () => {
      const name = `  <b>"O'Brien"</b> ; DROP TABLE goals; --  `;
      const res = await create({ name });
      assert.equal(res.status, 200);
      assert.equal(res.body.name, name);
    });

    const bad: [string, unknown, string[]][] = [
      ['an unknown currency', { name: 'x', currency: 'bitcoin' }, ['currency']],
      ['a currency in the wrong case', { name: 'x', currency: 'Dollar' }, ['currency']],
      ['a currency of the wrong type', { name: 'x', currency: 1 }, ['currency']],
      ['a null currency', { name: 'x', currency: null }, ['currency']],
      ['a missing name', { currency: 'euro' }, ['name']],
      ['an empty body', {}, ['name']],
      ['a name over 255 characters', { name: 'a'.repeat(256) }, ['name']],
      ['a numeric name', { name: 123 }, ['name']],
      ['a boolean name', { name: true }, ['name']],
      ['an array name', { name: ['a'] }, ['name']],
      ['an object name', { name: { first: 'a' } }, ['name']],
      ['a null name', { name: null }, ['name']],
      ['an empty name', { name: '' }, ['name']],
      ['a bad name and a bad currency', { name: '', currency: 'gold' }, ['name', 'currency']],
    ];
    for (const [label, body, fields] of bad) {
      it(`refuses ${label}: 400 {errors} naming ${fields.join(', ')}`, async () => {
        const before = (await t.meta.listGoals(site, { limit: 100 })).items.length;
        assertFieldErrors(await create(body), fields);
        assert.equal((await t.meta.listGoals(site, { limit: 100 })).items.length, before);
      });
    }

    it('refuses a create with no body at all', async () => {
      const res = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events`);
      assertFieldErrors(res, ['name']);
    });
  });

  describe('get, update, delete', () => {
    it('gets an event by id', async () => {
      const created = await create({ name: 'Download', currency: 'yen' });
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events/${created.body.id}`);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { id: created.body.id, object: 'event', name: 'Download', currency: null, created_at: created.body.created_at });
    });

    it('updates the name and the currency, returning the currency', async () => {
      const created = await create({ name: 'Old', currency: 'pound' });
      const url = `/v1/sites/${site}/events/${created.body.id}`;
      const renamed = await t.call(OWNER_TOKEN, 'POST', url, { name: 'New' });
      assert.equal(renamed.status, 200);
      assert.deepEqual(renamed.body, { ...created.body, name: 'New', currency: 'pound' });
      const recurrency = await t.call(OWNER_TOKEN, 'POST', url, { currency: 'won' });
      assert.deepEqual(recurrency.body, { ...created.body, name: 'New', currency: 'won' });
      const both = await t.call(OWNER_TOKEN, 'POST', url, { name: 'Both', currency: 'none' });
      assert.deepEqual(both.body, { ...created.body, name: 'Both', currency: 'none' });
      const got = await t.call(OWNER_TOKEN, 'GET', url);
      assert.deepEqual(got.body, { ...created.body, name: 'Both', currency: null });
    });

    it('an update with an empty body, or no body, keeps every field', async () => {
      const created = await create({ name: 'Keep', currency: 'rupee' });
      const url = `/v1/sites/${site}/events/${created.body.id}`;
      const empty = await t.call(OWNER_TOKEN, 'POST', url, {});
      assert.equal(empty.status, 200);
      assert.deepEqual(empty.body, created.body);
      const none = await t.call(OWNER_TOKEN, 'POST', url);
      assert.equal(none.status, 200, JSON.stringify(none.body));
      assert.deepEqual(none.body, created.body);
    });

    const badUpdates: [string, unknown, string[]][] = [
      ['a name over 255 characters', { name: 'b'.repeat(256) }, ['name']],
      ['an empty name', { name: '' }, ['name']],
      ['a numeric name', { name: 5 }, ['name']],
      ['an unknown currency', { currency: 'doubloon' }, ['currency']],
    ];
    for (const [label, body, fields] of badUpdates) {
      it(`refuses an update with ${label} and changes nothing`, async () => {
        const created = await create({ name: 'Stable', currency: 'franc' });
        const url = `/v1/sites/${site}/events/${created.body.id}`;
        assertFieldErrors(await t.call(OWNER_TOKEN, 'POST', url, body), fields);
        const after = await t.call(OWNER_TOKEN, 'POST', url, {});
        assert.deepEqual(after.body, created.body);
      });
    }

    it('an update to 255 multi-byte characters is accepted', async () => {
      const created = await create({ name: 'Short' });
      const name = '🎉'.repeat(255);
      const res = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events/${created.body.id}`, { name });
      assert.equal(res.status, 200);
      assert.equal(res.body.name, name);
    });

    it('deletes an event: the deleted object, then 404 everywhere', async () => {
      const created = await create({ name: 'Doomed' });
      const url = `/v1/sites/${site}/events/${created.body.id}`;
      const res = await t.call(OWNER_TOKEN, 'DELETE', url);
      assert.equal(res.status, 200);
      assert.deepEqual(res.body, { id: created.body.id, object: 'event', deleted: true });
      assertError(await t.call(OWNER_TOKEN, 'GET', url), 404);
      assertError(await t.call(OWNER_TOKEN, 'POST', url, { name: 'Back' }), 404);
      assertError(await t.call(OWNER_TOKEN, 'DELETE', url), 404);
      const list = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events?limit=100`);
      assert.ok(!list.body.data.some((e: { id: string }) => e.id === created.body.id));
    });

    for (const [label, id] of [
      ['an unknown event id', 'ZZZZZZZZ'],
      ['a malformed event id', 'not-an-event'],
      ['a lowercase event id', 'abcdefgh'],
    ] as const) {
      it(`${label} -> 404 {error} on get, update and delete`, async () => {
        const url = `/v1/sites/${site}/events/${id}`;
        assertError(await t.call(OWNER_TOKEN, 'GET', url), 404);
        assertError(await t.call(OWNER_TOKEN, 'POST', url, { name: 'x' }), 404);
        assertError(await t.call(OWNER_TOKEN, 'DELETE', url), 404);
      });
    }

    it('the lowercase form of a real event id is 404', async () => {
      const created = await create({ name: 'Case' });
      assertError(await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events/${created.body.id.toLowerCase()}`), 404);
    });

    it('an event addressed under another site of the same account -> 404, and is left alone', async () => {
      const created = await create({ name: 'Mine', currency: 'peso' }, otherSite);
      const wrong = `/v1/sites/${site}/events/${created.body.id}`;
      assertError(await t.call(OWNER_TOKEN, 'GET', wrong), 404);
      assertError(await t.call(OWNER_TOKEN, 'POST', wrong, { name: 'Hijacked' }), 404);
      assertError(await t.call(OWNER_TOKEN, 'DELETE', wrong), 404);
      const right = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${otherSite}/events/${created.body.id}`, {});
      assert.deepEqual(right.body, created.body);
    });

    it("deleting a site removes its events", async () => {
      const doomed = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Temp' })).body.id;
      const event = (await create({ name: 'Gone soon' }, doomed)).body.id;
      assert.equal((await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${doomed}`)).status, 200);
      assert.equal(await t.meta.getGoal(doomed, event), undefined);
    });
  });

  describe('DELETE /v1/sites/{site_id}/events/{event_id}/data is retired', () => {
    it('answers 410 {error} with any token, none, a bad one, for known and unknown ids', async () => {
      const event = (await create({ name: 'Wipe me' })).body.id;
      const readOnly = await t.token(['all-sites-readonly']);
      const urls = [
        `/v1/sites/${site}/events/${event}/data`,
        `/v1/sites/${site}/events/ZZZZZZZZ/data`,
        `/v1/sites/ZZZZZZZZ/events/ZZZZZZZZ/data`,
      ];
      for (const url of urls) {
        for (const token of [OWNER_TOKEN, readOnly, 'garbage', undefined]) {
          const res = await t.call(token, 'DELETE', url);
          assert.equal(res.status, 410, `${url} with ${token}`);
          assert.deepEqual(Object.keys(res.body), ['error']);
          assert.equal(typeof res.body.error, 'string');
          assert.match(String(res.headers['content-type']), /^application\/json/);
        }
      }
      // The event is untouched.
      assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events/${event}`)).status, 200);
    });
  });
});

describe('events list pagination', () => {
  let t: TestApp;
  let site: string;
  let other: string;
  let ids: string[];
  before(async () => {
    t = await startTestApp();
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Many events' })).body.id;
    other = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Other' })).body.id;
    ids = [];
    for (let i = 0; i < 25; i++) {
      const res = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events`, { name: `Event ${i}` });
      ids.push(res.body.id);
      // Interleave another site's events: they must never show up here.
      if (i % 5 === 0) await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${other}/events`, { name: `Other ${i}` });
    }
  });
  after(() => t.close());

  const list = (query = '') => t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events${query}`);
  const idsOf = (res: Reply) => (res.body.data as { id: string }[]).map((e) => e.id);

  function assertPage(res: Reply, expectedIds: string[], hasMore: boolean): void {
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body).sort(), ['data', 'has_more', 'object', 'url']);
    assert.equal(res.body.object, 'list');
    assert.equal(res.body.url, `/v1/sites/${site}/events`);
    assert.equal(res.body.has_more, hasMore);
    assert.deepEqual(idsOf(res), expectedIds);
    const created = (res.body.data as { created_at: string }[]).map((e) => e.created_at);
    assert.deepEqual(created, [...created].sort(), 'created_at ascending within the page');
    for (const e of res.body.data) {
      assert.equal(e.object, 'event');
      assert.equal(e.currency, null);
    }
  }

  it('defaults to 10 items, oldest first', async () => {
    assertPage(await list(), ids.slice(0, 10), true);
  });

  it('walks forward with starting_after across three pages', async () => {
    const p1 = await list('?limit=10');
    assertPage(p1, ids.slice(0, 10), true);
    const p2 = await list(`?limit=10&starting_after=${idsOf(p1).at(-1)}`);
    assertPage(p2, ids.slice(10, 20), true);
    const p3 = await list(`?limit=10&starting_after=${idsOf(p2).at(-1)}`);
    assertPage(p3, ids.slice(20, 25), false);
    const p4 = await list(`?limit=10&starting_after=${idsOf(p3).at(-1)}`);
    assertPage(p4, [], false);
  });

  it('walks backward with ending_before from the last id, pages still ascending', async () => {
    const p1 = await list(`?limit=10&ending_before=${ids[24]}`);
    assertPage(p1, ids.slice(14, 24), true);
    const p2 = await list(`?limit=10&ending_before=${idsOf(p1)[0]}`);
    assertPage(p2, ids.slice(4, 14), true);
    const p3 = await list(`?limit=10&ending_before=${idsOf(p2)[0]}`);
    assertPage(p3, ids.slice(0, 4), false);
    const p4 = await list(`?limit=10&ending_before=${ids[0]}`);
    assertPage(p4, [], false);
  });

  it('has_more is false when a page ends exactly at the last item', async () => {
    assertPage(await list('?limit=25'), ids, false);
    assertPage(await list(`?limit=5&starting_after=${ids[19]}`), ids.slice(20), false);
    assertPage(await list(`?limit=5&ending_before=${ids[5]}`), ids.slice(0, 5), false);
    assertPage(await list(`?limit=24`), ids.slice(0, 24), true);
  });

  it('accepts limit 1 and limit 100', async () => {
    assertPage(await list('?limit=1'), ids.slice(0, 1), true);
    assertPage(await list(`?limit=1&starting_after=${ids[0]}`), ids.slice(1, 2), true);
    assertPage(await list('?limit=100'), ids, false);
  });

  it('an empty site lists nothing', async () => {
    const empty = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Empty' })).body.id;
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${empty}/events`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { object: 'list', url: `/v1/sites/${empty}/events`, has_more: false, data: [] });
  });

  for (const limit of ['0', '101', 'abc', '-1', '1.5', '']) {
    it(`limit=${limit} -> 400 {errors: {limit}}`, async () => {
      const res = await list(`?limit=${limit}`);
      assert.equal(res.status, 400, JSON.stringify(res.body));
      assert.deepEqual(Object.keys(res.body), ['errors']);
      assert.deepEqual(Object.keys(res.body.errors), ['limit']);
      assert.equal(typeof res.body.errors.limit[0], 'string');
    });
  }

  for (const field of ['starting_after', 'ending_before']) {
    it(`an unknown ${field} -> 400 {errors: {${field}}}`, async () => {
      for (const cursor of ['ZZZZZZZZ', 'garbage', '']) {
        const res = await list(`?${field}=${cursor}`);
        assert.equal(res.status, 400, `${cursor}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(Object.keys(res.body), ['errors']);
        assert.deepEqual(Object.keys(res.body.errors), [field], `${cursor}: ${JSON.stringify(res.body)}`);
      }
    });

    it(`a ${field} naming another site's event -> 400 {errors: {${field}}}`, async () => {
      const foreign = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${other}/events`)).body.data[0].id;
      const res = await list(`?${field}=${foreign}`);
      assert.equal(res.status, 400);
      assert.deepEqual(Object.keys(res.body.errors), [field]);
    });
  }

  it('starting_after together with ending_before -> 400 {errors} under a cursor field', async () => {
    const res = await list(`?starting_after=${ids[2]}&ending_before=${ids[8]}`);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.deepEqual(Object.keys(res.body), ['errors']);
    const fields = Object.keys(res.body.errors);
    assert.equal(fields.length, 1);
    assert.ok(['starting_after', 'ending_before'].includes(fields[0]!), fields[0]);
  });

  it('url is the path alone, without the query string', async () => {
    const res = await list(`?limit=3&starting_after=${ids[0]}`);
    assert.equal(res.body.url, `/v1/sites/${site}/events`);
  });

  it('a deleted event used as a cursor is refused, and deletions close the gap', async () => {
    const victim = ids[10]!;
    const del = await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${site}/events/${victim}`);
    assert.equal(del.status, 200);
    const res = await list(`?starting_after=${victim}`);
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.body.errors), ['starting_after']);
    const remaining = ids.filter((id) => id !== victim);
    assertPage(await list(`?limit=10&starting_after=${ids[0]}`), remaining.slice(1, 11), true);
    ids = remaining;
  });
});
