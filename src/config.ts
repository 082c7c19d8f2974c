// Configuration from the environment, validated once at start with messages an operator can act on.

import { isIP } from 'node:net';
import { resolve } from 'node:path';
import { redisClusterMode } from './store/redis/cluster-url.js';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Enables /admin when set. */
  adminToken: string | undefined;
  /** The first owner token's value on an empty store; random when unset. */
  bootstrapToken: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** PLUMB_TRUST_PROXY: whose X-Forwarded-For to believe for the client IP (Fastify's trustProxy). */
  trustProxy: boolean | number | string;
  /** PLUMB_EXCLUDED_HOSTS: page hosts whose hits are dropped (`*.example.com` for subdomains). */
  excludedHosts: string[];
  /** PLUMB_RATE_LIMITS: false turns off the three per-account limits (private installs). */
  rateLimits: boolean;
  /** PLUMB_LOCAL_ADMIN_KEY: false stops writing the CLI's local admin key (src/local-admin-key.ts). */
  localAdminKey: boolean;
  /** Scale-out (all three set): metadata and salts in PostgreSQL, hits in ClickHouse, limits and visits in Redis. */
  databaseUrl: string | undefined;
  clickhouseUrl: string | undefined;
  /** CLICKHOUSE_CLUSTER: a cluster of ClickHouse's remote_servers to spread the event tables over; one server when unset. */
  clickhouseCluster: string | undefined;
  /** Shared rate-limit state (and, in scale-out, visit state); without it, limits are kept in process memory. */
  redisUrl: string | undefined;
  /** Key prefix in Redis, so several Plumb installations can share one Redis. */
  redisPrefix: string;
  /** Outgoing mail (invitations, password resets, email reports): PLUMB_SMTP_URL and PLUMB_MAIL_FROM. */
  mail: { smtpUrl: string; from: string } | undefined;
  /** PLUMB_PUBLIC_URL: the address people reach this server at, for links in emails (never taken from a request). */
  publicUrl: string | undefined;
  /** PLUMB_DUCKDB_MEMORY_LIMIT: DuckDB's memory_limit for the embedded store (`512MB`, `2GiB`); DuckDB's default when unset. */
  duckdbMemoryLimit: string | undefined;
}

/** A size DuckDB's memory_limit accepts, at least 64 MB of it (less and DuckDB cannot run the schema's work). */
const MEMORY_SIZE_RE = /^(?:[1-9]\d{0,6}(?:KB|KiB)|(?:6[4-9]|[7-9]\d|[1-9]\d{2,5})(?:MB|MiB)|[1-9]\d{0,3}(?:GB|GiB))$/;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
  }
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const MIN_SECRET_LENGTH = 24;

