// Store interfaces: what the rest of Plumb may ask of persistence, whatever the backend.
import type { BackupManifest } from '../domain/backup-manifest.js';
import type { StoredHit, VisitRecord } from '../domain/hits.js';
import type { CsvRows } from './event-csv.js';

// MetaStore holds accounts, tokens, sites, events and milestones. EventStore (hits) and LimitStore (rate
// limits) join it as their issues land; each backend lives in its own folder under store/.

export type Sharing = 'none' | 'private' | 'public';
export type MultiDomainOption = 'combined' | 'separate';
export type SubscriptionStatus = 'active' | 'lapsed';
export const CURRENCIES = [
  'dollar', 'pound', 'euro', 'yuan', 'peso', 'shekel', 'yen', 'won', 'hryvnia', 'franc', 'rupee', 'integer', 'none',
] as const;
export type Currency = (typeof CURRENCIES)[number];

export interface Account {
  id: number;
  name: string;
  email: string;
  timezone: string;
  tier: number;
  subscriptionStatus: SubscriptionStatus;
  createdAt: Date;
  updatedAt: Date;
}

export interface TokenRecord {
  id: string;
  accountId: number;
  name: string;
  version: number;
  abilities: string[];
  /** SHA-256 of the secret; the secret itself is never stored. */
  hash: string;
  lastUsedAt: Date | null;
  expiresAt: Date | null;
  revokedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Site {
  id: string;
  accountId: number;
  name: string;
  sharing: Sharing;
  sharePasswordHash: string | null;
  timezone: string;
  multiDomain: boolean;
  multiDomainOption: MultiDomainOption | null;
  /**
   * Hostnames the site is known by (Plausible's `data-domain` and Events API find it by them), in the owner's order;
   * each names at most one site of the installation.
   */
  domains: string[];
  /** The Umami website UUID the site had, so Umami tags and `/api/send` keep working (unique, lower case). */
  umamiWebsiteId: string | null;
  /**
   * The id of the per-site script of Plausible's current snippet (`/js/pa-<id>.js`), so that snippet keeps working
   * with only its host changed (unique, case kept).
   */
  plausibleScriptId: string | null;
  createdAt: Date;
  updatedAt: Date;
}

export interface Goal {
  id: string;
  siteId: string;
  name: string;
  currency: Currency;
  createdAt: Date;
  updatedAt: Date;
}

/** One filter of a saved segment: a report filter of SPEC.md, or (`property` 'prop', with `key`) a custom property's. */
export interface SegmentFilter {
  property: string;
  operator: string;
  value: string;
  key?: string;
}

/**
 * A set of report filters saved under a name for one site by one person (`userId`): theirs only, or `shared` with
 * the members of the site's account who can see the site.
 */
export interface Segment {
  id: string;
  siteId: string;
  userId: number;
  name: string;
  shared: boolean;
  filters: SegmentFilter[];
  createdAt: Date;
  updatedAt: Date;
}

/**
 * A pageview goal of a site (the dashboard's, beside the API's event goals): the visits that viewed a page whose
 * path matches `path` (exact, or with `*` and `**`: src/domain/page-goal-paths.ts).
 */
export interface PageGoal {
  id: string;
  siteId: string;
  name: string;
  path: string;
  createdAt: Date;
  updatedAt: Date;
}

/** One step of a funnel: a page (a path or pattern, src/domain/page-goal-paths.ts) or an event (goal) name. */
export interface FunnelStep {
  type: 'page' | 'event';
  value: string;
}

/** A site's funnel: 2 to 8 ordered steps reported per visit, with /v1 filters on the whole funnel (src/report/funnels.ts). */
export interface Funnel {
  id: string;
  siteId: string;
  name: string;
  steps: FunnelStep[];
  filters: SegmentFilter[];
  createdAt: Date;
  updatedAt: Date;
}

export interface Milestone {
  id: string;
  siteId: string;
  name: string;
  /** `YYYY-MM-DD` */
  milestoneDate: string;
  createdAt: Date;
  updatedAt: Date;
}

export type ImportKind = 'umami' | 'plausible' | 'fathom';
export type ImportStatus = 'running' | 'done' | 'failed';

/**
 * One import of another product's export into a site. Imported hits have visit ids in the import's own range
 * (`visitIdBase` to `visitIdBase + 2^32 - 1`), so deleting the import deletes exactly them. A running import has
 * an owner (the process running it) that renews `heartbeatAt` while it runs (src/ingest/peer-imports/import-owner.ts).
 */
export interface ImportRecord {
  id: string;
  siteId: string;
  kind: ImportKind;
  fileName: string;
  /**
   * What makes two imports the same export: for a zip, a SHA-256 of its entries' names and contents (however it was
   * zipped), for a CSV the SHA-256 of its bytes; a second import of the same export replaces the first.
   */
  digest: string | null;
  status: ImportStatus;
  imported: number;
  rejected: number;
  firstHitAt: Date | null;
  lastHitAt: Date | null;
  visitIdBase: bigint;
  createdAt: Date;
  finishedAt: Date | null;
  /** The process running (or, once finished, that last ran) the import; null for records from before owners. */
  owner: string | null;
  /** When the owner last said it is alive (its clock); null for records from before owners. */
  heartbeatAt: Date | null;
  /** Why a failed import failed, in words for the person who started it; null otherwise. */
  failure: string | null;
}
export type NewImport = Pick<ImportRecord, 'siteId' | 'kind' | 'fileName' | 'visitIdBase' | 'owner'>;
export type ImportOutcome = Pick<ImportRecord, 'status' | 'digest' | 'imported' | 'rejected' | 'firstHitAt' | 'lastHitAt' | 'failure'>;

/** A cursor page request (DESIGN.md section 5); at most one cursor is set. */
export interface PageRequest {
  limit: number;
  startingAfter?: string | undefined;
  endingBefore?: string | undefined;
}

/** Items in ascending creation order; `hasMore` is about the paging direction. */
export interface Page<T> {
  items: T[];
  hasMore: boolean;
}

export type NewAccount = Pick<Account, 'name' | 'email' | 'timezone' | 'tier' | 'subscriptionStatus'>;
export type AccountPatch = Partial<NewAccount>;
export type NewToken = Pick<TokenRecord, 'accountId' | 'name' | 'abilities' | 'hash' | 'expiresAt'> & {
  /**
   * Made by the `plumb` CLI for itself, to act through /v1 for one command (src/cli/acting.ts): not the account's
   * token, so listTokens leaves it out unless asked for the CLI's.
   */
  forCli?: boolean;
};
export type NewSite = Omit<Site, 'id' | 'createdAt' | 'updatedAt' | 'domains' | 'umamiWebsiteId' | 'plausibleScriptId'> &
  Partial<Pick<Site, 'domains' | 'umamiWebsiteId' | 'plausibleScriptId'>>;
export type SitePatch = Partial<
  Pick<
    Site,
    'name' | 'sharing' | 'sharePasswordHash' | 'timezone' | 'multiDomain' | 'multiDomainOption' | 'domains' | 'umamiWebsiteId' | 'plausibleScriptId'
  >
>;
export type NewGoal = Pick<Goal, 'siteId' | 'name' | 'currency'>;
export type GoalPatch = Partial<Pick<Goal, 'name' | 'currency'>>;
export type NewMilestone = Pick<Milestone, 'siteId' | 'name' | 'milestoneDate'>;
export type MilestonePatch = Pick<Milestone, 'name' | 'milestoneDate'>;
export type NewSegment = Pick<Segment, 'siteId' | 'userId' | 'name' | 'shared' | 'filters'>;
export type SegmentPatch = Partial<Pick<Segment, 'name' | 'shared' | 'filters'>>;
export type NewPageGoal = Pick<PageGoal, 'siteId' | 'name' | 'path'>;
export type PageGoalPatch = Partial<Pick<PageGoal, 'name' | 'path'>>;
export type NewFunnel = Pick<Funnel, 'siteId' | 'name' | 'steps' | 'filters'>;
export type FunnelPatch = Partial<Pick<Funnel, 'name' | 'steps' | 'filters'>>;

/**
 * `owner`: a logged-in member (any role: the name predates roles); `share`: a visitor of one site's share page
 * (read-only on that site); `pending`: a password accepted, the second factor not yet given (grants nothing).
 */
export type SessionKind = 'owner' | 'share' | 'pending';

/** A dashboard or share-page session; the cookie carries the id, the store only its SHA-256. */
export interface DashboardSession {
  idHash: string;
  kind: SessionKind;
  accountId: number;
  siteId: string | null;
  /** The anti-CSRF value the session's pages send back in a header (bound to this session only). */
  csrf: string;
  /** Share sessions: digest of the site's sharing settings when granted; a change to them ends the session. */
  binding: string | null;
  createdAt: Date;
  expiresAt: Date;
  /** The person logged in (owner and pending sessions); null for share sessions. */
  userId: number | null;
  /** The browser that opened it (shortened User-Agent), for the account page's list of sessions. */
  userAgent: string | null;
}
export type NewDashboardSession = Omit<DashboardSession, 'createdAt' | 'userId' | 'userAgent'> &
  Partial<Pick<DashboardSession, 'userId' | 'userAgent'>>;

/** A user with a password, found by email, and the first account they belong to (if any). */
export interface Login {
  userId: number;
  account: Account | undefined;
  passwordHash: string;
}

/** API requests counted for one account in one calendar month (UTC), `YYYY-MM`. */
export interface MonthlyUsage {
  month: string;
  apiRequests: number;
}

/**
 * Metadata persistence. Lookups by id return undefined when absent; list methods throw a ValidationError
 * naming the cursor field when a cursor id is not in the list. Account scoping is the caller's job.
 */
export interface MetaStore {
  createAccount(input: NewAccount): Promise<Account>;
  getAccount(id: number): Promise<Account | undefined>;
  listAccounts(): Promise<Account[]>;
  updateAccount(id: number, patch: AccountPatch): Promise<Account | undefined>;

