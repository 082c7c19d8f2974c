// /v1/sites: create, read, update, delete, list, and every body rule of SPEC.md section 4.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { verifyPassword } from '../../src/domain/secrets.js';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

describe('/v1/sites', () => {
  let t: TestApp;
  const create = (body: unknown) => t.call(OWNER_TOKEN, 'POST', '/v1/sites', body);
  const update = (id: string, body?: unknown) => t.call(OWNER_TOKEN, 'POST', `/v1/sites/${id}`, body);

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('creates a site with defaults and returns the site object', async () => {
    const res = await create({ name: 'Blog' });
    assert.equal(res.status, 200);
    assert.match(res.body.id, /^[A-Z]{8}$/);
    assert.match(res.body.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const { id: _id, created_at: _c, ...rest } = res.body;
    assert.deepEqual(rest, {
      object: 'site',
      name: 'Blog',
      sharing: 'none',
      timezone: 'UTC',
      multi_domain: false,
      multi_domain_option: null,
      domain: null,
      umami_website_id: null,
      plausible_script_id: null,
    });
    const got = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${res.body.id}`);
    assert.deepEqual(got.body, res.body);
  });

  it('accepts every documented field and never returns share_password', async () => {
    const res = await create({
      name: 'Shop',
      sharing: 'private',
      share_password: 'hunter2',
      timezone: 'America/New_York',
      multi_domain: true,
      multi_domain_option: 'separate',
    });
    assert.equal(res.status, 200);
    assert.equal(res.body.sharing, 'private');
    assert.equal(res.body.timezone, 'America/New_York');
    assert.equal(res.body.multi_domain, true);
    assert.equal(res.body.multi_domain_option, 'separate');
    assert.equal('share_password' in res.body, false);
    const hash = (await t.meta.getSite(res.body.id))?.sharePasswordHash ?? '';
    assert.ok(hash.startsWith('scrypt$'));
    assert.ok(!hash.includes('hunter2'));
    assert.equal(await verifyPassword('hunter2', hash), true);
    assert.equal(await verifyPassword('hunter3', hash), false);
  });

  it('takes the account time zone when none is given', async () => {
    await t.meta.updateAccount(1, { timezone: 'Europe/Berlin' });
    const res = await create({ name: 'Berlin' });
    assert.equal(res.body.timezone, 'Europe/Berlin');
    await t.meta.updateAccount(1, { timezone: 'UTC' });
  });

  const badBodies: [string, unknown, string][] = [
    ['missing name', {}, 'name'],
    ['empty name', { name: '' }, 'name'],
    ['name over 255 characters', { name: 'x'.repeat(256) }, 'name'],
    ['name of the wrong type', { name: 42 }, 'name'],
    ['unknown sharing', { name: 'a', sharing: 'friends' }, 'sharing'],
    ['private without share_password', { name: 'a', sharing: 'private' }, 'share_password'],
    ['share_password over 255 characters', { name: 'a', sharing: 'private', share_password: 'p'.repeat(256) }, 'share_password'],
    ['share_password of the wrong type', { name: 'a', sharing: 'private', share_password: 12 }, 'share_password'],
    ['unknown time zone', { name: 'a', timezone: 'Mars/Olympus' }, 'timezone'],
    ['offset instead of a zone name', { name: 'a', timezone: '+05:00' }, 'timezone'],
    ['multi_domain as a string', { name: 'a', multi_domain: 'yes' }, 'multi_domain'],
    ['multi_domain without an option', { name: 'a', multi_domain: true }, 'multi_domain_option'],
    ['unknown multi_domain_option', { name: 'a', multi_domain: true, multi_domain_option: 'both' }, 'multi_domain_option'],
  ];
  for (const [what, body, field] of badBodies) {
    it(`refuses a create with ${what}: 400 under ${field}`, async () => {
      const res = await create(body);
      assert.equal(res.status, 400);
      assert.ok(Array.isArray(res.body.errors?.[field]), JSON.stringify(res.body));
      assert.equal(typeof res.body.errors[field][0], 'string');
    });
  }

  it('counts length in characters, not bytes', async () => {
    const res = await create({ name: 'é'.repeat(255) });
    assert.equal(res.status, 200);
    assert.equal(res.body.name, 'é'.repeat(255));
    assert.equal((await create({ name: '😀'.repeat(255) })).status, 200);
  });

  it('updates only the fields sent; an empty or missing body changes nothing', async () => {
    const site = (await create({ name: 'Before', timezone: 'Asia/Tokyo' })).body;
    assert.deepEqual((await update(site.id)).body, site);
    assert.deepEqual((await update(site.id, {})).body, site);
    const res = await update(site.id, { name: 'After' });
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { ...site, name: 'After' });
  });

  it('applies the sharing and multi-domain rules on update', async () => {
    const site = (await create({ name: 'Rules' })).body;
    assert.equal((await update(site.id, { sharing: 'private' })).status, 400);
    assert.equal((await update(site.id, { multi_domain: true })).status, 400);
    const priv = await update(site.id, { sharing: 'private', share_password: 'pw' });
    assert.equal(priv.body.sharing, 'private');
    assert.ok((await t.meta.getSite(site.id))?.sharePasswordHash);
    // A new password alone, while private, replaces the old one.
    await update(site.id, { share_password: 'pw2' });
    assert.equal(await verifyPassword('pw2', (await t.meta.getSite(site.id))!.sharePasswordHash!), true);
    const pub = await update(site.id, { sharing: 'public' });
    assert.equal(pub.body.sharing, 'public');
    assert.equal((await t.meta.getSite(site.id))?.sharePasswordHash, null, 'leaving private forgets the password');
    const multi = await update(site.id, { multi_domain: true, multi_domain_option: 'combined' });
    assert.equal(multi.body.multi_domain_option, 'combined');
    assert.equal((await update(site.id, { multi_domain_option: 'separate' })).body.multi_domain_option, 'separate');
    const single = await update(site.id, { multi_domain: false });
    assert.deepEqual([single.body.multi_domain, single.body.multi_domain_option], [false, null]);
    assert.equal((await update(site.id, { timezone: 'Nowhere/Land' })).status, 400);
    assert.equal((await update(site.id, { name: '' })).status, 400);
  });

  it('deletes a site with its events and milestones', async () => {
    const site = (await create({ name: 'Doomed' })).body;
    const ev = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site.id}/events`, { name: 'Signup' })).body;
    const ms = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site.id}/milestones`, { name: 'Launch', milestone_date: '2026-01-01' })).body;
    const res = await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${site.id}`);
    assert.equal(res.status, 200);
    assert.deepEqual(res.body, { id: site.id, object: 'site', deleted: true });
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site.id}`)).status, 404);
    assert.equal((await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${site.id}`)).status, 404);
    assert.equal(await t.meta.getGoal(site.id, ev.id), undefined);
    assert.equal(await t.meta.getMilestone(site.id, ms.id), undefined);
  });

  it('answers 404 for unknown and malformed site ids', async () => {
    for (const id of ['ZZZZZZZZ', 'abc', 'A'.repeat(150), '%27%3B--']) {
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${id}`);
      assert.equal(res.status, 404, id);
      assert.equal(typeof res.body.error, 'string');
    }
  });

  it('answers 410 for the retired data wipe, with or without a token', async () => {
    const site = (await create({ name: 'Keep' })).body;
    for (const token of [OWNER_TOKEN, undefined]) {
      const res = await t.call(token, 'DELETE', `/v1/sites/${site.id}/data`);
      assert.equal(res.status, 410);
      assert.equal(typeof res.body.error, 'string');
    }
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site.id}`)).status, 200);
  });
});

