// Versioned schema migrations for the PostgreSQL MetaStore (scale-out mode). Several processes may start at
// once: an advisory lock lets one migrate while the others wait, then find nothing left to do.

import type { PgDatabase } from './database.js';

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
];

// Any constant shared by every Plumb process: the key of the migration lock.
const MIGRATION_LOCK = 74_201_661;

/** Brings the schema up to the newest version; returns the versions it applied. */
export async function migratePostgres(db: PgDatabase): Promise<number[]> {
  // One transaction on one pooled client: the lock is held until every pending migration has committed.
  return db.transaction(async (q) => {
    await q.exec('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK]);
    await q.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL)',
    );
    const done = new Set((await q.rows<{ version: number }>('SELECT version FROM schema_migrations')).map((r) => r.version));
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
