// Embedded share pages over HTTP: the origins a site allows (owner-only route, checked and normalised), the
// `frame-ancestors` each answer carries, the page's own share session (no cookies in a frame) reading only its
// site, and password-protected or unshared sites. Runs on DuckDB and, in the scale-out pass, on PostgreSQL.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, logIn, newLogin, pageCsrf } from './helpers.js';

const frameAncestors = (csp: unknown) => /frame-ancestors ([^;]+)/.exec(String(csp))?.[1];
const shareSession = (html: string) => /<meta name="plumb-share-session" content="([^"]+)">/.exec(html)?.[1];

describe('embedded share pages', () => {
  let t: TestApp;
  let owner: Browser;
  let csrf: string;
  let publicSite: string;
  let privateSite: string;
  let hiddenSite: string;
  let otherSite: string;
  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    const token = await t.token(['*'], { accountId: login.id });
    const make = async (body: object) => (await t.call(token, 'POST', '/v1/sites', body)).body.id as string;
    publicSite = await make({ name: 'Public', sharing: 'public' });
    privateSite = await make({ name: 'Private', sharing: 'private', share_password: 'share me please' });
    hiddenSite = await make({ name: 'Hidden' });
    otherSite = await make({ name: 'Also public', sharing: 'public' });
    owner = new Browser(t.app);
    csrf = await logIn(owner, login.email);
  });
  after(() => t.close());

  const route = (site: string) => `/dashboard/api/sites/${site}/embedding`;

  it('lets the owner set the allowed origins, normalised, and refuses what is not an origin', async () => {
    assert.deepEqual((await owner.api('GET', route(publicSite), csrf)).body, { object: 'embedding', site_id: publicSite, embed_origins: [] });
    const saved = await owner.api('PUT', route(publicSite), csrf, { embed_origins: ['https://Blog.Example.test/', 'https://*.example.org', 'https://blog.example.test'] });
    assert.equal(saved.status, 200);
    assert.deepEqual(saved.body.embed_origins, ['https://blog.example.test', 'https://*.example.org']);
    assert.deepEqual((await owner.api('GET', route(publicSite), csrf)).body.embed_origins, ['https://blog.example.test', 'https://*.example.org']);
    for (const bad of [['https://a.test/page'], ['ftp://a.test'], ["https://a.test; script-src *"], ['blog.example.test'], [5], 'https://a.test', Array(21).fill('https://a.test')]) {
      const res = await owner.api('PUT', route(publicSite), csrf, { embed_origins: bad });
      assert.equal(res.status, 400, JSON.stringify(bad));
      assert.ok(Array.isArray(res.body.errors.embed_origins), JSON.stringify(res.body));
    }
    assert.equal((await owner.api('PUT', route(publicSite), csrf, {})).status, 400);
    assert.deepEqual((await owner.api('GET', route(publicSite), csrf)).body.embed_origins, ['https://blog.example.test', 'https://*.example.org'], 'refusals change nothing');
  });

  it('keeps the setting to the site\'s owner with the anti-CSRF header', async () => {
    assert.equal((await owner.api('PUT', route(publicSite), undefined, { embed_origins: [] })).status, 401);
    assert.equal((await new Browser(t.app).api('GET', route(publicSite), undefined)).status, 401);
    const stranger = new Browser(t.app);
    const strangerCsrf = await logIn(stranger, (await newLogin(t.meta)).email);
    assert.equal((await stranger.api('GET', route(publicSite), strangerCsrf)).status, 404);
    assert.equal((await stranger.api('PUT', route(publicSite), strangerCsrf, { embed_origins: ['https://evil.test'] })).status, 404);
    assert.equal((await owner.api('GET', route('NOSUCHID'), csrf)).status, 404);
    // A token is not a dashboard session.
    const token = await t.token(['*']);
    assert.equal((await t.call(token, 'GET', route(publicSite))).status, 401);
  });

  it('serves the embedded report framable by the allowed origins only, with its own session', async () => {
    await owner.api('PUT', route(publicSite), csrf, { embed_origins: ['https://blog.example.test'] });
    const visitor = new Browser(t.app);
    const page = await visitor.get(`/share/${publicSite}?embed=true`);
    assert.equal(page.statusCode, 200);
    assert.equal(frameAncestors(page.headers['content-security-policy']), 'https://blog.example.test');
    assert.equal(page.headers['x-frame-options'], undefined);
    assert.match(page.body, /data-embed="true"/);
    assert.match(page.body, /<body class="embedded">/);
    assert.doesNotMatch(page.body, /<nav/, 'no top bar');
    const session = shareSession(page.body);
    assert.ok(session);
    // In a frame the browser sends no cookie: the page's session travels in a header, with the anti-CSRF value.
    const reader = new Browser(t.app);
    const headers = { 'x-plumb-share-session': session, 'x-plumb-csrf': pageCsrf(page.body), accept: 'application/json' };
    const report = await reader.request({ url: `/v1/aggregations?entity=pageview&entity_id=${publicSite}&aggregates=pageviews`, headers });
    assert.equal(report.statusCode, 200, report.body);
    const other = await reader.request({ url: `/v1/aggregations?entity=pageview&entity_id=${otherSite}&aggregates=pageviews`, headers });
    assert.equal(other.statusCode, 404, 'only its own site');
    const write = await reader.request({ method: 'POST', url: `/v1/sites/${publicSite}`, headers: { ...headers, 'content-type': 'application/json' }, payload: { name: 'x' } });
    assert.equal(write.statusCode, 400, 'read only');
    const noCsrf = await reader.request({ url: `/v1/sites/${publicSite}`, headers: { 'x-plumb-share-session': session } });
    assert.equal(noCsrf.statusCode, 401);
    const forged = await reader.request({ url: `/v1/sites/${publicSite}`, headers: { ...headers, 'x-plumb-share-session': 'forged-session-id' } });
    assert.equal(forged.statusCode, 401);
  });

  it('stays unframable by default and outside embed mode', async () => {
    const page = await new Browser(t.app).get(`/share/${otherSite}?embed=true`);
    assert.equal(page.statusCode, 200);
    assert.equal(frameAncestors(page.headers['content-security-policy']), "'none'", 'no origins: nobody may frame it');
    const normal = await new Browser(t.app).get(`/share/${publicSite}`);
    assert.equal(frameAncestors(normal.headers['content-security-policy']), "'none'");
    assert.equal(normal.headers['x-frame-options'], 'SAMEORIGIN');
    assert.equal(shareSession(normal.body), undefined, 'the ordinary page uses its cookie');
    const other = await new Browser(t.app).get(`/share/${publicSite}?embed=1`);
    assert.equal(frameAncestors(other.headers['content-security-policy']), "'none'", 'only embed=true embeds');
  });

  it('explains in the frame that a password-protected report cannot be embedded, and hides unshared ones', async () => {
    await owner.api('PUT', route(privateSite), csrf, { embed_origins: ['https://blog.example.test'] });
    const page = await new Browser(t.app).get(`/share/${privateSite}?embed=true`);
    assert.equal(page.statusCode, 200);
    assert.equal(frameAncestors(page.headers['content-security-policy']), 'https://blog.example.test');
    assert.match(page.body, /cannot be shown inside another page/);
    assert.equal(shareSession(page.body), undefined);
    assert.doesNotMatch(page.body, /plumb-csrf/);
    const hidden = await new Browser(t.app).get(`/share/${hiddenSite}?embed=true`);
    assert.equal(hidden.statusCode, 404);
    assert.equal(frameAncestors(hidden.headers['content-security-policy']), "'none'");
  });

  it('forgets the origins when they are cleared', async () => {
    await owner.api('PUT', route(publicSite), csrf, { embed_origins: [] });
    const page = await new Browser(t.app).get(`/share/${publicSite}?embed=true`);
    assert.equal(frameAncestors(page.headers['content-security-policy']), "'none'");
  });
});