describe('/v1/sites domain and umami_website_id (extensions)', () => {
  let t: TestApp;
  const create = (body: unknown, token = OWNER_TOKEN) => t.call(token, 'POST', '/v1/sites', body);
  const update = (id: string, body: unknown) => t.call(OWNER_TOKEN, 'POST', `/v1/sites/${id}`, body);
  const UMAMI = '8E0C7B44-2A3B-4C4D-9E8F-0123456789AB';

  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('stores domains in a normal form, returns them comma-separated and finds the site by each', async () => {
    const res = await create({ name: 'Domains', domain: ' https://Example.COM/ , www.example.com,blog.example.com,example.com', umami_website_id: UMAMI });
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.equal(res.body.domain, 'example.com,www.example.com,blog.example.com');
    assert.equal(res.body.umami_website_id, UMAMI.toLowerCase());
    assert.deepEqual((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${res.body.id}`)).body, res.body);
    const listed = (await t.call(OWNER_TOKEN, 'GET', '/v1/sites?limit=100')).body.data.find((s: { id: string }) => s.id === res.body.id);
    assert.equal(listed.domain, res.body.domain);
    for (const d of ['example.com', 'www.example.com', 'blog.example.com']) assert.equal((await t.meta.findSiteByDomain(d))?.id, res.body.id, d);
    assert.equal((await t.meta.findSiteByUmamiId(UMAMI.toLowerCase()))?.id, res.body.id);
    assert.equal(await t.meta.findSiteByDomain('shop.example.com'), undefined);
  });

  it('keeps internationalised names in their Unicode form, whichever form is sent', async () => {
    const res = await create({ name: 'IDN', domain: 'xn--caf-dma.example' });
    assert.equal(res.body.domain, 'café.example');
    assert.equal((await t.meta.findSiteByDomain('café.example'))?.id, res.body.id);
  });

  it('gives a domain and an Umami id to one site only, across accounts, and frees them when changed or deleted', async () => {
    const first = (await create({ name: 'First', domain: 'taken.example', umami_website_id: '11111111-2222-4333-8444-555555555555' })).body;
    const again = await create({ name: 'Second', domain: 'other.example,taken.example' });
    assert.equal(again.status, 400);
    assert.match(again.body.errors.domain[0], /taken\.example is already used by another site/);
    const account = await t.meta.createAccount({ name: 'B', email: 'b@b.test', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const otherToken = await t.token(['*'], { accountId: account.id });
    const elsewhere = await create({ name: 'Third', umami_website_id: '11111111-2222-4333-8444-555555555555' }, otherToken);
    assert.equal(elsewhere.status, 400);
    assert.ok(Array.isArray(elsewhere.body.errors.umami_website_id));
    assert.equal((await create({ name: 'Nothing kept' }, otherToken)).body.domain, null, 'a refused create stores nothing');
    // The same site may send its own domains again; other sites may not take them.
    assert.equal((await update(first.id, { domain: 'taken.example,more.example' })).body.domain, 'taken.example,more.example');
    const mine = (await create({ name: 'Mine' })).body;
    assert.equal((await update(mine.id, { domain: 'more.example' })).status, 400);
    assert.equal((await t.meta.findSiteByDomain('more.example'))?.id, first.id);
    // Removing a domain frees it at once; clearing with '' or null removes them all.
    await update(first.id, { domain: 'taken.example' });
    assert.equal((await update(mine.id, { domain: 'more.example' })).body.domain, 'more.example');
    assert.equal((await update(first.id, { domain: '', umami_website_id: null })).body.domain, null);
    assert.equal((await t.meta.getSite(first.id))?.umamiWebsiteId, null);
    assert.equal(await t.meta.findSiteByDomain('taken.example'), undefined);
    assert.equal((await create({ name: 'Now free', umami_website_id: '11111111-2222-4333-8444-555555555555' }, otherToken)).status, 200);
    await t.call(OWNER_TOKEN, 'DELETE', `/v1/sites/${mine.id}`);
    assert.equal(await t.meta.findSiteByDomain('more.example'), undefined);
    assert.equal((await create({ name: 'After delete', domain: 'more.example' })).status, 200);
  });

  it('updates other fields without touching domains, and accepts form bodies', async () => {
    const site = (await create({ name: 'Keep', domain: 'keep.example' })).body;
    assert.equal((await update(site.id, { name: 'Kept' })).body.domain, 'keep.example');
    const res = await t.app.inject({
      method: 'POST',
      url: `/v1/sites/${site.id}`,
      headers: { authorization: `Bearer ${OWNER_TOKEN}`, 'content-type': 'application/x-www-form-urlencoded' },
      payload: 'domain=keep.example%2Cform.example&umami_website_id=',
    });
    assert.equal(res.statusCode, 200, res.body);
    assert.deepEqual([res.json().domain, res.json().umami_website_id], ['keep.example,form.example', null]);
  });

  const bad: [string, unknown][] = [
    ['a URL with a path', 'example.com/blog'],
    ['a port', 'example.com:8080'],
    ['spaces inside a name', 'exa mple.com'],
    ['an empty name between commas', 'a.example,,b.example'],
    ['an underscore', 'my_site.example'],
    ['a label over 63 characters', `${'a'.repeat(64)}.example`],
    ['an IP address', '203.0.113.9'],
    ['more than 20 domains', Array.from({ length: 21 }, (_, i) => `d${i}.example`).join(',')],
    ['over 2,048 characters', `${'a'.repeat(60)}.example,`.repeat(40)],
    ['a number', 42],
    ['a list', ['a.example']],
  ];
  for (const [what, domain] of bad) {
    it(`refuses a domain field with ${what}: 400 under domain`, async () => {
      const res = await create({ name: 'Bad', domain });
      assert.equal(res.status, 400);
      assert.ok(Array.isArray(res.body.errors?.domain), JSON.stringify(res.body));
    });
  }

  it('refuses an umami_website_id that is not a UUID: 400 under umami_website_id', async () => {
    for (const id of ['abc', '8e0c7b44-2a3b-4c4d-9e8f-0123456789', 7]) {
      const res = await create({ name: 'Bad', umami_website_id: id });
      assert.equal(res.status, 400);
      assert.ok(Array.isArray(res.body.errors?.umami_website_id), JSON.stringify(res.body));
    }
  });
});

describe('/v1/sites pagination', () => {
  let t: TestApp;
  const ids: string[] = [];
  before(async () => {
    t = await startTestApp();
    for (let i = 0; i < 23; i++) ids.push((await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: `site ${i}` })).body.id);
  });
  after(() => t.close());

  it('defaults to 10 items in creation order', async () => {
    const res = await t.call(OWNER_TOKEN, 'GET', '/v1/sites');
    assert.equal(res.status, 200);
    assert.equal(res.body.object, 'list');
    assert.equal(res.body.url, '/v1/sites');
    assert.equal(res.body.has_more, true);
    assert.deepEqual(res.body.data.map((s: { id: string }) => s.id), ids.slice(0, 10));
  });

  it('walks forward with starting_after and back with ending_before', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    for (;;) {
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites?limit=7${cursor ? `&starting_after=${cursor}` : ''}`);
      pages++;
      assert.equal(res.body.url, '/v1/sites');
      seen.push(...res.body.data.map((s: { id: string }) => s.id));
      if (!res.body.has_more) break;
      cursor = res.body.data.at(-1).id;
    }
    assert.equal(pages, 4);
    assert.deepEqual(seen, ids);

    const back: string[][] = [];
    cursor = ids.at(-1);
    for (;;) {
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites?limit=7&ending_before=${cursor}`);
      const page = res.body.data.map((s: { id: string }) => s.id);
      back.unshift(page);
      if (!res.body.has_more) break;
      cursor = page[0];
    }
    assert.deepEqual(back, [ids.slice(0, 1), ids.slice(1, 8), ids.slice(8, 15), ids.slice(15, 22)]);
  });

  it('returns an empty last page after the final item', async () => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites?starting_after=${ids.at(-1)}`);
    assert.deepEqual([res.body.data, res.body.has_more], [[], false]);
    const first = await t.call(OWNER_TOKEN, 'GET', `/v1/sites?ending_before=${ids[0]}`);
    assert.deepEqual([first.body.data, first.body.has_more], [[], false]);
  });

  it('refuses bad limits and cursors under the field at fault', async () => {
    const cases: [string, string][] = [
      ['limit=0', 'limit'],
      ['limit=101', 'limit'],
      ['limit=-1', 'limit'],
      ['limit=abc', 'limit'],
      ['limit=1.5', 'limit'],
      ['starting_after=NOTASITE', 'starting_after'],
      ['ending_before=NOTASITE', 'ending_before'],
      [`starting_after=${ids[0]}&ending_before=${ids[3]}`, 'ending_before'],
    ];
    for (const [query, field] of cases) {
      const res = await t.call(OWNER_TOKEN, 'GET', `/v1/sites?${query}`);
      assert.equal(res.status, 400, query);
      assert.ok(res.body.errors?.[field], `${query}: ${JSON.stringify(res.body)}`);
    }
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/sites?limit=100')).body.data.length, 23);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/sites?limit=1')).body.data.length, 1);
  });

  it("never pages into another account's sites", async () => {
    const other = await t.meta.createAccount({ name: 'Other', email: 'o@example.com', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' });
    const token = await t.token(['*'], { accountId: other.id });
    const mine = await t.call(token, 'POST', '/v1/sites', { name: 'theirs' });
    const res = await t.call(token, 'GET', '/v1/sites?limit=100');
    assert.deepEqual(res.body.data.map((s: { id: string }) => s.id), [mine.body.id]);
    const cross = await t.call(token, 'GET', `/v1/sites?starting_after=${ids[0]}`);
    assert.equal(cross.status, 400);
  });
});
