// Which server the CLI talks to (PLUMB_URL; else the PORT and HOST the server reads; else the address the server
// on this machine wrote beside its local admin key; else the default) and who it is to that server: the
// administrator (PLUMB_ADMIN_TOKEN, or else the local admin key that the server on this machine wrote into its data
// directory) and, for the commands /v1 can serve, an API token (PLUMB_API_TOKEN).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_ADMIN_KEY_FILE, LOCAL_SERVER_FILE, localServerUrl, readLocalServerUrl } from '../local-admin-key.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';
/** The server's own defaults (src/config.ts), for PORT without HOST and HOST without PORT. */
const DEFAULT_PORT = 8080;
const DEFAULT_HOST = '0.0.0.0';

export interface Credentials {
  /** The server, without a trailing slash. */
  url: string;
  /** Where `url` came from, in words for the message when the server cannot be reached. */
  urlSource: string;
  admin: string | undefined;
  /** Where `admin` came from, for messages when the server refuses it. */
  adminSource: 'PLUMB_ADMIN_TOKEN' | 'local key' | undefined;
  localKeyPath: string;
  apiToken: string | undefined;
}

/** A server on this machine: only to such a server is the local admin key ever sent. */
export function isLocalUrl(url: string): boolean {
  let host: string;
  try {
    host = new URL(url).hostname;
  } catch {
    return false;
  }
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}

function readKey(path: string): string | undefined {
  try {
    const key = readFileSync(path, 'utf8').trim();
    return /^\S{20,200}$/.test(key) ? key : undefined;
  } catch {
    return undefined; // no server has started with this data directory (or we may not read it)
  }
}

/**
 * The server's address, in this order: PLUMB_URL, said for the CLI alone; else PORT and HOST, read as the server
 * reads them (an explicit setting beats a file that a crashed server may have left); else the address the server
 * using this data directory wrote at its start; else the server's default.
 */
function serverUrl(env: NodeJS.ProcessEnv, dataDir: string): { url: string; source: string } {
  const plumbUrl = env.PLUMB_URL?.trim();
  if (plumbUrl) return { url: plumbUrl.replace(/\/+$/, ''), source: 'set by PLUMB_URL' };
  const port = env.PORT?.trim() || undefined;
  const host = env.HOST?.trim() || undefined;
  // PORT=0 has the system pick the server's port: nothing here can know it.
  const portNumber = port !== undefined && /^\d{1,5}$/.test(port) && Number(port) <= 65535 ? Number(port) : undefined;
  if ((portNumber !== undefined && portNumber !== 0) || (port === undefined && host !== undefined)) {
    return {
      url: localServerUrl(host ?? DEFAULT_HOST, portNumber ?? DEFAULT_PORT),
      source: 'made from PORT/HOST, as the server reads them (PLUMB_URL overrides them)',
    };
  }
  const written = readLocalServerUrl(dataDir);
  if (written !== undefined) {
    return { url: written, source: `the one the server wrote to ${join(dataDir, LOCAL_SERVER_FILE)} at its start (PLUMB_URL overrides it)` };
  }
  return { url: DEFAULT_URL, source: 'the default (set PLUMB_URL, or PORT/HOST as the server has them)' };
}

export function credentials(env: NodeJS.ProcessEnv): Credentials {
  const dataDir = env.PLUMB_DATA_DIR || 'data';
  const { url, source } = serverUrl(env, dataDir);
  const localKeyPath = join(dataDir, LOCAL_ADMIN_KEY_FILE);
  const fromEnv = env.PLUMB_ADMIN_TOKEN || undefined;
  const local = fromEnv === undefined && isLocalUrl(url) ? readKey(localKeyPath) : undefined;
  return {
    url,
    urlSource: source,
    admin: fromEnv ?? local,
    adminSource: fromEnv ? 'PLUMB_ADMIN_TOKEN' : local ? 'local key' : undefined,
    localKeyPath,
    apiToken: env.PLUMB_API_TOKEN || undefined,
  };
}

/** Said when nothing answers at the address, after the reason: where the address came from. */
export const unreachableHint = (c: Credentials) => `is it running? The address is ${c.urlSource}`;

/** Why an admin command cannot run, in words that say what to do. */
export function noAdminMessage(c: Credentials): string {
  return (
    `this command needs the server's administrator, and neither PLUMB_ADMIN_TOKEN nor a local admin key ` +
    `(${c.localKeyPath}) is available. Run plumb on the server's machine, as the user that started Plumb, ` +
    `from the directory it was started in (or set PLUMB_DATA_DIR to its data directory), or set PLUMB_ADMIN_TOKEN`
  );
}

/** Said after the server refused the administrator credential. */
export function refusedAdminHint(c: Credentials): string {
  return c.adminSource === 'local key'
    ? ` (the local admin key ${c.localKeyPath} belongs to another start or another server than ${c.url}: ` +
        `is ${c.url} the server that uses this data directory? That address is ${c.urlSource})`
    : '';
}
