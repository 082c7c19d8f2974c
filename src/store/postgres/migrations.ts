// Versioned schema migrations for the PostgreSQL MetaStore (scale-out mode). Several processes may start at
// once: an advisory lock lets one migrate while the others wait, then find nothing left to do.

import type { PgDatabase } from './database.js';
import { refuseNewerSchema } from '../newer-schema.js';

interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Append only: a released migration is never edited, a change is a new version.
export const PG_MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'accounts, tokens, sites, events, milestones, usage, salts',
    sql: `
      CREATE SEQUENCE insertion_order;
      CREATE TABLE accounts (
        id SERIAL PRIMARY KEY,
        name TEXT NOT NULL,
        email TEXT NOT NULL,
        timezone TEXT NOT NULL,
        tier INTEGER NOT NULL,
        subscription_status TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE tokens (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        version INTEGER NOT NULL,
        abilities TEXT NOT NULL, -- JSON array of strings
        hash TEXT NOT NULL UNIQUE,
        last_used_at TIMESTAMPTZ,
        expires_at TIMESTAMPTZ,
        revoked_at TIMESTAMPTZ,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX tokens_by_account ON tokens (account_id);
      CREATE TABLE sites (
        id TEXT PRIMARY KEY,
        account_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        sharing TEXT NOT NULL,
        share_password_hash TEXT,
        timezone TEXT NOT NULL,
        multi_domain BOOLEAN NOT NULL,
        multi_domain_option TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX sites_by_account ON sites (account_id, created_at, seq);
      CREATE TABLE goals (
        id TEXT PRIMARY KEY,
        site_id TEXT NOT NULL,
        name TEXT NOT NULL,
        currency TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX goals_by_site ON goals (site_id, created_at, seq);
      CREATE TABLE milestones (
        id TEXT PRIMARY KEY,
        site_id TEXT NOT NULL,
        name TEXT NOT NULL,
        milestone_date DATE NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX milestones_by_site ON milestones (site_id, created_at, seq);
      CREATE TABLE api_usage (
        account_id INTEGER NOT NULL,
        month TEXT NOT NULL,
        api_requests BIGINT NOT NULL,
        PRIMARY KEY (account_id, month)
      );
      CREATE TABLE salts (
        day DATE PRIMARY KEY,
        salt TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL
      );
    `,
  },
  {
    version: 2,
    name: 'dashboard logins and sessions',
    sql: `
      CREATE TABLE account_passwords (
        account_id INTEGER PRIMARY KEY,
        password_hash TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE dashboard_sessions (
        id_hash TEXT PRIMARY KEY,
        kind TEXT NOT NULL,
        account_id INTEGER NOT NULL,
        site_id TEXT,
        csrf TEXT NOT NULL,
        binding TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL
      );
      CREATE INDEX dashboard_sessions_by_account ON dashboard_sessions (account_id);
      CREATE INDEX dashboard_sessions_by_expiry ON dashboard_sessions (expires_at);
    `,
  },
  {
    version: 3,
    name: 'site domains and Umami website ids',
    sql: `
      ALTER TABLE sites ADD COLUMN domains TEXT NOT NULL DEFAULT '';
      ALTER TABLE sites ADD COLUMN umami_website_id TEXT;
      CREATE UNIQUE INDEX sites_by_umami_website_id ON sites (umami_website_id);
      CREATE TABLE site_domains (
        domain TEXT PRIMARY KEY,
        site_id TEXT NOT NULL
      );
      CREATE INDEX site_domains_by_site ON site_domains (site_id);
    `,
  },
  {
    version: 4,
    name: 'people: users, memberships and roles, invitations, one-time links, two-factor, report subscriptions',
    sql: `
      CREATE TABLE users (
        id SERIAL PRIMARY KEY,
        email TEXT NOT NULL,
        email_key TEXT NOT NULL UNIQUE,
        password_hash TEXT,
        totp_secret TEXT,
        totp_pending_secret TEXT,
        totp_last_step BIGINT,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE memberships (
        account_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        role TEXT NOT NULL,
        site_ids TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        PRIMARY KEY (account_id, user_id)
      );
      CREATE INDEX memberships_by_user ON memberships (user_id);
      INSERT INTO users (email, email_key, password_hash, created_at, updated_at)
        SELECT DISTINCT ON (lower(a.email)) a.email, lower(a.email), p.password_hash, p.updated_at, p.updated_at
        FROM accounts a JOIN account_passwords p ON p.account_id = a.id ORDER BY lower(a.email), a.id;
      INSERT INTO memberships (account_id, user_id, role, site_ids, created_at)
        SELECT a.id, u.id, 'owner', NULL, p.updated_at
        FROM accounts a JOIN account_passwords p ON p.account_id = a.id JOIN users u ON u.email_key = lower(a.email);
      DROP TABLE account_passwords;
      ALTER TABLE dashboard_sessions ADD COLUMN user_id INTEGER;
      ALTER TABLE dashboard_sessions ADD COLUMN user_agent TEXT;
      UPDATE dashboard_sessions SET user_id = (
        SELECT min(m.user_id) FROM memberships m WHERE m.account_id = dashboard_sessions.account_id AND m.role = 'owner'
      ) WHERE kind = 'owner';
      DELETE FROM dashboard_sessions WHERE kind = 'owner' AND user_id IS NULL;
      CREATE INDEX dashboard_sessions_by_user ON dashboard_sessions (user_id);
      CREATE TABLE account_security (
        account_id INTEGER PRIMARY KEY,
        require_two_factor BOOLEAN NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
      CREATE TABLE invitations (
        id TEXT PRIMARY KEY,
        token_hash TEXT NOT NULL UNIQUE,
        account_id INTEGER NOT NULL,
        email TEXT NOT NULL,
        role TEXT NOT NULL,
        site_ids TEXT,
        invited_by INTEGER NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL,
        accepted_at TIMESTAMPTZ
      );
      CREATE TABLE login_links (
        token_hash TEXT PRIMARY KEY,
        purpose TEXT NOT NULL,
        user_id INTEGER NOT NULL,
        email TEXT,
        created_at TIMESTAMPTZ NOT NULL,
        expires_at TIMESTAMPTZ NOT NULL,
        used_at TIMESTAMPTZ
      );
      CREATE TABLE recovery_codes (
        user_id INTEGER NOT NULL,
        code_hash TEXT NOT NULL,
        used_at TIMESTAMPTZ,
        PRIMARY KEY (user_id, code_hash)
      );
      CREATE TABLE report_subscriptions (
        id TEXT PRIMARY KEY,
        user_id INTEGER NOT NULL,
        account_id INTEGER NOT NULL,
        site_id TEXT NOT NULL,
        frequency TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        UNIQUE (user_id, site_id, frequency)
      );
      CREATE TABLE report_deliveries (
        subscription_id TEXT NOT NULL,
        period TEXT NOT NULL,
        lease_owner TEXT NOT NULL,
        lease_until TIMESTAMPTZ NOT NULL,
        sent_at TIMESTAMPTZ,
        unsubscribe_hash TEXT,
        PRIMARY KEY (subscription_id, period)
      );
      CREATE INDEX report_deliveries_by_unsubscribe ON report_deliveries (unsubscribe_hash);
      `,
  },
  {
    version: 5,
    name: 'origins allowed to embed a site\'s share page',
    sql: `
      CREATE TABLE site_embedding (
        site_id TEXT PRIMARY KEY,
        origins TEXT NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL
      );
    `,
  },
  {
    version: 6,
    name: 'imports',
    sql: `
      CREATE TABLE imports (
        id TEXT PRIMARY KEY,
        site_id TEXT NOT NULL,
        kind TEXT NOT NULL,
        file_name TEXT NOT NULL,
        digest TEXT,
        status TEXT NOT NULL,
        imported BIGINT NOT NULL,
        rejected BIGINT NOT NULL,
        first_hit_at TIMESTAMPTZ,
        last_hit_at TIMESTAMPTZ,
        visit_id_base NUMERIC(20) NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        finished_at TIMESTAMPTZ,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX imports_by_site ON imports (site_id, created_at, seq);
    `,
  },
  {
    version: 7,
    name: 'owners and failures of imports',
    sql: `
      -- A running import's owner (the process running it) and the time it last said it is alive, so that an import
      -- left running by a process that died is found and undone (src/ingest/peer-imports/import-sweeper.ts); and why a failed
      -- import failed. Running imports are found by a partial index: every process looks for them periodically.
      ALTER TABLE imports ADD COLUMN owner TEXT, ADD COLUMN heartbeat_at TIMESTAMPTZ, ADD COLUMN failure TEXT;
      CREATE INDEX imports_running ON imports (created_at) WHERE status = 'running';
    `,
  },  {
    version: 8,
    name: 'tokens the CLI makes for itself',
    sql: `
      -- A token the plumb CLI made to act through /v1 for one command (src/cli/acting.ts): it lives an hour at
      -- most and the token lists leave it out, since it is not the account's.
      ALTER TABLE tokens ADD COLUMN for_cli BOOLEAN NOT NULL DEFAULT false;
    `,
  },
  {
    version: 9,
    name: 'Plausible script ids of sites',
    sql: `
      -- The id of the per-site script of Plausible's current snippet (/js/pa-<id>.js) the site had, case kept, so
      -- that snippet's events find it; one site per id.
      ALTER TABLE sites ADD COLUMN plausible_script_id TEXT;
      CREATE UNIQUE INDEX sites_by_plausible_script_id ON sites (plausible_script_id);
    `,
  },
  {
    version: 10,
    name: 'segments: report filters saved under a name',
    sql: `
      -- A person's set of report filters for one site (src/http/dashboard/segments.ts), theirs only or shared with
      -- the site's account. filters: a JSON array of {property, operator, value[, key]}, checked before it is saved.
      CREATE TABLE segments (
        id TEXT PRIMARY KEY,
        site_id TEXT NOT NULL,
        user_id INTEGER NOT NULL,
        name TEXT NOT NULL,
        shared BOOLEAN NOT NULL,
        filters TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX segments_by_site ON segments (site_id, user_id);
    `,
  },
  {
    version: 11,
    name: 'page_goals: pageview goals (a path or pattern per goal)',
    sql: `
      -- The dashboard's pageview goals (src/http/dashboard/page-goals.ts): a site's visits that viewed a page whose
      -- path matches \`path\` (exact, or with * and **), beside the API's event goals.
      CREATE TABLE page_goals (
        id TEXT PRIMARY KEY,
        site_id TEXT NOT NULL,
        name TEXT NOT NULL,
        path TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX page_goals_by_site ON page_goals (site_id);
    `,
  },
  {
    version: 12,
    name: 'funnels: ordered page and event steps reported per visit',
    sql: `
      -- A site's funnels (src/http/v1/funnels.ts, src/report/funnels.ts). steps: a JSON array of 2 to 8
      -- {type: page|event, value}; filters: a JSON array of /v1 filter objects; both checked before they are saved.
      CREATE TABLE funnels (
        id TEXT PRIMARY KEY,
        site_id TEXT NOT NULL,
        name TEXT NOT NULL,
        steps TEXT NOT NULL,
        filters TEXT NOT NULL,
        created_at TIMESTAMPTZ NOT NULL,
        updated_at TIMESTAMPTZ NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX funnels_by_site ON funnels (site_id);
    `,
  },
];

// Any constant shared by every Plumb process: the key of the migration lock.
const MIGRATION_LOCK = 74_201_661;

/**
 * Brings the schema up to the newest version; returns the versions it applied. Refuses (NewerSchemaError) a
 * database with a version above the newest here, before changing anything: a process of an older release would
 * misread what a newer one wrote (after an upgrade of the other processes, say), and its writes could corrupt it.
 */
export async function migratePostgres(db: PgDatabase): Promise<number[]> {
  // One transaction on one pooled client: the lock is held until every pending migration has committed.
  return db.transaction(async (q) => {
    await q.exec('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    await q.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)',
    );
    const done = new Set((await q.rows<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
    refuseNewerSchema(done, PG_MIGRATIONS.at(-1)!.version, 'PostgreSQL (DATABASE_URL)');
    const ran: number[] = [];
    for (const m of PG_MIGRATIONS) {
      if (done.has(m.version)) continue;
      await q.exec(m.sql);
      await q.exec('INSERT INTO schema_migrations VALUES (?, ?, now())', [m.version, m.name]);
      ran.push(m.version);
    }
    return ran;
  });
}
