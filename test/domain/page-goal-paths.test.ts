// Page paths with `*` (pageview goals, funnel steps): the JavaScript match and the LIKE form agree with the anchored
// expression every report ran before; two paths said not to overlap never match one pathname.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { pageGoalPathLike, pageGoalPathMatches, pageGoalPathRegex, pageGoalPathsOverlap } from '../../src/domain/page-goal-paths.js';
import { SqlDialect, Binder } from '../../src/report/dialect.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';

// Few characters, so that random paths and patterns often match: the LIKE and expression specials among them.
const char = fc.constantFrom('/', 'a', 'b', '.', '%', '_', '\\', '\n');
const text = fc.array(char, { maxLength: 8 }).map((c) => c.join(''));
const pattern = fc.array(fc.oneof(char.filter((c) => c !== '\n'), fc.constant('*')), { maxLength: 7 }).map((c) => `/${c.join('')}`);
const pathname = text.map((t) => `/${t}`);

describe('page paths with *', () => {
  it('pageGoalPathMatches answers as the anchored expression', () => {
    fc.assert(fc.property(pattern, pathname, (p, s) => pageGoalPathMatches(p, s) === new RegExp(pageGoalPathRegex(p)).test(s)), { numRuns: 5000 });
  });

  it('paths said not to overlap never match one pathname', () => {
    fc.assert(fc.property(pattern, pattern, pathname, (a, b, s) => !(pageGoalPathMatches(a, s) && pageGoalPathMatches(b, s)) || pageGoalPathsOverlap(a, b)), { numRuns: 20000 });
    assert.equal(pageGoalPathsOverlap('/blog/*', '/docs/*'), false);
    assert.equal(pageGoalPathsOverlap('/blog/*', '*.html'), true);
    assert.equal(pageGoalPathsOverlap('/*.pdf', '/*.html'), false);
    assert.equal(pageGoalPathsOverlap('/pricing', '/pri*'), true);
    assert.equal(pageGoalPathsOverlap('/pricing', '/blog/*'), false);
    assert.equal(pageGoalPathsOverlap('/a', '/a'), true);
    assert.equal(pageGoalPathsOverlap('/a', '/b'), false);
  });

  it("DuckDB's LIKE form answers as its anchored expression", async () => {
    // Patterns whose only `*` ends them are a prefix test: some of every kind, with LIKE's special characters (a
    // pattern holds no control character: pageGoalPathProblem).
    const prefixes = ['/blog/*', '/a**', '*', '/%_\\*', '/x*'].flatMap((p) =>
      ['/blog/', '/blog/post', '/blog', '/blog/\n', '/a', '/ab', '/%_\\z', '/a%_\\z', '/x\nyz', '/x\ny', '', '/'].map((s) => [p, s] as [string, string]),
    );
    const cases = [...fc.sample(fc.tuple(pattern, pathname), { numRuns: 3000, seed: 47 }), ...prefixes];
    const db = await DuckDatabase.open(':memory:');
    try {
      const d = new SqlDialect();
      const b = new Binder(d);
      const rows = cases.map(([p, s]) => `(${b.value(s)}, ${d.pagePathMatch(b.value(s), p, b)}, regexp_matches(${b.value(s)}, ${b.value(pageGoalPathRegex(p))}), ${b.value(p)})`);
      const answers = await db.transaction((q) => q.rows<{ s: string; liked: boolean; matched: boolean; p: string }>(`SELECT * FROM (VALUES ${rows.join(', ')}) AS t(s, liked, matched, p)`, b.params));
      assert.equal(answers.length, cases.length);
      for (const a of answers) assert.equal(a.liked, a.matched, `${JSON.stringify(a.p)} on ${JSON.stringify(a.s)} (LIKE ${JSON.stringify(pageGoalPathLike(a.p))})`);
      assert.ok(answers.filter((a) => a.matched).length > 100, 'enough of the sample matches to test anything');
    } finally {
      await db.close();
    }
  });
});
