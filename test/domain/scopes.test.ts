// Token abilities: which strings are abilities, and what each grants (SPEC.md section 5).

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { abilityProblem, Scopes } from '../../src/domain/scopes.js';

describe('scopes', () => {
  it('recognises the four ability forms', () => {
    for (const ok of ['*', 'all-sites-readonly', 'read:ABCDEFGH', 'manage:ABCDEFGH']) assert.equal(abilityProblem(ok), undefined, ok);
    for (const bad of ['', 'admin', 'read:', 'read:abc', 'write:ABCDEFGH', 'manage:ABCDEFGHI', ' *']) {
      assert.equal(typeof abilityProblem(bad), 'string', bad);
    }
  });

  it('grants what the scope table says', () => {
    const grid = (abilities: string[]) => {
      const s = new Scopes(abilities);
      return [s.isFullAccess, s.canListSites, s.canReadSite('AAAAAAAA'), s.canManageSite('AAAAAAAA'), s.canReadSite('BBBBBBBB')];
    };
    assert.deepEqual(grid(['*']), [true, true, true, true, true]);
    assert.deepEqual(grid(['all-sites-readonly']), [false, true, true, false, true]);
    assert.deepEqual(grid(['read:AAAAAAAA']), [false, false, true, false, false]);
    assert.deepEqual(grid(['manage:AAAAAAAA']), [false, false, true, true, false]);
    assert.deepEqual(grid(['read:BBBBBBBB', 'manage:AAAAAAAA']), [false, false, true, true, true]);
    assert.deepEqual(grid([]), [false, false, false, false, false]);
  });
});
