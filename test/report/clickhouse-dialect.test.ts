// ClickHouseDialect's building blocks side by side with DuckDB's, on both real databases: regular expressions
// (RE2 as DuckDB runs it, invalid ones refused alike), `is like` patterns with their escapes, time buckets, and
// compiled reports carrying no bound values and no common table expressions.

import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ClickHouseDialect } from '../../src/report/clickhouse-dialect.js';
import { ReportCompiler } from '../../src/report/compiler.js';
import { likePattern } from '../../src/report/conditions.js';
import { SqlDialect } from '../../src/report/dialect.js';
import type { ReportQuery } from '../../src/report/query.js';
import type { ClickHouseConnection } from '../../src/store/clickhouse/client.js';
import { featuresOf } from '../../src/store/clickhouse/features.js';
import { sqlLiteral } from '../../src/store/clickhouse/literal.js';
import { DuckDatabase } from '../../src/store/duckdb/database.js';
import { testConnection } from '../helpers/clickhouse.js';


describe('ClickHouseDialect against DuckDB', () => {
  // Written for the engine under test, as the store writes it (from its version()).
  let ch = new ClickHouseDialect();
  const duck = new SqlDialect();
  let conn: ClickHouseConnection;
  let db: DuckDatabase;
  before(async () => {
    conn = testConnection();
    ch = new ClickHouseDialect(featuresOf(String((await conn.rows('SELECT version() AS v'))[0]!.v)));
    db = await DuckDatabase.open(':memory:');
  });
  after(async () => {
    await conn.close();
    await db.close();
  });

  /** One boolean expression of (text, pattern) on both databases: true/false, or 'error'. */
  async function both(expr: (d: SqlDialect, text: string, pattern: string) => string, text: string, pattern: string): Promise<[unknown, unknown]> {
    const onDuck = await db
      .serial((q) => q.rows(`SELECT ${expr(duck, '$1', '$2')} AS r`, [text, pattern]))
      .then((rows) => Boolean(rows[0]!.r), () => 'error');
    const onCh = await conn.rows(`SELECT ${expr(ch, sqlLiteral(text), sqlLiteral(pattern))} AS r`).then((rows) => Boolean(rows[0]!.r), () => 'error');
    return [onDuck, onCh];
  }

  const REGEX: [string, string][] = [
    ['/blog/post-1', '^/blog/post-[0-9]+$'], ['/Blog', '(?i)^/blog'], ['a\nb', 'a.b'], ['a\nb', '(?s)a.b'], ['a\nb', '^b'],
    ['x', '\\'], ['x', '\\q'], ['x', '('], ['x', '[a-'], ['ab', '\\Qab\\E'], ['a.b', 'a\\.b'], ['axb', 'a\\.b'], ['b', 'zz|b'],
    ['ünïcödé', '^ü.n'], ['ünïcödé', '^.n'], ['x', ''], ['', 'x*'], ['a+b', 'a\\+b'], ["it's", "it's"], ['a\\b', 'a\\\\b'],
    ['/Blog', '(?i)/blog'], ['/A', 'x|(?i)a'], ['a)(b', 'a)(b'], ['x', 'a|'], ['x', '|'], ['x', ')'], ['B', '(?i:b)'],
    ['aaa', 'a{2}'], ['x', 'a{1001}'], ['abc', '(?P<n>b)'], ['abc', '\\bb'], ['abc', '(a)\\1'],
  ];
  it('runs regular expressions as DuckDB does, and refuses the same ones', async () => {
    for (const [text, pattern] of REGEX) {
      const [expected, actual] = await both((d, t, p) => d.regexMatch(t, p), text, pattern);
      assert.equal(actual, expected, `${JSON.stringify(text)} ~ ${JSON.stringify(pattern)}`);
    }
  });

  const LIKE: [string, string][] = [
    ['/Blog/Post', 'blog'], ['/50%off', '%'], ['/50off', '%'], ['/a_b', '_'], ['/ab', '_'], ['/a\\b', '\\'], ['/ab', '\\'],
    ['/ÜNÏCÖDÉ', 'ünï'], ['/ünïcödé', 'ÜNÏ'], ['/docs/page-1', 'docs*1'], ['/docs/page-1', '*'], ['/x', 'docs*1'], ["/it's", "T'S"],
    ['/a\u0000b', '\u0000'], ['/line\nbreak', 'E\nB'], ['/[x]', '[x]'], ['/x', '[x]'],
  ];
  it('matches `is like` patterns as DuckDB does', async () => {
    for (const [text, value] of LIKE) {
      const [expected, actual] = await both((d, t, p) => d.ilike(t, p), text, likePattern(value));
      assert.equal(actual, expected, `${JSON.stringify(text)} like ${JSON.stringify(value)}`);
    }
  });

  it('buckets local times as DuckDB does', async () => {
    const times = ['2026-03-08T06:59:59.999Z', '2026-12-31T23:59:59.999Z', '2027-01-01T00:00:00.000Z', '2024-02-29T12:30:00.001Z'];
    for (const unit of ['hour', 'day', 'month', 'year'] as const) {
      for (const at of times) {
        const [d] = await db.serial((q) => q.rows(`SELECT ${duck.formatBucket(duck.bucket(unit, '$1'))} AS b`, [new Date(at)]));
        const [c] = await conn.rows(`SELECT ${ch.formatBucket(ch.bucket(unit, sqlLiteral(new Date(at))))} AS b`);
        assert.equal(c!.b, d!.b, `${unit} of ${at}`);
      }
    }
  });

  it("numbers a hit's UTC day as DuckDB does (ClickHouse counts visitors a day at a time)", async () => {
    for (const at of ['1970-01-01T00:00:00.000Z', '2026-03-08T23:59:59.999Z', '2026-03-09T00:00:00.000Z', '2024-02-29T12:30:00.001Z']) {
      const [d] = await db.serial((q) => q.rows(`SELECT ${duck.utcDayNumber('$1')} AS n`, [new Date(at)]));
      const [c] = await conn.rows(`SELECT ${ch.utcDayNumber(sqlLiteral(new Date(at)))} AS n`);
      assert.equal(Number(d!.n), Math.floor(Date.parse(at) / 86_400_000), at);
      assert.equal(Number(c!.n), Number(d!.n), at);
    }
  });

  it('compiles reports with every value inlined and no common table expressions', () => {
    const query: ReportQuery = {
      entity: 'pageview',
      siteId: "SITE'1",
      aggregates: ['visits', 'uniques', 'pageviews', 'avg_duration', 'bounce_rate'],
      fieldGrouping: ['referrer_source'],
      filters: [{ property: 'pathname', operator: 'is like', value: "x'\\" }, { property: 'entry_page', operator: 'matching', value: '^/a' }],
      sort: { field: 'visits', direction: 'desc' },
      from: new Date('2026-03-01T00:00:00Z'),
      until: new Date('2026-04-01T00:00:00Z'),
      timezone: 'Europe/Berlin',
      limit: 10,
    };
    const compiler = new ReportCompiler(ch);
    for (const q of [query, { ...query, fieldGrouping: [] }, { ...query, fieldGrouping: ['pathname' as const], aggregates: ['visits' as const], filters: [] }]) {
      const { sql, params } = compiler.aggregation(q);
      assert.deepEqual(params, []);
      assert.ok(!/\$\d/.test(sql), sql);
      assert.ok(!/WITH \w+ AS \(/.test(sql), sql);
      assert.ok(sql.includes("'SITE\\'1'"), 'the site id as an escaped literal');
      // Every version is read without FINAL only for the ids that narrow a FINAL read (newestVisits).
      const narrowing = /visit_id IN \(SELECT (\w+)\.visit_id FROM visits AS \1 PREWHERE /g;
      assert.ok(!/\bvisits\b(?! (AS \w+ )?FINAL)/.test(sql.replace(narrowing, '')), `visits read with FINAL everywhere else: ${sql}`);
      assert.ok(!/JOIN visits/.test(sql), 'never a bare table on the right of a JOIN (18.16 drops FINAL there)');
    }
  });
});
