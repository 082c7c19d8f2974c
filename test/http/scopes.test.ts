// The scope table of SPEC.md section 5 as a matrix (token kind x operation -> exact status), plus 401 and lapsed-account cases.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { hashToken } from '../../src/domain/secrets.js';
import { OWNER_TOKEN, startTestApp, type Reply, type TestApp } from '../helpers/app.js';
import { assertError } from '../helpers/error-shapes.js';

type Method = 'GET' | 'POST' | 'DELETE';

/** Fresh fixtures for one matrix cell: site A (with one event and one milestone) in account 1. */
interface Cell {
  a: string;
  event: string;
  milestone: string;
}

interface Operation {
  name: string;
  method: Method;
  path: (c: Cell) => string;
  body?: unknown;
  /** Status when allowed (200 unless stated). */
  ok?: number;
}

const OPERATIONS: Operation[] = [
  { name: 'GET /account', method: 'GET', path: () => '/v1/account' },
  { name: 'GET /token', method: 'GET', path: () => '/v1/token' },
  { name: 'GET /sites', method: 'GET', path: () => '/v1/sites' },
  { name: 'POST /sites', method: 'POST', path: () => '/v1/sites', body: { name: 'New site' } },
  { name: 'GET /sites/A', method: 'GET', path: (c) => `/v1/sites/${c.a}` },
  { name: 'POST /sites/A', method: 'POST', path: (c) => `/v1/sites/${c.a}`, body: { name: 'Renamed' } },
  { name: 'DELETE /sites/A', method: 'DELETE', path: (c) => `/v1/sites/${c.a}` },
  { name: 'list events', method: 'GET', path: (c) => `/v1/sites/${c.a}/events` },
  { name: 'create event', method: 'POST', path: (c) => `/v1/sites/${c.a}/events`, body: { name: 'Signup' } },
  { name: 'get event', method: 'GET', path: (c) => `/v1/sites/${c.a}/events/${c.event}` },
  { name: 'update event', method: 'POST', path: (c) => `/v1/sites/${c.a}/events/${c.event}`, body: { name: 'Renamed' } },
  { name: 'delete event', method: 'DELETE', path: (c) => `/v1/sites/${c.a}/events/${c.event}` },
  { name: 'list milestones', method: 'GET', path: (c) => `/v1/sites/${c.a}/milestones` },
  {
    name: 'create milestone',
    method: 'POST',
    path: (c) => `/v1/sites/${c.a}/milestones`,
    body: { name: 'Launch', milestone_date: '2024-05-01' },
    ok: 201,
  },
  { name: 'get milestone', method: 'GET', path: (c) => `/v1/sites/${c.a}/milestones/${c.milestone}` },
  {
    name: 'update milestone',
    method: 'POST',
    path: (c) => `/v1/sites/${c.a}/milestones/${c.milestone}`,
    body: { name: 'Relaunch', milestone_date: '2024-06-01' },
  },
  { name: 'delete milestone', method: 'DELETE', path: (c) => `/v1/sites/${c.a}/milestones/${c.milestone}` },
];

// What each operation needs, as a kind: 'any' token, 'full' (*), 'list' (* or all-sites-readonly),
// 'read' (read access to A), 'manage' (manage:A or *), 'full-site' (A visible and *).
const NEEDS: Record<string, 'any' | 'full' | 'list' | 'read' | 'manage' | 'full-site'> = {
  'GET /account': 'full',
  'GET /token': 'any',
  'GET /sites': 'list',
  'POST /sites': 'full',
  'GET /sites/A': 'read',
  'POST /sites/A': 'manage',
  'DELETE /sites/A': 'full-site',
  'list events': 'read',
  'create event': 'manage',
  'get event': 'read',
  'update event': 'manage',
  'delete event': 'manage',
  'list milestones': 'read',
  'create milestone': 'manage',
  'get milestone': 'read',
  'update milestone': 'manage',
  'delete milestone': 'manage',
};

interface TokenKind {
  name: string;
  abilities: (c: Cell, b: string) => string[];
  other?: true;
  /** Can this token see site A at all? */
  seesA: boolean;
  full: boolean;
  lists: boolean;
  managesA: boolean;
}