  /** Adds counted API requests: account id -> month (`YYYY-MM`) -> count. */
  addUsage(counts: ReadonlyMap<number, ReadonlyMap<string, number>>): Promise<void>;
  /** The account's counted API requests per month, oldest first. */
  getUsage(accountId: number): Promise<MonthlyUsage[]>;

  /**
   * The salt for a UTC day (`YYYY-MM-DD`), created with `candidate` if the day has none yet. Every process
   * gets the same salt for the same day, whoever created it first.
   */
  saltForDay(day: string, candidate: string): Promise<string>;
  /** The salt of a day if it exists (yesterday's, to continue visits across midnight). */
  findSalt(day: string): Promise<string | undefined>;
  /** Deletes salts of days before `day`; returns how many. */
  deleteSaltsBefore(day: string): Promise<number>;

  /** The password hash of the account's first owner (a user), undefined when there is none or it has none. */
  getPasswordHash(accountId: number): Promise<string | undefined>;
  /**
   * Sets the password of the account's first owner; an account without one gets the user of its email (made
   * if missing) as owner. The admin API, the CLI and first-run setup set logins this way. Ends that user's
   * sessions (not the account's other members'); returns how many.
   */
  setPasswordHash(accountId: number, hash: string): Promise<number>;
  /** The user with this email (compared case-insensitively) if they have a password, with their first account. */
  findLogin(email: string): Promise<Login | undefined>;

