// Umami's npm client for servers, @umami/node, pointed at a listening Plumb: what it sends without a url or a
// hostname (Umami's /api/send takes both as optional) is recorded on the site's main domain, as docs/collection.md
// says; and a site without a domain gets a 400 saying what is missing.

import assert from 'node:assert/strict';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { Umami } from '@umami/node';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../../helpers/app.js';

const CHROME = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const WEBSITE = '5a0c8a52-3b7e-4f43-9d6e-2f1b0c9e8d71';
const NO_DOMAIN = '5a0c8a52-3b7e-4f43-9d6e-2f1b0c9e8d72';

describe('@umami/node against Plumb', () => {
  let t: TestApp;
  let site: string;
  let bare: string;
  let umami: Umami;

  const stored = async (id: string) => {
    await t.flushHits();
    return (await t.events.listHits(id)).map((h) => [h.type, h.hostname, h.pathname, h.eventName, h.props ?? []]);
  };

  before(async () => {
    t = await startTestApp();
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    const hostUrl = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
    const create = async (body: object) => {
      const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', body);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      return res.body.id as string;
    };
    site = await create({ name: 'Node client', domain: 'app.example,www.app.example', umami_website_id: WEBSITE });
    bare = await create({ name: 'No domain', umami_website_id: NO_DOMAIN });
    // A server forwards its visitor's browser (the client's own default, "Umami/<node version>", is no browser).
    umami = new Umami({ websiteId: WEBSITE, hostUrl, userAgent: CHROME });
  });

  after(() => t?.close());

  it('records track({url}) without a hostname on the site\'s main domain', async () => {
    const res = await umami.track({ url: '/home?utm_source=newsletter', title: 'Home' });
    assert.equal(res.status, 200, await res.text());
    assert.deepEqual(await stored(site), [['pageview', 'https://app.example', '/home', '', []]]);
  });

  it("records track(name, data) without url or hostname as the site's event at /", async () => {
    const res = await umami.track('signup', { plan: 'pro' });
    assert.equal(res.status, 200, await res.text());
    assert.deepEqual((await stored(site)).at(-1), ['event', 'https://app.example', '/', 'signup', [['plan', 'pro']]]);
  });

  it('keeps a hostname the client gives', async () => {
    const res = await umami.track({ hostname: 'www.app.example', url: '/pricing' });
    assert.equal(res.status, 200, await res.text());
    assert.deepEqual((await stored(site)).at(-1), ['pageview', 'https://www.app.example', '/pricing', '', []]);
  });

  it('answers 400 naming the missing hostname when the site has no domain, and records nothing', async () => {
    const client = new Umami({ websiteId: NO_DOMAIN, hostUrl: umami.options.hostUrl, userAgent: CHROME });
    const res = await client.track('signup');
    assert.equal(res.status, 400);
    assert.match(((await res.json()) as { error: string }).error, /payload\.hostname is required/);
    const ok = await client.track({ hostname: 'bare.example', url: '/' });
    assert.equal(ok.status, 200);
    assert.deepEqual(await stored(bare), [['pageview', 'https://bare.example', '/', '', []]]);
  });
});
