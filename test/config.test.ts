// Configuration from the environment: defaults, and a clear refusal of every bad value.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ConfigError, loadConfig } from '../src/config.js';

describe('config', () => {
  it('needs no variables at all', () => {
    const c = loadConfig({});
    assert.deepEqual([c.port, c.host, c.adminToken, c.bootstrapToken, c.logLevel], [8080, '0.0.0.0', undefined, undefined, 'info']);
    assert.match(c.dataDir, /data$/);
  });

  it('reads every variable', () => {
    const c = loadConfig({
      PORT: '9000', HOST: '127.0.0.1', PLUMB_DATA_DIR: '/tmp/x', PLUMB_ADMIN_TOKEN: 'a'.repeat(24),
      PLUMB_BOOTSTRAP_TOKEN: 'b'.repeat(30), PLUMB_LOG_LEVEL: 'warn',
    });
    assert.deepEqual([c.port, c.host, c.dataDir, c.adminToken, c.bootstrapToken, c.logLevel], [9000, '127.0.0.1', '/tmp/x', 'a'.repeat(24), 'b'.repeat(30), 'warn']);
  });

  it('takes mail as PLUMB_SMTP_URL with PLUMB_MAIL_FROM and PLUMB_PUBLIC_URL, and refuses a partial or bad mix', () => {
    assert.equal(loadConfig({}).mail, undefined);
    const ok = loadConfig({ PLUMB_SMTP_URL: 'smtp://u:p@mail.example:587', PLUMB_MAIL_FROM: 'Plumb <plumb@example.com>', PLUMB_PUBLIC_URL: 'https://plumb.example.com/' });
    assert.deepEqual(ok.mail, { smtpUrl: 'smtp://u:p@mail.example:587', from: 'Plumb <plumb@example.com>' });
    assert.equal(ok.publicUrl, 'https://plumb.example.com');
    const refused: [Record<string, string>, RegExp][] = [
      [{ PLUMB_SMTP_URL: 'smtp://mail.example', PLUMB_PUBLIC_URL: 'https://p.example' }, /needs PLUMB_MAIL_FROM/],
      [{ PLUMB_SMTP_URL: 'smtp://mail.example', PLUMB_MAIL_FROM: 'a@b.example' }, /needs PLUMB_PUBLIC_URL/],
      [{ PLUMB_MAIL_FROM: 'a@b.example' }, /PLUMB_SMTP_URL is not/],
      [{ PLUMB_SMTP_URL: 'http://mail.example', PLUMB_MAIL_FROM: 'a@b.example', PLUMB_PUBLIC_URL: 'https://p.example' }, /PLUMB_SMTP_URL must start with smtp/],
      [{ PLUMB_SMTP_URL: 'smtp://mail.example', PLUMB_MAIL_FROM: 'not an address', PLUMB_PUBLIC_URL: 'https://p.example' }, /PLUMB_MAIL_FROM must be an address/],
      [{ PLUMB_SMTP_URL: 'smtp://mail.example', PLUMB_MAIL_FROM: 'a@b.example', PLUMB_PUBLIC_URL: 'ftp://p.example' }, /PLUMB_PUBLIC_URL must start with http/],
    ];
    for (const [env, message] of refused) assert.throws(() => loadConfig(env), message, JSON.stringify(env));
  });

  it('lists every problem at once', () => {
    try {
      loadConfig({ PORT: 'eighty', PLUMB_ADMIN_TOKEN: 'short', PLUMB_LOG_LEVEL: 'loud', REDIS_URL: 'http://x' });
      assert.fail('expected a ConfigError');
    } catch (err) {
      assert.ok(err instanceof ConfigError);
      assert.equal(err.problems.length, 4, err.message);
      for (const name of ['PORT', 'PLUMB_ADMIN_TOKEN', 'PLUMB_LOG_LEVEL', 'REDIS_URL']) assert.match(err.message, new RegExp(name));
    }
  });

  it('takes the three scale-out URLs together and refuses any partial mix, naming what is missing', () => {
    const all = { DATABASE_URL: 'postgres://localhost/test', CLICKHOUSE_URL: 'http://localhost:8123/plumb', REDIS_URL: 'redis://127.0.0.1:6379' };
    const c = loadConfig(all);
    assert.deepEqual([c.databaseUrl, c.clickhouseUrl, c.redisUrl], [all.DATABASE_URL, all.CLICKHOUSE_URL, all.REDIS_URL]);
    const refused: [Record<string, string>, RegExp][] = [
      [{ CLICKHOUSE_URL: all.CLICKHOUSE_URL }, /DATABASE_URL and REDIS_URL are missing/],
      [{ CLICKHOUSE_URL: all.CLICKHOUSE_URL, REDIS_URL: all.REDIS_URL }, /DATABASE_URL is missing/],
      [{ DATABASE_URL: all.DATABASE_URL }, /CLICKHOUSE_URL and REDIS_URL are missing/],
      [{ DATABASE_URL: all.DATABASE_URL, REDIS_URL: all.REDIS_URL }, /CLICKHOUSE_URL is missing/],
      [{ DATABASE_URL: all.DATABASE_URL, CLICKHOUSE_URL: all.CLICKHOUSE_URL }, /REDIS_URL is missing/],
      [{ ...all, CLICKHOUSE_URL: 'tcp://localhost:9000' }, /CLICKHOUSE_URL must start with http/],
      [{ ...all, DATABASE_URL: 'mysql://localhost/x' }, /DATABASE_URL must start with postgres/],
    ];
    for (const [env, message] of refused) assert.throws(() => loadConfig(env), message, JSON.stringify(env));
  });

  it('takes REDIS_URL alone for limits, and the limit switch', () => {
    assert.equal(loadConfig({ REDIS_URL: 'redis://127.0.0.1:6379' }).redisUrl, 'redis://127.0.0.1:6379');
    assert.equal(loadConfig({}).rateLimits, true);
    assert.equal(loadConfig({ PLUMB_RATE_LIMITS: 'off' }).rateLimits, false);
    assert.throws(() => loadConfig({ PLUMB_RATE_LIMITS: 'maybe' }), /PLUMB_RATE_LIMITS/);
    assert.throws(() => loadConfig({ PORT: '70000' }), /PORT/);
  });

  it('writes the CLI\'s local admin key unless told not to', () => {
    assert.equal(loadConfig({}).localAdminKey, true);
    assert.equal(loadConfig({ PLUMB_LOCAL_ADMIN_KEY: 'off' }).localAdminKey, false);
    assert.throws(() => loadConfig({ PLUMB_LOCAL_ADMIN_KEY: 'no' }), /PLUMB_LOCAL_ADMIN_KEY must be "on" or "off"/);
  });

  it('takes a DuckDB memory limit as a size, refusing what DuckDB would not run on', () => {
    assert.equal(loadConfig({}).duckdbMemoryLimit, undefined);
    for (const size of ['512MB', '64MiB', '2GB', '16GiB', '900000KB']) assert.equal(loadConfig({ PLUMB_DUCKDB_MEMORY_LIMIT: size }).duckdbMemoryLimit, size);
    for (const size of ['512', '10MB', '0GB', '1TB', '2 GB', '-1GB', '512mb; SET x']) {
      assert.throws(() => loadConfig({ PLUMB_DUCKDB_MEMORY_LIMIT: size }), /PLUMB_DUCKDB_MEMORY_LIMIT/, size);
    }
  });

  it('refuses a MALLOC_ARENA_MAX glibc would silently ignore', () => {
    for (const n of ['1', '2', '16', '']) assert.doesNotThrow(() => loadConfig({ MALLOC_ARENA_MAX: n }), n);
    for (const n of ['two', '0', '-1', '2.5', '2 ']) {
      assert.throws(() => loadConfig({ MALLOC_ARENA_MAX: n }), /MALLOC_ARENA_MAX must be a whole number of malloc arenas/, n);
    }
  });
});
