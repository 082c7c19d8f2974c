// People across two real scale-out processes sharing PostgreSQL, ClickHouse and Redis: a member removed through one
// process is refused on their next request to the other, and with both processes' schedulers running, a due email
// report reaches the member's mailbox (a real SMTP server here) exactly once. Runs in the scale-out pass.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { bootstrap } from '../../src/bootstrap.js';
import { hashPassword } from '../../src/domain/secrets.js';
import { PgDatabase } from '../../src/store/postgres/database.js';
import { migratePostgres } from '../../src/store/postgres/migrations.js';
import { SqlMetaStore } from '../../src/store/sql-meta-store.js';
import { SqlTeamStore } from '../../src/store/sql-team-store.js';
import { startMailbox, type Mailbox } from '../helpers/mail.js';
import { startServer, type ServerProcess } from '../helpers/process.js';
import { freshScaleOut, scaleOutServerEnv, type ScaleOutFixture } from '../helpers/scale-out.js';

const OWNER_TOKEN = 'people-owner-token-0123456789abcdef';
const PASSWORD = 'correct horse battery';
const PUBLIC_URL = 'https://plumb.example.test';

/** A browser's cookies over fetch: enough to log in through the form and call the dashboard's routes. */
class Client {
  private readonly jar = new Map<string, string>();
  csrf = '';
  async fetch(url: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    headers.set('cookie', [...this.jar].map(([k, v]) => `${k}=${v}`).join('; '));
    const res = await fetch(url, { ...init, headers, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair] = c.split(';');
      const eq = pair!.indexOf('=');
      const value = pair!.slice(eq + 1);
      if (/Max-Age=0/i.test(c) || value === '') this.jar.delete(pair!.slice(0, eq));
      else this.jar.set(pair!.slice(0, eq), value);
    }
    return res;
  }
  async logIn(server: ServerProcess, email: string): Promise<void> {
    const form = await (await this.fetch(`${server.url}/login`)).text();
    const token = /name="csrf" value="([^"]+)"/.exec(form)![1]!;
    const res = await this.fetch(`${server.url}/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ csrf: token, email, password: PASSWORD, next: '/sites' }).toString(),
    });
    assert.equal(res.status, 303);
    const page = await (await this.fetch(`${server.url}/sites`)).text();
    this.csrf = /<meta name="plumb-csrf" content="([^"]+)">/.exec(page)![1]!;
  }
  api(server: ServerProcess, method: string, path: string, body?: unknown): Promise<Response> {
    return this.fetch(`${server.url}${path}`, {
      method,
      headers: { 'x-plumb-csrf': this.csrf, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  }
}

describe('people on two scale-out processes', () => {
  let fixture: ScaleOutFixture;
  let mailbox: Mailbox;
  let pg: PgDatabase;
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  let a: ServerProcess;
  let b: ServerProcess;
  let accountId: number;
  let site: string;
  const ownerEmail = `owner.${process.pid}@example.test`;
  const memberEmail = `member.${process.pid}@example.test`;

  before(async () => {
    fixture = await freshScaleOut();
    mailbox = await startMailbox();
    // The store is prepared before the processes start, so that their schedulers' first ticks race for a report
    // that is already due: a subscription made two months ago to a site's weekly report.
    pg = new PgDatabase(fixture.options.databaseUrl, { schema: fixture.options.databaseSchema! });
    await migratePostgres(pg);
    const meta = new SqlMetaStore(pg);
    const team = new SqlTeamStore(pg);
    const created = await bootstrap(meta, OWNER_TOKEN);
    accountId = created!.account.id;
    await meta.updateAccount(accountId, { email: ownerEmail });
    await meta.setPasswordHash(accountId, await hashPassword(PASSWORD));
    site = (await meta.createSite({ accountId, name: 'Shop', sharing: 'none', sharePasswordHash: null, timezone: 'UTC', multiDomain: false, multiDomainOption: null } as Parameters<typeof meta.createSite>[0])).id;
    const member = await team.createUser(memberEmail, await hashPassword(PASSWORD));
    await team.putMembership(accountId, member.id, 'viewer', null);
    const subscription = await team.subscribe(member.id, accountId, site, 'weekly');
    await pg.serial((q) => q.exec('UPDATE report_subscriptions SET created_at = ? WHERE id = ?', [new Date(Date.now() - 60 * 86_400_000), subscription.id]));
    const env = (dir: string) => ({
      ...scaleOutServerEnv(fixture, dir),
      PLUMB_TRUST_PROXY: 'true',
      PLUMB_SMTP_URL: mailbox.url,
      PLUMB_MAIL_FROM: 'Plumb <plumb@example.test>',
      PLUMB_PUBLIC_URL: PUBLIC_URL,
    });
    for (let i = 0; i < 2; i++) dirs.push(mkdtempSync(join(tmpdir(), 'plumb-people-')));
    [a, b] = await Promise.all(dirs.map(async (dir) => {
      const server = await startServer(env(dir));
      servers.push(server);
      return server;
    })) as [ServerProcess, ServerProcess];
  });

  after(async () => {
    for (const s of servers) if (s.child.exitCode === null) await s.stop();
    await pg?.close();
    await mailbox?.close();
    await fixture.drop();
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  it('sends a due report exactly once with both schedulers running', async () => {
    // Each process logs the end of a tick that found reports due; once both have, the race is over.
    const ticked = (s: ServerProcess) => s.stdout().includes('email reports: tick done');
    for (let i = 0; !(ticked(a) && ticked(b)); i++) {
      assert.ok(i < 300, `both schedulers tick within a minute:\n${a.stdout().slice(-2000)}\n${b.stdout().slice(-2000)}`);
      await sleep(200);
    }
    const message = await mailbox.waitFor(memberEmail, /Shop: your weekly report/);
    assert.match(message.text ?? '', /Pageviews: 0/);
    assert.equal(mailbox.to(memberEmail).length, 1, 'one message, whichever process sent it');
    const sent = [a, b].map((s) => /"due":1,"sent":(\d)/.exec(s.stdout())?.[1]);
    assert.deepEqual([...sent].sort(), ['0', '1']);
  });

  it('refuses a member removed through one process on their next request to the other', async () => {
    const owner = new Client();
    await owner.logIn(b, ownerEmail);
    const member = new Client();
    await member.logIn(a, memberEmail);
    assert.equal((await member.api(a, 'GET', `/v1/sites/${site}`)).status, 200);
    const members = (await (await owner.api(b, 'GET', '/dashboard/api/members')).json()) as { data: { user_id: number; email: string }[] };
    const target = members.data.find((m) => m.email === memberEmail)!;
    assert.equal((await owner.api(b, 'DELETE', `/dashboard/api/members/${target.user_id}`)).status, 200);
    assert.equal((await member.api(a, 'GET', `/v1/sites/${site}`)).status, 401);
    assert.equal((await member.fetch(`${a.url}/sites`)).status, 303, 'pages send them to log in');
  });
});