  createSession(input: NewDashboardSession): Promise<DashboardSession>;
  /** The session with this id hash, expired or not (the caller judges expiry). */
  findSession(idHash: string): Promise<DashboardSession | undefined>;
  deleteSession(idHash: string): Promise<void>;
  /** Ends every session in the account (an owner password set by the operator); returns how many. */
  deleteAccountSessions(accountId: number): Promise<number>;
  /** Removes sessions that expired before `now`; returns how many. */
  deleteExpiredSessions(now: Date): Promise<number>;

  createToken(input: NewToken): Promise<TokenRecord>;
  findTokenByHash(hash: string): Promise<TokenRecord | undefined>;
  /** The account's tokens; `'cli'`: instead the ones the CLI made for itself (NewToken's forCli). */
  listTokens(accountId: number, whose?: 'account' | 'cli'): Promise<TokenRecord[]>;
  /** Returns false when the token does not exist in that account or was already revoked. */
  revokeToken(accountId: number, tokenId: string): Promise<boolean>;
  /** Records last-use times in one batch (each only moves forward). */
  touchTokens(lastUsed: ReadonlyMap<string, Date>): Promise<void>;

  /**
   * Creates a site. A domain, Umami website id or Plausible script id already taken by another site is a
   * ValidationError under `domain`, `umami_website_id` or `plausible_script_id` (here and in updateSite).
   */
  createSite(input: NewSite): Promise<Site>;
  getSite(id: string): Promise<Site | undefined>;
  /** The site one of whose domains is exactly this (stored form, see src/domain/site-domains.ts). */
  findSiteByDomain(domain: string): Promise<Site | undefined>;
  /** The site given this Umami website id (lower case). */
  findSiteByUmamiId(websiteId: string): Promise<Site | undefined>;
  /** The site given this Plausible script id (exactly: ids are case-sensitive). */
  findSiteByPlausibleScriptId(scriptId: string): Promise<Site | undefined>;
  listSites(accountId: number, page: PageRequest): Promise<Page<Site>>;
  updateSite(id: string, patch: SitePatch): Promise<Site>;
  /** Deletes the site with its events, pageview goals, milestones, segments and share sessions. */
  deleteSite(id: string): Promise<void>;
  /** Origins that may frame the site's embedded share page, in the owner's order (none: not embeddable). */
  getEmbedOrigins(siteId: string): Promise<string[]>;
  /** Replaces them; an empty list makes the share page non-embeddable again. */
  setEmbedOrigins(siteId: string, origins: readonly string[]): Promise<void>;