const KINDS: TokenKind[] = [
  { name: '*', abilities: () => ['*'], seesA: true, full: true, lists: true, managesA: true },
  { name: 'all-sites-readonly', abilities: () => ['all-sites-readonly'], seesA: true, full: false, lists: true, managesA: false },
  { name: 'read:{A}', abilities: (c) => [`read:${c.a}`], seesA: true, full: false, lists: false, managesA: false },
  { name: 'manage:{A}', abilities: (c) => [`manage:${c.a}`], seesA: true, full: false, lists: false, managesA: true },
  { name: 'read:{B}', abilities: (_c, b) => [`read:${b}`], seesA: false, full: false, lists: false, managesA: false },
  { name: 'manage:{B}', abilities: (_c, b) => [`manage:${b}`], seesA: false, full: false, lists: false, managesA: false },
  { name: '* of another account', abilities: () => ['*'], other: true, seesA: false, full: true, lists: true, managesA: false },
];

function expected(kind: TokenKind, op: Operation): number {
  const ok = op.ok ?? 200;
  switch (NEEDS[op.name]) {
    case 'any':
      return ok;
    case 'full':
      return kind.full ? ok : 400;
    case 'list':
      return kind.lists ? ok : 400;
    case 'read':
      return kind.seesA ? ok : 404;
    case 'manage':
      return !kind.seesA ? 404 : kind.managesA ? ok : 400;
    case 'full-site':
      return !kind.seesA ? 404 : kind.full ? ok : 400;
    default:
      throw new Error(`no rule for ${op.name}`);
  }
}

