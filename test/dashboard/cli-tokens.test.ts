// The tokens the `plumb` CLI makes for itself (to act through /v1 for one command) are not the account's: neither
// the dashboard's API settings list nor /admin's token list shows them, or counts them among the revoked, while
// the account's own tokens are listed as before; one left by a CLI that died expires within the hour.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.js';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { Browser, givePassword, logIn } from './helpers.js';

interface ListedToken {
  id: string;
  name: string;
  revoked_at: string | null;
}

describe("the CLI's own tokens", () => {
  let t: TestApp;
  let address: string;
  let browser: Browser;
  let csrf: string;
  before(async () => {
    t = await startTestApp();
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    await givePassword(t.meta);
    browser = new Browser(t.app);
    csrf = await logIn(browser);
  });
  after(() => t.close());

  const plumb = async (args: string[]) => {
    const lines: string[] = [];
    const code = await run(args, { PLUMB_URL: address, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN }, (l) => lines.push(l), (l) => lines.push(l));
    return { code, text: lines.join('\n') };
  };
  const dashboardList = async () => (await browser.api('GET', '/dashboard/api/tokens', csrf)).body.data as ListedToken[];
  const adminList = async () => (await t.call(ADMIN_TOKEN, 'GET', '/admin/accounts/1/tokens')).body.data as ListedToken[];

  it('lists the account\'s tokens, revoked ones counted, and none of the CLI\'s', async () => {
    const mine = (await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'Mine', abilities: ['*'] })).body;
    const old = (await browser.api('POST', '/dashboard/api/tokens', csrf, { name: 'Old', abilities: ['all-sites-readonly'] })).body;
    assert.equal((await browser.api('DELETE', `/dashboard/api/tokens/${old.id}`, csrf)).status, 200);

    // Four commands that act through /v1 as the administrator: four tokens of the CLI's, each revoked at its end.
    const created = await plumb(['site', 'create', '--name', 'Via CLI', '--json']);
    assert.equal(created.code, 0, created.text);
    const site = JSON.parse(created.text).id as string;
    for (const args of [['site', 'list'], ['site', 'show', site], ['site', 'update', site, '--name', 'Renamed']]) {
      const res = await plumb(args);
      assert.equal(res.code, 0, res.text);
    }

    const listed = await dashboardList();
    const ownerToken = listed.find((x) => x.name === 'Owner token');
    assert.ok(ownerToken, 'the token made at the first start');
    assert.deepEqual(listed.map((x) => x.id).sort(), [ownerToken.id, mine.id, old.id].sort());
    // What the page counts behind "Show revoked tokens (N)": the account's own revoked token only.
    assert.deepEqual(listed.filter((x) => x.revoked_at !== null).map((x) => x.name), ['Old']);
    assert.deepEqual((await adminList()).map((x) => x.id).sort(), [ownerToken.id, mine.id, old.id].sort());

    // They exist, and none of them still works.
    const cli = await t.meta.listTokens(1, 'cli');
    assert.equal(cli.length, 4);
    assert.ok(cli.every((x) => x.revokedAt !== null && /^plumb site \(temporary\)$/.test(x.name)));
  });

  it('keeps a CLI token to an hour at most, and out of the lists while it lives', async () => {
    const made = await t.call(ADMIN_TOKEN, 'POST', '/admin/accounts/1/tokens', {
      name: 'plumb site (temporary)',
      abilities: ['*'],
      expires_at: '2099-01-01 00:00:00',
      for_cli: true,
    });
    assert.equal(made.status, 200, JSON.stringify(made.body));
    const expires = Date.parse(`${made.body.expires_at.replace(' ', 'T')}Z`);
    assert.ok(expires <= Date.now() + 3_600_000 && expires > Date.now(), made.body.expires_at);
    assert.equal((await t.call(made.body.token, 'GET', '/v1/sites')).status, 200, 'it works while it lives');
    assert.equal((await dashboardList()).some((x) => x.id === made.body.id), false);
    assert.equal((await adminList()).some((x) => x.id === made.body.id), false);
    // A token made without for_cli keeps its own expiry, and is listed.
    const plain = await t.call(ADMIN_TOKEN, 'POST', '/admin/accounts/1/tokens', { name: 'Deploy', abilities: ['*'], expires_at: '2099-01-01 00:00:00' });
    assert.equal(plain.body.expires_at, '2099-01-01 00:00:00');
    assert.equal((await dashboardList()).some((x) => x.id === plain.body.id), true);
    assert.equal((await adminList()).some((x) => x.id === plain.body.id), true);
  });
});
