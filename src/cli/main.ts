// The `plumb` command line: accounts, tokens, imports, the demo and backups through the running server's /admin API;
// sites through /v1; restores on the stopped server's data directory.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { projectRoot } from '../project-root.js';
import { withV1, type V1Call } from './acting.js';
import { AdminClient, AdminClientError } from './admin-client.js';
import { credentials, isLocalUrl, noAdminMessage, refusedAdminHint, unreachableHint } from './credentials.js';
import { helpFor, usageAfterMistake } from './help.js';
import type { ImportSummary } from './import.js';
import type { PeerImportJson } from './peer-import.js';
import { describeSite, describeSiteLine, listSites, reportUrl, scriptTag, type SiteJson } from './sites.js';

// The imports, the demo and the prompts are loaded by the commands that use them (import(), below): loading them
// all cost every command, `plumb help` too, about 0.05 s of CPU time more (0.22-0.25 s instead of 0.17-0.20 s).

const USAGE = `Usage: plumb <command> [options]

Commands:
  account create --name NAME --email EMAIL [--timezone ZONE] [--tier 1-6]
  account list
  account update ID [--name NAME] [--email EMAIL] [--timezone ZONE] [--tier 1-6] [--status active|lapsed]
  account usage ID        API requests counted per month (each counts as a pageview)
  account password ID [--password-stdin]
                          set the account's dashboard login password (asked twice, or read from standard input)
  token create --account ID --name NAME --ability ABILITY [--ability ABILITY ...] [--expires-at "YYYY-MM-DD HH:MM:SS"]
      ABILITY is *, all-sites-readonly, read:SITE_ID or manage:SITE_ID
  token list --account ID
  token revoke --account ID TOKEN_ID
  site list [--account ID]
  site create --name NAME [--timezone ZONE] [--domain HOSTS] [--account ID]
  site show SITE_ID [--account ID]
  site update SITE_ID [--name NAME] [--timezone ZONE] [--sharing none|private|public] [...]
  site delete SITE_ID [--yes]  asks first on a terminal; --yes for scripts
  import FILE             import NDJSON hits (one JSON object per line; see the README)
  import umami FILE --site SITE_ID
                          import Umami's raw events (CSV, see docs/collection.md), streamed
  import plausible FILE --site SITE_ID
                          import Plausible CE's export zip as daily aggregates
  import fathom ZIP_OR_FOLDER --site SITE_ID
                          import Fathom's CSV export (zip or unpacked folder) as daily aggregates
  import list --site SITE_ID
  import delete IMPORT_ID delete an import and every hit it brought
  demo [--account ID] [--days 30] [--visits-per-day 1000] [--no-share]
                          create (or replace) the demo site, import a generated month of traffic, print the report's address
  backup DIR              copy the running server's embedded store into DIR (new or empty), collection going on
  restore DIR             put a backup in place as PLUMB_DATA_DIR's store (default ./data), the server stopped
  help [COMMAND]          this list, or one command's help (also: plumb COMMAND --help)

Options:
  --json      print the server's JSON answer instead of a summary
  --version   print the version of plumb

Environment:
  PLUMB_URL          the server. Without it: PORT and HOST as the server reads them (HOST 0.0.0.0 or unset:
                     127.0.0.1); without those, the address the running server wrote to
                     PLUMB_DATA_DIR/local-server.url (default ./data) once it listened; else http://127.0.0.1:8080
  PLUMB_ADMIN_TOKEN  the admin token the server was started with; on the server's machine the CLI uses the
                     local admin key instead (PLUMB_DATA_DIR/local-admin.key, default ./data)
  PLUMB_API_TOKEN    an API token: the site commands use it instead of the administrator
`;

type Out = (line: string) => void;

export interface CliIo {
  out: Out;
  err: Out;
  /** Reads the new password (standard input, or a prompt on a terminal); tests pass their own. */
  readPassword?: (fromStdin: boolean, what?: string) => Promise<string>;
  /**
   * Asks a yes-or-no question on the terminal (false unless the answer is yes); tests pass their own. Without it
   * the CLI asks only when standard input is a terminal.
   */
  confirm?: (question: string) => Promise<boolean>;
  /** Where the progress bar goes (a terminal) */
  progress?: NodeJS.WriteStream;
}

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

class UsageError extends Error {
  /** Whether the command's usage follows the message. */
  constructor(message: string, readonly withUsage = true) {
    super(message);
  }
}

