// The `plumb` CLI against a running server over real HTTP: accounts, tokens, sites, imports and the demo; the
// local admin key; help, version, errors and usage.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { after, before, describe, it } from 'node:test';
import { run } from '../../src/cli/main.js';
import { LOCAL_ADMIN_KEY_FILE, localAdminKeyOf } from '../../src/local-admin-key.js';
import { ADMIN_TOKEN, OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';
import { strToU8, zipSync } from 'fflate';
import { generateUmamiExport } from '../helpers/umami-export.js';

const LOCAL_KEY = 'plumb_local_test-key-0123456789abcdefghij';
const USAGE_LINE = {
  create: 'plumb site create --name NAME [--timezone ZONE] [--domain HOSTS] [--account ID] [--json]',
  update:
    'plumb site update SITE_ID [--name NAME] [--timezone ZONE] [--sharing none|private|public] [--password-stdin] ' +
    '[--multi-domain combined|separate|off] [--domain HOSTS] [--umami-website-id UUID] [--plausible-script-id ID] [--account ID] [--json]',
};

describe('plumb CLI', () => {
  let t: TestApp;
  let env: Record<string, string>;
  let address: string;
  /** A data directory holding the server's local admin key, and one holding none. */
  let keyDir: string;
  let emptyDir: string;
  before(async () => {
    t = await startTestApp({ localAdminKey: localAdminKeyOf(LOCAL_KEY) });
    address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    env = { PLUMB_URL: address, PLUMB_ADMIN_TOKEN: ADMIN_TOKEN };
    keyDir = mkdtempSync(join(tmpdir(), 'plumb-cli-key-'));
    writeFileSync(join(keyDir, LOCAL_ADMIN_KEY_FILE), `${LOCAL_KEY}\n`, { mode: 0o600 });
    emptyDir = mkdtempSync(join(tmpdir(), 'plumb-cli-empty-'));
  });
  after(async () => {
    await t.close();
    rmSync(keyDir, { recursive: true, force: true });
    rmSync(emptyDir, { recursive: true, force: true });
  });

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
    // Line 4 is too long for any hit: refused by the CLI as the server would refuse it, without sending it.
    const huge = `{"pad":"${'x'.repeat(4 * 1024 * 1024 + 1)}"}`;
    writeFileSync(file, [line('2026-02-01 10:00:00', '/a'), 'oops', line('2026-02-01 09:00:00', '/b'), huge].join('\n'));
    const res = await plumb(['import', file]);
    assert.equal(res.code, 0, res.err);
    assert.equal(res.out, "imported 2 hits, rejected 2\n  line 2: not valid JSON\n  line 4: the line is longer than 1,048,576 characters, more than any hit's");
    await t.flushHits();
    assert.deepEqual((await t.events.listHits(site)).map((h) => h.pathname), ['/b', '/a']);
    const missing = await plumb(['import', join(dir, 'nope.ndjson')]);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /cannot read/);
    rmSync(dir, { recursive: true, force: true });
  });

  it('imports an Umami export by streaming it, lists the import and deletes it', async () => {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Umami CLI', domain: 'cli-umami.example' })).body.id;
    const { csv, numbers, badLines } = generateUmamiExport({ websiteId: '94db1cb1-74f4-4a40-ad6c-962362670409', hostname: 'cli-umami.example', start: Date.UTC(2026, 0, 1), days: 3, visitsPerDay: 50, badRows: true });
    const file = join(emptyDir, 'umami.csv');
    writeFileSync(file, csv);
    const done = await plumb(['import', 'umami', file, '--site', site.toLowerCase(), '--json']);
    assert.equal(done.code, 0, done.err);
    const result = JSON.parse(done.out);
    const events = [...numbers.eventsByName.values()].reduce((a, b) => a + b, 0);
    assert.deepEqual([result.status, result.file_name, result.imported, result.rejected], ['done', 'umami.csv', numbers.pageviews + events, badLines.length]);
    const list = await plumb(['import', 'list', '--site', site]);
    assert.match(list.out, new RegExp(`import ${result.id} \\(umami, umami.csv\\): done, ${numbers.pageviews + events} hits imported, ${badLines.length} rejected`));
    const deleted = await plumb(['import', 'delete', result.id]);
    assert.equal(deleted.code, 0, deleted.err);
    assert.equal((await plumb(['import', 'list', '--site', site])).out, 'no imports');
    assert.equal((await plumb(['import', 'umami', join(emptyDir, 'missing.csv'), '--site', site])).code, 1);
    assert.equal((await plumb(['import', 'umami', file])).code, 2, 'no --site');
  });

  it("imports Umami Cloud's .csv.gz as it is, and reads the refusal of a gzip bomb while it still sends", async () => {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Umami Cloud CLI', domain: 'cli-cloud.example' })).body.id;
    const { csv, numbers } = generateUmamiExport({ websiteId: '94db1cb1-74f4-4a40-ad6c-962362670409', hostname: 'cli-cloud.example', start: Date.UTC(2026, 0, 1), days: 2, visitsPerDay: 40, cloud: true });
    const file = join(emptyDir, 'website-export.csv.gz');
    writeFileSync(file, gzipSync(csv));
    const done = await plumb(['import', 'umami', file, '--site', site, '--json']);
    assert.equal(done.code, 0, done.err);
    const events = [...numbers.eventsByName.values()].reduce((a, b) => a + b, 0);
    assert.deepEqual([JSON.parse(done.out).imported, JSON.parse(done.out).rejected], [numbers.pageviews + events, 0]);
    // 1,000 gzip members of 8 MB of one row each (8 MB to send, 8 GB inflated): refused in the first member, while
    // the CLI still has megabytes to send; the server reads and drops them, so the CLI gets the answer.
    const member = gzipSync(`event_id,session_id,created_at,hostname,url_path,event_type\n${'e,s,2026-01-01 10:00:00,cli-cloud.example,/b,1\n'.repeat(200_000)}`);
    const bomb = join(emptyDir, 'bomb.csv.gz');
    writeFileSync(bomb, Buffer.concat(Array.from({ length: 1000 }, () => member)));
    const refused = await plumb(['import', 'umami', bomb, '--site', site]);
    assert.equal(refused.code, 1, refused.out);
    assert.match(refused.err, /inflates to more than 100 times its size/);
  });

  it('imports a Plausible export zip as daily rows', async () => {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Plausible CLI' })).body.id;
    const file = join(emptyDir, 'plausible.zip');
    writeFileSync(file, zipSync({
      'imported_visitors_20260101_20260102.csv': strToU8('date,visitors,pageviews,bounces,visits,visit_duration\n2026-01-01,3,9,1,4,100\n2026-01-02,2,5,1,2,50\n'),
    }));
    const done = await plumb(['import', 'plausible', file, '--site', site]);
    assert.equal(done.code, 0, done.err);
    assert.match(done.out, /\(plausible, plausible\.zip\): done, 2 daily rows imported, 0 rejected, 2026-01-01 00:00:00 to 2026-01-02 00:00:00/);
    const report = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews,visitors&date_from=2026-01-01&date_to=2026-01-02`);
    assert.deepEqual(report.body, [{ pageviews: '14', visitors: '5' }]);
  });

  it("imports Fathom's export from its unpacked folder, zipped while it is sent", async () => {
    const site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Fathom CLI', timezone: 'UTC' })).body.id;
    const folder = mkdtempSync(join(tmpdir(), 'plumb-cli-fathom-'));
    try {
      // Large enough to be sent in many chunks: a month of hours, 30 pages each.
      const pages = ['Timestamp,Pathname,Views'];
      const totals = ['Timestamp,Pageviews,Visits'];
      for (let h = 0; h < 24 * 30; h++) {
        const at = new Date(Date.UTC(2026, 0, 1) + h * 3_600_000).toISOString().replace('T', ' ').slice(0, 19);
        totals.push(`${at},60,20`);
        for (let p = 0; p < 30; p++) pages.push(`${at},/page-${p},2`);
      }
      writeFileSync(join(folder, 'Site.csv'), `${totals.join('\n')}\n`);
      writeFileSync(join(folder, 'Pages.csv'), `${pages.join('\n')}\n`);
      writeFileSync(join(folder, 'README.txt'), 'not a CSV: left behind');
      const done = await plumb(['import', 'fathom', folder, '--site', site]);
      assert.equal(done.code, 0, done.err);
      assert.match(done.out, new RegExp(`\\(fathom, ${folder.split('/').pop()}\\.zip\\): done, ${24 * 30 * 31} hourly rows imported, 0 rejected, 2026-01-01 00:00:00 to 2026-01-30 00:00:00`));
      const report = await t.call(OWNER_TOKEN, 'GET', `/v1/aggregations?entity=pageview&entity_id=${site}&aggregates=pageviews,visits&date_from=2026-01-01&date_to=2026-01-30`);
      assert.deepEqual(report.body, [{ pageviews: String(24 * 30 * 60), visits: String(24 * 30 * 20) }]);
      const umamiFolder = await plumb(['import', 'umami', folder, '--site', site]);
      assert.equal(umamiFolder.code, 1);
      assert.match(umamiFolder.err, /is a folder/);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  });

  it('creates a demo site with events, a milestone and a month of traffic', async () => {
    const res = await plumb(['demo', '--days', '30', '--visits-per-day', '40', '--json']);
    assert.equal(res.code, 0, res.err);
    const { site, imported, rejected, bots, errors, report_url, share_url } = JSON.parse(res.out);
    assert.match(site.id, /^[A-Z]{8}$/);
    assert.ok(imported > 30 * 40, `imported ${imported}`);
    assert.ok(bots > 0 && rejected === bots, 'the crawler hits are left out, and nothing else');
    assert.deepEqual(errors, []);
    assert.equal(report_url, `${address}/sites/${site.id}`);
    assert.equal(share_url, `${address}/share/${site.id}`);
    // The printed address opens without logging in: the demo site is shared publicly.
    assert.equal((await t.app.inject({ url: `/share/${site.id}` })).statusCode, 200);
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
    // The token the demo acted through is the CLI's own: revoked, and in no list of the account's tokens.
    const temporary = (await t.meta.listTokens(1, 'cli')).find((x) => x.name === 'plumb demo (temporary)');
    assert.ok(temporary?.revokedAt, 'the temporary token is revoked');
    const listed = (await t.call(ADMIN_TOKEN, 'GET', '/admin/accounts/1/tokens')).body.data;
    assert.equal(listed.some((x: { id: string }) => x.id === temporary.id), false);
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
    // The mistake, the command's one usage line and where its help is; never the whole list of commands.
    const noSiteName = await plumb(['site', 'create']);
    assert.deepEqual(noSiteName, { code: 2, out: '', err: `plumb: missing --name\nusage: ${USAGE_LINE.create}\nsee \`plumb help site\`` });
    const typo = await plumb(['site', 'create', '--nmae', 'Blog']);
    assert.equal(typo.code, 2);
    assert.equal(typo.err, `plumb: Unknown option '--nmae'\nusage: ${USAGE_LINE.create}\nsee \`plumb help site\``);
    const wrapped = await plumb(['account', 'update']);
    assert.equal(wrapped.err.split('\n')[1], 'usage: plumb account update ID [--name NAME] [--email EMAIL] [--timezone ZONE] [--tier 1-6] [--status active|lapsed] [--json]');
    for (const res of [unknown, noName, noSiteName, typo, wrapped, await plumb(['site', 'frobnicate']), await plumb(['import'])]) {
      assert.doesNotMatch(res.err, /Commands:|Environment:/, res.err);
      assert.ok(res.err.split('\n').length <= 8, res.err);
    }
    assert.match(unknown.err, /see `plumb help`$/);
    const noToken = await plumb(['account', 'list'], { PLUMB_URL: env.PLUMB_URL!, PLUMB_DATA_DIR: emptyDir });
    assert.equal(noToken.code, 1);
    assert.match(noToken.err, /needs the server's administrator, and neither PLUMB_ADMIN_TOKEN nor a local admin key/);
    const down = await plumb(['account', 'list'], { PLUMB_URL: 'http://127.0.0.1:9', PLUMB_ADMIN_TOKEN: ADMIN_TOKEN });
    assert.equal(down.code, 1);
    assert.match(down.err, /cannot reach Plumb/);
  });

  it('prints the demo in words: the report address, and bots as bots rather than errors', async () => {
    const res = await plumb(['demo', '--days', '3', '--visits-per-day', '40', '--no-share']);
    assert.equal(res.code, 0, res.err);
    const id = /\(([A-Z]{8})\) in account 1/.exec(res.out)?.[1];
    assert.ok(id, res.out);
    assert.match(res.out, /^Imported [\d,]+ hits: 3 days of generated traffic\.$/m);
    assert.match(res.out, /^Left out [\d,]+ hits from bots, as Plumb always does/m);
    assert.doesNotMatch(res.out + res.err, /user_agent is a bot|line \d+:|rejected|error/i);
    assert.match(res.out, new RegExp(`^Report: ${address}/sites/${id}  \\(log in`, 'm'));
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${id}`)).body.sharing, 'none');
  });

  it('works with the local admin key instead of PLUMB_ADMIN_TOKEN, and only over loopback', async () => {
    const local = { PLUMB_URL: address, PLUMB_DATA_DIR: keyDir };
    const list = await plumb(['account', 'list'], local);
    assert.equal(list.code, 0, list.err);
    assert.match(list.out, /account 1: Owner/);
    // The server takes the key from this machine only; a request from elsewhere with it is not the admin.
    const remote = await t.app.inject({ url: '/admin/accounts', headers: { authorization: `Bearer ${LOCAL_KEY}` }, remoteAddress: '203.0.113.7' });
    assert.equal(remote.statusCode, 401);
    const loop = await t.app.inject({ url: '/admin/accounts', headers: { authorization: `Bearer ${LOCAL_KEY}` }, remoteAddress: '127.0.0.1' });
    assert.equal(loop.statusCode, 200);
    // The CLI never sends the key to another host.
    const elsewhere = await plumb(['account', 'list'], { PLUMB_URL: 'http://plumb.example.test:8080', PLUMB_DATA_DIR: keyDir });
    assert.equal(elsewhere.code, 1);
    assert.match(elsewhere.err, /needs the server's administrator/);
    // A key the server does not know (another start) is explained.
    const stale = mkdtempSync(join(tmpdir(), 'plumb-cli-stale-'));
    writeFileSync(join(stale, LOCAL_ADMIN_KEY_FILE), 'plumb_local_some-other-start-0123456789abcdef\n');
    const refused = await plumb(['account', 'list'], { PLUMB_URL: address, PLUMB_DATA_DIR: stale });
    assert.equal(refused.code, 1);
    assert.match(refused.err, /HTTP 401: Invalid admin token \(the local admin key .* belongs to another start/);
    rmSync(stale, { recursive: true, force: true });
  });

  it('lists, creates and shows sites with an API token, as far as the token allows', async () => {
    const manage = await t.token(['*']);
    const readOnly = await t.token(['all-sites-readonly']);
    const created = await plumb(['site', 'create', '--name', 'Blog', '--timezone', 'Europe/Berlin', '--domain', 'blog.example.test'], { PLUMB_URL: address, PLUMB_API_TOKEN: manage, PLUMB_DATA_DIR: emptyDir });
    assert.equal(created.code, 0, created.err);
    const id = /^created site ([A-Z]{8}) \("Blog"\), time zone Europe\/Berlin$/m.exec(created.out)?.[1];
    assert.ok(id, created.out);
    assert.ok(created.out.includes(`<script src="${address}/script.js" data-site="${id}" data-spa="auto" defer></script>`), created.out);
    assert.ok(created.out.includes(`Report: ${address}/sites/${id}`));

    const readEnv = { PLUMB_URL: address, PLUMB_API_TOKEN: readOnly, PLUMB_DATA_DIR: emptyDir };
    const list = await plumb(['site', 'list', '--json'], readEnv);
    assert.equal(list.code, 0, list.err);
    const v1 = (await t.call(OWNER_TOKEN, 'GET', '/v1/sites?limit=100')).body.data.map((s: { id: string }) => s.id);
    assert.deepEqual(JSON.parse(list.out).data.map((s: { id: string }) => s.id), v1);
    const text = await plumb(['site', 'list'], readEnv);
    assert.match(text.out, new RegExp(`^${id}  Blog  \\(Europe/Berlin, sharing: none\\)$`, 'm'));
    const shown = await plumb(['site', 'show', id], readEnv);
    assert.equal(shown.code, 0, shown.err);
    assert.match(shown.out, new RegExp(`^site ${id}: Blog\\n  time zone  Europe/Berlin\\n  domains    blog.example.test\\n  sharing    none\\n`));
    // The read-only token may not create: the server's refusal is passed on.
    const refused = await plumb(['site', 'create', '--name', 'Nope'], readEnv);
    assert.equal(refused.code, 1);
    assert.match(refused.err, /HTTP 400/);
    const missing = await plumb(['site', 'show', 'ZZZZZZZZ'], readEnv);
    assert.equal(missing.code, 1);
    assert.match(missing.err, /HTTP 404: Site not found/);
    const badId = await plumb(['site', 'show', '../admin'], readEnv);
    assert.equal(badId.code, 2);
  });

  it('manages sites as the administrator for an account, leaving no live token behind', async () => {
    const account = JSON.parse((await plumb(['account', 'create', '--name', 'Other', '--email', 'o@other.test', '--timezone', 'Asia/Tokyo', '--json'])).out);
    const created = await plumb(['site', 'create', '--name', 'Shop', '--account', String(account.id), '--json']);
    assert.equal(created.code, 0, created.err);
    const site = JSON.parse(created.out);
    assert.equal(site.timezone, 'Asia/Tokyo', 'the account\'s time zone is the default');
    const list = await plumb(['site', 'list', '--account', String(account.id)]);
    assert.equal(list.out, `${site.id}  Shop  (Asia/Tokyo, sharing: none)`);
    const tokens = await t.meta.listTokens(account.id, 'cli');
    assert.ok(tokens.length > 0 && tokens.every((x) => x.revokedAt !== null));
    assert.deepEqual((await t.call(ADMIN_TOKEN, 'GET', `/admin/accounts/${account.id}/tokens`)).body.data, [], 'the CLI\'s tokens are not the account\'s');
  });

  it('updates a site with what /v1 takes, and deletes one only when confirmed', async () => {
    const id = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'To change' })).body.id as string;
    const updated = await plumb([
      'site', 'update', id.toLowerCase(), '--name', 'Changed', '--timezone', 'Europe/Paris', '--sharing', 'public', '--domain', 'changed.example.test',
      '--multi-domain', 'separate', '--umami-website-id', '94db1cb1-74f4-4a40-ad6c-962362670410', '--plausible-script-id', 'cliTest01', '--json',
    ]);
    assert.equal(updated.code, 0, updated.err);
    const site = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${id}`)).body;
    assert.deepEqual(
      [site.name, site.timezone, site.sharing, site.domain, site.multi_domain, site.multi_domain_option, site.umami_website_id, site.plausible_script_id],
      ['Changed', 'Europe/Paris', 'public', 'changed.example.test', true, 'separate', '94db1cb1-74f4-4a40-ad6c-962362670410', 'cliTest01'],
    );
    assert.deepEqual(JSON.parse(updated.out), site);
    // Private sharing takes a password, read as account passwords are (never an argument).
    const asked: string[] = [];
    const readPassword = async (fromStdin: boolean, what?: string) => (asked.push(`${fromStdin} ${what}`), 'share secret 1');
    const out: string[] = [];
    const err: string[] = [];
    const code = await run(['site', 'update', id, '--sharing', 'private', '--domain', '', '--multi-domain', 'off'], env, (l) => out.push(l), (l) => err.push(l), { readPassword });
    assert.equal(code, 0, err.join('\n'));
    assert.deepEqual(asked, ['false Share password']);
    assert.match(out.join('\n'), new RegExp(`^updated site ${id}: Changed\n`));
    const privateSite = (await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${id}`)).body;
    assert.deepEqual([privateSite.sharing, privateSite.domain ?? null, privateSite.multi_domain], ['private', null, false]);
    const { verifyPassword } = await import('../../src/domain/secrets.js');
    assert.equal(await verifyPassword('share secret 1', (await t.meta.getSite(id))!.sharePasswordHash!), true);

    const bad = await plumb(['site', 'update', id, '--sharing', 'everyone']);
    assert.equal(bad.code, 2);
    assert.equal(bad.err, `plumb: --sharing must be none, private, public\nusage: ${USAGE_LINE.update}\nsee \`plumb help site\``);
    assert.equal((await plumb(['site', 'update', id])).code, 2, 'nothing to change');
    assert.match((await plumb(['site', 'update', 'ZZZZZZZZ', '--name', 'x'])).err, /HTTP 404: Site not found/);

    const questions: string[] = [];
    const answer = (yes: boolean) => ({ confirm: async (q: string) => (questions.push(q), yes) });
    const no = await run(['site', 'delete', id], env, (l) => out.push(l), (l) => err.push(l), answer(false));
    assert.equal(no, 1);
    assert.equal(questions.length, 1);
    assert.match(questions[0]!, new RegExp(`^Delete site ${id} \\("Changed"\\) with its goals, milestones and every hit\\? This cannot be undone\\. \\[y/N\\] $`));
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${id}`)).status, 200, 'kept when not confirmed');
    out.length = 0;
    const yes = await run(['site', 'delete', id], env, (l) => out.push(l), (l) => err.push(l), answer(true));
    assert.equal(yes, 0, err.join('\n'));
    assert.equal(out.join('\n'), `deleted site ${id} ("Changed") with its goals, milestones and hits`);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${id}`)).status, 404);
    // --yes asks nothing.
    const other = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Scripted' })).body.id as string;
    const scripted = await run(['site', 'delete', other, '--yes', '--json'], env, (l) => out.push(l), (l) => err.push(l), answer(false));
    assert.equal(scripted, 0);
    assert.equal(questions.length, 2);
    assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${other}`)).status, 404);
  });

  it('prints its version and each command\'s own help', async () => {
    const pkg = JSON.parse(readFileSync('package.json', 'utf8'));
    assert.deepEqual(await plumb(['--version']), { code: 0, out: `plumb ${pkg.version}`, err: '' });
    const helps = new Map<string, string>();
    for (const command of ['account', 'account create', 'account password', 'token create', 'token revoke', 'site', 'site list', 'site create', 'site show', 'site update', 'site delete', 'import', 'demo']) {
      const words = command.split(' ');
      const viaHelp = await plumb(['help', ...words]);
      const viaFlag = await plumb([...words, '--help']);
      assert.equal(viaHelp.code, 0, command);
      assert.equal(viaFlag.code, 0, command);
      assert.equal(viaHelp.out, viaFlag.out, command);
      assert.ok(viaHelp.out.startsWith(`plumb ${command}`), `${command}: ${viaHelp.out.slice(0, 60)}`);
      helps.set(command, viaHelp.out);
    }
    assert.equal(new Set(helps.values()).size, helps.size, 'every command has its own text');
    assert.match(helps.get('demo')!, /--no-share/);
    // The importers of the peers are listed with NDJSON, each with its own help.
    for (const peer of ['umami', 'plausible', 'fathom']) {
      assert.match(helps.get('import')!, new RegExp(`^  import ${peer} \\S+ --site SITE_ID `, 'm'));
      assert.ok((await plumb(['help', 'import', peer])).out.startsWith(`plumb import ${peer} `));
    }
    assert.match(helps.get('import')!, /^  import FILE +NDJSON/m);
    const general = await plumb(['help']);
    assert.equal(general.code, 0);
    assert.match(general.out, /^Usage: plumb <command>/);
    const unknown = await plumb(['help', 'frobnicate']);
    assert.equal(unknown.code, 2);
    assert.match(unknown.err, /no command "frobnicate"/);
    const bare = await plumb(['site'], env);
    assert.equal(bare.code, 2);
    assert.match(bare.err, /"site" needs a command/);
  });
});
