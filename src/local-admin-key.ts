// The local admin key: a random secret the server writes into its data directory at every start, readable by its
// own user only, so that the `plumb` CLI on the same machine (and same user) administers it without
// PLUMB_ADMIN_TOKEN. Whoever can read that directory can read the database file beside it anyway; the server
// keeps only the key's SHA-256 and accepts it on /admin only over a loopback connection. Beside it the server
// writes the address it listens on, so that the CLI run from the same directory finds it whatever PORT it has.

import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import { join } from 'node:path';
import { constantTimeEqual, hashToken } from './domain/secrets.js';

export const LOCAL_ADMIN_KEY_FILE = 'local-admin.key';
/** The server's address as a client on this machine reaches it (one line, `http://127.0.0.1:8080`). */
export const LOCAL_SERVER_FILE = 'local-server.url';

/**
 * The address a client on this machine uses for a server listening on `host`:`port`: 0.0.0.0 and :: listen on
 * every interface, loopback among them, and are no address to connect to.
 */
export function localServerUrl(host: string, port: number): string {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  let connect = bare;
  if (bare === '' || bare === '0.0.0.0') connect = '127.0.0.1';
  else if (bare === '::') connect = '[::1]';
  else if (isIP(bare) === 6) connect = `[${bare}]`;
  return `http://${connect}:${port}`;
}

/** The address the server using `dataDir` wrote at its start, or undefined (none running, or written by none). */
export function readLocalServerUrl(dataDir: string): string | undefined {
  let text: string;
  try {
    text = readFileSync(join(dataDir, LOCAL_SERVER_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
  try {
    const url = new URL(text);
    return /^https?:$/.test(url.protocol) && url.pathname === '/' ? url.origin : undefined;
  } catch {
    return undefined;
  }
}

export interface LocalAdminKey {
  /** Whether `presented` is this start's key. */
  matches(presented: string): boolean;
}

export interface SavableLocalAdminKey extends LocalAdminKey {
  /**
   * Writes the key to `dataDir/local-admin.key` (mode 0600, replaced atomically). Called once the process owns
   * the data directory, so a second server refused at start cannot overwrite the running one's key.
   */
  save(dataDir: string): Promise<void>;
  /** Removes the saved file (at shutdown): the key of a stopped server should not lie around. */
  remove(): Promise<void>;
}

/** A key that exists only in memory (tests). */
export function localAdminKeyOf(secret: string): LocalAdminKey {
  const digest = hashToken(secret);
  return { matches: (presented) => constantTimeEqual(hashToken(presented), digest) };
}

/** A fresh random key, not yet written anywhere. */
export function newLocalAdminKey(): SavableLocalAdminKey {
  const secret = `plumb_local_${randomBytes(32).toString('base64url')}`;
  const { matches } = localAdminKeyOf(secret);
  let saved: string | undefined;
  return {
    matches,
    async save(dataDir) {
      const path = join(dataDir, LOCAL_ADMIN_KEY_FILE);
      await mkdir(dataDir, { recursive: true });
      const temporary = `${path}.${process.pid}.tmp`;
      await writeFile(temporary, `${secret}\n`, { mode: 0o600 });
      await rename(temporary, path);
      saved = path;
    },
    async remove() {
      if (saved) await rm(saved, { force: true });
    },
  };
}

/**
 * Writes the address the server listens on, once it listens (so PORT=0's chosen port too), for the CLI run from the
 * same directory; replaced atomically.
 */
export async function saveLocalServerUrl(dataDir: string, url: string): Promise<void> {
  const path = join(dataDir, LOCAL_SERVER_FILE);
  const temporary = `${path}.${process.pid}.tmp`;
  await writeFile(temporary, `${url}\n`, { mode: 0o644 });
  await rename(temporary, path);
}

/** Removes the written address (at shutdown, and at start until this server listens). */
export async function removeLocalServerUrl(dataDir: string): Promise<void> {
  await rm(join(dataDir, LOCAL_SERVER_FILE), { force: true });
}

/** A socket address on this machine: 127.0.0.0/8, ::1, or IPv4 loopback mapped into IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}