/** A usage mistake in words: the message, the command's usage line and where its help is (never the whole list). */
const mistake = (message: string, words: readonly string[]) => `plumb: ${message}\n${usageAfterMistake(words)}`;

/** The reading bar counts the file in MiB. */
const MIB = 1024 * 1024;

const OPTIONS = {
  name: { type: 'string' },
  email: { type: 'string' },
  timezone: { type: 'string' },
  tier: { type: 'string' },
  status: { type: 'string' },
  account: { type: 'string' },
  ability: { type: 'string', multiple: true },
  'expires-at': { type: 'string' },
  days: { type: 'string' },
  'visits-per-day': { type: 'string' },
  json: { type: 'boolean' },
  'password-stdin': { type: 'boolean' },
  'no-share': { type: 'boolean' },
  domain: { type: 'string' },
  sharing: { type: 'string' },
  'multi-domain': { type: 'string' },
  'umami-website-id': { type: 'string' },
  'plausible-script-id': { type: 'string' },
  yes: { type: 'boolean' },
  site: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
  version: { type: 'boolean' },
} as const;

function need<T>(value: T | undefined, flag: string): T {
  if (value === undefined) throw new UsageError(`missing ${flag}`);
  return value;
}

function oneOf<T extends string>(value: string | undefined, flag: string, allowed: readonly T[]): T | undefined {
  if (value !== undefined && !allowed.includes(value as T)) throw new UsageError(`${flag} must be ${allowed.join(', ')}`);
  return value as T | undefined;
}

