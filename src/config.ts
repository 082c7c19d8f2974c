// Configuration from the environment, validated once at start with messages an operator can act on.

import { resolve } from 'node:path';

export interface Config {
  port: number;
  host: string;
  dataDir: string;
  /** Enables /admin when set. */
  adminToken: string | undefined;
  /** The first owner token's value on an empty store; random when unset. */
  bootstrapToken: string | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Scale-out backends (reserved: the embedded store is the only mode this version runs). */
  databaseUrl: string | undefined;
  clickhouseUrl: string | undefined;
  redisUrl: string | undefined;
}

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
  const redisUrl = url('REDIS_URL', ['redis', 'rediss']);
  const scaleOut = ['DATABASE_URL', 'CLICKHOUSE_URL', 'REDIS_URL'].filter((n) => text(n) !== undefined);
  if (scaleOut.length > 0) {
    problems.push(
      `${scaleOut.join(', ')} ${scaleOut.length > 1 ? 'are' : 'is'} set, but this version of Plumb runs only on the ` +
        'embedded store; unset scale-out variables to start',
    );
  }

  const config: Config = {
    port,
    host: text('HOST') ?? '0.0.0.0',
    dataDir: resolve(text('PLUMB_DATA_DIR') ?? './data'),
    adminToken: secret('PLUMB_ADMIN_TOKEN'),
    bootstrapToken: secret('PLUMB_BOOTSTRAP_TOKEN'),
    logLevel,
    databaseUrl,
    clickhouseUrl,
    redisUrl,
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}