  /** Imports (src/ingest/peer-imports/umami-import.ts): recorded when they start (running, heartbeat now), finished with their outcome. */
  createImport(input: NewImport): Promise<ImportRecord>;
  /** Finishes the import if it is still running under `owner`; undefined when it is not (swept or deleted meanwhile). */
  finishImport(id: string, owner: string, outcome: ImportOutcome): Promise<ImportRecord | undefined>;
  /** Renews a running import's heartbeat; false when it no longer runs under `owner`. */
  renewImport(id: string, owner: string, at: Date): Promise<boolean>;
  /** Every running import of any site (few: the ones in progress and the ones left by processes that died). */
  runningImports(): Promise<ImportRecord[]>;
  /**
   * Takes a running import over as `owner`, only if its owner and heartbeat are still those seen (`seen`): of
   * several processes doing so at once, exactly one gets it. Undefined when another did, or it finished.
   */
  claimImport(seen: ImportRecord, owner: string, at: Date): Promise<ImportRecord | undefined>;
  getImport(id: string): Promise<ImportRecord | undefined>;
  /** The site's imports, oldest first. */
  listImports(siteId: string): Promise<ImportRecord[]>;
  deleteImport(id: string): Promise<void>;

  createGoal(input: NewGoal): Promise<Goal>;
  getGoal(siteId: string, id: string): Promise<Goal | undefined>;
  /** The site's first-created goal with this exact name. */
  findGoalByName(siteId: string, name: string): Promise<Goal | undefined>;
  listGoals(siteId: string, page: PageRequest): Promise<Page<Goal>>;
  updateGoal(siteId: string, id: string, patch: GoalPatch): Promise<Goal>;
  deleteGoal(siteId: string, id: string): Promise<void>;

