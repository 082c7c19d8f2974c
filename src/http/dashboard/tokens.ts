// The API settings page's JSON routes: list, create and revoke the account's tokens (SPEC.md section 5 says the
// owner makes them in the API settings; /v1 has no endpoint for it). An owner's or admin's session plus the
// anti-CSRF header only.

import type { FastifyInstance } from 'fastify';
import type { SessionManager } from '../../auth/sessions.js';
import type { TokenAuthenticator } from '../../auth/token-authenticator.js';
import { FieldErrorCollector, notFound } from '../../domain/errors.js';
import { newTokenSecret } from '../../domain/ids.js';
import { hashToken } from '../../domain/secrets.js';
import { formatTimestamp } from '../../domain/time.js';
import { checkAbilities } from '../token-abilities.js';
import type { MetaStore, TokenRecord } from '../../store/types.js';
import { memberForApi } from './guard.js';

export interface TokenDeps {
  meta: MetaStore;
  auth: TokenAuthenticator;
  sessions: SessionManager;
}

const ts = (d: Date | null) => (d ? formatTimestamp(d) : null);
const present = (t: TokenRecord) => ({
  id: t.id,
  object: 'token',
  name: t.name,
  abilities: t.abilities,
  created_at: formatTimestamp(t.createdAt),
  last_used_at: ts(t.lastUsedAt),
  expires_at: ts(t.expiresAt),
  revoked_at: ts(t.revokedAt),
});

const createBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    abilities: { type: 'array', minItems: 1, maxItems: 200, items: { type: 'string', maxLength: 64 } },
  },
  required: ['name', 'abilities'],
  additionalProperties: false,
} as const;

export function tokenRoutes(app: FastifyInstance, { meta, auth, sessions }: TokenDeps): void {
  app.get('/dashboard/api/tokens', async (request) => {
    const { account } = await memberForApi(request, sessions, { role: 'admin' });
    await auth.flushLastUsed(); // so "last used" is current
    const tokens = await meta.listTokens(account.id);
    return { object: 'list', data: tokens.map(present) };
  });

  app.post<{ Body: { name: string; abilities: string[] } }>('/dashboard/api/tokens', {
    schema: { body: createBody },
    // The session is checked before the body is judged, so a stranger learns nothing from validation errors.
    preValidation: async (request) => {
      await memberForApi(request, sessions, { role: 'admin' });
    },
    handler: async (request) => {
      const { account } = await memberForApi(request, sessions, { role: 'admin' });
      const { name, abilities } = request.body;
      const errors = new FieldErrorCollector();
      if (name.trim() === '') errors.add('name', 'must not be blank');
      await checkAbilities(meta, account.id, abilities, errors);
      errors.throwIfAny();
      const secret = newTokenSecret();
      const token = await meta.createToken({
        accountId: account.id,
        name: name.trim(),
        abilities: [...new Set(abilities)],
        hash: hashToken(secret),
        expiresAt: null,
      });
      return { ...present(token), token: secret };
    },
  });

  app.delete<{ Params: { token_id: string } }>('/dashboard/api/tokens/:token_id', async (request) => {
    const { account } = await memberForApi(request, sessions, { role: 'admin' });
    if (!(await meta.revokeToken(account.id, request.params.token_id))) throw notFound('Token not found or already revoked');
    auth.forgetToken(request.params.token_id);
    return { id: request.params.token_id, object: 'token', deleted: true };
  });
}