describe('scope matrix (SPEC.md section 5)', () => {
  let t: TestApp;
  let siteB: string;
  let otherAccountId: number;

  const newCell = async (): Promise<Cell> => {
    const a = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Site A' })).body.id as string;
    const event = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${a}/events`, { name: 'Goal' })).body.id as string;
    const milestone = (
      await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${a}/milestones`, { name: 'M', milestone_date: '2024-01-01' })
    ).body.id as string;
    assert.match(a, /^[A-Z]{8}$/);
    assert.match(event, /^[A-Z]{8}$/);
    assert.ok(milestone);
    return { a, event, milestone };
  };

  before(async () => {
    t = await startTestApp();
    siteB = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Site B' })).body.id;
    const other = await t.meta.createAccount({
      name: 'Other',
      email: 'other@example.com',
      timezone: 'UTC',
      tier: 1,
      subscriptionStatus: 'active',
    });
    otherAccountId = other.id;
  });
  after(() => t.close());

  for (const kind of KINDS) {
    describe(`token ${kind.name}`, () => {
      for (const op of OPERATIONS) {
        const status = expected(kind, op);
        it(`${op.name} -> ${status}`, async () => {
          const cell = await newCell();
          const token = await t.token(kind.abilities(cell, siteB), kind.other ? { accountId: otherAccountId } : {});
          const res = await t.call(token, op.method, op.path(cell), op.body);
          if (status >= 400) {
            assertError(res, status);
            return;
          }
          assert.equal(res.status, status, JSON.stringify(res.body));
          // What a success looks like, and that it really happened.
          switch (op.name) {
            case 'GET /account':
              assert.equal(res.body.object, 'account');
              assert.equal(res.body.id, kind.other ? otherAccountId : 1);
              break;
            case 'GET /token':
              assert.deepEqual(res.body.abilities, kind.abilities(cell, siteB));
              break;
            case 'GET /sites': {
              assert.equal(res.body.object, 'list');
              const ids = (res.body.data as { id: string }[]).map((s) => s.id);
              // Another account never sees this account's sites.
              if (kind.other) assert.ok(!ids.includes(siteB));
              break;
            }
            case 'POST /sites': {
              assert.equal(res.body.object, 'site');
              const owner = (await t.meta.getSite(res.body.id))!.accountId;
              assert.equal(owner, kind.other ? otherAccountId : 1);
              break;
            }
            case 'GET /sites/A':
              assert.equal(res.body.id, cell.a);
              break;
            case 'POST /sites/A':
              assert.equal(res.body.name, 'Renamed');
              break;
            case 'DELETE /sites/A':
              assert.deepEqual(res.body, { id: cell.a, object: 'site', deleted: true });
              assert.equal(await t.meta.getSite(cell.a), undefined);
              break;
            case 'list events':
              assert.deepEqual(res.body.data.map((e: { id: string }) => e.id), [cell.event]);
              break;
            case 'create event':
              assert.equal(res.body.object, 'event');
              break;
            case 'get event':
            case 'update event':
              assert.equal(res.body.id, cell.event);
              break;
            case 'delete event':
              assert.deepEqual(res.body, { id: cell.event, object: 'event', deleted: true });
              break;
            case 'list milestones':
              assert.deepEqual(res.body.data.map((m: { id: string }) => m.id), [cell.milestone]);
              break;
            case 'create milestone':
              assert.equal(res.body.object, 'milestone');
              break;
            case 'get milestone':
            case 'update milestone':
              assert.equal(res.body.id, cell.milestone);
              break;
            case 'delete milestone':
              assert.deepEqual(res.body, { id: cell.milestone, object: 'milestone', deleted: true });
              break;
          }
        });
      }
    });
  }

  describe('refused operations change nothing', () => {
    it('a 400 or 404 write leaves site A, its event and milestone as they were', async () => {
      const cell = await newCell();
      for (const abilities of [['all-sites-readonly'], [`read:${cell.a}`], [`manage:${siteB}`]]) {
        const token = await t.token(abilities);
        for (const op of OPERATIONS.filter((o) => o.method !== 'GET' && o.name !== 'POST /sites')) {
          const res = await t.call(token, op.method, op.path(cell), op.body);
          assert.ok(res.status === 400 || res.status === 404, `${abilities.join()} ${op.name}: ${res.status}`);
        }
      }
      const site = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${cell.a}`);
      assert.equal(site.body.name, 'Site A');
      const event = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${cell.a}/events/${cell.event}`);
      assert.equal(event.body.name, 'Goal');
      const milestone = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${cell.a}/milestones/${cell.milestone}`);
      assert.equal(milestone.body.name, 'M');
      assert.equal(milestone.body.milestone_date, '2024-01-01 00:00:00');
    });

    it('GET /sites with all-sites-readonly lists exactly the account\'s own sites', async () => {
      const token = await t.token(['all-sites-readonly']);
      const res = await t.call(token, 'GET', '/v1/sites?limit=100');
      assert.equal(res.status, 200);
      const ids = (res.body.data as { id: string }[]).map((s) => s.id);
      assert.ok(ids.includes(siteB));
      for (const id of ids) assert.equal((await t.meta.getSite(id))!.accountId, 1);
    });
  });

  describe('sites that are invalid, unknown or elsewhere', () => {
    const paths = [
      ['unknown site id', '/v1/sites/ZZZZZZZZ'],
      ['malformed site id', '/v1/sites/not-a-site'],
      ['lowercase form of a real id', 'LOWER'],
    ] as const;

    for (const [label, path] of paths) {
      it(`${label}: every site operation is 404 for the full-access token`, async () => {
        let base: string = path;
        if (path === 'LOWER') base = `/v1/sites/${siteB.toLowerCase()}`;
        const ops: [Method, string, unknown][] = [
          ['GET', base, undefined],
          ['POST', base, { name: 'x' }],
          ['DELETE', base, undefined],
          ['GET', `${base}/events`, undefined],
          ['POST', `${base}/events`, { name: 'x' }],
          ['GET', `${base}/events/ABCDEFGH`, undefined],
          ['POST', `${base}/events/ABCDEFGH`, { name: 'x' }],
          ['DELETE', `${base}/events/ABCDEFGH`, undefined],
          ['GET', `${base}/milestones`, undefined],
          ['POST', `${base}/milestones`, { name: 'x', milestone_date: '2024-01-01' }],
          ['GET', `${base}/milestones/00000000-0000-4000-8000-000000000000`, undefined],
          ['POST', `${base}/milestones/00000000-0000-4000-8000-000000000000`, { name: 'x', milestone_date: '2024-01-01' }],
          ['DELETE', `${base}/milestones/00000000-0000-4000-8000-000000000000`, undefined],
        ];
        for (const [method, url, body] of ops) {
          const res = await t.call(OWNER_TOKEN, method, url, body);
          assert.equal(res.status, 404, `${method} ${url}: ${JSON.stringify(res.body)}`);
          assertError(res, 404);
        }
      });
    }

    it('an unknown site is 404, not 400, even for a token that could not manage it', async () => {
      const token = await t.token(['all-sites-readonly']);
      assertError(await t.call(token, 'POST', '/v1/sites/ZZZZZZZZ', { name: 'x' }), 404);
      assertError(await t.call(token, 'DELETE', '/v1/sites/ZZZZZZZZ'), 404);
      assertError(await t.call(token, 'POST', '/v1/sites/ZZZZZZZZ/events', { name: 'x' }), 404);
    });

    it('another account\'s site is 404 even for the other account\'s read-only token', async () => {
      const token = await t.token(['all-sites-readonly'], { accountId: otherAccountId });
      assertError(await t.call(token, 'GET', `/v1/sites/${siteB}`), 404);
      assertError(await t.call(token, 'GET', `/v1/sites/${siteB}/events`), 404);
    });

    it('a manage:{id} ability naming another account\'s site grants nothing', async () => {
      const token = await t.token([`manage:${siteB}`], { accountId: otherAccountId });
      assertError(await t.call(token, 'GET', `/v1/sites/${siteB}`), 404);
      assertError(await t.call(token, 'POST', `/v1/sites/${siteB}`, { name: 'stolen' }), 404);
      assertError(await t.call(token, 'DELETE', `/v1/sites/${siteB}`), 404);
      assert.equal((await t.meta.getSite(siteB))!.name, 'Site B');
    });
  });

  describe('permission and existence are judged before the body', () => {
    it('a read-only token sending an invalid body gets the permission 400 {error}, not a validation error', async () => {
      const cell = await newCell();
      const token = await t.token([`read:${cell.a}`]);
      assertError(await t.call(token, 'POST', `/v1/sites/${cell.a}/events`, { name: 12 }), 400);
      assertError(await t.call(token, 'POST', `/v1/sites/${cell.a}/milestones`, {}), 400);
      assertError(await t.call(token, 'POST', `/v1/sites/${cell.a}`, { sharing: 'bogus' }), 400);
    });

    it('a token that cannot see the site sending an invalid body gets 404', async () => {
      const cell = await newCell();
      const token = await t.token([`manage:${siteB}`]);
      assertError(await t.call(token, 'POST', `/v1/sites/${cell.a}/events`, { name: 12 }), 404);
      assertError(await t.call(token, 'POST', `/v1/sites/${cell.a}/milestones`, {}), 404);
    });

    it('a token without * sending an invalid site body to POST /sites gets 400 {error}', async () => {
      const token = await t.token(['all-sites-readonly']);
      assertError(await t.call(token, 'POST', '/v1/sites', { name: 5 }), 400);
    });

    it('a token with several abilities gets the union of them', async () => {
      const cell = await newCell();
      const token = await t.token([`read:${siteB}`, `manage:${cell.a}`]);
      assert.equal((await t.call(token, 'GET', `/v1/sites/${siteB}`)).status, 200);
      assertError(await t.call(token, 'POST', `/v1/sites/${siteB}`, { name: 'x' }), 400);
      assert.equal((await t.call(token, 'POST', `/v1/sites/${cell.a}`, { name: 'x' })).status, 200);
      assertError(await t.call(token, 'GET', '/v1/sites'), 400);
    });
  });
});

describe('authentication failures (401)', () => {
  let t: TestApp;
  let site: string;
  before(async () => {
    t = await startTestApp();
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Blog' })).body.id;
  });
  after(() => t.close());

  const raw = async (authorization: string | undefined, url = '/v1/token'): Promise<Reply> => {
    const headers: Record<string, string> = {};
    if (authorization !== undefined) headers.authorization = authorization;
    const res = await t.app.inject({ method: 'GET', url, headers });
    return { status: res.statusCode, body: JSON.parse(res.body), headers: res.headers };
  };

  const cases: [string, string | undefined][] = [
    ['no Authorization header', undefined],
    ['an empty Authorization header', ''],
    ['Bearer with no value', 'Bearer'],
    ['Bearer and a space with no value', 'Bearer '],
    ['Basic credentials', 'Basic xyz'],
    ['Basic credentials carrying a valid token', `Basic ${OWNER_TOKEN}`],
    ['the bare token without a scheme', OWNER_TOKEN],
    ['a garbage token', 'Bearer not-a-real-token'],
    ['a token with one character changed', `Bearer ${OWNER_TOKEN.slice(0, -1)}X`],
    ['two tokens', `Bearer ${OWNER_TOKEN} ${OWNER_TOKEN}`],
  ];
  for (const [label, header] of cases) {
    it(`${label} -> 401 {error}`, async () => {
      for (const url of ['/v1/token', '/v1/account', '/v1/sites', `/v1/sites/${site}`, `/v1/sites/${site}/events`]) {
        const res = await raw(header, url);
        assert.equal(res.status, 401, `${url}: ${JSON.stringify(res.body)}`);
        assert.deepEqual(Object.keys(res.body), ['error']);
        assert.equal(typeof res.body.error, 'string');
        assert.match(String(res.headers['content-type']), /^application\/json/);
      }
    });
  }

  it('the scheme name is case-insensitive (RFC 7235)', async () => {
    assert.equal((await raw(`bearer ${OWNER_TOKEN}`)).status, 200);
    assert.equal((await raw(`BEARER ${OWNER_TOKEN}`)).status, 200);
  });

  it('a 401 is answered before the body is judged', async () => {
    const res = await t.call('nope', 'POST', '/v1/sites', { name: 42 });
    assert.equal(res.status, 401);
    assert.deepEqual(Object.keys(res.body), ['error']);
  });

  it('an expired token -> 401 {error}', async () => {
    const token = await t.token(['*'], { expiresAt: new Date(Date.now() - 60_000) });
    for (const url of ['/v1/token', '/v1/account', '/v1/sites', `/v1/sites/${site}`]) {
      const res = await t.call(token, 'GET', url);
      assert.equal(res.status, 401, url);
      assert.deepEqual(Object.keys(res.body), ['error']);
      assert.equal(typeof res.body.error, 'string');
    }
    const write = await t.call(token, 'POST', '/v1/sites', { name: 'x' });
    assert.equal(write.status, 401);
  });

  it('a token that expires in the future works and shows expires_at', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000);
    expiresAt.setUTCMilliseconds(0);
    const token = await t.token(['*'], { expiresAt });
    const res = await t.call(token, 'GET', '/v1/token');
    assert.equal(res.status, 200);
    assert.equal(res.body.expires_at, expiresAt.toISOString().slice(0, 19).replace('T', ' '));
  });

  it('a revoked token -> 401 {error}, immediately', async () => {
    const token = await t.token(['*']);
    assert.equal((await t.call(token, 'GET', '/v1/account')).status, 200);
    const record = (await t.meta.listTokens(1)).find((r) => r.hash === hashToken(token))!;
    assert.ok(record);
    assert.equal(await t.meta.revokeToken(1, record.id), true);
    for (const url of ['/v1/token', '/v1/account', '/v1/sites', `/v1/sites/${site}`]) {
      const res = await t.call(token, 'GET', url);
      assert.equal(res.status, 401, url);
      assert.deepEqual(Object.keys(res.body), ['error']);
      assert.equal(typeof res.body.error, 'string');
    }
    // Other tokens of the account are unaffected.
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/account')).status, 200);
  });
});

describe('lapsed account (400)', () => {
  let t: TestApp;
  let accountId: number;
  let token: string;
  let site: string;
  before(async () => {
    t = await startTestApp();
    const account = await t.meta.createAccount({
      name: 'Lapsing',
      email: 'lapsing@example.com',
      timezone: 'UTC',
      tier: 1,
      subscriptionStatus: 'active',
    });
    accountId = account.id;
    token = await t.token(['*'], { accountId });
    const created = await t.call(token, 'POST', '/v1/sites', { name: 'Lapsing site' });
    assert.equal(created.status, 200);
    site = created.body.id;
  });
  after(() => t.close());

  it('every operation of a lapsed account answers 400 {error}', async () => {
    await t.meta.updateAccount(accountId, { subscriptionStatus: 'lapsed' });
    const ops: [Method, string, unknown][] = [
      ['GET', '/v1/account', undefined],
      ['GET', '/v1/token', undefined],
      ['GET', '/v1/sites', undefined],
      ['POST', '/v1/sites', { name: 'x' }],
      ['GET', `/v1/sites/${site}`, undefined],
      ['POST', `/v1/sites/${site}`, { name: 'x' }],
      ['GET', `/v1/sites/${site}/events`, undefined],
      ['POST', `/v1/sites/${site}/events`, { name: 'x' }],
      ['GET', `/v1/sites/${site}/milestones`, undefined],
      ['POST', `/v1/sites/${site}/milestones`, { name: 'x', milestone_date: '2024-01-01' }],
      ['DELETE', `/v1/sites/${site}`, undefined],
    ];
    for (const [method, url, body] of ops) {
      const res = await t.call(token, method, url, body);
      assert.equal(res.status, 400, `${method} ${url}: ${JSON.stringify(res.body)}`);
      assert.deepEqual(Object.keys(res.body), ['error']);
      assert.equal(typeof res.body.error, 'string');
    }
    // Nothing was written or removed.
    assert.equal((await t.meta.getSite(site))!.name, 'Lapsing site');
    assert.equal((await t.meta.listSites(accountId, { limit: 100 })).items.length, 1);
  });

  it('other accounts are unaffected, and reactivating the account restores access', async () => {
    await t.meta.updateAccount(accountId, { subscriptionStatus: 'lapsed' });
    assert.equal((await t.call(OWNER_TOKEN, 'GET', '/v1/account')).status, 200);
    await t.meta.updateAccount(accountId, { subscriptionStatus: 'active' });
    const res = await t.call(token, 'GET', '/v1/account');
    assert.equal(res.status, 200);
    assert.equal(res.body.id, accountId);
  });

  it('a lapsed account with a bad token is still 401', async () => {
    await t.meta.updateAccount(accountId, { subscriptionStatus: 'lapsed' });
    const res = await t.call('garbage', 'GET', '/v1/account');
    assert.equal(res.status, 401);
  });
});