  createMilestone(input: NewMilestone): Promise<Milestone>;
  getMilestone(siteId: string, id: string): Promise<Milestone | undefined>;
  listMilestones(siteId: string, page: PageRequest): Promise<Page<Milestone>>;
  updateMilestone(siteId: string, id: string, patch: MilestonePatch): Promise<Milestone>;
  deleteMilestone(siteId: string, id: string): Promise<void>;

  /**
   * Saves a segment, unless its creator already has `maxPerUser` segments of the site: then undefined. The count
   * and the insert are one transaction.
   */
  createSegment(input: NewSegment, maxPerUser: number): Promise<Segment | undefined>;
  getSegment(siteId: string, id: string): Promise<Segment | undefined>;
  /** The site's segments `userId` may use: their own and the shared ones, by name (then creation order). */
  listSegments(siteId: string, userId: number): Promise<Segment[]>;
  /** Undefined when the site has no such segment. */
  updateSegment(siteId: string, id: string, patch: SegmentPatch): Promise<Segment | undefined>;
  /** False when the site has no such segment. */
  deleteSegment(siteId: string, id: string): Promise<boolean>;
  /** Saves a pageview goal, unless the site already has `maxPerSite` of them: then undefined. */
  createPageGoal(input: NewPageGoal, maxPerSite: number): Promise<PageGoal | undefined>;
  /** The site's pageview goals, by name (then creation order). */
  listPageGoals(siteId: string): Promise<PageGoal[]>;
  /** Undefined when the site has no such pageview goal. */
  updatePageGoal(siteId: string, id: string, patch: PageGoalPatch): Promise<PageGoal | undefined>;
  /** False when the site has no such pageview goal. */
  deletePageGoal(siteId: string, id: string): Promise<boolean>;
  /** Saves a funnel, unless the site already has `maxPerSite` of them: then undefined. */
  createFunnel(input: NewFunnel, maxPerSite: number): Promise<Funnel | undefined>;
  getFunnel(siteId: string, id: string): Promise<Funnel | undefined>;
  /** The site's funnels by created_at (a /v1 list page). */
  listFunnels(siteId: string, page: PageRequest): Promise<Page<Funnel>>;
  /** Undefined when the site has no such funnel. */
  updateFunnel(siteId: string, id: string, patch: FunnelPatch): Promise<Funnel | undefined>;
  /** False when the site has no such funnel. */
  deleteFunnel(siteId: string, id: string): Promise<boolean>;