/** A SITE_ID argument: the letters of a tracking code, never a path. */
function siteIdArgument(text: string | undefined): string {
  const id = need(text, 'the SITE_ID');
  if (!/^[A-Za-z]{1,20}$/.test(id)) throw new UsageError('SITE_ID is the 8 letters of the site\'s tracking code');
  return id.toUpperCase();
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

function describeImport(s: ImportSummary): string {
  const lines = [`imported ${s.imported} hits, rejected ${s.rejected}`];
  for (const e of s.errors.slice(0, 20)) lines.push(`  line ${e.line}: ${e.message}`);
  if (s.errors.length > 20) lines.push(`  ... and ${s.errors.length - 20} more`);
  return lines.join('\n');
}

function version(): string {
  const pkg = JSON.parse(readFileSync(join(projectRoot(), 'package.json'), 'utf8')) as { version?: unknown };
  return String(pkg.version);
}

/** Runs one command; returns the process exit code. */
export async function run(argv: string[], env: NodeJS.ProcessEnv, out: Out, err: Out, io: Partial<CliIo> = {}): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    // Node's message goes on to explain `--` for positionals starting with a dash: the first sentence says it.
    const message = (e as Error).message.replace(/\. To specify a positional argument[\s\S]*$/, '');
    const words = parseArgs({ args: argv, options: OPTIONS, allowPositionals: true, strict: false }).positionals;
    err(mistake(message, words));
    return 2;
  }
  const { values: o, positionals } = parsed;
  const [group, action, ...rest] = positionals;
  if (o.version) {
    out(`plumb ${version()}`);
    return 0;
  }
  if (group === 'help' || o.help) {
    const words = group === 'help' ? positionals.slice(1) : positionals;
    if (words.length === 0) {
      out(USAGE);
      return 0;
    }
    const text = helpFor(words);
    if (text === undefined) {
      err(mistake(`no command "${words.join(' ')}"`, []));
      return 2;
    }
    out(text);
    return 0;
  }
  if (!group) {
    out(USAGE);
    return 2;
  }
  const creds = credentials(env);
  const client = new AdminClient(creds.url, creds.admin, {
    noAdmin: noAdminMessage(creds),
    refusedAdmin: refusedAdminHint(creds),
    unreachable: unreachableHint(creds),
  });
  const accountOption = () => integer(o.account ?? '1', '--account');
  const siteCall = <R>(work: (call: V1Call) => Promise<R>) => withV1(client, creds.apiToken, accountOption(), 'plumb site', work);
  const show = (json: unknown, summary: string) => out(o.json ? JSON.stringify(json, null, 2) : summary);

  try {
    if (group === 'backup' || group === 'restore') {
      const dir = need(action, 'DIR');
      if (rest.length > 0) throw new UsageError(`${group} takes one DIR`);
      if (group === 'backup') {
        const { backup, describeBackup } = await import('./backup.js');
        const made = await backup(client, dir, isLocalUrl(creds.url));
        if (typeof made === 'string') throw new UsageError(made);
        show(made, describeBackup(made));
        return 0;
      }
      const { describeRestore, restore, RestoreRefused } = await import('./restore.js');
      try {
        const restored = await restore(env.PLUMB_DATA_DIR || 'data', dir);
        show(restored, describeRestore(restored));
        return 0;
      } catch (e) {
        if (!(e instanceof RestoreRefused)) throw e;
        err(`plumb: not restored: ${e.message}`);
        return 1;
      }
    }
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
      case 'account password': {
        const id = integer(need(rest[0], 'the account ID'), 'the account ID');
        const read = io.readPassword ?? (await import('./password.js')).readPassword;
        const password = await read(Boolean(o['password-stdin']));
        const a = await client.request<AccountJson>('PUT', `/admin/accounts/${id}/password`, { password });
        show(a, `set the dashboard password of ${describeAccount(a)}`);
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
      case 'site list': {
        const sites = await siteCall(listSites);
        show({ object: 'list', data: sites }, sites.map(describeSiteLine).join('\n') || 'no sites');
        return 0;
      }
      case 'site create': {
        const body = { name: need(o.name, '--name'), ...(o.timezone ? { timezone: o.timezone } : {}), ...(o.domain ? { domain: o.domain } : {}) };
        const site = await siteCall((call) => call<SiteJson>('POST', '/v1/sites', body));
        show(
          site,
          `created site ${site.id} ("${site.name}"), time zone ${site.timezone}\n\n` +
            `Add this tag to every page of the site:\n${scriptTag(creds.url, site.id)}\n\nReport: ${reportUrl(creds.url, site.id)}`,
        );
        return 0;
      }
      case 'site show': {
        const id = siteIdArgument(rest[0]);
        const site = await siteCall((call) => call<SiteJson>('GET', `/v1/sites/${id}`));
        show(site, describeSite(creds.url, site));
        return 0;
      }
      case 'site update': {
        const id = siteIdArgument(rest[0]);
        const sharing = oneOf(o.sharing, '--sharing', ['none', 'private', 'public'] as const);
        const multiDomain = oneOf(o['multi-domain'], '--multi-domain', ['combined', 'separate', 'off'] as const);
        const body: Record<string, unknown> = {
          ...(o.name !== undefined ? { name: o.name } : {}),
          ...(o.timezone !== undefined ? { timezone: o.timezone } : {}),
          ...(sharing !== undefined ? { sharing } : {}),
          ...(multiDomain === 'off' ? { multi_domain: false } : {}),
          ...(multiDomain === 'combined' || multiDomain === 'separate' ? { multi_domain: true, multi_domain_option: multiDomain } : {}),
          // "" removes them (the API takes '' as null).
          ...(o.domain !== undefined ? { domain: o.domain } : {}),
          ...(o['umami-website-id'] !== undefined ? { umami_website_id: o['umami-website-id'] } : {}),
          ...(o['plausible-script-id'] !== undefined ? { plausible_script_id: o['plausible-script-id'] } : {}),
        };
        if (Object.keys(body).length === 0 && !o['password-stdin']) {
          throw new UsageError('nothing to change: give at least one of --name, --timezone, --sharing, --multi-domain, --domain, --umami-website-id, --plausible-script-id');
        }
        // /v1 wants the share password with every change to private sharing; it is asked, never an argument.
        if (sharing === 'private' || o['password-stdin']) {
          const read = io.readPassword ?? (await import('./password.js')).readPassword;
          body.share_password = await read(Boolean(o['password-stdin']), 'Share password');
        }
        const site = await siteCall((call) => call<SiteJson>('POST', `/v1/sites/${id}`, body));
        show(site, `updated ${describeSite(creds.url, site)}`);
        return 0;
      }
      case 'site delete': {
        const id = siteIdArgument(rest[0]);
        const confirm = io.confirm ?? (process.stdin.isTTY ? (await import('./confirm.js')).askYesNo : undefined);
        // Refused before anything is asked of the server: a script must say --yes.
        if (!o.yes && confirm === undefined) {
          throw new UsageError('not deleting without confirmation: standard input is not a terminal to ask on (add --yes)');
        }
        const deleted = await siteCall(async (call) => {
          const site = await call<SiteJson>('GET', `/v1/sites/${id}`);
          if (!o.yes && !(await confirm!(`Delete site ${site.id} ("${site.name}") with its goals, milestones and every hit? This cannot be undone. [y/N] `))) {
            return undefined;
          }
          return { site, answer: await call<unknown>('DELETE', `/v1/sites/${id}`) };
        });
        if (deleted === undefined) {
          err('plumb: nothing deleted');
          return 1;
        }
        show(deleted.answer, `deleted site ${deleted.site.id} ("${deleted.site.name}") with its goals, milestones and hits`);
        return 0;
      }
      case 'import ': {
        throw new UsageError('missing FILE');
      }
      case 'import umami':
      case 'import plausible':
      case 'import fathom': {
        const file = need(rest[0], 'FILE');
        const siteId = need(o.site, '--site SITE_ID').toUpperCase();
        const { describePeerImport, importPeerFile } = await import('./peer-import.js');
        let result: PeerImportJson;
        try {
          result = await importPeerFile(client, action === 'plausible' || action === 'fathom' ? action : 'umami', file, siteId, io.progress ?? process.stderr);
        } catch (e) {
          if ((e as NodeJS.ErrnoException).code === undefined) throw e;
          err(`plumb: cannot read ${file}: ${(e as Error).message}`);
          return 1;
        }
        show(result, describePeerImport(result));
        return result.imported === 0 && result.rejected > 0 ? 1 : 0;
      }
      case 'import list': {
        const siteId = need(o.site, '--site SITE_ID').toUpperCase();
        const list = await client.request<{ data: PeerImportJson[] }>('GET', `/admin/imports?site_id=${encodeURIComponent(siteId)}`);
        const { describePeerImport } = await import('./peer-import.js');
        show(list, list.data.length === 0 ? 'no imports' : list.data.map(describePeerImport).join('\n'));
        return 0;
      }
      case 'import delete': {
        const id = need(rest[0], 'IMPORT_ID');
        const deleted = await client.request('DELETE', `/admin/imports/${encodeURIComponent(id)}`);
        show(deleted, `import ${id} deleted with its hits`);
        return 0;
      }
      case 'demo ': {
        const accountId = accountOption();
        const days = integer(o.days ?? '30', '--days');
        const perDay = integer(o['visits-per-day'] ?? '1000', '--visits-per-day');
        if (days < 1 || days > 366) throw new UsageError('--days must be from 1 to 366');
        if (perDay < 1 || perDay > 1_000_000) throw new UsageError('--visits-per-day must be from 1 to 1000000');
        const { demo, describeDemo } = await import('./demo.js');
        const result = await demo(client, creds.url, {
          accountId,
          days,
          visitsPerDay: perDay,
          share: !o['no-share'],
          progress: io.progress ?? process.stderr,
        });
        show(result, describeDemo(result, accountId, days));
        return 0;
      }
      default:
        if (group === 'import' && action !== undefined) {
          const { importNdjsonFile, progressBar } = await import('./import.js');
          // The file is indexed before its first line is sent (a second or so for each 300 MB), then sent.
          const reading = progressBar(io.progress ?? process.stderr, 'reading', ' MiB');
          const bar = progressBar(io.progress ?? process.stderr, 'importing');
          let summary: ImportSummary;
          try {
            summary = await importNdjsonFile(
              client,
              action,
              (done, total) => {
                reading.done();
                bar.update(done, total);
              },
              (bytes, size) => reading.update(bytes < size ? Math.floor(bytes / MIB) : Math.ceil(size / MIB), Math.ceil(size / MIB)),
            );
          } catch (e) {
            if (e instanceof AdminClientError) throw e;
            err(`plumb: cannot read ${action}: ${(e as Error).message}`);
            return 1;
          } finally {
            reading.done();
            bar.done();
          }
          show(summary, describeImport(summary));
          return summary.imported === 0 && summary.rejected > 0 ? 1 : 0;
        }
        if (action === undefined && helpFor([group]) !== undefined) throw new UsageError(`"${group}" needs a command:\n\n${helpFor([group])}`, false);
        throw new UsageError(`unknown command "${positionals.join(' ')}"`);
    }
  } catch (e) {
    if (e instanceof UsageError) {
      err(e.withUsage ? mistake(e.message, positionals) : `plumb: ${e.message}`);
      return 2;
    }
    if (e instanceof AdminClientError) {
      err(`plumb: ${e.message}`);
      return 1;
    }
    throw e;
  }
}