/** Reads and checks every variable; throws ConfigError listing all problems at once. */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const problems: string[] = [];
  const text = (name: string) => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };

  let port = 8080;
  const portText = text('PORT');
  if (portText !== undefined) {
    port = Number(portText);
    if (!/^\d+$/.test(portText) || port < 0 || port > 65535) {
      problems.push(`PORT must be an integer from 0 to 65535 (got "${portText}")`);
    }
  }

  const secret = (name: string) => {
    const v = text(name);
    if (v !== undefined && v.length < MIN_SECRET_LENGTH) {
      problems.push(`${name} must be at least ${MIN_SECRET_LENGTH} characters (use e.g. \`openssl rand -hex 24\`)`);
    }
    if (v !== undefined && /\s/.test(v)) problems.push(`${name} must not contain whitespace`);
    return v;
  };

  const logLevel = (text('PLUMB_LOG_LEVEL') ?? 'info') as Config['logLevel'];
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`PLUMB_LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const url = (name: string, schemes: string[]) => {
    const v = text(name);
    if (v === undefined) return undefined;
    let scheme: string | undefined;
    try {
      scheme = new URL(v).protocol.replace(/:$/, '');
    } catch {
      problems.push(`${name} is not a URL`);
      return v;
    }
    if (!schemes.includes(scheme)) problems.push(`${name} must start with ${schemes.map((s) => `${s}://`).join(' or ')}`);
    return v;
  };
  const databaseUrl = url('DATABASE_URL', ['postgres', 'postgresql']);
  const clickhouseUrl = url('CLICKHOUSE_URL', ['http', 'https']);
  // Named in SQL as it is (ON CLUSTER, Distributed(...)): a name ClickHouse reads unquoted. Whether the server
  // defines it is checked when the store opens (an unknown name fails the start there, naming the known ones).
  const clickhouseCluster = text('CLICKHOUSE_CLUSTER');
  if (clickhouseCluster !== undefined && !/^[A-Za-z_][A-Za-z0-9_]*$/.test(clickhouseCluster)) {
    problems.push(`CLICKHOUSE_CLUSTER must be a cluster name of ClickHouse's remote_servers: letters, digits and underscores (got "${clickhouseCluster}")`);
  }
  if (clickhouseCluster !== undefined && clickhouseUrl === undefined) problems.push('CLICKHOUSE_CLUSTER is set but CLICKHOUSE_URL is not: set CLICKHOUSE_URL to a node of the cluster');
  const redisUrl = url('REDIS_URL', ['redis', 'rediss']);
  let redisParsed: URL | undefined;
  try {
    redisParsed = redisUrl === undefined ? undefined : new URL(redisUrl);
  } catch {
    // said above: not a URL
  }
  if (redisUrl !== undefined && redisParsed) {
    const cluster = redisClusterMode(redisUrl);
    if (cluster === undefined) problems.push(`REDIS_URL's cluster parameter must be on or off (got "${redisParsed.searchParams.get('cluster')}")`);
    // ioredis would quietly drop the database number for a cluster, which has database 0 only.
    const db = redisParsed.pathname.replace(/^\//, '');
    if (cluster === true && db !== '' && db !== '0') problems.push(`REDIS_URL names database ${db}, but a Redis Cluster has only database 0: remove /${db}`);
  }
  // Scale-out needs all three: hits in ClickHouse without shared metadata, or shared metadata with hits in one
  // process's embedded file, or several processes without shared visit state would each be wrong in its own way.
  const scaleOut = { DATABASE_URL: databaseUrl, CLICKHOUSE_URL: clickhouseUrl, REDIS_URL: redisUrl };
  if (databaseUrl !== undefined || clickhouseUrl !== undefined) {
    const missing = Object.entries(scaleOut).filter(([, v]) => v === undefined).map(([k]) => k);
    if (missing.length > 0) {
      problems.push(
        `scale-out mode needs DATABASE_URL (PostgreSQL: metadata), CLICKHOUSE_URL (ClickHouse: hits) and REDIS_URL ` +
          `(Redis: visits and limits) together; ${missing.join(' and ')} ${missing.length > 1 ? 'are' : 'is'} missing. ` +
          'Unset DATABASE_URL and CLICKHOUSE_URL to use the embedded store instead',
      );
    }
  }

  // PLUMB_TRUST_PROXY: false (default: the socket address is the client), true (any proxy), a number of hops,
  // or a comma-separated list of proxy addresses and CIDR ranges.
  let trustProxy: boolean | number | string = false;
  const proxyText = text('PLUMB_TRUST_PROXY');
  if (proxyText !== undefined) {
    if (/^(true|false)$/i.test(proxyText)) trustProxy = proxyText.toLowerCase() === 'true';
    else if (/^\d{1,2}$/.test(proxyText)) trustProxy = Number(proxyText);
    else {
      const entries = proxyText.split(',').map((e) => e.trim());
      const bad = entries.filter((e) => {
        const [address, bits, extra] = e.split('/');
        if (extra !== undefined || !address || isIP(address) === 0) return true;
        return bits !== undefined && !(/^\d{1,3}$/.test(bits) && Number(bits) <= (isIP(address) === 4 ? 32 : 128));
      });
      if (bad.length > 0) {
        problems.push(`PLUMB_TRUST_PROXY must be true, false, a hop count or addresses/CIDR ranges (bad: ${bad.join(', ')})`);
      }
      trustProxy = entries.join(',');
    }
  }

  const excludedHosts = (text('PLUMB_EXCLUDED_HOSTS') ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase())
    .filter((h) => h !== '');
  for (const host of excludedHosts) {
    if (!/^(\*\.)?[a-z0-9.-]+$/.test(host)) problems.push(`PLUMB_EXCLUDED_HOSTS: "${host}" is not a host name`);
  }

  const limitsText = (text('PLUMB_RATE_LIMITS') ?? 'on').toLowerCase();
  if (!['on', 'off'].includes(limitsText)) problems.push(`PLUMB_RATE_LIMITS must be "on" or "off" (got "${limitsText}")`);
  const localKeyText = (text('PLUMB_LOCAL_ADMIN_KEY') ?? 'on').toLowerCase();
  if (!['on', 'off'].includes(localKeyText)) problems.push(`PLUMB_LOCAL_ADMIN_KEY must be "on" or "off" (got "${localKeyText}")`);

  // Mail: the SMTP server, the sender, and the public address links in messages point to. The last is not taken
  // from requests: a forged Host header would otherwise send password-reset links to another site.
  const smtpUrl = url('PLUMB_SMTP_URL', ['smtp', 'smtps']);
  const mailFrom = text('PLUMB_MAIL_FROM');
  const publicUrl = url('PLUMB_PUBLIC_URL', ['http', 'https'])?.replace(/\/+$/, '');
  if (mailFrom !== undefined && !/^([^<>]*<[^\s@<>]+@[^\s@<>]+>|[^\s@<>]+@[^\s@<>]+)$/.test(mailFrom)) {
    problems.push(`PLUMB_MAIL_FROM must be an address (plumb@example.com) or a name and address ("Plumb <plumb@example.com>")`);
  }
  if (smtpUrl !== undefined && mailFrom === undefined) problems.push('PLUMB_SMTP_URL needs PLUMB_MAIL_FROM, the sender address of outgoing mail');
  if (smtpUrl !== undefined && publicUrl === undefined) {
    problems.push('PLUMB_SMTP_URL needs PLUMB_PUBLIC_URL, the address (https://plumb.example.com) links in emails point to');
  }
  if (smtpUrl === undefined && mailFrom !== undefined) problems.push('PLUMB_MAIL_FROM is set but PLUMB_SMTP_URL is not: set both to send mail');
  const memoryLimit = text('PLUMB_DUCKDB_MEMORY_LIMIT');
  if (memoryLimit !== undefined && !MEMORY_SIZE_RE.test(memoryLimit)) {
    problems.push(`PLUMB_DUCKDB_MEMORY_LIMIT must be a size such as 512MB or 2GiB (got "${memoryLimit}")`);
  }
  // Read by glibc's malloc when the process starts (`npm start` sets 2), not by Plumb; glibc silently ignores a
  // value it cannot parse, so a typo would quietly bring back the per-thread arenas it was set to remove.
  const arenaMax = env.MALLOC_ARENA_MAX;
  if (arenaMax !== undefined && arenaMax !== '' && !/^[1-9]\d{0,3}$/.test(arenaMax)) {
    problems.push(`MALLOC_ARENA_MAX must be a whole number of malloc arenas from 1 to 9999, such as 2 (got "${arenaMax}")`);
  }

  // Read by `npm start` before the server starts (scripts/server-node-flags.mjs), which takes any other value as
  // unset: a typo would quietly bring back the choice it was set to override.
  const singleThreadedGc = env.PLUMB_SINGLE_THREADED_GC;
  if (singleThreadedGc !== undefined && singleThreadedGc !== '' && singleThreadedGc !== 'on' && singleThreadedGc !== 'off') {
    problems.push(`PLUMB_SINGLE_THREADED_GC must be on or off, or unset to decide by the number of cores (got "${singleThreadedGc}")`);
  }

  // Plumb puts a hash tag in every key (a site, a limit's key) so that each script's keys share a Redis Cluster slot;
  // a brace in the prefix would take the tag's place and put every key of the installation in one slot.
  const redisPrefix = text('PLUMB_REDIS_PREFIX') ?? 'plumb:';
  if (/[{}]/.test(redisPrefix)) problems.push(`PLUMB_REDIS_PREFIX must not contain { or } (got "${redisPrefix}"): they would make every key hash to one Redis Cluster slot`);

  const config: Config = {
    port,
    host: text('HOST') ?? '0.0.0.0',
    dataDir: resolve(text('PLUMB_DATA_DIR') ?? './data'),
    adminToken: secret('PLUMB_ADMIN_TOKEN'),
    bootstrapToken: secret('PLUMB_BOOTSTRAP_TOKEN'),
    logLevel,
    trustProxy,
    excludedHosts,
    rateLimits: limitsText !== 'off',
    localAdminKey: localKeyText !== 'off',
    databaseUrl,
    clickhouseUrl,
    clickhouseCluster,
    redisUrl,
    redisPrefix,
    mail: smtpUrl !== undefined && mailFrom !== undefined ? { smtpUrl, from: mailFrom } : undefined,
    publicUrl,
    duckdbMemoryLimit: memoryLimit,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
