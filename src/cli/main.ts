// The `plumb` command line: accounts and tokens through the running server's /admin API.

import { parseArgs } from 'node:util';
import { AdminClient, AdminClientError } from './admin-client.js';

const USAGE = `Usage: plumb <command> [options]

Commands:
  account create --name NAME --email EMAIL [--timezone ZONE] [--tier 1-6]
  account list
  account update ID [--name NAME] [--email EMAIL] [--timezone ZONE] [--tier 1-6] [--status active|lapsed]
  account usage ID        API requests counted per month (each counts as a pageview)
  token create --account ID --name NAME --ability ABILITY [--ability ABILITY ...] [--expires-at "YYYY-MM-DD HH:MM:SS"]
      ABILITY is *, all-sites-readonly, read:SITE_ID or manage:SITE_ID
  token list --account ID
  token revoke --account ID TOKEN_ID

Options:
  --json   print the server's JSON answer instead of a summary

Environment:
  PLUMB_URL          the server (default http://127.0.0.1:8080)
  PLUMB_ADMIN_TOKEN  the admin token the server was started with
`;

type Out = (line: string) => void;

interface AccountJson {
  id: number;
  name: string;
  email: string;
  timezone: string;
  tier: number;
  subscription_status: string;
}
interface TokenJson {
  id: string;
  name: string;
  abilities: string[];
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
  token?: string;
}

class UsageError extends Error {}

const OPTIONS = {
  name: { type: 'string' },
  email: { type: 'string' },
  timezone: { type: 'string' },
  tier: { type: 'string' },
  status: { type: 'string' },
  account: { type: 'string' },
  ability: { type: 'string', multiple: true },
  'expires-at': { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
} as const;

function need<T>(value: T | undefined, flag: string): T {
  if (value === undefined) throw new UsageError(`missing ${flag}`);
  return value;
}

function integer(text: string, what: string): number {
  if (!/^\d+$/.test(text)) throw new UsageError(`${what} must be a positive integer`);
  return Number(text);
}

const describeAccount = (a: AccountJson) =>
  `account ${a.id}: ${a.name} <${a.email}>, time zone ${a.timezone}, tier ${a.tier}, ${a.subscription_status}`;
const describeToken = (t: TokenJson) =>
  `token ${t.id}: ${t.name} [${t.abilities.join(', ')}]` +
  (t.revoked_at ? `, revoked ${t.revoked_at}` : '') +
  (t.expires_at ? `, expires ${t.expires_at}` : '') +
  `, last used ${t.last_used_at ?? 'never'}`;

/** Runs one command; returns the process exit code. */
export async function run(argv: string[], env: NodeJS.ProcessEnv, out: Out, err: Out): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    err(`plumb: ${(e as Error).message}\n\n${USAGE}`);
    return 2;
  }
  const { values: o, positionals } = parsed;
  const [group, action, ...rest] = positionals;
  if (o.help || !group) {
    out(USAGE);
    return group || o.help ? 0 : 2;
  }
  const client = new AdminClient(env.PLUMB_URL ?? 'http://127.0.0.1:8080', env.PLUMB_ADMIN_TOKEN);
  const show = (json: unknown, summary: string) => out(o.json ? JSON.stringify(json, null, 2) : summary);

  try {
    switch (`${group} ${action ?? ''}`) {
      case 'account create': {
        const body = {
          name: need(o.name, '--name'),
          email: need(o.email, '--email'),
          ...(o.timezone ? { timezone: o.timezone } : {}),
          ...(o.tier ? { tier: integer(o.tier, '--tier') } : {}),
        };
        const a = await client.request<AccountJson>('POST', '/admin/accounts', body);
        show(a, `created ${describeAccount(a)}`);
        return 0;
      }
      case 'account list': {
        const list = await client.request<AccountJson[]>('GET', '/admin/accounts');
        show(list, list.map(describeAccount).join('\n') || 'no accounts');
        return 0;
      }
      case 'account update': {
        const id = integer(need(rest[0], 'the account ID'), 'the account ID');
        const body = {
          ...(o.name ? { name: o.name } : {}),
          ...(o.email ? { email: o.email } : {}),
          ...(o.timezone ? { timezone: o.timezone } : {}),
          ...(o.tier ? { tier: integer(o.tier, '--tier') } : {}),
          ...(o.status ? { subscription_status: o.status } : {}),
        };
        const a = await client.request<AccountJson>('POST', `/admin/accounts/${id}`, body);
        show(a, `updated ${describeAccount(a)}`);
        return 0;
      }
      case 'account usage': {
        const id = integer(need(rest[0], 'the account ID'), 'the account ID');
        const usage = await client.request<{ data: { month: string; api_requests: number }[] }>('GET', `/admin/accounts/${id}/usage`);
        show(usage, usage.data.map((m) => `${m.month}: ${m.api_requests} API requests`).join('\n') || 'no API requests yet');
        return 0;
      }
      case 'token create': {
        const id = integer(need(o.account, '--account'), '--account');
        const body = {
          name: need(o.name, '--name'),
          abilities: need(o.ability, '--ability'),
          ...(o['expires-at'] ? { expires_at: o['expires-at'] } : {}),
        };
        const t = await client.request<TokenJson>('POST', `/admin/accounts/${id}/tokens`, body);
        show(t, `created ${describeToken(t)}\n\nAPI token (shown once, store it now):\n${t.token}`);
        return 0;
      }
      case 'token list': {
        const id = integer(need(o.account, '--account'), '--account');
        const list = await client.request<{ data: TokenJson[] }>('GET', `/admin/accounts/${id}/tokens`);
        show(list, list.data.map(describeToken).join('\n') || 'no tokens');
        return 0;
      }
      case 'token revoke': {
        const id = integer(need(o.account, '--account'), '--account');
        const tokenId = need(rest[0], 'the TOKEN_ID');
        const res = await client.request('DELETE', `/admin/accounts/${id}/tokens/${encodeURIComponent(tokenId)}`);
        show(res, `revoked token ${tokenId}`);
        return 0;
      }
      default:
        throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(`plumb: ${e.message}\n\n${USAGE}`);
      return 2;
    }
    if (e instanceof AdminClientError) {
      err(`plumb: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
