// The help text of each `plumb` command, shown by `plumb help COMMAND` and `plumb COMMAND --help`.

const CONNECTION = `Connection:
  PLUMB_URL          the server. Without it: PORT and HOST as the server reads them (port 8080 and host
                     0.0.0.0, which means 127.0.0.1, when only one is set); without those, the address the
                     running server wrote to PLUMB_DATA_DIR/local-server.url (default ./data) once it listened;
                     else http://127.0.0.1:8080`;
const ADMIN = `${CONNECTION}
  PLUMB_ADMIN_TOKEN  the admin token the server was started with. Not needed on the server's own machine:
                     the CLI then reads the local admin key the server writes at every start
                     (PLUMB_DATA_DIR/local-admin.key, default ./data), as the user that started it`;
const API_OR_ADMIN = `${ADMIN}
  PLUMB_API_TOKEN    an API token of the account (from the dashboard's API settings); used instead of the
                     administrator when set`;

const TEXTS: ReadonlyArray<readonly [string, string]> = [
  ['account', `plumb account COMMAND: the server's accounts (administrator only)

  account create --name NAME --email EMAIL [--timezone ZONE] [--tier 1-6]
  account list
  account update ID [--name NAME] [--email EMAIL] [--timezone ZONE] [--tier 1-6] [--status active|lapsed]
  account usage ID
  account password ID [--password-stdin]

Run "plumb help account COMMAND" for one of them.

${ADMIN}`],
  ['account create', `plumb account create --name NAME --email EMAIL [--timezone ZONE] [--tier 1-6] [--json]

Creates an account. ZONE is a TZ database name (default UTC); the tier sets the API limits (default 1).

${ADMIN}`],
  ['account list', `plumb account list [--json]

Lists every account of the server with its email, time zone, tier and subscription status.

${ADMIN}`],
  ['account update', `plumb account update ID [--name NAME] [--email EMAIL] [--timezone ZONE] [--tier 1-6]
                    [--status active|lapsed] [--json]

Changes an account; a new tier or status applies at once.

${ADMIN}`],
  ['account usage', `plumb account usage ID [--json]

API requests the account made per month (each counts as a pageview toward its plan).

${ADMIN}`],
  ['account password', `plumb account password ID [--password-stdin]

Sets the account's dashboard login password (at least 10 characters). On a terminal it asks twice without
showing what you type; with --password-stdin it reads the password from standard input (one trailing newline
is dropped). Setting it logs the account out everywhere.

${ADMIN}`],
  ['token', `plumb token COMMAND: API tokens of an account (administrator only)

  token create --account ID --name NAME --ability ABILITY [--ability ABILITY ...] [--expires-at TIME]
  token list --account ID
  token revoke --account ID TOKEN_ID

Run "plumb help token COMMAND" for one of them.

${ADMIN}`],
  ['token create', `plumb token create --account ID --name NAME --ability ABILITY [--ability ABILITY ...]
                   [--expires-at "YYYY-MM-DD HH:MM:SS"] [--json]

Creates an API token and prints its secret once. ABILITY is * (everything the account can do),
all-sites-readonly, read:SITE_ID or manage:SITE_ID.

${ADMIN}`],
  ['token list', `plumb token list --account ID [--json]

Lists the account's tokens (never their secrets) with abilities, last use, expiry and revocation.

${ADMIN}`],
  ['token revoke', `plumb token revoke --account ID TOKEN_ID [--json]

Revokes a token: it stops working at once on this server, within 3 s on every other process.

${ADMIN}`],
  ['site', `plumb site COMMAND: the sites of an account

  site list [--account ID]
  site create --name NAME [--timezone ZONE] [--domain HOSTS] [--account ID]
  site show SITE_ID [--account ID]
  site update SITE_ID [--name NAME] [--timezone ZONE] [--sharing none|private|public] [--domain HOSTS] ...
  site delete SITE_ID [--yes] [--account ID]

With PLUMB_API_TOKEN these use that token's account through /v1; without it, the administrator acts for
--account (default 1, the owner). Run "plumb help site COMMAND" for one of them.

${API_OR_ADMIN}`],
  ['site list', `plumb site list [--account ID] [--json]

Lists the sites: id (the tracking code), name, time zone and sharing.

${API_OR_ADMIN}`],
  ['site create', `plumb site create --name NAME [--timezone ZONE] [--domain HOSTS] [--account ID] [--json]

Creates a site and prints its script tag (with SPA tracking, data-spa="auto") and its report's address.
ZONE is a TZ database name; the default is the account's time zone. HOSTS are the site's hostnames,
comma-separated (example.com,www.example.com): tags of other trackers (Plausible's data-domain) find the site
by them.

${API_OR_ADMIN}`],
  ['site show', `plumb site show SITE_ID [--account ID] [--json]

Shows one site: name, time zone, sharing, its script tag and its report's address.

${API_OR_ADMIN}`],
  ['site update', `plumb site update SITE_ID [--name NAME] [--timezone ZONE] [--sharing none|private|public]
                  [--password-stdin] [--multi-domain combined|separate|off] [--domain HOSTS]
                  [--umami-website-id UUID] [--plausible-script-id ID] [--account ID] [--json]

Changes what is given and keeps the rest (POST /v1/sites/SITE_ID). --sharing private asks for the share
password (twice, on a terminal) or reads it from standard input with --password-stdin; --password-stdin alone
changes the password. --multi-domain combined or separate lets the site track several domains, reported
together or each on its own; off, one. HOSTS are the site's hostnames, comma-separated; --domain "" removes
them. --umami-website-id is the id of Umami's tag, --plausible-script-id the XXXXXXXX of Plausible's
pa-XXXXXXXX.js (docs/collection.md); "" removes either.

${API_OR_ADMIN}`],
  ['site delete', `plumb site delete SITE_ID [--yes] [--account ID] [--json]

Deletes the site with its goals, milestones and every hit, for good. On a terminal it shows the site and asks
first; --yes deletes without asking (scripts). Without --yes and without a terminal to ask on, it refuses.

${API_OR_ADMIN}`],
  ['import', `plumb import FILE [--json]
plumb import umami|plausible|fathom FILE --site SITE_ID [--json]

Brings history into Plumb (administrator only):

  import FILE                                 NDJSON hits: one JSON object per line
  import umami FILE --site SITE_ID            Umami's raw events (CSV, or Umami Cloud's .csv.gz), streamed
  import plausible FILE --site SITE_ID        Plausible CE's export zip, as daily aggregates
  import fathom ZIP_OR_FOLDER --site SITE_ID  Fathom's CSV export (zip or unpacked folder), as daily aggregates
  import list --site SITE_ID                  the site's imports
  import delete IMPORT_ID                     an import and every hit it brought

plumb import FILE reads NDJSON (type, site_id, timestamp, url, referrer, user_agent, ip, and name/value for
events; see docs/collection.md). Hits are sent oldest first in chunks, with a progress bar on a terminal. Lines
that cannot be imported are listed by line number; exit code 1 when nothing could be imported. Run
"plumb help import umami" (plausible, fathom, list, delete) for the others; docs/collection.md says how to
export from each product.

${ADMIN}`],
  ['import umami', `plumb import umami FILE --site SITE_ID [--json]

Imports Umami's raw events into the site, keeping Umami's visits and its browser, OS, device and country: Umami
Cloud's data export (Account, Data, Export: a .csv.gz, read as it is) or, from your own Umami, website_event
joined with session written as CSV by psql's \\copy (the query is in docs/collection.md, "Importing from Umami").
The file is streamed with a progress bar. Rows that cannot be imported are listed by line number.
Importing the same file again replaces the earlier import; the answer names imports it overlaps in time.

${ADMIN}`],
  ['import plausible', `plumb import plausible FILE --site SITE_ID [--json]

Imports Plausible CE's CSV export (the zip of imported_*.csv tables) into the site as daily aggregates: the site's
daily totals, each page's, source's, browser's, system's, device's and country's, and each custom event's. Reports
add them to recorded hits where they can answer exactly (docs/reports.md, "Imported data"). Bad rows are listed by
file and line; the same export again (its content, however zipped) replaces the earlier import.

${ADMIN}`],
  ['import fathom', `plumb import fathom ZIP_OR_FOLDER --site SITE_ID [--json]

Imports Fathom's CSV export into the site as daily aggregates: its files (Site.csv, Pages.csv, Referrers.csv,
Browsers.csv, Countries.csv, DeviceTypes.csv, Events.csv, or the newer one-file-per-dimension export,
pageviews-site-totals-....csv, pageviews-browser-....csv, ...) as a zip, or the folder they are in, which is
zipped while it is sent. Each hourly row is added to the site's local day; a daily row to its day. Visitors are not imported (hourly counts do not add up to a
day's); docs/collection.md, "Importing from Fathom", says what is. Bad rows are listed by file and line; the same
export again (its content, however zipped: a folder zipped anew is the same) replaces the earlier import.

${ADMIN}`],
  ['import list', `plumb import list --site SITE_ID [--json]

Lists the site's imports: id, kind, file, status, hits imported and rejected, and the time they cover.

${ADMIN}`],
  ['import delete', `plumb import delete IMPORT_ID [--json]

Deletes the import and every hit and visit it brought; recorded hits are kept.

${ADMIN}`],
  ['demo', `plumb demo [--account ID] [--days 30] [--visits-per-day 1000] [--no-share] [--json]

Creates a site called "Demo site" with two goals and a milestone, imports generated traffic for the last
--days days (today's stops now), and prints the report's address. Run again, it replaces the demo it made
before instead of adding one: a fresh demo site gets the traffic, then the old one (a "Demo site" with the
milestone "Launched v2") is deleted with its traffic; the summary names it, and the report's address changes.
The demo site is shared publicly
(read-only, generated data only) so the address opens without logging in; --no-share keeps it private.
The generated traffic includes crawlers on purpose: Plumb leaves bot hits out, and the summary says how many.

On the server's own machine it needs nothing else (it uses the local admin key); elsewhere set
PLUMB_ADMIN_TOKEN.

${ADMIN}`],
  ['backup', `plumb backup DIR [--json]

Asks the running server for a copy of its embedded store (the DuckDB database: accounts, sites, goals, every hit
and visit) as of one moment, in DIR, a new or empty directory on the server's machine (relative to the current
directory when the server is on this one). Collection goes on meanwhile: hits acknowledged before the command
are in the copy, those arriving during it may be, later ones are not. The copy is DIR/plumb.duckdb with
DIR/plumb-backup.json, written last (its size and SHA-256). A full disk fails the backup and removes what it
wrote; the server and its data are unaffected. Scaled out, back up PostgreSQL and ClickHouse with their own tools
(README, "Backup and restore").

${ADMIN}`],
  ['restore', `plumb restore DIR [--json]

Puts the backup in DIR in place as the store of PLUMB_DATA_DIR (default ./data), with the server stopped: it
refuses while a server runs on that data directory. It checks the backup whole first (size and SHA-256), then
moves the store it replaces (plumb.duckdb, its .wal and the hit log) into
PLUMB_DATA_DIR/before-restore-YYYYMMDD-HHMMSS/ (delete it once the restored server is as expected). Hits
recorded after the backup are not in the restored store. A backup from a newer release is refused when the
server starts. Run on the server's machine, as the user that runs it.`],
  ['help', `plumb help [COMMAND]

Shows the list of commands, or the help of one (also: plumb COMMAND --help).`],
];

