// Who the CLI is to the server: the administrator (PLUMB_ADMIN_TOKEN, or else the local admin key that the
// server on this machine wrote into its data directory) and, for the commands /v1 can serve, an API token
// (PLUMB_API_TOKEN).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LOCAL_ADMIN_KEY_FILE } from '../local-admin-key.js';

export const DEFAULT_URL = 'http://127.0.0.1:8080';

export interface Credentials {
  /** The server, without a trailing slash. */
  url: string;
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

export function credentials(env: NodeJS.ProcessEnv): Credentials {
  const url = (env.PLUMB_URL || DEFAULT_URL).replace(/\/+$/, '');
  const localKeyPath = join(env.PLUMB_DATA_DIR || 'data', LOCAL_ADMIN_KEY_FILE);
  const fromEnv = env.PLUMB_ADMIN_TOKEN || undefined;
  const local = fromEnv === undefined && isLocalUrl(url) ? readKey(localKeyPath) : undefined;
  return {
    url,
    admin: fromEnv ?? local,
    adminSource: fromEnv ? 'PLUMB_ADMIN_TOKEN' : local ? 'local key' : undefined,
    localKeyPath,
    apiToken: env.PLUMB_API_TOKEN || undefined,
  };
}

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
        'is PLUMB_URL the server that uses this data directory?)'
    : '';
}
