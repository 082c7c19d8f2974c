// The error bodies of SPEC.md, asserted the same way everywhere: `{error}` with a status, and a 400's
// `{errors: {field: [messages]}}` naming exactly the fields at fault.

import assert from 'node:assert/strict';
import type { Reply } from './app.js';

/** `{error: "message"}` with this status. */
export function assertError(res: Reply, status: number): void {
  assert.equal(res.status, status, JSON.stringify(res.body));
  assert.equal(typeof res.body, 'object');
  assert.deepEqual(Object.keys(res.body), ['error']);
  assert.equal(typeof res.body.error, 'string');
  assert.ok(res.body.error.length > 0);
}

/** A 400 validation error naming exactly these fields, each with at least one message string. */
export function assertFieldErrors(res: Reply, fields: string[]): void {
  assert.equal(res.status, 400, JSON.stringify(res.body));
  assert.deepEqual(Object.keys(res.body), ['errors']);
  assert.deepEqual(Object.keys(res.body.errors).sort(), [...fields].sort(), JSON.stringify(res.body));
  for (const field of fields) {
    assert.ok(Array.isArray(res.body.errors[field]));
    assert.ok(res.body.errors[field].length > 0);
    for (const m of res.body.errors[field]) assert.equal(typeof m, 'string');
  }
}
