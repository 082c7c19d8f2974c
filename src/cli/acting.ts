// Runs /v1 calls for the CLI: with PLUMB_API_TOKEN when set, otherwise as the administrator through a token that
// lives only for this command (made for the account, revoked when done) so every /v1 rule applies unchanged. That
// token is marked as the CLI's own (for_cli): it is not the account's, so neither the dashboard's token list nor
// /admin's shows it, and the server lets it live an hour at most.

import { formatTimestamp } from '../domain/time.js';
import type { AdminClient } from './admin-client.js';

export type V1Call = <T>(method: string, path: string, body?: unknown) => Promise<T>;

const TEMPORARY_TOKEN_MS = 3_600_000;

export async function withV1<R>(
  client: AdminClient,
  apiToken: string | undefined,
  accountId: number,
  purpose: string,
  work: (call: V1Call) => Promise<R>,
): Promise<R> {
  if (apiToken !== undefined) return work((method, path, body) => client.api(method, path, apiToken, body));
  const temporary = await client.request<{ id: string; token: string }>('POST', `/admin/accounts/${accountId}/tokens`, {
    name: `${purpose} (temporary)`,
    abilities: ['*'],
    expires_at: formatTimestamp(new Date(Date.now() + TEMPORARY_TOKEN_MS)),
    for_cli: true,
  });
  try {
    return await work((method, path, body) => client.api(method, path, temporary.token, body));
  } finally {
    await client.request('DELETE', `/admin/accounts/${accountId}/tokens/${temporary.id}`);
  }
}