const HELP = new Map<string, string>(TEXTS);
const GROUPS = ['account', 'token', 'site', 'import', 'demo', 'backup', 'restore', 'help'];

/** The help of the longest known command among the first words (`site create --x` -> "site create"). */
export function helpFor(words: readonly string[]): string | undefined {
  for (let n = Math.min(2, words.length); n >= 1; n--) {
    const text = HELP.get(words.slice(0, n).join(' '));
    if (text !== undefined) return text;
  }
  return undefined;
}

/** The known command among the first words (`site create` of `site create --x`, `import` of `import a.ndjson`). */
export function commandOf(words: readonly string[]): string | undefined {
  for (let n = Math.min(2, words.length); n >= 1; n--) {
    const key = words.slice(0, n).join(' ');
    if (HELP.has(key)) return key;
  }
  return undefined;
}

/**
 * What to print after a usage mistake instead of the whole list: the command's usage (the first paragraph of its
 * help, or a group's list of commands) and where its help is.
 */
export function usageAfterMistake(words: readonly string[]): string {
  const command = commandOf(words);
  if (command === undefined || command === 'help') {
    return `commands: ${GROUPS.join(', ')}\nsee \`plumb help\``;
  }
  const text = HELP.get(command)!;
  const [first = ''] = text.split('\n\n');
  const group = command.split(' ')[0]!;
  const lines = /^plumb \S+ COMMAND:/.test(first)
    ? text.split('\n').filter((l) => l.startsWith(`  ${group} `)).map((l) => `plumb ${l.trim()}`)
    // One usage line: a synopsis wrapped for the help is joined again.
    : first.split(/\n(?=plumb )/).map((l) => l.replace(/\s*\n\s*/g, ' '));
  return `${lines.map((l, i) => `${i === 0 ? 'usage: ' : '       '}${l}`).join('\n')}\nsee \`plumb help ${group}\``;
}
