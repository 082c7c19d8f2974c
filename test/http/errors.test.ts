// Request-level errors over real HTTP: unknown routes, bad bodies and content types, size limit, form bodies, retired endpoints, /openapi.json.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

interface HttpReply {
  status: number;
  contentType: string;
  text: string;
  body: any;
}

describe('request-level errors over HTTP', () => {
  let t: TestApp;
  let base: string;
  let site: string;
  let event: string;

  before(async () => {
    t = await startTestApp();
    const address = await t.app.listen({ port: 0, host: '127.0.0.1' });
    base = address;
    site = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Blog' })).body.id;
    event = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${site}/events`, { name: 'Signup' })).body.id;
  });
  after(() => t.close());

  async function send(
    method: string,
    path: string,
    options: { body?: string | Buffer; type?: string; token?: string | null; headers?: Record<string, string> } = {},
  ): Promise<HttpReply> {
    const headers: Record<string, string> = { ...options.headers };
    const token = options.token === undefined ? OWNER_TOKEN : options.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    if (options.type !== undefined) headers['content-type'] = options.type;
    const res = await fetch(`${base}${path}`, { method, headers, body: options.body });
    const text = await res.text();
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = undefined;
    }
    return { status: res.status, contentType: res.headers.get('content-type') ?? '', text, body };
  }

  const json = (method: string, path: string, value: unknown, token?: string | null) =>
    send(method, path, { body: JSON.stringify(value), type: 'application/json', token });

  /** An error answer: this status, a JSON content type, and the general `{ error: string }` shape. */
  function assertGeneralError(res: HttpReply, status: number): void {
    assert.equal(res.status, status, res.text.slice(0, 300));
    assert.match(res.contentType, /^application\/json/, `content-type of ${status}: ${res.contentType}`);
    assert.ok(res.body && typeof res.body === 'object', res.text.slice(0, 300));
    assert.deepEqual(Object.keys(res.body), ['error'], res.text.slice(0, 300));
    assert.equal(typeof res.body.error, 'string');
    assert.ok(res.body.error.length > 0);
  }

  /** A 400 in either SPEC.md section 7 shape: `{error: string}` or `{errors: {field: [string]}}`. */
  function assertBadRequest(res: HttpReply): void {
    assert.equal(res.status, 400, res.text.slice(0, 300));
    assert.match(res.contentType, /^application\/json/);
    assert.ok(res.body && typeof res.body === 'object' && !Array.isArray(res.body), res.text);
    const keys = Object.keys(res.body);
    assert.equal(keys.length, 1, res.text);
    if (keys[0] === 'error') {
      assert.equal(typeof res.body.error, 'string');
    } else {
      assert.equal(keys[0], 'errors', res.text);
      for (const messages of Object.values(res.body.errors as Record<string, unknown>)) {
        assert.ok(Array.isArray(messages) && messages.length > 0);
        for (const m of messages) assert.equal(typeof m, 'string');
      }
    }
  }

  describe('unknown routes', () => {
    for (const [method, path] of [
      ['GET', '/nope'],
      ['GET', '/v1/nope'],
      ['GET', '/v2/sites'],
      ['POST', '/v1/account'],
      ['PUT', '/v1/sites'],
      ['PATCH', `/v1/sites/${'X'.repeat(8)}`],
      ['GET', '/v1/sites/ABCDEFGH/unknown'],
      ['GET', '/nothing-here'],
    ] as const) {
      it(`${method} ${path} -> 404 {error} as JSON`, async () => {
        const res = await send(method, path);
        assertGeneralError(res, 404);
      });
    }

    it('an unknown route is 404 without any token too', async () => {
      assertGeneralError(await send('GET', '/v1/nope', { token: null }), 404);
    });

    it(
      'a malformed percent-encoding in the path -> 400 {error}',
      async () => {
        assertGeneralError(await send('GET', '/v1/sites/%ZZ'), 400);
      },
    );

    it(
      'a site id longer than the router allows -> 404 (or 400) {error}, not 414',
      async () => {
        const res = await send('GET', `/v1/sites/${'A'.repeat(300)}`);
        assertGeneralError(res, 404);
        assert.ok(!res.text.includes('AAAAAAAAAA'), 'the URL is not echoed back');
        const ev = await send('GET', `/v1/sites/${site}/events/${'E'.repeat(300)}`);
        assertGeneralError(ev, 404);
      },
    );

    it('a 404 is JSON even when the client asks for HTML', async () => {
      assertGeneralError(await send('GET', '/nope', { headers: { accept: 'text/html' } }), 404);
      assertGeneralError(await send('GET', '/v1/sites/ZZZZZZZZ', { headers: { accept: 'text/html' } }), 404);
    });
  });

  describe('bodies', () => {
    for (const [label, text] of [
      ['truncated JSON', '{"name":'],
      ['a trailing comma', '{"name": "x",}'],
      ['single quotes', "{'name': 'x'}"],
      ['plain words', 'name=x'],
    ] as const) {
      it(`malformed JSON (${label}) -> 400 {error}`, async () => {
        const res = await send('POST', '/v1/sites', { body: text, type: 'application/json' });
        assertGeneralError(res, 400);
      });
    }

    it('malformed JSON on a nested route is 400 {error} too', async () => {
      assertGeneralError(await send('POST', `/v1/sites/${site}/events`, { body: '{', type: 'application/json' }), 400);
      assertGeneralError(await send('POST', `/v1/sites/${site}/milestones`, { body: '{', type: 'application/json' }), 400);
    });

    it('a JSON body with a prototype-poisoning key is refused, not merged', async () => {
      const res = await send('POST', '/v1/sites', { body: '{"name":"x","__proto__":{"admin":true}}', type: 'application/json' });
      assertBadRequest(res);
    });

    for (const type of ['text/plain', 'text/plain; charset=utf-8', 'application/xml', 'multipart/form-data; boundary=x']) {
      it(`Content-Type ${type} -> 415 {error}`, async () => {
        const res = await send('POST', '/v1/sites', { body: 'name=Blog', type });
        assertGeneralError(res, 415);
      });
    }

    it('a body over 1 MiB -> 413 {error}', async () => {
      const big = JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) });
      const res = await send('POST', '/v1/sites', { body: big, type: 'application/json' });
      assertGeneralError(res, 413);
      const form = `name=${'y'.repeat(1024 * 1024 + 10)}`;
      assertGeneralError(await send('POST', '/v1/sites', { body: form, type: 'application/x-www-form-urlencoded' }), 413);
    });

    it('a body just under 1 MiB is read (and then judged by the body rules)', async () => {
      const body = JSON.stringify({ name: 'x'.repeat(1024 * 1024 - 100) });
      const res = await send('POST', '/v1/sites', { body, type: 'application/json' });
      assert.equal(res.status, 400);
      assert.deepEqual(Object.keys(res.body.errors), ['name']);
    });

    it('Content-Type application/json with an empty body is accepted on GET and DELETE', async () => {
      for (const path of ['/v1/account', '/v1/token', '/v1/sites', `/v1/sites/${site}`, `/v1/sites/${site}/events`, `/v1/sites/${site}/milestones`]) {
        const res = await send('GET', path, { type: 'application/json' });
        assert.equal(res.status, 200, `${path}: ${res.text}`);
      }
      const doomed = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Doomed' })).body.id;
      const goal = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${doomed}/events`, { name: 'g' })).body.id;
      const milestone = (await t.call(OWNER_TOKEN, 'POST', `/v1/sites/${doomed}/milestones`, { name: 'm', milestone_date: '2024-01-01' })).body.id;
      for (const [path, id, object] of [
        [`/v1/sites/${doomed}/events/${goal}`, goal, 'event'],
        [`/v1/sites/${doomed}/milestones/${milestone}`, milestone, 'milestone'],
        [`/v1/sites/${doomed}`, doomed, 'site'],
      ] as const) {
        const res = await send('DELETE', path, { type: 'application/json' });
        assert.equal(res.status, 200, `${path}: ${res.text}`);
        assert.deepEqual(res.body, { id, object, deleted: true });
      }
    });

    it('Content-Type application/json with an empty body on a POST update keeps the site as it is', async () => {
      const res = await send('POST', `/v1/sites/${site}`, { type: 'application/json', body: '' });
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.name, 'Blog');
    });

    it('a JSON body that is an array -> 400', async () => {
      assertBadRequest(await json('POST', '/v1/sites', [{ name: 'x' }]));
      assertBadRequest(await json('POST', `/v1/sites/${site}/events`, ['x']));
      assertBadRequest(await json('POST', `/v1/sites/${site}`, []));
    });

    it('a JSON body that is a string, number or boolean -> 400', async () => {
      for (const value of ['name', 42, true]) {
        assertBadRequest(await json('POST', '/v1/sites', value));
        assertBadRequest(await json('POST', `/v1/sites/${site}/milestones`, value));
      }
    });

    it('a JSON null body -> 400 on create', async () => {
      assertBadRequest(await send('POST', '/v1/sites', { body: 'null', type: 'application/json' }));
    });
  });

  describe('form-encoded bodies (a PHP client sends them)', () => {
    const form = (path: string, text: string) => send('POST', path, { body: text, type: 'application/x-www-form-urlencoded' });

    it('creates a site from a form body', async () => {
      const res = await form('/v1/sites', 'name=Form+Site&timezone=Europe%2FBerlin&sharing=public');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.object, 'site');
      assert.equal(res.body.name, 'Form Site');
      assert.equal(res.body.timezone, 'Europe/Berlin');
      assert.equal(res.body.sharing, 'public');
      assert.equal(res.body.multi_domain, false);
      assert.equal(res.body.multi_domain_option, null);
    });

    it('multi_domain=true&multi_domain_option=combined', async () => {
      const res = await form('/v1/sites', 'name=Multi&multi_domain=true&multi_domain_option=combined');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.multi_domain, true);
      assert.equal(res.body.multi_domain_option, 'combined');
    });

    it('multi_domain=1 (PHP true) with multi_domain_option=separate', async () => {
      const res = await form('/v1/sites', 'name=Multi1&multi_domain=1&multi_domain_option=separate');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.multi_domain, true);
      assert.equal(res.body.multi_domain_option, 'separate');
    });

    it('multi_domain=0 and multi_domain=false are false', async () => {
      for (const value of ['0', 'false']) {
        const res = await form('/v1/sites', `name=Single&multi_domain=${value}`);
        assert.equal(res.status, 200, res.text);
        assert.equal(res.body.multi_domain, false);
      }
    });

    it('form bodies obey the same rules as JSON', async () => {
      const missingOption = await form('/v1/sites', 'name=Multi&multi_domain=1');
      assert.equal(missingOption.status, 400);
      assert.deepEqual(Object.keys(missingOption.body.errors), ['multi_domain_option']);
      const badBool = await form('/v1/sites', 'name=Multi&multi_domain=maybe&multi_domain_option=combined');
      assert.equal(badBool.status, 400);
      assert.deepEqual(Object.keys(badBool.body.errors), ['multi_domain']);
      const noName = await form('/v1/sites', 'sharing=none');
      assert.equal(noName.status, 400);
      assert.deepEqual(Object.keys(noName.body.errors), ['name']);
    });

    it('updates a site from a form body', async () => {
      const created = (await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'To update' })).body.id;
      const res = await form(`/v1/sites/${created}`, 'name=Updated&multi_domain=true&multi_domain_option=separate');
      assert.equal(res.status, 200, res.text);
      assert.equal(res.body.name, 'Updated');
      assert.equal(res.body.multi_domain, true);
      assert.equal(res.body.multi_domain_option, 'separate');
    });

    it('creates an event and a milestone from form bodies', async () => {
      const ev = await form(`/v1/sites/${site}/events`, 'name=Form+Goal&currency=euro');
      assert.equal(ev.status, 200, ev.text);
      assert.equal(ev.body.name, 'Form Goal');
      assert.equal(ev.body.currency, 'euro');
      const ms = await form(`/v1/sites/${site}/milestones`, 'name=Form+Milestone&milestone_date=2024-05-06');
      assert.equal(ms.status, 201, ms.text);
      assert.equal(ms.body.milestone_date, '2024-05-06 00:00:00');
    });
  });

  describe('retired endpoints', () => {
    it('DELETE /v1/sites/{site_id}/data and .../events/{event_id}/data -> 410 {error} JSON, with or without a token', async () => {
      for (const path of [`/v1/sites/${site}/data`, `/v1/sites/ZZZZZZZZ/data`, `/v1/sites/${site}/events/${event}/data`]) {
        for (const token of [OWNER_TOKEN, null, 'garbage']) {
          assertGeneralError(await send('DELETE', path, { token }), 410);
        }
        assertGeneralError(await send('DELETE', path, { type: 'application/json' }), 410);
      }
      // Nothing was wiped.
      assert.equal((await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${site}/events/${event}`)).status, 200);
    });
  });

  describe('authentication and permission errors are JSON', () => {
    it('401 without a token, 400 without permission, 404 for an unknown site', async () => {
      assertGeneralError(await send('GET', '/v1/sites', { token: null }), 401);
      assertGeneralError(await send('GET', '/v1/sites', { token: 'garbage' }), 401);
      assertGeneralError(await send('GET', '/v1/sites', { token: null, headers: { authorization: 'Basic xyz' } }), 401);
      const readOnly = await t.token(['all-sites-readonly']);
      assertGeneralError(await send('POST', '/v1/sites', { token: readOnly, body: '{"name":"x"}', type: 'application/json' }), 400);
      assertGeneralError(await send('GET', '/v1/sites/ZZZZZZZZ'), 404);
    });

    it('a validation error is JSON in the {errors} shape', async () => {
      const res = await json('POST', '/v1/sites', { name: '' });
      assert.equal(res.status, 400);
      assert.match(res.contentType, /^application\/json/);
      assert.deepEqual(Object.keys(res.body), ['errors']);
      assert.deepEqual(Object.keys(res.body.errors), ['name']);
    });
  });

  describe('/openapi.json', () => {
    let doc: any;
    before(async () => {
      const res = await send('GET', '/openapi.json', { token: null });
      assert.equal(res.status, 200, res.text.slice(0, 300));
      assert.match(res.contentType, /^application\/json/);
      doc = res.body;
    });

    it('is an OpenAPI 3 document', () => {
      assert.equal(typeof doc.openapi, 'string');
      assert.match(doc.openapi, /^3\.\d+\.\d+$/);
      assert.equal(typeof doc.info?.title, 'string');
      assert.equal(typeof doc.info?.version, 'string');
      assert.equal(typeof doc.paths, 'object');
    });

    it('lists every /v1 path with its methods', () => {
      const expected: Record<string, string[]> = {
        '/v1/account': ['get'],
        '/v1/token': ['get'],
        '/v1/sites': ['get', 'post'],
        '/v1/sites/{site_id}': ['get', 'post', 'delete'],
        '/v1/sites/{site_id}/events': ['get', 'post'],
        '/v1/sites/{site_id}/events/{event_id}': ['get', 'post', 'delete'],
        '/v1/sites/{site_id}/milestones': ['get', 'post'],
        '/v1/sites/{site_id}/milestones/{milestone_id}': ['get', 'post', 'delete'],
      };
      for (const [path, methods] of Object.entries(expected)) {
        assert.ok(doc.paths[path], `missing ${path}; has ${Object.keys(doc.paths).join(', ')}`);
        for (const method of methods) assert.ok(doc.paths[path][method], `missing ${method} ${path}`);
      }
    });

    it('documents the 201 of milestone creation', () => {
      assert.ok(doc.paths['/v1/sites/{site_id}/milestones'].post.responses['201']);
    });

    it('lists no /admin path, and nothing outside /v1', () => {
      const paths = Object.keys(doc.paths);
      assert.deepEqual(paths.filter((p) => p.startsWith('/admin')), []);
      assert.deepEqual(paths.filter((p) => !p.startsWith('/v1/')), []);
      assert.ok(!JSON.stringify(doc).includes('/admin'));
    });

    it('declares bearer authentication', () => {
      const schemes = Object.values(doc.components?.securitySchemes ?? {}) as { type: string; scheme?: string }[];
      assert.ok(schemes.some((s) => s.type === 'http' && s.scheme === 'bearer'));
    });
  });
});
