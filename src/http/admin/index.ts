// /admin: instance administration (DESIGN.md section 4), guarded by PLUMB_ADMIN_TOKEN and off without it.

import type { Readable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { TokenAuthenticator } from '../../auth/token-authenticator.js';
import { notFound, unauthenticated, ValidationError, FieldErrorCollector } from '../../domain/errors.js';
import { newTokenSecret } from '../../domain/ids.js';
import { passwordProblem } from '../../domain/passwords.js';
import { constantTimeEqual, hashPassword, hashToken } from '../../domain/secrets.js';
import { formatTimestamp, isTimeZone, parseTimestamp } from '../../domain/time.js';
import type { Ingest } from '../../ingest/ingest.js';
import { isLoopback, type LocalAdminKey } from '../../local-admin-key.js';
import type { UsageMeter } from '../../limits/usage-meter.js';
import type { Account, AccountPatch, EventStore, MetaStore, SubscriptionStatus, TokenRecord } from '../../store/types.js';
import { holdConnection, type ImportService } from '../peers/import-service.js';
import { backupRoutes } from './backup.js';
import { importRoutes } from './imports.js';
import { adminReportEmailRoutes, type AdminReportEmailDeps } from './report-emails.js';
import { presentDeleted, presentToken } from '../v1/present.js';
import { coerceFormBody, isIntegerText, storedIntegerId } from '../validation.js';
import { checkAbilities } from '../token-abilities.js';

export interface AdminOptions {
  adminToken: string | undefined;
  /** Also accepted, over loopback connections only: the key the server wrote for the CLI (src/local-admin-key.ts). */
  localAdminKey?: LocalAdminKey | undefined;
  meta: MetaStore;
  auth: TokenAuthenticator;
  usage: UsageMeter;
  ingest: Ingest;
  /** The embedded store's backup (/admin/backup). */
  events: EventStore;
  /** Other products' exports (/admin/imports). */
  imports: ImportService;
  /** Email reports sent now (/admin/report-emails); without them that route says mail is not configured. */
  reportEmails?: AdminReportEmailDeps | undefined;
}

const accountFields = {
  name: { type: 'string', minLength: 1, maxLength: 255 },
  email: { type: 'string', minLength: 3, maxLength: 255, pattern: '^[^\\s@]+@[^\\s@]+$' },
  timezone: { type: 'string', maxLength: 64 },
  tier: { type: 'integer', minimum: 1, maximum: 6 },
  subscription_status: { type: 'string', enum: ['active', 'lapsed'] },
} as const;
// Read as text and judged by accountOr404: a number beyond the id column's range must not reach the database.
const accountIdParams = { type: 'object', properties: { id: { type: 'string' } }, required: ['id'] } as const;
const tokenBody = {
  type: 'object',
  properties: {
    name: { type: 'string', minLength: 1, maxLength: 255 },
    abilities: { type: 'array', minItems: 1, maxItems: 100, items: { type: 'string', maxLength: 64 } },
    expires_at: { type: ['string', 'null'] },
    for_cli: { type: 'boolean' },
  },
  required: ['name', 'abilities'],
} as const;

interface AccountBody {
  name?: string;
  email?: string;
  timezone?: string;
  tier?: number;
  subscription_status?: SubscriptionStatus;
}
interface TokenBody {
  name: string;
  abilities: string[];
  expires_at?: string | null;
  /** The CLI's token for one command (src/cli/acting.ts): left out of the token lists, so it expires within the hour. */
  for_cli?: boolean;
}

/** The longest a token the CLI makes for itself lives, whatever expiry the request asks (src/cli/acting.ts asks as much). */
const CLI_TOKEN_MS = 3_600_000;

const presentAdminAccount = (a: Account) => ({
  id: a.id,
  object: 'account',
  name: a.name,
  email: a.email,
  timezone: a.timezone,
  tier: a.tier,
  subscription_status: a.subscriptionStatus,
  created_at: formatTimestamp(a.createdAt),
  updated_at: formatTimestamp(a.updatedAt),
});

const presentAdminToken = (t: TokenRecord) => ({
  id: t.id,
  ...presentToken(t),
  revoked_at: t.revokedAt ? formatTimestamp(t.revokedAt) : null,
});

export async function adminApi(app: FastifyInstance, { adminToken, localAdminKey, meta, auth, usage, ingest, events, imports, reportEmails }: AdminOptions): Promise<void> {
  app.addHook('onRequest', async (request) => {
    const presented = /^Bearer +(\S+)$/i.exec(request.headers.authorization?.trim() ?? '')?.[1];
    // The raw socket's address, never X-Forwarded-For: the local key is for this machine's own user.
    if (presented && localAdminKey && isLoopback(request.raw.socket.remoteAddress) && localAdminKey.matches(presented)) return;
    if (!adminToken) throw notFound('The admin API is disabled: set PLUMB_ADMIN_TOKEN to enable it');
    if (!presented) throw unauthenticated('Missing admin token: send Authorization: Bearer $PLUMB_ADMIN_TOKEN');
    if (!constantTimeEqual(presented, adminToken)) throw unauthenticated('Invalid admin token');
  });
  app.addHook('preValidation', async (request) => {
    coerceFormBody(request);
  });

  /** The account a path's id names: text that is no integer is the documented 400, any other id without an account a 404. */
  const accountOr404 = async (idText: string) => {
    const id = storedIntegerId(idText);
    if (id === undefined && !isIntegerText(idText)) throw ValidationError.of('id', 'must be an integer');
    const account = id === undefined ? undefined : await meta.getAccount(id);
    if (!account) throw notFound('Account not found');
    return account;
  };
  const checkTimezone = (tz: string | undefined) => {
    if (tz !== undefined && !isTimeZone(tz)) throw ValidationError.of('timezone', 'is not a time zone of the TZ database');
  };

  app.get('/accounts', async () => (await meta.listAccounts()).map(presentAdminAccount));

  // Imports: one request, or several chunks sharing an `X-Plumb-Import-Id` so visits continue across chunks, sent
  // one after another or several at once, numbered by `X-Plumb-Import-Seq` (1, 2, ...) to be taken in order. The
  // body reaches the handler as the request stream (never read whole on the event loop; its size is capped there).
  app.addContentTypeParser(['application/x-ndjson', 'application/jsonl', 'text/plain', 'application/octet-stream'], (_request, payload, done) =>
    done(null, payload),
  );
  app.post('/import', async (request, reply) => {
    const body = request.body as Readable | undefined;
    if (!body || typeof body.pipe !== 'function') {
      throw ValidationError.of('body', 'must be NDJSON (Content-Type: application/x-ndjson), one hit per line');
    }
    const header = (name: string) => {
      const v = request.headers[name];
      return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
    };
    const importId = header('x-plumb-import-id');
    if (importId !== undefined && importId.length > 100) throw ValidationError.of('x-plumb-import-id', 'is too long');
    const firstLineText = header('x-plumb-first-line') ?? '1';
    if (!/^\d{1,12}$/.test(firstLineText)) throw ValidationError.of('x-plumb-first-line', 'must be a line number');
    const seqText = header('x-plumb-import-seq');
    if (seqText !== undefined && !/^[1-9]\d{0,8}$/.test(seqText)) throw ValidationError.of('x-plumb-import-seq', 'must be a chunk number from 1');
    if (seqText !== undefined && importId === undefined) throw ValidationError.of('x-plumb-import-seq', 'needs X-Plumb-Import-Id');
    // A numbered chunk may wait for its predecessors before its body is read: as long as they take once they have
    // come, CHUNK_WAIT_MS for one that has not (ChunkOrder).
    if (seqText !== undefined) holdConnection(request, reply);
    const result = await ingest.importChunk(importId, body, Number(firstLineText), seqText === undefined ? undefined : Number(seqText));
    await ingest.flush();
    return result;
  });

  // Other products' exports (Umami's raw events), streamed; listed and deleted by import id.
  await app.register(importRoutes, { meta, imports });
  await app.register(adminReportEmailRoutes, { meta, reportEmails });
  await app.register(backupRoutes, { events, ingest, usage, auth });

  app.post<{ Body: AccountBody }>('/accounts', {
    schema: { body: { type: 'object', properties: accountFields, required: ['name', 'email'] } },
    handler: async (request) => {
      const b = request.body;
      checkTimezone(b.timezone);
      const account = await meta.createAccount({
        name: b.name!,
        email: b.email!,
        timezone: b.timezone ?? 'UTC',
        tier: b.tier ?? 1,
        subscriptionStatus: b.subscription_status ?? 'active',
      });
      return presentAdminAccount(account);
    },
  });

  app.get<{ Params: { id: string } }>('/accounts/:id', {
    schema: { params: accountIdParams },
    handler: async (request) => presentAdminAccount(await accountOr404(request.params.id)),
  });

  app.post<{ Params: { id: string }; Body: AccountBody }>('/accounts/:id', {
    schema: { params: accountIdParams, body: { type: 'object', properties: accountFields } },
    handler: async (request) => {
      const b = request.body;
      const { id } = await accountOr404(request.params.id);
      checkTimezone(b.timezone);
      const patch: AccountPatch = {
        name: b.name,
        email: b.email,
        timezone: b.timezone,
        tier: b.tier,
        subscriptionStatus: b.subscription_status,
      };
      const account = await meta.updateAccount(id, patch);
      // Plans apply immediately (SPEC.md section 8): drop this process's cached copy now.
      auth.forgetAccount(id);
      return presentAdminAccount(account!);
    },
  });

  // The password of the account's owner login (docs/dashboard.md). Setting it ends that person's sessions.
  app.put<{ Params: { id: string }; Body: { password: string } }>('/accounts/:id/password', {
    schema: {
      params: accountIdParams,
      body: { type: 'object', properties: { password: { type: 'string' } }, required: ['password'] },
    },
    handler: async (request) => {
      const account = await accountOr404(request.params.id);
      const problem = passwordProblem(request.body.password);
      if (problem) throw ValidationError.of('password', problem);
      const ended = await meta.setPasswordHash(account.id, await hashPassword(request.body.password));
      return { ...presentAdminAccount(account), password_set: true, sessions_ended: ended };
    },
  });

  app.get<{ Params: { id: string } }>('/accounts/:id/usage', {
    schema: { params: accountIdParams },
    handler: async (request) => {
      const { id } = await accountOr404(request.params.id);
      await usage.flush(); // include what this process counted but has not written yet
      const months = await meta.getUsage(id);
      return {
        object: 'usage',
        account_id: id,
        data: months.map((m) => ({ month: m.month, api_requests: m.apiRequests })),
      };
    },
  });

  app.post<{ Params: { id: string }; Body: TokenBody }>('/accounts/:id/tokens', {
    schema: { params: accountIdParams, body: tokenBody },
    handler: async (request) => {
      const account = await accountOr404(request.params.id);
      const b = request.body;
      const errors = new FieldErrorCollector();
      await checkAbilities(meta, account.id, b.abilities, errors);
      let expiresAt: Date | null = null;
      if (b.expires_at) {
        expiresAt = parseTimestamp(b.expires_at) ?? null;
        if (!expiresAt) errors.add('expires_at', 'must be a UTC timestamp in YYYY-MM-DD HH:MM:SS format');
      }
      errors.throwIfAny();
      // No list shows the CLI's token, so nobody would see one left behind by a CLI that died: it ends by itself.
      if (b.for_cli) {
        const latest = new Date(Date.now() + CLI_TOKEN_MS);
        if (!expiresAt || expiresAt > latest) expiresAt = latest;
      }
      const secret = newTokenSecret();
      const token = await meta.createToken({
        accountId: account.id,
        name: b.name,
        abilities: [...new Set(b.abilities)],
        hash: hashToken(secret),
        expiresAt,
        forCli: b.for_cli === true,
      });
      return { ...presentAdminToken(token), token: secret };
    },
  });

  app.get<{ Params: { id: string } }>('/accounts/:id/tokens', {
    schema: { params: accountIdParams },
    handler: async (request) => {
      const { id } = await accountOr404(request.params.id);
      await auth.flushLastUsed(); // so last_used_at is current in the listing
      const tokens = await meta.listTokens(id);
      return { object: 'list', url: request.url.split('?')[0], has_more: false, data: tokens.map(presentAdminToken) };
    },
  });

  app.delete<{ Params: { id: string; token_id: string } }>('/accounts/:id/tokens/:token_id', {
    schema: { params: { ...accountIdParams, properties: { ...accountIdParams.properties, token_id: { type: 'string' } } } },
    handler: async (request) => {
      const { id } = await accountOr404(request.params.id);
      const revoked = await meta.revokeToken(id, request.params.token_id);
      if (!revoked) throw notFound('Token not found or already revoked');
      auth.forgetToken(request.params.token_id);
      return presentDeleted(request.params.token_id, 'token');
    },
  });
}
