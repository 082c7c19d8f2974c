// GET /v1/account and GET /v1/token.

import type { FastifyInstance } from 'fastify';
import { principalOf } from './access.js';
import { presentAccount, presentToken } from './present.js';
import { accountObject, tokenObject } from './schemas.js';

export function accountRoutes(app: FastifyInstance): void {
  app.get('/account', {
    config: { access: 'full' },
    schema: { tags: ['Account'], summary: 'The account the token belongs to', response: { 200: accountObject } },
    handler: async (request) => presentAccount(principalOf(request).account),
  });

  app.get('/token', {
    config: { access: 'token' },
    schema: { tags: ['Account'], summary: 'The token making the request', response: { 200: tokenObject } },
    handler: async (request) => presentToken(principalOf(request).token),
  });
}
