// The local admin key: a random secret the server writes into its data directory at every start, readable by its
// own user only, so that the `plumb` CLI on the same machine (and same user) administers it without
// PLUMB_ADMIN_TOKEN. Whoever can read that directory can read the database file beside it anyway; the server
// keeps only the key's SHA-256 and accepts it on /admin only over a loopback connection.

import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { constantTimeEqual, hashToken } from './domain/secrets.js';

export const LOCAL_ADMIN_KEY_FILE = 'local-admin.key';

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

/** A socket address on this machine: 127.0.0.0/8, ::1, or IPv4 loopback mapped into IPv6. */
export function isLoopback(address: string | undefined): boolean {
  if (!address) return false;
  return address === '::1' || /^(::ffff:)?127\./.test(address);
}
