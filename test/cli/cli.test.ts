// The `plumb` CLI against a running server over real HTTP: accounts and tokens, errors and usage.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

describe('plumb CLI', () => {
  let t: TestApp;
  let env: Record<string, string>;
  before(async () => {
    t = await startTestApp();
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    env = { PLUMB_URL: address, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN };
  });
  after(() => t.close());

  const plumb = async (args: string[], environment = env) => {
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(args, environment, (l) => out.push(l), (l) => err.push(l));
    return { code, out: out.join('\n'), err: err.join('\n') };
  };

  it('creates, lists and updates accounts', async () => {
    const created = await plumb(['account', 'create', '--name', 'Acme', '--email', 'a@acme.test', '--tier', '2', '--json']);
    assert.equal(created.code, 0, created.err);
    const account = JSON.parse(created.out);
    assert.equal(account.tier, 2);
    const list = await plumb(['account', 'list']);
    assert.match(list.out, new RegExp(`account ${account.id}: Acme <a@acme.test>`));
    const updated = await plumb(['account', 'update', String(account.id), '--tier', '5', '--status', 'lapsed']);
    assert.equal(updated.code, 0, updated.err);
    assert.match(updated.out, /tier 5, lapsed/);
  });

  it('shows monthly API usage', async () => {
    assert.equal((await plumb(['account', 'usage', '1'])).out, 'no API requests yet');
    for (let i = 0; i < 3; i++) await t.call(OWNER_TOKEN, 'GET', '/v1/token');
    const usage = await plumb(['account', 'usage', '1']);
    assert.equal(usage.code, 0, usage.err);
    assert.equal(usage.out, `${new Date().toISOString().slice(0, 7)}: 3 API requests`);
  });

  it('creates a token that works, lists it and revokes it', async () => {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'CLI' })).body;
    const created = await plumb(['token', 'create', '--account', '1', '--name', 'ci', '--ability', `read:${site.id}`, '--ability', 'all-sites-readonly']);
    assert.equal(created.code, 0, created.err);
    const secret = /shown once, store it now\):\n(plumb_\S+)/.exec(created.out)?.[1];
    assert.ok(secret, created.out);
    assert.equal((await t.call(secret, 'GET', '/v1/sites')).status, 200);
    const tokenId = /token ([0-9a-f-]{36}): ci/.exec(created.out)?.[1];
    assert.ok(tokenId);

    const list = await plumb(['token', 'list', '--account', '1']);
    assert.match(list.out, new RegExp(`token ${tokenId}: ci \\[read:${site.id}, all-sites-readonly\\]`));
    assert.doesNotMatch(list.out, new RegExp(secret));

    const revoked = await plumb(['token', 'revoke', '--account', '1', tokenId]);
    assert.equal(revoked.code, 0, revoked.err);
    assert.equal((await t.call(secret, 'GET', '/v1/sites')).status, 401);
    assert.match((await plumb(['token', 'list', '--account', '1'])).out, new RegExp(`token ${tokenId}: ci .*revoked`));
  });

  it('reports server-side validation errors and exits 1', async () => {
    const res = await plumb(['token', 'create', '--account', '1', '--name', 'bad', '--ability', 'root']);
    assert.equal(res.code, 1);
    assert.match(res.err, /HTTP 400: abilities/);
    const missing = await plumb(['account', 'update', '999', '--tier', '2']);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /HTTP 404/);
  });

  it('imports an NDJSON file and reports bad lines by number', async () => {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Imported' })).body.id;
    const dir = mkdtempSync(join(tmpdir(), 'plumb-cli-'));
    const file = join(dir, 'hits.ndjson');
    const line = (ts: string, path: string) =>
      JSON.stringify({ type: 'pageview', site_id: site, timestamp: ts, url: `https://ex.test${path}`, user_agent: 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0', ip: '81.2.69.142' });
    writeFileSync(file, [line('2026-02-01 10:00:00', '/a'), 'oops', line('2026-02-01 09:00:00', '/b')].join('\n'));
    const res = await plumb(['import', file]);
    assert.equal(res.code, 0, res.err);
    assert.equal(res.out, 'imported 2 hits, rejected 1\n  line 2: not valid JSON');
    await t.flushHits();
    assert.deepEqual((await t.events.listHits(site)).map((h) => h.pathname), ['/b', '/a']);
    const missing = await plumb(['import', join(dir, 'nope.ndjson')]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /cannot read/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates a demo site with events, a milestone and a month of traffic', async () => {
    const res = await plumb(['demo', '--days', '30', '--visits-per-day', '40', '--json']);
    assert.equal(res.code, 0, res.err);
    const { site, imported, rejected } = JSON.parse(res.out);
    assert.match(site.id, /^[A-Z]{8}$/);
    assert.ok(imported > 30 * 40, `imported ${imported}`);
    assert.ok(rejected > 0, 'the crawler hits are refused');
    const events = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site.id}/events`)).body.data.map((e: { name: string }) => e.name);
    assert.deepEqual(events.sort(), ['Newsletter signup', 'Purchase']);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site.id}/milestones`)).body.data.length, 1);
    await t.flushHits();
    const hits = await t.events.listHits(site.id);
    const days = new Set(hits.map((h) => h.timestamp.toISOString().slice(0, 10)));
    assert.ok(days.size >= 29, `traffic on ${days.size} days`);
    assert.ok(hits.every((h) => h.timestamp.getTime() <= Date.now()), 'nothing from the future');
    assert.ok(new Set(hits.map((h) => h.countryCode)).size >= 8, 'many countries');
    assert.ok(new Set(hits.map((h) => h.referrerSource)).size >= 8, 'many sources');
    const tokens = (await t.call(ADMIN_TOKEN, 'GET', '/admin/accounts/1/tokens')).body.data;
    const temporary = tokens.find((x: { name: string }) => x.name === 'plumb demo (temporary)');
    assert.ok(temporary.revoked_at, 'the temporary token is revoked');
  });

  it('sets an account\'s dashboard password, read from standard input or asked', async () => {
    const out: string[] = [];
    const err: string[] = [];
    const withPassword = (password: string) => ({ readPassword: async (fromStdin: boolean) => (assert.equal(fromStdin, true), password) });
    const short = await run(['account', 'password', '1', '--password-stdin'], env, (l) => out.push(l), (l) => err.push(l), withPassword('short'));
    assert.equal(short, 1);
    assert.match(err.join('\n'), /at least 10 characters/);
    const ok = await run(['account', 'password', '1', '--password-stdin'], env, (l) => out.push(l), (l) => err.push(l), withPassword('cli password 123'));
    assert.equal(ok, 0, err.join('\n'));
    assert.match(out.join('\n'), /set the dashboard password of account 1/);
    const { verifyPassword } = await import('../../src/domain/secrets.js');
    assert.equal(await verifyPassword('cli password 123', (await t.meta.getPasswordHash(1))!), true);
  });

  it('explains usage mistakes and missing setup', async () => {
    assert.equal((await plumb([])).code, 2);
    const unknown = await plumb(['frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /unknown command/);
    const noName = await plumb(['account', 'create', '--email', 'x@y.z']);
    assert.equal(noName.code, 2);
    assert.match(noName.err, /missing --name/);
    const noToken = await plumb(['account', 'list'], { PLUMB_URL: env.PLUMB_URL! });
    assert.equal(noToken.code, 1);
    assert.match(noToken.err, /PLUMB_ADMIN_TOKEN is not set/);
    const down = await plumb(['account', 'list'], { PLUMB_URL: 'http://127.0.0.1:9', PLUMB_ADMIN_TOKEN: ADMIN_TOKEN });
    assert.equal(down.code, 1);
    assert.match(down.err, /cannot reach Plumb/);
  });
});
