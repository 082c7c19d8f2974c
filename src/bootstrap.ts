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
