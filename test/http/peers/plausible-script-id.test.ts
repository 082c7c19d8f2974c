// The Plausible script id of a site (/v1 sites' plausible_script_id): the forms it is taken in, its checks (one site
// per id, case kept), the per-site script served at /js/pa-<id>.js, and the events that script sends (`d: pa-<id>`)
// recorded to the site with that id. The script's behaviour in a browser: test/browser/peer-trackers.test.ts.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../../helpers/app.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const ID = 'gYyxvZhkMzdzXBAtSeSNz';

describe('Plausible script ids', () => {
  let t: TestApp;
  let site: string;

  const event = (body: object) =>
    t.app.inject({
      method: 'POST',
      url: '/api/event',
      headers: { 'user-agent': CHROME, 'content-type': 'text/plain' },
      payload: JSON.stringify(body),
    });
  const stored = async (id: string) => {
    await t.flushHits();
    return (await t.events.listHits(id)).map((h) => [h.type, h.hostname, h.pathname, h.eventName]);
  };

  before(async () => {
    t = await startTestApp();
  });
  after(() => t?.close());

  it("takes the id as the snippet shows it (the script's URL, pa-<id>.js, pa-<id>, the id) and returns the id", async () => {
    const created = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Snippet', plausible_script_id: ` https://plausible.io/js/pa-${ID}.js ` });
    assert.equal(created.status, 200, JSON.stringify(created.body));
    assert.equal(created.body.plausible_script_id, ID);
    site = created.body.id;
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}`)).body.plausible_script_id, ID);
    for (const form of [`pa-${ID}.js`, `pa-${ID}`, ID]) {
      const res = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}`, { plausible_script_id: form });
      assert.equal(res.body.plausible_script_id, ID, form);
    }
    const list = await t.call(OWNER_TOKEN, 'GET', '/v1/sites');
    assert.equal(list.body.data.find((s: { id: string }) => s.id === site).plausible_script_id, ID);
  });

  it('refuses what is no script id, and an id another site has, with 400 naming the field', async () => {
    for (const bad of ['pa-', 'has space', 'https://plausible.io/js/script.js', 'a/b', 'x'.repeat(65), 'ab', 'pa-ab!.js']) {
      const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Bad', plausible_script_id: bad });
      assert.equal(res.status, 400, bad);
      assert.ok(Array.isArray(res.body.errors?.plausible_script_id), JSON.stringify(res.body));
    }
    const taken = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Second', plausible_script_id: `pa-${ID}.js` });
    assert.equal(taken.status, 400);
    assert.deepEqual(taken.body.errors.plausible_script_id, ['is already used by another site']);
    // Case matters (Plausible's ids are case-sensitive): another case is another id.
    const other = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Other case', plausible_script_id: ID.toLowerCase() });
    assert.equal(other.status, 200, JSON.stringify(other.body));
    assert.equal((await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${other.body.id}`, { plausible_script_id: ID })).status, 400);
  });

  it('serves the per-site script at /js/pa-<id>.js naming the site by its id, compressed and cached', async () => {
    const res = await t.app.inject({ method: 'GET', url: `/js/pa-${ID}.js`, headers: { 'accept-encoding': 'gzip' } });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers['content-type']), /javascript/);
    assert.equal(res.headers['content-encoding'], 'gzip');
    const source = gunzipSync(res.rawPayload).toString();
    assert.ok(source.includes(`pa-${ID}`), 'the id is in the script');
    assert.ok(!source.includes('__PLUMB_SCRIPT_ID__'));
    const again = await t.app.inject({ method: 'GET', url: `/js/pa-${ID}.js`, headers: { 'if-none-match': String(res.headers.etag) } });
    assert.equal(again.statusCode, 304);
    // Another id, another script.
    const other = await t.app.inject({ method: 'GET', url: '/js/pa-AnotherId_123.js' });
    assert.ok(other.body.includes('pa-AnotherId_123') && !other.body.includes(ID));
    for (const bad of ['/js/pa-.js', '/js/pa-a%22b.js', '/js/pa-abc.min.js', `/js/pa-${'x'.repeat(65)}.js`]) {
      const missing = await t.app.inject({ method: 'GET', url: bad });
      assert.equal(missing.statusCode, 404, bad);
      assert.equal(typeof missing.json().error, 'string');
    }
  });

  it("records the script's events (d: pa-<id>) to the site with that id; an unknown id or another case is dropped", async () => {
    for (const d of [`pa-${ID}`, `pa-${ID.toUpperCase()}`, 'pa-NoSuchScriptId']) {
      const res = await event({ n: 'pageview', u: 'https://blog.example/post?utm_source=x', d, r: null });
      assert.equal(res.statusCode, 202, res.body);
    }
    // Plausible takes a whole number as a name (404 tracking).
    assert.equal((await event({ n: 404, u: 'https://blog.example/missing', d: `pa-${ID}`, p: { path: '/missing' } })).statusCode, 202);
    assert.deepEqual(await stored(site), [
      ['pageview', 'https://blog.example', '/post', ''],
      ['event', 'https://blog.example', '/missing', '404'],
    ]);
  });

  it('forgets the id when it is removed: the script still loads, its events are dropped', async () => {
    const res = await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}`, { plausible_script_id: null });
    assert.equal(res.body.plausible_script_id, null);
    assert.equal((await event({ n: 'pageview', u: 'https://blog.example/later', d: `pa-${ID}` })).statusCode, 202);
    assert.equal((await stored(site)).length, 2);
    assert.equal((await t.app.inject({ method: 'GET', url: `/js/pa-${ID}.js` })).statusCode, 200);
  });
});
