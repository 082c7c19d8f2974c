// Versioned schema migrations for the embedded store, applied in order on start, each in its own transaction.

import type { DuckDatabase } from './database.js';
import { NewerSchemaError, refuseNewerSchema } from '../newer-schema.js';

interface Migration {
  version: number;
  name: string;
  sql: string;
}

// Append only: a released migration is never edited, a change is a new version.
export const MIGRATIONS: Migration[] = [
  {
    version: 1,
    name: 'accounts, tokens, sites, events, milestones',
    sql: `
      CREATE SEQUENCE account_ids START 1;
      CREATE SEQUENCE insertion_order START 1;
      CREATE TABLE accounts (
        id INTEGER PRIMARY KEY DEFAULT nextval('account_ids'),
        name VARCHAR NOT NULL,
        email VARCHAR NOT NULL,
        timezone VARCHAR NOT NULL,
        tier INTEGER NOT NULL,
        subscription_status VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
      );
      CREATE TABLE tokens (
        id VARCHAR PRIMARY KEY,
        account_id INTEGER NOT NULL,
        name VARCHAR NOT NULL,
        version INTEGER NOT NULL,
        abilities VARCHAR NOT NULL, -- JSON array of strings
        hash VARCHAR NOT NULL UNIQUE,
        last_used_at TIMESTAMP,
        expires_at TIMESTAMP,
        revoked_at TIMESTAMP,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE TABLE sites (
        id VARCHAR PRIMARY KEY,
        account_id INTEGER NOT NULL,
        name VARCHAR NOT NULL,
        sharing VARCHAR NOT NULL,
        share_password_hash VARCHAR,
        timezone VARCHAR NOT NULL,
        multi_domain BOOLEAN NOT NULL,
        multi_domain_option VARCHAR,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX sites_by_account ON sites (account_id);
      CREATE TABLE goals (
        id VARCHAR PRIMARY KEY,
        site_id VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        currency VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX goals_by_site ON goals (site_id);
      CREATE TABLE milestones (
        id VARCHAR PRIMARY KEY,
        site_id VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        milestone_date DATE NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX milestones_by_site ON milestones (site_id);
    `,
  },
  {
    version: 2,
    name: 'monthly API usage',
    sql: `
      CREATE TABLE api_usage (
        account_id INTEGER NOT NULL,
        month VARCHAR NOT NULL, -- YYYY-MM, UTC
        api_requests BIGINT NOT NULL,
        PRIMARY KEY (account_id, month)
      );
    `,
  },
  {
    version: 3,
    name: 'visitor salts, hits and visits',
    sql: `
      CREATE TABLE salts (
        day DATE PRIMARY KEY, -- the UTC day the salt hashes visitors for
        salt VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL
      );
      -- One row per pageview or event. No identifying data: visitor_id is a salted hash, never an IP or agent.
      CREATE TABLE hits (
        site_id VARCHAR NOT NULL,
        type VARCHAR NOT NULL, -- pageview | event
        ts TIMESTAMP NOT NULL, -- UTC
        visitor_id UBIGINT NOT NULL,
        visit_id UBIGINT NOT NULL,
        hostname VARCHAR NOT NULL,
        pathname VARCHAR NOT NULL,
        referrer_hostname VARCHAR NOT NULL,
        referrer_pathname VARCHAR NOT NULL,
        referrer_source VARCHAR NOT NULL,
        utm_campaign VARCHAR NOT NULL,
        utm_content VARCHAR NOT NULL,
        utm_medium VARCHAR NOT NULL,
        utm_source VARCHAR NOT NULL,
        utm_term VARCHAR NOT NULL,
        ref VARCHAR NOT NULL,
        keyword VARCHAR NOT NULL,
        browser VARCHAR NOT NULL,
        operating_system VARCHAR NOT NULL,
        device_type VARCHAR NOT NULL,
        country_code VARCHAR NOT NULL,
        region VARCHAR NOT NULL,
        state VARCHAR NOT NULL,
        city VARCHAR NOT NULL,
        event_name VARCHAR NOT NULL,
        value BIGINT NOT NULL
      );
      -- The latest state of each visit (rewritten whole when a hit changes it).
      CREATE TABLE visits (
        visit_id UBIGINT PRIMARY KEY,
        site_id VARCHAR NOT NULL,
        visitor_id UBIGINT NOT NULL,
        started_at TIMESTAMP NOT NULL,
        last_seen_at TIMESTAMP NOT NULL,
        entry_page VARCHAR NOT NULL,
        exit_page VARCHAR NOT NULL,
        exit_hostname VARCHAR NOT NULL,
        pageviews INTEGER NOT NULL,
        events INTEGER NOT NULL,
        referrer_hostname VARCHAR NOT NULL,
        referrer_pathname VARCHAR NOT NULL
      );
    `,
  },
  {
    version: 4,
    name: 'first views of pages, for counting distinct visits per page without grouping by visit',
    sql: `
      ALTER TABLE hits ADD COLUMN first_view BOOLEAN DEFAULT false;
      -- Visits written before this version have no flags: reports count their pages from the hits.
      ALTER TABLE visits ADD COLUMN paths_exact BOOLEAN DEFAULT false;
    `,
  },
  {
    version: 5,
    name: 'hit log watermark',
    sql: `
      -- The last hit-log sequence number whose hit is in this database, written with each batch.
      CREATE TABLE hit_log_state (id INTEGER PRIMARY KEY, confirmed_seq BIGINT NOT NULL);
    `,
  },
  {
    version: 6,
    name: 'dashboard logins and sessions',
    sql: `
      -- Kept apart from accounts so that reading an account never carries its password hash along.
      CREATE TABLE account_passwords (
        account_id INTEGER PRIMARY KEY,
        password_hash VARCHAR NOT NULL, -- scrypt$N$r$p$salt$hash
        updated_at TIMESTAMP NOT NULL
      );
      -- Dashboard (owner) and share-page sessions. Only a SHA-256 of the cookie's session id is stored.
      CREATE TABLE dashboard_sessions (
        id_hash VARCHAR PRIMARY KEY,
        kind VARCHAR NOT NULL, -- owner | share
        account_id INTEGER NOT NULL,
        site_id VARCHAR, -- share sessions: the one site they may read
        csrf VARCHAR NOT NULL,
        binding VARCHAR, -- share sessions: digest of the site's sharing settings when granted
        created_at TIMESTAMP NOT NULL,
        expires_at TIMESTAMP NOT NULL
      );
    `,
  },
  {
    version: 7,
    name: 'attribution belongs to the visit',
    sql: `
      -- The visit's attribution (its first hit's), for resuming visits after a restart.
      ALTER TABLE visits ADD COLUMN referrer_source VARCHAR DEFAULT '';
      ALTER TABLE visits ADD COLUMN utm_campaign VARCHAR DEFAULT '';
      ALTER TABLE visits ADD COLUMN utm_content VARCHAR DEFAULT '';
      ALTER TABLE visits ADD COLUMN utm_medium VARCHAR DEFAULT '';
      ALTER TABLE visits ADD COLUMN utm_source VARCHAR DEFAULT '';
      ALTER TABLE visits ADD COLUMN utm_term VARCHAR DEFAULT '';
      ALTER TABLE visits ADD COLUMN ref VARCHAR DEFAULT '';
      ALTER TABLE visits ADD COLUMN keyword VARCHAR DEFAULT '';
      -- History recorded before this version: every hit and visit takes its visit's first hit's attribution,
      -- as new hits do (docs/reports.md, "Attribution").
      CREATE TEMP TABLE first_touch AS
        SELECT visit_id, arg_min({referrer_hostname: referrer_hostname, referrer_pathname: referrer_pathname, referrer_source: referrer_source, utm_campaign: utm_campaign, utm_content: utm_content, utm_medium: utm_medium, utm_source: utm_source, utm_term: utm_term, ref: ref, keyword: keyword}, ts) AS a FROM hits GROUP BY visit_id;
      UPDATE hits SET referrer_hostname = f.a.referrer_hostname, referrer_pathname = f.a.referrer_pathname, referrer_source = f.a.referrer_source, utm_campaign = f.a.utm_campaign, utm_content = f.a.utm_content, utm_medium = f.a.utm_medium, utm_source = f.a.utm_source, utm_term = f.a.utm_term, ref = f.a.ref, keyword = f.a.keyword FROM first_touch f WHERE hits.visit_id = f.visit_id;
      UPDATE visits SET referrer_hostname = f.a.referrer_hostname, referrer_pathname = f.a.referrer_pathname, referrer_source = f.a.referrer_source, utm_campaign = f.a.utm_campaign, utm_content = f.a.utm_content, utm_medium = f.a.utm_medium, utm_source = f.a.utm_source, utm_term = f.a.utm_term, ref = f.a.ref, keyword = f.a.keyword FROM first_touch f WHERE visits.visit_id = f.visit_id;
      DROP TABLE first_touch;
    `,
  },
  {
    version: 8,
    name: 'visits without a primary key index',
    sql: `
      -- Writes replace a batch's visits by deleting their old rows and appending the new ones: keeping the primary
      -- key's index up to date for random visit ids cost about three times as much (docs/benchmarks.md). Reports
      -- join visits by hash, never through the index. Rows in start order, as new ones arrive.
      CREATE TABLE visits_v8 (
        visit_id UBIGINT NOT NULL,
        site_id VARCHAR NOT NULL,
        visitor_id UBIGINT NOT NULL,
        started_at TIMESTAMP NOT NULL,
        last_seen_at TIMESTAMP NOT NULL,
        entry_page VARCHAR NOT NULL,
        exit_page VARCHAR NOT NULL,
        exit_hostname VARCHAR NOT NULL,
        pageviews INTEGER NOT NULL,
        events INTEGER NOT NULL,
        referrer_hostname VARCHAR NOT NULL,
        referrer_pathname VARCHAR NOT NULL,
        paths_exact BOOLEAN NOT NULL DEFAULT false,
        referrer_source VARCHAR NOT NULL DEFAULT '',
        utm_campaign VARCHAR NOT NULL DEFAULT '',
        utm_content VARCHAR NOT NULL DEFAULT '',
        utm_medium VARCHAR NOT NULL DEFAULT '',
        utm_source VARCHAR NOT NULL DEFAULT '',
        utm_term VARCHAR NOT NULL DEFAULT '',
        ref VARCHAR NOT NULL DEFAULT '',
        keyword VARCHAR NOT NULL DEFAULT ''
      );
      INSERT INTO visits_v8 SELECT * FROM visits ORDER BY started_at;
      DROP TABLE visits;
      ALTER TABLE visits_v8 RENAME TO visits;
    `,
  },
  {
    version: 9,
    name: 'site domains and Umami website ids',
    sql: `
      -- The site's domains, comma-separated in the owner's order (what the API returns), and the Umami website id
      -- it had (lower case), so that Plausible's and Umami's tags find it.
      -- The table is made again rather than given columns by ALTER TABLE: DuckDB 1.5 cannot replay adding a
      -- column to a table whose defaults call a function (seq's nextval) from its write-ahead log, and a crash
      -- before the next checkpoint would leave a file that does not open (test/store/duckdb-migrations.test.ts).
      CREATE TABLE sites_before_v9 AS SELECT * FROM sites;
      DROP INDEX sites_by_account;
      DROP TABLE sites;
      CREATE TABLE sites (
        id VARCHAR PRIMARY KEY,
        account_id INTEGER NOT NULL,
        name VARCHAR NOT NULL,
        sharing VARCHAR NOT NULL,
        share_password_hash VARCHAR,
        timezone VARCHAR NOT NULL,
        multi_domain BOOLEAN NOT NULL,
        multi_domain_option VARCHAR,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order'),
        domains VARCHAR DEFAULT '',
        umami_website_id VARCHAR
      );
      INSERT INTO sites SELECT *, '', NULL FROM sites_before_v9;
      DROP TABLE sites_before_v9;
      CREATE INDEX sites_by_account ON sites (account_id);
      -- One row per domain: the lookup from a hit's domain to its site, and what keeps a domain to one site.
      CREATE TABLE site_domains (
        domain VARCHAR PRIMARY KEY,
        site_id VARCHAR NOT NULL
      );
    `,
  },
  {
    version: 10,
    name: 'people: users, memberships and roles, invitations, one-time links, two-factor, report subscriptions',
    sql: `
      -- A person logs in as a user and belongs to accounts with a role (docs/dashboard.md, "People and roles").
      CREATE SEQUENCE user_ids START 1;
      CREATE TABLE users (
        id INTEGER PRIMARY KEY DEFAULT nextval('user_ids'),
        email VARCHAR NOT NULL,
        email_key VARCHAR NOT NULL UNIQUE, -- lower-cased: addresses match case-insensitively
        password_hash VARCHAR, -- scrypt$N$r$p$salt$hash
        totp_secret VARCHAR, -- base32, set while two-factor authentication is on
        totp_pending_secret VARCHAR,
        totp_last_step BIGINT, -- the last TOTP time step used (no replays)
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL
      );
      CREATE TABLE memberships (
        account_id INTEGER NOT NULL,
        user_id INTEGER NOT NULL,
        role VARCHAR NOT NULL, -- owner | admin | viewer
        site_ids VARCHAR, -- viewers of some sites only: JSON array of site ids
        created_at TIMESTAMP NOT NULL,
        PRIMARY KEY (account_id, user_id)
      );
      -- Each account's login becomes its first user, the owner; accounts sharing an email share one user, with
      -- the password of the lowest id (the one that logged in so far).
      INSERT INTO users (email, email_key, password_hash, created_at, updated_at)
        SELECT arg_min(a.email, a.id), lower(a.email), arg_min(p.password_hash, a.id), min(p.updated_at), max(p.updated_at)
        FROM accounts a JOIN account_passwords p ON p.account_id = a.id GROUP BY lower(a.email);
      INSERT INTO memberships (account_id, user_id, role, site_ids, created_at)
        SELECT a.id, u.id, 'owner', NULL, p.updated_at
        FROM accounts a JOIN account_passwords p ON p.account_id = a.id JOIN users u ON u.email_key = lower(a.email);
      DROP TABLE account_passwords;
      -- Login sessions belong to a user; those already open stay open, as their account's owner.
      ALTER TABLE dashboard_sessions ADD COLUMN user_id INTEGER;
      ALTER TABLE dashboard_sessions ADD COLUMN user_agent VARCHAR;
      UPDATE dashboard_sessions SET user_id = (
        SELECT min(m.user_id) FROM memberships m WHERE m.account_id = dashboard_sessions.account_id AND m.role = 'owner'
      ) WHERE kind = 'owner';
      DELETE FROM dashboard_sessions WHERE kind = 'owner' AND user_id IS NULL;
      CREATE TABLE account_security (
        account_id INTEGER PRIMARY KEY,
        require_two_factor BOOLEAN NOT NULL,
        updated_at TIMESTAMP NOT NULL
      );
      CREATE TABLE invitations (
        id VARCHAR PRIMARY KEY,
        token_hash VARCHAR NOT NULL UNIQUE, -- SHA-256 of the link's secret
        account_id INTEGER NOT NULL,
        email VARCHAR NOT NULL,
        role VARCHAR NOT NULL,
        site_ids VARCHAR,
        invited_by INTEGER NOT NULL,
        created_at TIMESTAMP NOT NULL,
        expires_at TIMESTAMP NOT NULL,
        accepted_at TIMESTAMP
      );
      -- Single-use emailed links: password reset, email change confirmation.
      CREATE TABLE login_links (
        token_hash VARCHAR PRIMARY KEY,
        purpose VARCHAR NOT NULL, -- reset | email
        user_id INTEGER NOT NULL,
        email VARCHAR,
        created_at TIMESTAMP NOT NULL,
        expires_at TIMESTAMP NOT NULL,
        used_at TIMESTAMP
      );
      CREATE TABLE recovery_codes (
        user_id INTEGER NOT NULL,
        code_hash VARCHAR NOT NULL, -- SHA-256 of the code
        used_at TIMESTAMP,
        PRIMARY KEY (user_id, code_hash)
      );
      CREATE TABLE report_subscriptions (
        id VARCHAR PRIMARY KEY,
        user_id INTEGER NOT NULL,
        account_id INTEGER NOT NULL,
        site_id VARCHAR NOT NULL,
        frequency VARCHAR NOT NULL, -- weekly | monthly
        created_at TIMESTAMP NOT NULL
      );
      -- One row per report sent (or being sent): the lease that makes each one go out once.
      CREATE TABLE report_deliveries (
        subscription_id VARCHAR NOT NULL,
        period VARCHAR NOT NULL, -- the period's first day, YYYY-MM-DD
        lease_owner VARCHAR NOT NULL,
        lease_until TIMESTAMP NOT NULL,
        sent_at TIMESTAMP,
        unsubscribe_hash VARCHAR, -- SHA-256 of the email's unsubscribe secret
        PRIMARY KEY (subscription_id, period)
      );
      `,
  },
  {
    version: 11,
    name: 'origins allowed to embed a site\'s share page',
    sql: `
      -- Space-separated origins (CSP source expressions) that may frame /share/{id}?embed=true; no row: none may.
      CREATE TABLE site_embedding (
        site_id VARCHAR PRIMARY KEY,
        origins VARCHAR NOT NULL,
        updated_at TIMESTAMP NOT NULL
      );
    `,
  },
  // 13 (not one of this round's reserved numbers: switching's 9 was taken by the site domains before imports
  // needed a table) records imports.
  {
    version: 13,
    name: 'imports',
    sql: `
      CREATE TABLE imports (
        id VARCHAR PRIMARY KEY,
        site_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL, -- umami
        file_name VARCHAR NOT NULL,
        digest VARCHAR, -- SHA-256 of the file, once read
        status VARCHAR NOT NULL, -- running | done | failed
        imported BIGINT NOT NULL,
        rejected BIGINT NOT NULL,
        first_hit_at TIMESTAMP,
        last_hit_at TIMESTAMP,
        visit_id_base UBIGINT NOT NULL, -- imported visits have ids from here to here + 2^32 - 1
        created_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
    `,
  },
  {
    version: 14,
    name: 'imported daily aggregates',
    sql: `
      -- Another product's daily numbers (Plausible's export): one row per import, day and dimension value
      -- ('' dimension: the site's totals; 'pathname': one page). Days are the site's local days.
      CREATE TABLE imported_daily (
        import_id VARCHAR NOT NULL,
        site_id VARCHAR NOT NULL,
        day DATE NOT NULL,
        dimension VARCHAR NOT NULL,
        value VARCHAR NOT NULL,
        pageviews BIGINT NOT NULL,
        visits BIGINT NOT NULL,
        visitors BIGINT NOT NULL,
        bounces BIGINT NOT NULL,
        visit_duration BIGINT NOT NULL -- seconds, summed over the day's visits
      );
    `,
  },
  // 15 to 17 are reserved for imports (this round); 18 is custom properties.
  {
    version: 16,
    name: 'what imported days lack',
    // Numbers an export's rows do not carry (Fathom's hourly tables: visitors, and all but pageviews by field), as
    // bits: 1 visitors, 2 visits, 4 bounces, 8 visit durations (src/store/types.ts, IMPORTED_LACKS). The table
    // has no nextval default, so the WAL replays this ADD COLUMN; rows of earlier imports lack nothing (NULL).
    sql: `ALTER TABLE imported_daily ADD COLUMN lacks INTEGER DEFAULT 0;`,
  },
  {
    version: 18,
    name: 'custom properties of hits',
    sql: `
      -- A hit's custom properties as parallel lists: prop_values[i] is the value of prop_keys[i] (keys unique per
      -- hit, at most 30; src/domain/props.ts). No DEFAULT: DuckDB 1.5 cannot replay from its write-ahead log a
      -- column whose default is an expression ([] is list_value()), so rows recorded before hold NULL, which every
      -- reader takes as no properties.
      ALTER TABLE hits ADD COLUMN prop_keys VARCHAR[];
      ALTER TABLE hits ADD COLUMN prop_values VARCHAR[];
    `,
  },
  {
    version: 19,
    name: 'owners and failures of imports',
    sql: `
      -- A running import's owner (the process running it) and the time it last said it is alive, so that an import
      -- left running by a process that died is found and undone (src/ingest/peer-imports/import-sweeper.ts); and why a failed
      -- import failed. Made again rather than given columns, as the sites table in version 9 (seq's nextval).
      CREATE TABLE imports_before_v19 AS SELECT * FROM imports;
      DROP TABLE imports;
      CREATE TABLE imports (
        id VARCHAR PRIMARY KEY,
        site_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL, -- umami | plausible | fathom
        file_name VARCHAR NOT NULL,
        digest VARCHAR, -- SHA-256 of the file, once read
        status VARCHAR NOT NULL, -- running | done | failed
        imported BIGINT NOT NULL,
        rejected BIGINT NOT NULL,
        first_hit_at TIMESTAMP,
        last_hit_at TIMESTAMP,
        visit_id_base UBIGINT NOT NULL, -- imported visits have ids from here to here + 2^32 - 1
        created_at TIMESTAMP NOT NULL,
        finished_at TIMESTAMP,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order'),
        owner VARCHAR, -- the process running it (NULL: recorded before owners)
        heartbeat_at TIMESTAMP, -- renewed by the owner while it runs
        failure VARCHAR -- why it failed, for the user
      );
      INSERT INTO imports SELECT *, NULL, NULL, NULL FROM imports_before_v19;
      DROP TABLE imports_before_v19;
    `,
  },
  {
    version: 20,
    name: 'tokens the CLI makes for itself',
    sql: `
      -- A token the plumb CLI made to act through /v1 for one command (src/cli/acting.ts): it lives an hour at
      -- most and the token lists leave it out, since it is not the account's. Made again rather than given a
      -- column, as the sites table in version 9 (seq's nextval).
      CREATE TABLE tokens_before_v20 AS SELECT * FROM tokens;
      DROP TABLE tokens;
      CREATE TABLE tokens (
        id VARCHAR PRIMARY KEY,
        account_id INTEGER NOT NULL,
        name VARCHAR NOT NULL,
        version INTEGER NOT NULL,
        abilities VARCHAR NOT NULL, -- JSON array of strings
        hash VARCHAR NOT NULL UNIQUE,
        last_used_at TIMESTAMP,
        expires_at TIMESTAMP,
        revoked_at TIMESTAMP,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order'),
        for_cli BOOLEAN NOT NULL DEFAULT false
      );
      INSERT INTO tokens SELECT *, false FROM tokens_before_v20;
      DROP TABLE tokens_before_v20;
    `,
  },
  {
    version: 21,
    name: 'Plausible script ids of sites',
    sql: `
      -- The id of the per-site script of Plausible's current snippet (/js/pa-<id>.js) the site had, case kept, so
      -- that snippet's events find it. Made again rather than given a column, as in version 9 (seq's nextval).
      CREATE TABLE sites_before_v21 AS SELECT * FROM sites;
      DROP INDEX sites_by_account;
      DROP TABLE sites;
      CREATE TABLE sites (
        id VARCHAR PRIMARY KEY,
        account_id INTEGER NOT NULL,
        name VARCHAR NOT NULL,
        sharing VARCHAR NOT NULL,
        share_password_hash VARCHAR,
        timezone VARCHAR NOT NULL,
        multi_domain BOOLEAN NOT NULL,
        multi_domain_option VARCHAR,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order'),
        domains VARCHAR DEFAULT '',
        umami_website_id VARCHAR,
        plausible_script_id VARCHAR
      );
      INSERT INTO sites SELECT *, NULL FROM sites_before_v21;
      DROP TABLE sites_before_v21;
      CREATE INDEX sites_by_account ON sites (account_id);
    `,
  },
  {
    version: 22,
    name: 'segments: report filters saved under a name',
    sql: `
      -- A person's set of report filters for one site (src/http/dashboard/segments.ts), theirs only or shared with
      -- the site's account. filters: a JSON array of {property, operator, value[, key]}, checked before it is saved.
      CREATE TABLE segments (
        id VARCHAR PRIMARY KEY,
        site_id VARCHAR NOT NULL,
        user_id INTEGER NOT NULL,
        name VARCHAR NOT NULL,
        shared BOOLEAN NOT NULL,
        filters VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX segments_by_site ON segments (site_id, user_id);
    `,
  },
  {
    version: 23,
    name: 'page_goals: pageview goals (a path or pattern per goal)',
    sql: `
      -- The dashboard's pageview goals (src/http/dashboard/page-goals.ts): a site's visits that viewed a page whose
      -- path matches \`path\` (exact, or with * and **), beside the API's event goals.
      CREATE TABLE page_goals (
        id VARCHAR PRIMARY KEY,
        site_id VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        path VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX page_goals_by_site ON page_goals (site_id);
    `,
  },
  {
    version: 24,
    name: 'funnels: ordered page and event steps reported per visit',
    sql: `
      -- A site's funnels (src/http/v1/funnels.ts, src/report/funnels.ts). steps: a JSON array of 2 to 8
      -- {type: page|event, value}; filters: a JSON array of /v1 filter objects; both checked before they are saved.
      CREATE TABLE funnels (
        id VARCHAR PRIMARY KEY,
        site_id VARCHAR NOT NULL,
        name VARCHAR NOT NULL,
        steps VARCHAR NOT NULL,
        filters VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        seq BIGINT NOT NULL DEFAULT nextval('insertion_order')
      );
      CREATE INDEX funnels_by_site ON funnels (site_id);
    `,
  },
  {
    version: 25,
    name: 'engagement: scroll depth and engaged time of hits',
    sql: `
      -- Engagement hits (type 'engagement', docs/collection.md "Engagement"): the deepest scroll reached, percent of
      -- the page, and ms engaged since the pageview's previous engagement hit; 0 on every other hit. DuckDB adds
      -- no column with a constraint, so NOT NULL is set after the column (and its default) exist.
      ALTER TABLE hits ADD COLUMN scroll_depth UTINYINT DEFAULT 0;
      ALTER TABLE hits ALTER COLUMN scroll_depth SET NOT NULL;
      ALTER TABLE hits ADD COLUMN engaged_ms UINTEGER DEFAULT 0;
      ALTER TABLE hits ALTER COLUMN engaged_ms SET NOT NULL;
    `,
  },
  {
    version: 26,
    name: 'engagement of imported days',
    sql: `
      -- Plausible's pages carry engagement per day (src/store/types.ts, ImportedDay): the summed deepest scroll
      -- (percent) of (visit, page) pairs and their count, the summed engaged time (ms) and its pairs. Constant
      -- defaults, replayed from the write-ahead log like migration 16's; rows of earlier imports read 0.
      ALTER TABLE imported_daily ADD COLUMN scroll_sum BIGINT DEFAULT 0;
      ALTER TABLE imported_daily ADD COLUMN scroll_pairs BIGINT DEFAULT 0;
      ALTER TABLE imported_daily ADD COLUMN engaged_ms_sum BIGINT DEFAULT 0;
      ALTER TABLE imported_daily ADD COLUMN engaged_pairs BIGINT DEFAULT 0;
    `,
  },
  {
    version: 27,
    name: 'journeys of visits',
    sql: `
      -- A visit's journey as its hits arrive (src/domain/hits.ts, VisitRecord.journeyLength): how many pages, capped
      -- at 6, and its 2nd to 5th (the entry page is the 1st), so that journeys read one row a visit instead of
      -- gathering and sorting every visit's pageviews. 0 on earlier rows: not known, read from the hits.
      ALTER TABLE visits ADD COLUMN journey_length UTINYINT DEFAULT 0;
      ALTER TABLE visits ALTER COLUMN journey_length SET NOT NULL;
      ALTER TABLE visits ADD COLUMN journey_2 VARCHAR DEFAULT '';
      ALTER TABLE visits ALTER COLUMN journey_2 SET NOT NULL;
      ALTER TABLE visits ADD COLUMN journey_3 VARCHAR DEFAULT '';
      ALTER TABLE visits ALTER COLUMN journey_3 SET NOT NULL;
      ALTER TABLE visits ADD COLUMN journey_4 VARCHAR DEFAULT '';
      ALTER TABLE visits ALTER COLUMN journey_4 SET NOT NULL;
      ALTER TABLE visits ADD COLUMN journey_5 VARCHAR DEFAULT '';
      ALTER TABLE visits ALTER COLUMN journey_5 SET NOT NULL;
    `,
  },
  {
    version: 28,
    name: 'journey page numbers',
    sql: `
      -- Journeys group visits by their pages' numbers, not their texts (a third less time at 10 M pageviews,
      -- docs/benchmarks.md "Analysis reports"): each site's journey pages numbered from 1 (0: no page), given out
      -- by the writer's connection only (src/store/duckdb/journey-pages.ts), and a recorded journey's pages as
      -- numbers beside their texts (journey_id_1 is the entry page's). 0 where the journey is not known.
      CREATE TABLE journey_pages (site_id VARCHAR NOT NULL, pathname VARCHAR NOT NULL, page_id UINTEGER NOT NULL);
      INSERT INTO journey_pages
        SELECT site_id, p, CAST(row_number() OVER (PARTITION BY site_id ORDER BY p) AS UINTEGER)
        FROM (SELECT DISTINCT site_id, unnest([entry_page, journey_2, journey_3, journey_4, journey_5]) AS p FROM visits WHERE journey_length > 0)
        WHERE p <> '';
      ALTER TABLE visits ADD COLUMN journey_id_1 UINTEGER DEFAULT 0;
      ALTER TABLE visits ALTER COLUMN journey_id_1 SET NOT NULL;
      ALTER TABLE visits ADD COLUMN journey_id_2 UINTEGER DEFAULT 0;
      ALTER TABLE visits ALTER COLUMN journey_id_2 SET NOT NULL;
      ALTER TABLE visits ADD COLUMN journey_id_3 UINTEGER DEFAULT 0;
      ALTER TABLE visits ALTER COLUMN journey_id_3 SET NOT NULL;
      ALTER TABLE visits ADD COLUMN journey_id_4 UINTEGER DEFAULT 0;
      ALTER TABLE visits ALTER COLUMN journey_id_4 SET NOT NULL;
      ALTER TABLE visits ADD COLUMN journey_id_5 UINTEGER DEFAULT 0;
      ALTER TABLE visits ALTER COLUMN journey_id_5 SET NOT NULL;
      UPDATE visits SET journey_id_1 = n.page_id FROM journey_pages n
        WHERE visits.journey_length > 0 AND n.site_id = visits.site_id AND n.pathname = visits.entry_page;
      UPDATE visits SET journey_id_2 = n.page_id FROM journey_pages n
        WHERE visits.journey_length > 0 AND n.site_id = visits.site_id AND n.pathname = visits.journey_2;
      UPDATE visits SET journey_id_3 = n.page_id FROM journey_pages n
        WHERE visits.journey_length > 0 AND n.site_id = visits.site_id AND n.pathname = visits.journey_3;
      UPDATE visits SET journey_id_4 = n.page_id FROM journey_pages n
        WHERE visits.journey_length > 0 AND n.site_id = visits.site_id AND n.pathname = visits.journey_4;
      UPDATE visits SET journey_id_5 = n.page_id FROM journey_pages n
        WHERE visits.journey_length > 0 AND n.site_id = visits.site_id AND n.pathname = visits.journey_5;
    `,
  },
];

