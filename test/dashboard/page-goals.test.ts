// Pageview goals over HTTP: kept per site by owners and admins (a viewer reads them), paths and patterns checked,
// bounded per site, nothing across accounts; and their numbers in one request (page-goal-aggregations), each equal
// to /v1's pageviews and visits with the goal's path as a `pathname` filter, with the report's own filters too.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { pageGoalPathRegex } from '../../src/domain/page-goal-paths.js';
import { MAX_PAGE_GOALS } from '../../src/http/dashboard/page-goals.js';
import { startTestApp, type TestApp } from '../helpers/app.js';
import { addMember, Browser, importInOrder, logIn, newLogin, pageCsrf } from './helpers.js';

const AGENT = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const DAY = 86_400_000;
const day = (n: number) => new Date(Date.now() - n * DAY).toISOString().slice(0, 10);
const PAGES = ['/', '/signup', '/signup/done', '/blog/one', '/blog/two', '/blog/2026/deep', '/Blog/one', '/pricing', '/docs/a.b', '/docs/axb'];

interface Person {
  browser: Browser;
  csrf: string;
}

describe('pageview goals', () => {
  let t: TestApp;
  let accountId: number;
  let owner: Person;
  let site: string;
  let other: string;

  const person = async (email: string): Promise<Person> => {
    const browser = new Browser(t.app);
    return { browser, csrf: await logIn(browser, email) };
  };
  const call = (p: Person, method: 'GET' | 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown) => p.browser.api(method, path, p.csrf, body);
  const create = (p: Person, body: unknown, on = site) => call(p, 'POST', `/dashboard/api/sites/${on}/page-goals`, body);
  const list = async (p: Person, on = site) => {
    const res = await call(p, 'GET', `/dashboard/api/sites/${on}/page-goals`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as { can_change: boolean; data: { id: string; name: string; path: string; regex: string }[] };
  };
  const numbers = (params: Record<string, string>, p = owner) =>
    p.browser.api('GET', `/dashboard/api/report/page-goal-aggregations?${new URLSearchParams({ entity_id: site, ...params })}`, p.csrf);
  const v1 = async (params: Record<string, string>) => {
    const res = await call(owner, 'GET', `/v1/aggregations?${new URLSearchParams({ entity: 'pageview', entity_id: site, ...params })}`);
    assert.equal(res.status, 200, JSON.stringify(res.body));
    return res.body as Record<string, string>[];
  };

  before(async () => {
    t = await startTestApp();
    const login = await newLogin(t.meta);
    accountId = login.id;
    owner = await person(login.email);
    site = (await call(owner, 'POST', '/v1/sites', { name: 'Shop' })).body.id;
    other = (await call(owner, 'POST', '/v1/sites', { name: 'Other' })).body.id;
    // Three days of visits of one to three pages, some viewing a page twice, from two countries' addresses.
    const lines: string[] = [];
    for (let i = 0; i < 90; i++) {
      const at = (minute: number) => `${day(i % 3)} ${String(1 + (i % 20)).padStart(2, '0')}:${String(minute).padStart(2, '0')}:00`;
      const base = { site_id: site, user_agent: AGENT, ip: i % 2 ? `81.2.69.${i + 1}` : `198.51.100.${i + 1}` };
      const views = [PAGES[i % PAGES.length]!, PAGES[(i * 3) % PAGES.length]!, PAGES[(i * 7) % PAGES.length]!].slice(0, 1 + (i % 3));
      views.forEach((path, n) => lines.push(JSON.stringify({ ...base, type: 'pageview', timestamp: at(n), url: `https://shop.example${path}`, referrer: '' })));
    }
    await importInOrder(t.app, lines);
  });
  after(() => t.close());

  it('reads * (and **) as any run of characters, everything else literally and case as written', () => {
    const matches = (pattern: string) => PAGES.filter((p) => new RegExp(pageGoalPathRegex(pattern)).test(p));
    assert.deepEqual(matches('/signup'), ['/signup']);
    assert.deepEqual(matches('/blog/*'), ['/blog/one', '/blog/two', '/blog/2026/deep']);
    assert.deepEqual(matches('/blog*'), ['/blog/one', '/blog/two', '/blog/2026/deep'], "as Plausible's docs group blog posts");
    assert.deepEqual(matches('/docs/**'), ['/docs/a.b', '/docs/axb']);
    assert.deepEqual(matches('/blog/*/deep'), ['/blog/2026/deep']);
    assert.deepEqual(matches('/signup*'), ['/signup', '/signup/done']);
    assert.deepEqual(matches('/docs/a.b'), ['/docs/a.b'], 'a dot is a dot');
    assert.deepEqual(matches('/blog/one'), ['/blog/one'], 'case as written');
    assert.equal(pageGoalPathRegex('/a(b)+[c]{d}|e$^\\f?'), '^/a\\(b\\)\\+\\[c\\]\\{d\\}\\|e\\$\\^\\\\f\\?$');
  });

  it('keeps goals per site, by name, for owners and admins; a viewer reads them', async () => {
    const signup = await create(owner, { name: '  Signed up ', path: ' /signup ' });
    assert.equal(signup.status, 201, JSON.stringify(signup.body));
    assert.deepEqual([signup.body.name, signup.body.path, signup.body.regex], ['Signed up', '/signup', '^/signup$']);
    const admin = await person((await addMember(t.team, accountId, 'admin')).email);
    assert.equal((await create(admin, { name: 'Read the blog', path: '/blog/*' })).status, 201);
    const viewer = await person((await addMember(t.team, accountId, 'viewer')).email);
    const seen = await list(viewer);
    assert.deepEqual([seen.can_change, seen.data.map((g) => [g.name, g.path])], [false, [['Read the blog', '/blog/*'], ['Signed up', '/signup']]]);
    const refused = await create(viewer, { name: 'Mine', path: '/x' });
    assert.deepEqual([refused.status, refused.body.error], [400, "Only the account's owners and admins may change goals"]);
    assert.equal((await call(viewer, 'DELETE', `/dashboard/api/sites/${site}/page-goals/${signup.body.id}`)).status, 400);
    assert.deepEqual((await list(owner, other)).data, [], 'per site');

    const renamed = await call(admin, 'PATCH', `/dashboard/api/sites/${site}/page-goals/${signup.body.id}`, { name: 'Signup started', path: '/signup**' });
    assert.deepEqual([renamed.status, renamed.body.name, renamed.body.path], [200, 'Signup started', '/signup**']);
    assert.equal((await call(owner, 'PATCH', `/dashboard/api/sites/${other}/page-goals/${signup.body.id}`, { name: 'x' })).status, 404, 'through another site');
    const temp = (await create(owner, { name: 'Temporary', path: '/tmp' })).body;
    assert.equal((await call(owner, 'DELETE', `/dashboard/api/sites/${site}/page-goals/${temp.id}`)).status, 200);
    assert.equal((await call(owner, 'DELETE', `/dashboard/api/sites/${site}/page-goals/${temp.id}`)).status, 404);
    assert.deepEqual((await list(owner)).data.map((g) => g.name), ['Read the blog', 'Signup started']);
  });

  it('checks names and paths, and the body', async () => {
    const refusals: [unknown, string, RegExp][] = [
      [{ name: '', path: '/a' }, 'name', /1 to 255/],
      [{ name: 'x'.repeat(256), path: '/a' }, 'name', /1 to 255/],
      [{ name: 'N', path: 'signup' }, 'path', /start with \//],
      [{ name: 'N', path: '' }, 'path', /1 to 300/],
      [{ name: 'N', path: `/${'a'.repeat(300)}` }, 'path', /1 to 300/],
      [{ name: 'N', path: '/a?b=1' }, 'path', /without \? or #/],
      [{ name: 'N', path: '/a#top' }, 'path', /without \? or #/],
      [{ name: 'N', path: '/a\u0000b' }, 'path', /control/],
      [{ name: 'N', path: 42 }, 'path', /a path such as/],
      [{ name: 'N' }, 'path', /a path such as/],
    ];
    for (const [body, field, message] of refusals) {
      const res = await create(owner, body, other);
      assert.equal(res.status, 400, JSON.stringify(body).slice(0, 200));
      assert.match(String(res.body.errors?.[field]), message, JSON.stringify(res.body).slice(0, 300));
    }
    const both = await create(owner, { name: '', path: 'x' }, other);
    assert.deepEqual(Object.keys(both.body.errors).sort(), ['name', 'path'], 'both named at once');
    assert.equal((await create(owner, [{ name: 'N', path: '/' }], other)).status, 400, 'the body is an object');
    assert.equal((await call(owner, 'PATCH', `/dashboard/api/sites/${other}/page-goals/nope`, { path: 'x' })).status, 400);
    assert.deepEqual((await list(owner, other)).data, [], 'nothing saved');
  });

  it('answers every pageview goal at once, each equal to /v1 with its path as a pathname filter', async () => {
    const goals = (await list(owner)).data;
    const range = { date_from: `${day(2)} 00:00:00`, date_to: `${day(0)} 23:59:59` };
    for (const params of <Record<string, string>[]>[range, { ...range, date_grouping: 'day' }, { ...range, filters: JSON.stringify([{ property: 'country_code', operator: 'is', value: 'GB' }]) },
      { ...range, filters: JSON.stringify([{ property: 'pathname', operator: 'is not', value: '/blog/two' }]) }]) {
      const res = await numbers(params);
      assert.equal(res.status, 200, JSON.stringify(res.body));
      assert.deepEqual(res.body.map((g: { name: string }) => g.name), goals.map((g) => g.name));
      for (const [i, goal] of goals.entries()) {
        const filters = [...JSON.parse(params.filters ?? '[]'), { property: 'pathname', operator: 'matching', value: goal.regex }];
        const expected = await v1({ ...params, aggregates: 'pageviews,visits', filters: JSON.stringify(filters) });
        assert.deepEqual(res.body[i].rows, expected.map((r) => ({ conversions: r.pageviews, unique_conversions: r.visits })), `${goal.name} ${JSON.stringify(params)}`);
      }
    }
    // Something was counted, and a visit that viewed the blog twice is one unique completion.
    const [blog] = (await numbers(range)).body;
    assert.ok(Number(blog.rows[0].unique_conversions) > 0 && Number(blog.rows[0].conversions) > Number(blog.rows[0].unique_conversions), JSON.stringify(blog));
    // A report that already selects pages by path would OR them with the goal's: no numbers rather than wrong ones.
    const paged = await numbers({ ...range, filters: JSON.stringify([{ property: 'pathname', operator: 'is', value: '/pricing' }]) });
    assert.deepEqual(paged.body.map((g: { rows: unknown }) => g.rows), [null, null]);
  });

  it('refuses bad report parameters as /v1 does, and answers only who may read the site', async () => {
    const bad = await numbers({ date_from: 'yesterday' });
    assert.equal(bad.status, 400);
    assert.ok(bad.body.errors?.date_from, JSON.stringify(bad.body));
    const stranger = await person((await newLogin(t.meta)).email);
    assert.equal((await numbers({}, stranger)).status, 404);
    assert.equal((await call(stranger, 'GET', `/dashboard/api/sites/${site}/page-goals`)).status, 404);
    assert.equal((await create(stranger, { name: 'Planted', path: '/' })).status, 404);
    const limited = await person((await addMember(t.team, accountId, 'viewer', [other])).email);
    assert.equal((await call(limited, 'GET', `/dashboard/api/sites/${site}/page-goals`)).status, 404);
    assert.equal((await owner.browser.api('GET', `/dashboard/api/sites/${site}/page-goals`, undefined)).status, 401, 'no anti-CSRF header');
    // A share page reads the numbers (its report shows the goals), never the management routes.
    assert.equal((await call(owner, 'POST', `/v1/sites/${site}`, { sharing: 'public' })).status, 200);
    const visitor = new Browser(t.app);
    const shareCsrf = pageCsrf((await visitor.get(`/share/${site}`)).body);
    assert.equal((await numbers({}, { browser: visitor, csrf: shareCsrf })).status, 200);
    assert.equal((await visitor.api('GET', `/dashboard/api/sites/${site}/page-goals`, shareCsrf)).status, 401);
    const token = await t.call(await t.token(['*']), 'GET', `/dashboard/api/report/page-goal-aggregations?entity_id=${site}`);
    assert.equal(token.status, 401, 'an API token uses /v1');
  });

  it(`keeps at most ${MAX_PAGE_GOALS} per site, and deletes them with the site`, async () => {
    const busy = (await call(owner, 'POST', '/v1/sites', { name: 'Busy' })).body.id;
    for (let i = 0; i < MAX_PAGE_GOALS; i++) assert.equal((await create(owner, { name: `G${i}`, path: `/p${i}` }, busy)).status, 201);
    const over = await create(owner, { name: 'One too many', path: '/x' }, busy);
    assert.deepEqual([over.status, over.body.error], [400, `This site already has ${MAX_PAGE_GOALS} pageview goals: delete one first`]);
    assert.equal((await call(owner, 'DELETE', `/v1/sites/${busy}`)).status, 200);
    assert.deepEqual(await t.meta.listPageGoals(busy), []);
  });
});
