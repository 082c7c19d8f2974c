// First start: on an empty store, create the owner account and its full-access token (DESIGN.md section 4).

import { newTokenSecret } from './domain/ids.js';
import { hashToken } from './domain/secrets.js';
import type { Account, MetaStore } from './store/types.js';

export interface Bootstrapped {
  account: Account;
  /** The random token to print once; undefined when the operator chose it (PLUMB_BOOTSTRAP_TOKEN). */
  shownToken: string | undefined;
}

/**
 * Returns what it created, or undefined when the store is already set up: a restart never adds an account or a
 * token. The account and its token are two writes; if a first start died between them, the owner account has
 * never had a token at all, and the next start finishes the job instead of leaving the owner locked out.
 */
export async function bootstrap(meta: MetaStore, chosenToken: string | undefined): Promise<Bootstrapped | undefined> {
  const [first] = await meta.listAccounts();
  if (first && (await meta.listTokens(first.id)).length > 0) return undefined;
  const account =
    first ??
    (await meta.createAccount({ name: 'Owner', email: 'owner@localhost', timezone: 'UTC', tier: 1, subscriptionStatus: 'active' }));
  const secret = chosenToken ?? newTokenSecret();
  await meta.createToken({ accountId: account.id, name: 'Owner token', abilities: ['*'], hash: hashToken(secret), expiresAt: null });
  return { account, shownToken: chosenToken ? undefined : secret };
}

/**
 * An address this machine's browser can open for the one the server listens on: a wildcard host (0.0.0.0, ::)
 * is no address to open, and 127.0.0.1 always reaches the server from its own machine (a machine's name may
 * not resolve, in a container say), as the "Plumb listening on" line says too.
 */
export function openableAddress(listening: string): string {
  return listening.replace(/^(https?:\/\/)(0\.0\.0\.0|\[::\])(?=:|\/|$)/, '$1127.0.0.1');
}

/**
 * What the first start prints: the owner token and the address of /setup, where that token sets the owner's
 * email and password, then the dashboard's and the script's addresses. They are PLUMB_PUBLIC_URL's when set
 * (the address people open Plumb at, behind a proxy say), else the listening address.
 */
export function firstStartBanner(created: Bootstrapped, listening: string, publicUrl?: string): string {
  const base = publicUrl ?? openableAddress(listening);
  const token = created.shownToken
    ? `  Owner API token (shown once, store it now): ${created.shownToken}`
    : '  Owner API token: the value of PLUMB_BOOTSTRAP_TOKEN';
  return [
    `Plumb created the first account ("${created.account.name}", id ${created.account.id}).`,
    token,
    `  Set up your dashboard login: open ${base}/setup and paste the token`,
    `  Dashboard and API: ${base}`,
    `  Tracking script: <script src="${base}/script.js" data-site="SITE_ID" defer></script>`,
  ].join('\n');
}