export { NewerSchemaError };

/**
 * Brings the schema up to the newest version (or to `upTo`, for tests of a migration); a no-op on an up-to-date
 * database. Refuses (NewerSchemaError) a database with a version above the newest here, before changing anything:
 * this code would misread what a newer release wrote, and its writes could corrupt it.
 */
export async function migrate(db: DuckDatabase, upTo = Infinity): Promise<number[]> {
  await db.serial((q) =>
    q.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
      version INTEGER PRIMARY KEY, name VARCHAR NOT NULL, applied_at TIMESTAMP NOT NULL)`),
  );
  const applied = new Set(
    (await db.serial((q) => q.rows<{ version: number }>('SELECT version FROM schema_migrations'))).map((r) => r.version),
  );
  refuseNewerSchema(applied, MIGRATIONS.at(-1)!.version);
  const ran: number[] = [];
  for (const m of MIGRATIONS) {
    if (applied.has(m.version) || m.version > upTo) continue;
    await db.transaction(async (q) => {
      await q.exec(m.sql);
      await q.exec('INSERT INTO schema_migrations VALUES (?, ?, ?)', [m.version, m.name, new Date()]);
    });
    ran.push(m.version);
  }
  // A migration's statements are then in the database file, not only in the write-ahead log: a crash before the
  // next checkpoint never makes DuckDB replay schema changes, which it does less reliably than data.
  if (ran.length > 0) await db.serial((q) => q.exec('CHECKPOINT'));
  return ran;
}