  close(): Promise<void>;
}

/** The outcome of counting one request against a sliding window. */
export type WindowDecision = { allowed: true } | { allowed: false; retryAfterMs: number };

/**
 * Shared state for rate limits (DESIGN.md section 7). Times are milliseconds since the epoch, passed in by the
 * caller so that every implementation follows the same clock (and tests can move it).
 */
export interface LimitStore {
  /**
   * Counts one request under `key` when fewer than `limit` were counted in the `windowMs` before `now`;
   * otherwise counts nothing and says how long until a request would be allowed.
   */
  hitWindow(key: string, windowMs: number, limit: number, now: number): Promise<WindowDecision>;
  /** Takes one of `limit` slots under `key`, held until released or until `now + leaseMs`; false when all are taken. */
  acquireSlot(key: string, slotId: string, limit: number, leaseMs: number, now: number): Promise<boolean>;
  releaseSlot(key: string, slotId: string): Promise<void>;
  /** Resolves when the store answers (GET /readyz); stores inside the process have nothing to ask. */
  ping?(): Promise<void>;
  close(): Promise<void>;
}

/** A value bound into a report query (dialects that cannot bind receive none: their SQL inlines literals). */
export type QueryParam = string | number | boolean | null | Date | bigint;
/** SQL and the values of its numbered parameters. */
export interface Statement {
  sql: string;
  params: readonly QueryParam[];
}

/**
 * What imported days are stored under ('': the site's totals): the report fields they can be grouped and filtered by,
 * each from one table of the export (src/ingest/peer-imports/plausible-import.ts), and `event_name`, an event's daily
 * completions (imported_custom_events: completions in `pageviews`, visitors in `visitors`).
 */
export const IMPORTED_DIMENSIONS = [
  '', 'pathname', 'entry_page', 'exit_page', 'referrer_source', 'utm_source', 'utm_medium', 'utm_campaign', 'utm_content',
  'utm_term', 'browser', 'operating_system', 'device_type', 'country_code', 'referrer_hostname', 'event_name',
] as const;
export type ImportedDimension = (typeof IMPORTED_DIMENSIONS)[number];

/** One day of another product's numbers for a site: its totals (`dimension` '') or one value of a field's. */
export interface ImportedDay {
  importId: string;
  siteId: string;
  /** The site's local day, `YYYY-MM-DD`. */
  day: string;
  dimension: ImportedDimension;
  value: string;
  pageviews: number;
  visits: number;
  visitors: number;
  /** Visits of one pageview (0 where the table has none: pages, events). */
  bounces: number;
  /** Seconds, summed over the day's visits (0 where the table has none). */
  visitDuration: number;
  /** The numbers the row does not carry (IMPORTED_LACKS bits; 0: none missing). */
  lacks?: number;
  /**
   * Engagement (Plausible's pages, docs/reports.md "Engagement"), absent or 0 where the export has none: the sum over
   * (visit, page) pairs of each pair's deepest scroll in percent, and the pairs it is over; the engaged time summed
   * over pairs in milliseconds (the export's whole seconds times 1000), and the pairs it is over. A scroll and a
   * time count different pairs: the export counts each over the visits that reported it.
   */
  scrollSum?: number;
  scrollPairs?: number;
  engagedMsSum?: number;
  engagedPairs?: number;
}

/** Bits of ImportedDay.lacks: a report asking for a number some imported row in its range lacks uses recorded hits only. */
export const IMPORTED_LACKS = { visitors: 1, visits: 2, bounces: 4, duration: 8 } as const;

/** Imported days summed per day (and value): what reports add to recorded hits. */
export type ImportedDaySums = Pick<ImportedDay, 'day' | 'value' | 'pageviews' | 'visits' | 'visitors' | 'bounces' | 'visitDuration'> &
  Required<Pick<ImportedDay, 'scrollSum' | 'scrollPairs' | 'engagedMsSum' | 'engagedPairs'>> & {
  /** Every bit any summed row lacks. */
  lacks: number;
};

/** A batch as INSERT statements: its visits' newest states (in order), then its hits (EventStore.writeInserts). */
export interface InsertStatements {
  visits: string[];
  hits: string | undefined;
}

/** Hits and visits. Visits are written whole each time they change (the newest version wins). */
export interface EventStore {
  /** Runs a compiled report query (read only). */
  query(sql: string, params: readonly QueryParam[]): Promise<Record<string, unknown>[]>;
  /**
   * Runs `first`, then the statement `next` makes of its rows (report queries with a prelude: CompiledQuery), both
   * reading one snapshot of the data where the store has transactions.
   */
  queryAfter(first: Statement, next: (rows: Record<string, unknown>[]) => Statement | Promise<Statement>): Promise<Record<string, unknown>[]>;
  /**
   * Stores a batch atomically: every hit, and the latest state of every visit the batch touched; with
   * `logSeq`, also records that the hit log is confirmed up to that sequence number (in the same transaction).
   */
  write(hits: readonly StoredHit[], visits: readonly VisitRecord[], logSeq?: number): Promise<void>;
  /**
   * Stores rows from CSV files atomically, like `write` without a log sequence number (the set-based import);
   * stores without it take imports through `write`.
   */
  writeCsv?(rows: CsvRows): Promise<void>;
  /**
   * Stores a file of records (src/ingest/live/hit-record.ts, one per line) like `write`, read by the database itself:
   * the stores that can (DuckDB) spare the process the per-row work. `logSeq` as for `write`.
   */
  loadRecords?(file: string, logSeq?: number): Promise<void>;
  /**
   * Stores whose batches can be written as statement text built on the ingest thread (ClickHouse,
   * src/store/clickhouse/insert-text.ts) name the node their hits are tagged with; then rows never cross threads
   * as objects.
   */
  readonly insertNode?: string;
  /** Stores a batch built as statements (see insertNode) like `write`; `logSeq` as for `write`. */
  writeInserts?(inserts: InsertStatements, logSeq?: number): Promise<void>;
  /** The hit log sequence number confirmed so far (0 when none). */
  logWatermark(): Promise<number>;
  /**
   * Copies the whole database (metadata too) as of one moment into a new or empty directory while the process goes
   * on serving (the embedded store, `plumb backup`); stores on shared databases are backed up with their own tools.
   */
  backup?(dir: string): Promise<BackupManifest>;
  /**
   * About how many hits the store holds, all sites together, from the database's catalog (no scan), remembered
   * for a minute: for report plans that trade CPU time for memory at size. Stores without it are never "large".
   */
  hitsEstimate?(): Promise<number>;
  /** Visits of any site seen at or after `since`, to resume visits after a restart. */
  visitsSeenSince(since: Date): Promise<VisitRecord[]>;
  /** Every stored hit of a site in time order (tests, exports; not for reports). */
  listHits(siteId: string): Promise<StoredHit[]>;
  listVisits(siteId: string): Promise<VisitRecord[]>;
  deleteSite(siteId: string): Promise<void>;
  /** Deletes the site's hits and visits whose visit ids lie in `[from, to]` (an import's range). */
  deleteVisitRange(siteId: string, from: bigint, to: bigint): Promise<void>;
  writeImportedDays(rows: readonly ImportedDay[]): Promise<void>;
  /**
   * The site's imported days from `fromDay` to before `untilDay` of one dimension, of the values `values` selects
   * (default: all, per value), summed per day and value; [] at the cost of no query for a site without imports.
   */
  /** Whether the site has any imported days (remembered for a few seconds: most sites have none). */
  hasImportedDays(siteId: string): Promise<boolean>;
  deleteImportedDays(siteId: string, importId: string): Promise<void>;
  /** Closed UTC days summed per field value, read in place of their hits (ClickHouse: src/report/day-rollups/). */
  readonly dayRollups?: DayRollupStore;
  close(): Promise<void>;
}

/**
 * How often hits were inserted and deleted in a site's UTC day widened by the visit timeout on both sides (a hit
 * that close to the day can join a visit of the day): a day rollup is valid while both are unchanged.
 */
export interface DayChanges {
  inserted: bigint;
  deleted: bigint;
}

/**
 * One build of a site's UTC day (`YYYY-MM-DD`): its rows share `builtAt` and the counts it was built from. The
 * day's crossing visits (those with hits outside it) have their hits in the day within `[day start, headUntil)`
 * and `[tailFrom, day end)`, epoch milliseconds.
 */
export interface DayBuild extends DayChanges {
  day: string;
  builtAt: number;
  headUntil: number;
  tailFrom: number;
}

/** Sums over a day's pageviews: all of them, and the visits lying wholly inside the day (contained). */
export interface DaySums {
  pageviews: bigint;
  visitors: bigint;
  /** Of the contained visits: how many, bounced, their durations (ms), their distinct (visit, page) pairs. */
  visits: bigint;
  bounces: bigint;
  durationMs: bigint;
  uniques: bigint;
}

/** A row of a build: a field's value (field '' and value '': the day's totals) and its sums over the day's hits. */
export interface DayRollupRow extends DaySums {
  field: string;
  value: string;
}

/** A field value's sums over some builds, per date bucket when asked for (its start, as reports write it). */
export interface DayRollupSum extends DaySums {
  value: string;
  bucket?: string;
}

/** The field of a build's rows that list its day's crossing visits, one visit id each as the row's value. */
export const CROSSING_FIELD = '#crossing';

/** The field of a build's rows of its day's UTC hours, the hour's start (`YYYY-MM-DD HH:00:00`) as the row's value. */
export const HOUR_FIELD = '#hour';

/** What a build records of its day's crossing visits (DayBuild). */
export interface DayCrossings {
  visitIds: readonly bigint[];
  headUntil: number;
  tailFrom: number;
}

/** Where day rollups are kept and checked against their day's hits. */
export interface DayRollupStore {
  /**
   * The site's UTC days in `[fromDay, untilDay)` with a valid build (the newest, where several are), in day
   * order: a build whose counts are the day's counts now.
   */
  validBuilds(siteId: string, fromDay: string, untilDay: string): Promise<DayBuild[]>;
  /**
   * The builds' rows of `field` ('': the totals) summed per value, and per `buckets.get(day)` when given (every
   * build's day must have one), of the values `valueWhere` keeps (a condition on the column `value`, written by the
   * report compiler's dialect with its values escaped; default: every value); undefined when some build's rows were
   * not found (a replica that does not have them yet): the caller reads the hits instead.
   */
  sums(siteId: string, field: string, builds: readonly DayBuild[], buckets?: ReadonlyMap<string, string>, valueWhere?: string): Promise<DayRollupSum[] | undefined>;
  /** A day's counts now, and how many hits it holds (counted, not from the counts). */
  changes(siteId: string, day: string): Promise<DayChanges & { hits: bigint }>;
  /** Adds to a day's counts (making them tell its hits again: see heal). */
  addChanges(siteId: string, day: string, change: DayChanges): Promise<void>;
  /**
   * Days whose counts do not tell their hits (every day stored before the counts existed, and any whose count was
   * cut short): counted in full, and the difference added as inserted or deleted hits. A full read of the hits'
   * sites and times; returns how many days were mended.
   */
  heal(): Promise<number>;
  /** Days before `beforeDay` with hits, newest first, that have no valid build; at most `limit`. */
  daysToBuild(beforeDay: string, limit: number): Promise<{ siteId: string; day: string }[]>;
  /**
   * Stores one build: its rows and crossing visits first, its totals row last, once every replica has the rest
   * (a build is read only with its totals row, so it is seen whole or not at all).
   */
  insertBuild(siteId: string, day: string, builtAt: number, counts: DayChanges, rows: readonly DayRollupRow[], crossings: DayCrossings): Promise<void>;
}

/** A compare-and-set write of one visit's state (see VisitStateStore). */
export interface VisitCommit {
  visitId: string;
  /** The version read before the change (0: the visit is new). */
  expectedVersion: number;
  version: number;
  /** The visit's state, serialised by the caller. */
  doc: string;
  /** Visitor keys to point at the visit, each with the value read before the change (null: none). */
  pointers: { key: string; expected: string | null }[];
  /** How long an untouched visit and its pointers are kept (the same for every commit of one commitAll). */
  ttlMs: number;
}

/**
 * Visit state shared by every process (scale-out, DESIGN.md section 2): visitor keys point at visit documents,
 * changed only by compare-and-set, so hits of one visit may arrive at any process in any interleaving.
 */
export interface VisitStateStore {
  /** For each visitor key: the visit it points at and that visit's document (null when it has expired). */
  lookup(keys: readonly string[]): Promise<({ visitId: string; doc: string | null } | null)[]>;
  /**
   * Applies each commit, in order, only if nothing it read has changed since (true), else not (false: read again
   * and retry). Commits are independent: one refused does not hold back the others.
   */
  commitAll(commits: readonly VisitCommit[]): Promise<boolean[]>;
  close(): Promise<void>;
}
