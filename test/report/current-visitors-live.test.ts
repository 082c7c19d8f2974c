// Current visitors count a hit as soon as its answer is sent (both stores): the visits in progress come from the
// ingest thread's memory embedded, from Redis scaled out, while their rows wait to be written, laid over the stored
// rows, one visit counted once with its newest page; and the answer is the same once the rows are written. The
// write buffer here holds every row for an hour, so whatever the answer shows before the flush came from there.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { formatTimestamp } from '../../src/domain/time.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('current visitors before the rows are written', () => {
  let t: TestApp;
  let site: string;

  /** A live pageview from the visitor at `ip`, as the tracker sends it; resolves once it is answered. */
  const view = async (ip: string, path: string, referrer = '') => {
    const params = new URLSearchParams({ sid: site, h: 'https://shop.example', p: path, r: referrer });
    const res = await t.app.inject({ method: 'GET', url: `/?${params}`, headers: { 'user-agent': CHROME }, remoteAddress: ip });
    assert.equal(res.statusCode, 200);
  };
  const current = async () => {
    const res = await t.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?site_id=${site}&detailed=true`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body;
  };

  before(async () => {
    t = await startTestApp({ buffer: { flushIntervalMs: 3_600_000, batchSize: 1_000_000 } });
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Live' })).body.id;
  });
  after(() => t.close());

  it('counts answered hits at once, each visit by its newest page, and the same once written', async () => {
    await view('203.0.113.1', '/pricing', 'https://news.ycombinator.com/item?id=1');
    await view('203.0.113.2', '/docs');
    await view('203.0.113.1', '/signup');
    const expected = {
      total: 2,
      content: [{ hostname: 'https://shop.example', pathname: '/docs', total: 1 }, { hostname: 'https://shop.example', pathname: '/signup', total: 1 }],
      referrers: [{ referrer_hostname: 'https://news.ycombinator.com', referrer_pathname: '/item', total: 1 }],
    };
    assert.deepEqual(await current(), expected);
    assert.equal((await t.events.listHits(site)).length, 0, 'nothing was written yet: the answer came from memory');
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?site_id=${site}`)).body.total, 2);

    await t.flushHits();
    assert.equal((await t.events.listHits(site)).length, 3);
    assert.deepEqual(await current(), expected, 'the stored rows give the same answer');
  });

  it('lays a continued visit over its stored row, and adds visits only the store has', async () => {
    // The first visitor goes on after their rows were written: one visit, its exit page the new one.
    await view('203.0.113.1', '/thanks');
    // An import of a visit happening now reaches the store without the live visit state.
    const line = { type: 'pageview', site_id: site, timestamp: formatTimestamp(new Date()), url: 'https://shop.example/blog', referrer: 'https://www.google.com/', user_agent: CHROME, ip: '203.0.113.9' };
    const imported = await t.app.inject({ method: 'POST', url: '/admin/import', headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/x-ndjson' }, payload: JSON.stringify(line) });
    assert.equal(imported.statusCode, 200, imported.body);
    await t.flushHits();
    await view('203.0.113.2', '/docs/install');
    const answer = await current();
    assert.equal(answer.total, 3);
    assert.deepEqual(answer.content.map((c: { pathname: string; total: number }) => [c.pathname, c.total]), [['/blog', 1], ['/docs/install', 1], ['/thanks', 1]]);
    assert.deepEqual(answer.referrers.map((r: { referrer_hostname: string }) => r.referrer_hostname), ['https://news.ycombinator.com', 'https://www.google.com']);
    await t.flushHits();
    assert.deepEqual(await current(), answer);
  });

  it('leaves out visits idle for five minutes, and other sites\' visits', async () => {
    const other = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Elsewhere' })).body.id;
    const params = new URLSearchParams({ sid: other, h: 'https://else.example', p: '/' });
    await t.app.inject({ method: 'GET', url: `/?${params}`, headers: { 'user-agent': CHROME }, remoteAddress: '198.51.100.7' });
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?site_id=${other}`)).body.total, 1);
    assert.equal((await current()).total, 3, 'not counted on this site');
    // Six minutes on, every visit of the first test is idle: the report's clock moved, not the visits.
    const later = await startTestApp({ buffer: { flushIntervalMs: 3_600_000, batchSize: 1_000_000 }, now: () => new Date(Date.now() + 6 * 60_000) });
    try {
      const s = (await later.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Later' })).body.id;
      const p = new URLSearchParams({ sid: s, h: 'https://later.example', p: '/' });
      await later.app.inject({ method: 'GET', url: `/?${p}`, headers: { 'user-agent': CHROME }, remoteAddress: '198.51.100.8' });
      assert.equal((await later.call(OWNER_TOKEN, 'GET', `/v1/current_visitors?site_id=${s}`)).body.total, 0, 'a hit six minutes before the clock');
    } finally {
      await later.close();
    }
  });
});
