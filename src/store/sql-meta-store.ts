// MetaStore in SQL: accounts, tokens, sites, events (goals), pageview goals, milestones, segments, usage and salts. One implementation for
// the embedded DuckDB file and for PostgreSQL: the statements are plain SQL both understand.

import { ValidationError } from '../domain/errors.js';
import { newTrackingCode, newUuid } from '../domain/ids.js';
import type {
  Account, AccountPatch, DashboardSession, Goal, GoalPatch, ImportOutcome, ImportRecord, NewImport, Login, MetaStore, Milestone, MilestonePatch, MonthlyUsage,
  Funnel, FunnelPatch, NewFunnel, NewAccount, NewDashboardSession, NewGoal, NewMilestone, NewPageGoal, NewSegment, NewSite, NewToken, Page, PageGoal, PageGoalPatch, PageRequest, Segment, SegmentPatch, Site,
  SitePatch, TokenRecord,
} from './types.js';
import type { SqlDatabase, SqlParam as Param, SqlQuerier as Querier } from './sql-database.js';
import { toAccount, toFunnel, toGoal, toImport, toMilestone, toPageGoal, toSegment, toSession, toSite, toToken } from './sql-rows.js';

type Row = Record<string, unknown>;

/** Column lists for UPDATE statements; keys are the only SQL text built from code, never from input. */
const SITE_COLUMNS: Record<Exclude<keyof SitePatch, 'domains'>, string> = {
  name: 'name',
  sharing: 'sharing',
  sharePasswordHash: 'share_password_hash',
  timezone: 'timezone',
  multiDomain: 'multi_domain',
  multiDomainOption: 'multi_domain_option',
  umamiWebsiteId: 'umami_website_id',
  plausibleScriptId: 'plausible_script_id',
};
const ACCOUNT_COLUMNS: Record<keyof AccountPatch, string> = {
  name: 'name',
  email: 'email',
  timezone: 'timezone',
  tier: 'tier',
  subscriptionStatus: 'subscription_status',
};

function assignments<K extends string>(columns: Record<K, string>, patch: Partial<Record<K, Param>>) {
  const sets: string[] = [];
  const params: Param[] = [];
  for (const key of Object.keys(columns) as K[]) {
    const value = patch[key];
    if (value === undefined) continue;
    sets.push(`${columns[key]} = ?`);
    params.push(value);
  }
  return { sets, params };
}

export class SqlMetaStore implements MetaStore {
  constructor(private readonly db: SqlDatabase) {}

  // ---- accounts

  createAccount(input: NewAccount): Promise<Account> {
    const now = new Date();
    return this.db.serial(async (q) => {
      const [row] = await q.rows(
        `INSERT INTO accounts (name, email, timezone, tier, subscription_status, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        [input.name, input.email, input.timezone, input.tier, input.subscriptionStatus, now, now],
      );
      return toAccount(row!);
    });
  }

  async getAccount(id: number): Promise<Account | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM accounts WHERE id = ?', [id]));
    return rows[0] && toAccount(rows[0]);
  }

  async listAccounts(): Promise<Account[]> {
    return (await this.db.serial((q) => q.rows('SELECT * FROM accounts ORDER BY id'))).map(toAccount);
  }

  async updateAccount(id: number, patch: AccountPatch): Promise<Account | undefined> {
    const { sets, params } = assignments(ACCOUNT_COLUMNS, patch);
    const rows = await this.db.serial((q) =>
      q.rows(`UPDATE accounts SET ${[...sets, 'updated_at = ?'].join(', ')} WHERE id = ? RETURNING *`, [
        ...params, new Date(), id,
      ]),
    );
    return rows[0] && toAccount(rows[0]);
  }

  // ---- usage

  async addUsage(counts: ReadonlyMap<number, ReadonlyMap<string, number>>): Promise<void> {
    if (counts.size === 0) return;
    await this.db.transaction(async (q) => {
      for (const [accountId, months] of counts) {
        for (const [month, n] of months) {
          await q.exec(
            `INSERT INTO api_usage VALUES (?, ?, ?)
             ON CONFLICT (account_id, month) DO UPDATE SET api_requests = api_usage.api_requests + excluded.api_requests`,
            [accountId, month, n],
          );
        }
      }
    });
  }

  async getUsage(accountId: number): Promise<MonthlyUsage[]> {
    const rows = await this.db.serial((q) =>
      q.rows<{ month: string; api_requests: bigint }>(
        'SELECT month, api_requests FROM api_usage WHERE account_id = ? ORDER BY month',
        [accountId],
      ),
    );
    return rows.map((r) => ({ month: r.month, apiRequests: Number(r.api_requests) }));
  }

  // ---- visitor salts

  saltForDay(day: string, candidate: string): Promise<string> {
    return this.db.transaction(async (q) => {
      await q.exec('INSERT INTO salts VALUES (CAST(? AS DATE), ?, ?) ON CONFLICT (day) DO NOTHING', [day, candidate, new Date()]);
      const [row] = await q.rows<{ salt: string }>('SELECT salt FROM salts WHERE day = CAST(? AS DATE)', [day]);
      return row!.salt;
    });
  }

  async findSalt(day: string): Promise<string | undefined> {
    const rows = await this.db.serial((q) => q.rows<{ salt: string }>('SELECT salt FROM salts WHERE day = CAST(? AS DATE)', [day]));
    return rows[0]?.salt;
  }

  async deleteSaltsBefore(day: string): Promise<number> {
    const rows = await this.db.serial((q) => q.rows('DELETE FROM salts WHERE day < CAST(? AS DATE) RETURNING day', [day]));
    return rows.length;
  }

  // ---- dashboard logins and sessions

  /** The account's first owner: the lowest user id with that role. */
  private async ownerUserId(q: Querier, accountId: number): Promise<number | undefined> {
    const [row] = await q.rows<{ user_id: number }>(
      "SELECT min(user_id) AS user_id FROM memberships WHERE account_id = ? AND role = 'owner'",
      [accountId],
    );
    return row?.user_id === null || row?.user_id === undefined ? undefined : Number(row.user_id);
  }

  async getPasswordHash(accountId: number): Promise<string | undefined> {
    return this.db.serial(async (q) => {
      const userId = await this.ownerUserId(q, accountId);
      if (userId === undefined) return undefined;
      const [row] = await q.rows<{ password_hash: string | null }>('SELECT password_hash FROM users WHERE id = ?', [userId]);
      return row?.password_hash ?? undefined;
    });
  }

  async setPasswordHash(accountId: number, hash: string): Promise<number> {
    return this.db.transaction(async (q) => {
      const now = new Date();
      let userId = await this.ownerUserId(q, accountId);
      if (userId === undefined) {
        const [account] = await q.rows<{ email: string }>('SELECT email FROM accounts WHERE id = ?', [accountId]);
        if (!account) return 0;
        const key = account.email.trim().toLowerCase();
        const [user] = await q.rows<{ id: number }>('SELECT id FROM users WHERE email_key = ?', [key]);
        userId = user
          ? Number(user.id)
          : Number(
              (
                await q.rows<{ id: number }>(
                  'INSERT INTO users (email, email_key, password_hash, created_at, updated_at) VALUES (?, ?, NULL, ?, ?) RETURNING id',
                  [account.email.trim(), key, now, now],
                )
              )[0]!.id,
            );
        await q.exec(
          `INSERT INTO memberships (account_id, user_id, role, site_ids, created_at) VALUES (?, ?, 'owner', NULL, ?)
           ON CONFLICT (account_id, user_id) DO UPDATE SET role = 'owner', site_ids = NULL`,
          [accountId, userId, now],
        );
      }
      await q.exec('UPDATE users SET password_hash = ?, updated_at = ? WHERE id = ?', [hash, now, userId]);
      // That person's logins end everywhere; the account's other members stay logged in.
      return (await q.rows("DELETE FROM dashboard_sessions WHERE user_id = ? AND kind <> 'share' RETURNING id_hash", [userId])).length;
    });
  }

  async findLogin(email: string): Promise<Login | undefined> {
    return this.db.serial(async (q) => {
      const [user] = await q.rows<{ id: number; password_hash: string | null }>(
        'SELECT id, password_hash FROM users WHERE email_key = ?',
        [email.trim().toLowerCase()],
      );
      if (!user?.password_hash) return undefined;
      const [account] = await q.rows(
        'SELECT a.* FROM memberships m JOIN accounts a ON a.id = m.account_id WHERE m.user_id = ? ORDER BY a.id LIMIT 1',
        [user.id],
      );
      return { userId: Number(user.id), account: account && toAccount(account), passwordHash: user.password_hash };
    });
  }

  createSession(input: NewDashboardSession): Promise<DashboardSession> {
    return this.db.serial(async (q) => {
      const [row] = await q.rows(
        `INSERT INTO dashboard_sessions (id_hash, kind, account_id, site_id, csrf, binding, created_at, expires_at, user_id, user_agent)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        [input.idHash, input.kind, input.accountId, input.siteId, input.csrf, input.binding, new Date(), input.expiresAt,
          input.userId ?? null, input.userAgent ?? null],
      );
      return toSession(row!);
    });
  }

  async findSession(idHash: string): Promise<DashboardSession | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM dashboard_sessions WHERE id_hash = ?', [idHash]));
    return rows[0] && toSession(rows[0]);
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.serial((q) => q.exec('DELETE FROM dashboard_sessions WHERE id_hash = ?', [idHash]));
  }

  async deleteAccountSessions(accountId: number): Promise<number> {
    const rows = await this.db.serial((q) =>
      q.rows('DELETE FROM dashboard_sessions WHERE account_id = ? RETURNING id_hash', [accountId]),
    );
    return rows.length;
  }

  async deleteExpiredSessions(now: Date): Promise<number> {
    const rows = await this.db.serial((q) => q.rows('DELETE FROM dashboard_sessions WHERE expires_at < ? RETURNING id_hash', [now]));
    return rows.length;
  }

  // ---- tokens

  createToken(input: NewToken): Promise<TokenRecord> {
    const now = new Date();
    return this.db.serial(async (q) => {
      const [row] = await q.rows(
        `INSERT INTO tokens (id, account_id, name, version, abilities, hash, expires_at, created_at, updated_at, for_cli)
         VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?) RETURNING *`,
        [newUuid(), input.accountId, input.name, JSON.stringify(input.abilities), input.hash, input.expiresAt, now, now, input.forCli ?? false],
      );
      return toToken(row!);
    });
  }

  async findTokenByHash(hash: string): Promise<TokenRecord | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM tokens WHERE hash = ?', [hash]));
    return rows[0] && toToken(rows[0]);
  }

  async listTokens(accountId: number, whose: 'account' | 'cli' = 'account'): Promise<TokenRecord[]> {
    const rows = await this.db.serial((q) =>
      q.rows('SELECT * FROM tokens WHERE account_id = ? AND for_cli = ? ORDER BY created_at, seq', [accountId, whose === 'cli']),
    );
    return rows.map(toToken);
  }

  async revokeToken(accountId: number, tokenId: string): Promise<boolean> {
    const now = new Date();
    const rows = await this.db.serial((q) =>
      q.rows(
        `UPDATE tokens SET revoked_at = ?, updated_at = ?
         WHERE id = ? AND account_id = ? AND revoked_at IS NULL RETURNING id`,
        [now, now, tokenId, accountId],
      ),
    );
    return rows.length > 0;
  }

  async touchTokens(lastUsed: ReadonlyMap<string, Date>): Promise<void> {
    if (lastUsed.size === 0) return;
    await this.db.transaction(async (q) => {
      for (const [id, at] of lastUsed) {
        await q.exec(
          'UPDATE tokens SET last_used_at = ? WHERE id = ? AND (last_used_at IS NULL OR last_used_at < ?)',
          [at, id, at],
        );
      }
    });
  }

  // ---- sites

  createSite(input: NewSite): Promise<Site> {
    const now = new Date();
    const domains = input.domains ?? [];
    const umamiWebsiteId = input.umamiWebsiteId ?? null;
    const plausibleScriptId = input.plausibleScriptId ?? null;
    return this.uniqueKeys(() =>
      this.db.transaction(async (q) => {
        await assertKeysFree(q, undefined, domains, umamiWebsiteId, plausibleScriptId);
        const site = await insertWithFreshCode(q, 'sites', async (id) => {
          const [row] = await q.rows(
            `INSERT INTO sites (id, account_id, name, sharing, share_password_hash, timezone, multi_domain,
               multi_domain_option, domains, umami_website_id, plausible_script_id, created_at, updated_at)
             VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
            [id, input.accountId, input.name, input.sharing, input.sharePasswordHash, input.timezone,
              input.multiDomain, input.multiDomainOption, domains.join(','), umamiWebsiteId, plausibleScriptId, now, now],
          );
          return toSite(row!);
        });
        for (const domain of domains) await q.exec('INSERT INTO site_domains VALUES (?, ?)', [domain, site.id]);
        return site;
      }),
    );
  }

  async getSite(id: string): Promise<Site | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM sites WHERE id = ?', [id]));
    return rows[0] && toSite(rows[0]);
  }

  async findSiteByDomain(domain: string): Promise<Site | undefined> {
    const rows = await this.db.serial((q) =>
      q.rows('SELECT s.* FROM site_domains d JOIN sites s ON s.id = d.site_id WHERE d.domain = ?', [domain]),
    );
    return rows[0] && toSite(rows[0]);
  }

  async findSiteByUmamiId(websiteId: string): Promise<Site | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM sites WHERE umami_website_id = ?', [websiteId]));
    return rows[0] && toSite(rows[0]);
  }

  async findSiteByPlausibleScriptId(scriptId: string): Promise<Site | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM sites WHERE plausible_script_id = ?', [scriptId]));
    return rows[0] && toSite(rows[0]);
  }

  listSites(accountId: number, page: PageRequest): Promise<Page<Site>> {
    return this.page('sites', 'account_id', accountId, page, toSite);
  }

  async updateSite(id: string, patch: SitePatch): Promise<Site> {
    const { domains, ...rest } = patch;
    const { sets, params } = assignments(SITE_COLUMNS, rest);
    if (domains !== undefined) {
      sets.push('domains = ?');
      params.push(domains.join(','));
    }
    return this.uniqueKeys(() =>
      this.db.transaction(async (q) => {
        await assertKeysFree(q, id, domains ?? [], patch.umamiWebsiteId ?? null, patch.plausibleScriptId ?? null);
        const rows = await q.rows(`UPDATE sites SET ${[...sets, 'updated_at = ?'].join(', ')} WHERE id = ? RETURNING *`, [
          ...params, new Date(), id,
        ]);
        if (domains !== undefined) {
          // Only the differences: a domain kept is never deleted and inserted again.
          const old = (await q.rows<{ domain: string }>('SELECT domain FROM site_domains WHERE site_id = ?', [id])).map((r) => r.domain);
          for (const gone of old.filter((d) => !domains.includes(d))) {
            await q.exec('DELETE FROM site_domains WHERE domain = ? AND site_id = ?', [gone, id]);
          }
          for (const added of domains.filter((d) => !old.includes(d))) {
            await q.exec('INSERT INTO site_domains VALUES (?, ?)', [added, id]);
          }
        }
        return toSite(rows[0]!);
      }),
    );
  }

  async deleteSite(id: string): Promise<void> {
    await this.db.transaction(async (q) => {
      await q.exec('DELETE FROM goals WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM milestones WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM segments WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM page_goals WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM funnels WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM dashboard_sessions WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM site_domains WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM imports WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM report_deliveries WHERE subscription_id IN (SELECT id FROM report_subscriptions WHERE site_id = ?)', [id]);
      await q.exec('DELETE FROM report_subscriptions WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM site_embedding WHERE site_id = ?', [id]);
      await q.exec('DELETE FROM sites WHERE id = ?', [id]);
    });
  }

  async getEmbedOrigins(siteId: string): Promise<string[]> {
    const rows = await this.db.serial((q) => q.rows<{ origins: string }>('SELECT origins FROM site_embedding WHERE site_id = ?', [siteId]));
    return rows[0] ? rows[0].origins.split(' ').filter((o) => o !== '') : [];
  }

  async setEmbedOrigins(siteId: string, origins: readonly string[]): Promise<void> {
    await this.db.serial((q) =>
      origins.length === 0
        ? q.exec('DELETE FROM site_embedding WHERE site_id = ?', [siteId])
        : q.exec(
            `INSERT INTO site_embedding (site_id, origins, updated_at) VALUES (?, ?, ?)
             ON CONFLICT (site_id) DO UPDATE SET origins = excluded.origins, updated_at = excluded.updated_at`,
            [siteId, origins.join(' '), new Date()],
          ),
    );
  }

  /**
   * Runs a site write; when another process took one of its domains or its Umami id between the check and the
   * write (PostgreSQL's unique constraints catch it), the same ValidationError as the check's.
   */
  private async uniqueKeys<T>(write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      const e = err as { code?: unknown; constraint?: unknown };
      if (e.code !== '23505') throw err;
      if (e.constraint === 'site_domains_pkey') throw ValidationError.of('domain', TAKEN_DOMAIN);
      if (e.constraint === 'sites_by_umami_website_id') throw ValidationError.of('umami_website_id', TAKEN_KEY);
      if (e.constraint === 'sites_by_plausible_script_id') throw ValidationError.of('plausible_script_id', TAKEN_KEY);
      throw err;
    }
  }

  // ---- imports

  async createImport(input: NewImport): Promise<ImportRecord> {
    const now = new Date();
    const rows = await this.db.serial((q) =>
      q.rows(
        `INSERT INTO imports (id, site_id, kind, file_name, digest, status, imported, rejected, visit_id_base, created_at, owner, heartbeat_at)
         VALUES (?, ?, ?, ?, NULL, 'running', 0, 0, ?, ?, ?, ?) RETURNING *`,
        // The base as text: PostgreSQL's NUMERIC and DuckDB's UBIGINT both take it (a bigint over 2^63 fits neither binding).
        [newUuid(), input.siteId, input.kind, input.fileName, input.visitIdBase.toString(), now, input.owner, now],
      ),
    );
    return toImport(rows[0]!);
  }

  async finishImport(id: string, owner: string, o: ImportOutcome): Promise<ImportRecord | undefined> {
    const rows = await this.db.serial((q) =>
      q.rows(
        `UPDATE imports SET status = ?, digest = ?, imported = ?, rejected = ?, first_hit_at = ?, last_hit_at = ?, failure = ?, finished_at = ?
         WHERE id = ? AND status = 'running' AND owner = ? RETURNING *`,
        [o.status, o.digest, o.imported, o.rejected, o.firstHitAt, o.lastHitAt, o.failure, new Date(), id, owner],
      ),
    );
    return rows[0] && toImport(rows[0]);
  }

  async renewImport(id: string, owner: string, at: Date): Promise<boolean> {
    const rows = await this.db.serial((q) =>
      q.rows(`UPDATE imports SET heartbeat_at = ? WHERE id = ? AND status = 'running' AND owner = ? RETURNING id`, [at, id, owner]),
    );
    return rows.length > 0;
  }

  async runningImports(): Promise<ImportRecord[]> {
    const rows = await this.db.serial((q) => q.rows(`SELECT * FROM imports WHERE status = 'running' ORDER BY created_at, seq`));
    return rows.map(toImport);
  }

  async claimImport(seen: ImportRecord, owner: string, at: Date): Promise<ImportRecord | undefined> {
    // A compare-and-set on what the caller saw: a second claimer finds the owner or heartbeat changed.
    const rows = await this.db.serial((q) =>
      q.rows(
        `UPDATE imports SET owner = ?, heartbeat_at = ?
         WHERE id = ? AND status = 'running' AND owner IS NOT DISTINCT FROM ? AND heartbeat_at IS NOT DISTINCT FROM ? RETURNING *`,
        [owner, at, seen.id, seen.owner, seen.heartbeatAt],
      ),
    );
    return rows[0] && toImport(rows[0]);
  }

  async getImport(id: string): Promise<ImportRecord | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM imports WHERE id = ?', [id]));
    return rows[0] && toImport(rows[0]);
  }

  async listImports(siteId: string): Promise<ImportRecord[]> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM imports WHERE site_id = ? ORDER BY created_at, seq', [siteId]));
    return rows.map(toImport);
  }

  async deleteImport(id: string): Promise<void> {
    await this.db.serial((q) => q.exec('DELETE FROM imports WHERE id = ?', [id]));
  }

  // ---- events (conversion goals)

  createGoal(input: NewGoal): Promise<Goal> {
    const now = new Date();
    return this.db.serial((q) =>
      insertWithFreshCode(q, 'goals', async (id) => {
        const [row] = await q.rows(
          `INSERT INTO goals (id, site_id, name, currency, created_at, updated_at)
           VALUES (?, ?, ?, ?, ?, ?) RETURNING *`,
          [id, input.siteId, input.name, input.currency, now, now],
        );
        return toGoal(row!);
      }),
    );
  }

  async getGoal(siteId: string, id: string): Promise<Goal | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM goals WHERE id = ? AND site_id = ?', [id, siteId]));
    return rows[0] && toGoal(rows[0]);
  }

  async findGoalByName(siteId: string, name: string): Promise<Goal | undefined> {
    const rows = await this.db.serial((q) =>
      q.rows('SELECT * FROM goals WHERE site_id = ? AND name = ? ORDER BY created_at, seq LIMIT 1', [siteId, name]),
    );
    return rows[0] && toGoal(rows[0]);
  }

  listGoals(siteId: string, page: PageRequest): Promise<Page<Goal>> {
    return this.page('goals', 'site_id', siteId, page, toGoal);
  }

  async updateGoal(siteId: string, id: string, patch: GoalPatch): Promise<Goal> {
    const rows = await this.db.serial((q) =>
      q.rows(
        `UPDATE goals SET name = coalesce(?, name), currency = coalesce(?, currency), updated_at = ?
         WHERE id = ? AND site_id = ? RETURNING *`,
        [patch.name ?? null, patch.currency ?? null, new Date(), id, siteId],
      ),
    );
    return toGoal(rows[0]!);
  }

  async deleteGoal(siteId: string, id: string): Promise<void> {
    await this.db.serial((q) => q.exec('DELETE FROM goals WHERE id = ? AND site_id = ?', [id, siteId]));
  }

  // ---- milestones

  async createMilestone(input: NewMilestone): Promise<Milestone> {
    const now = new Date();
    const rows = await this.db.serial((q) =>
      q.rows(
        `INSERT INTO milestones (id, site_id, name, milestone_date, created_at, updated_at)
         VALUES (?, ?, ?, CAST(? AS DATE), ?, ?) RETURNING *`,
        [newUuid(), input.siteId, input.name, input.milestoneDate, now, now],
      ),
    );
    return toMilestone(rows[0]!);
  }

  async getMilestone(siteId: string, id: string): Promise<Milestone | undefined> {
    const rows = await this.db.serial((q) =>
      q.rows('SELECT * FROM milestones WHERE id = ? AND site_id = ?', [id, siteId]),
    );
    return rows[0] && toMilestone(rows[0]);
  }

  listMilestones(siteId: string, page: PageRequest): Promise<Page<Milestone>> {
    return this.page('milestones', 'site_id', siteId, page, toMilestone);
  }

  async updateMilestone(siteId: string, id: string, patch: MilestonePatch): Promise<Milestone> {
    const rows = await this.db.serial((q) =>
      q.rows(
        `UPDATE milestones SET name = ?, milestone_date = CAST(? AS DATE), updated_at = ?
         WHERE id = ? AND site_id = ? RETURNING *`,
        [patch.name, patch.milestoneDate, new Date(), id, siteId],
      ),
    );
    return toMilestone(rows[0]!);
  }

  async deleteMilestone(siteId: string, id: string): Promise<void> {
    await this.db.serial((q) => q.exec('DELETE FROM milestones WHERE id = ? AND site_id = ?', [id, siteId]));
  }

  // ---- segments

  createSegment(input: NewSegment, maxPerUser: number): Promise<Segment | undefined> {
    const now = new Date();
    return this.db.transaction(async (q) => {
      const [held] = await q.rows<{ n: bigint | number | string }>('SELECT count(*) AS n FROM segments WHERE site_id = ? AND user_id = ?', [input.siteId, input.userId]);
      if (Number(held!.n) >= maxPerUser) return undefined;
      const [row] = await q.rows(
        `INSERT INTO segments (id, site_id, user_id, name, shared, filters, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?) RETURNING *`,
        [newUuid(), input.siteId, input.userId, input.name, input.shared, JSON.stringify(input.filters), now, now],
      );
      return toSegment(row!);
    });
  }

  async getSegment(siteId: string, id: string): Promise<Segment | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM segments WHERE id = ? AND site_id = ?', [id, siteId]));
    return rows[0] && toSegment(rows[0]);
  }

  async listSegments(siteId: string, userId: number): Promise<Segment[]> {
    const rows = await this.db.serial((q) =>
      q.rows('SELECT * FROM segments WHERE site_id = ? AND (user_id = ? OR shared) ORDER BY lower(name), created_at, seq', [siteId, userId]),
    );
    return rows.map(toSegment);
  }

  async updateSegment(siteId: string, id: string, patch: SegmentPatch): Promise<Segment | undefined> {
    const rows = await this.db.serial((q) =>
      q.rows(
        `UPDATE segments SET name = coalesce(?, name), shared = coalesce(?, shared), filters = coalesce(?, filters), updated_at = ?
         WHERE id = ? AND site_id = ? RETURNING *`,
        [patch.name ?? null, patch.shared ?? null, patch.filters ? JSON.stringify(patch.filters) : null, new Date(), id, siteId],
      ),
    );
    return rows[0] && toSegment(rows[0]);
  }

  async deleteSegment(siteId: string, id: string): Promise<boolean> {
    const rows = await this.db.serial((q) => q.rows('DELETE FROM segments WHERE id = ? AND site_id = ? RETURNING id', [id, siteId]));
    return rows.length > 0;
  }

  // ---- pageview goals

  createPageGoal(input: NewPageGoal, maxPerSite: number): Promise<PageGoal | undefined> {
    const now = new Date();
    return this.db.transaction(async (q) => {
      const [held] = await q.rows<{ n: bigint | number | string }>('SELECT count(*) AS n FROM page_goals WHERE site_id = ?', [input.siteId]);
      if (Number(held!.n) >= maxPerSite) return undefined;
      const [row] = await q.rows(
        'INSERT INTO page_goals (id, site_id, name, path, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?) RETURNING *',
        [newUuid(), input.siteId, input.name, input.path, now, now],
      );
      return toPageGoal(row!);
    });
  }

  async listPageGoals(siteId: string): Promise<PageGoal[]> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM page_goals WHERE site_id = ? ORDER BY lower(name), created_at, seq', [siteId]));
    return rows.map(toPageGoal);
  }

  async updatePageGoal(siteId: string, id: string, patch: PageGoalPatch): Promise<PageGoal | undefined> {
    const rows = await this.db.serial((q) =>
      q.rows(
        'UPDATE page_goals SET name = coalesce(?, name), path = coalesce(?, path), updated_at = ? WHERE id = ? AND site_id = ? RETURNING *',
        [patch.name ?? null, patch.path ?? null, new Date(), id, siteId],
      ),
    );
    return rows[0] && toPageGoal(rows[0]);
  }

  async deletePageGoal(siteId: string, id: string): Promise<boolean> {
    const rows = await this.db.serial((q) => q.rows('DELETE FROM page_goals WHERE id = ? AND site_id = ? RETURNING id', [id, siteId]));
    return rows.length > 0;
  }

  // ---- funnels

  createFunnel(input: NewFunnel, maxPerSite: number): Promise<Funnel | undefined> {
    const now = new Date();
    return this.db.transaction(async (q) => {
      const [held] = await q.rows<{ n: bigint | number | string }>('SELECT count(*) AS n FROM funnels WHERE site_id = ?', [input.siteId]);
      if (Number(held!.n) >= maxPerSite) return undefined;
      const [row] = await q.rows(
        'INSERT INTO funnels (id, site_id, name, steps, filters, created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING *',
        [newUuid(), input.siteId, input.name, JSON.stringify(input.steps), JSON.stringify(input.filters), now, now],
      );
      return toFunnel(row!);
    });
  }

  async getFunnel(siteId: string, id: string): Promise<Funnel | undefined> {
    const rows = await this.db.serial((q) => q.rows('SELECT * FROM funnels WHERE id = ? AND site_id = ?', [id, siteId]));
    return rows[0] && toFunnel(rows[0]);
  }

  listFunnels(siteId: string, page: PageRequest): Promise<Page<Funnel>> {
    return this.page('funnels', 'site_id', siteId, page, toFunnel);
  }

  async updateFunnel(siteId: string, id: string, patch: FunnelPatch): Promise<Funnel | undefined> {
    const rows = await this.db.serial((q) =>
      q.rows(
        `UPDATE funnels SET name = coalesce(?, name), steps = coalesce(?, steps), filters = coalesce(?, filters), updated_at = ?
         WHERE id = ? AND site_id = ? RETURNING *`,
        [
          patch.name ?? null, patch.steps ? JSON.stringify(patch.steps) : null, patch.filters ? JSON.stringify(patch.filters) : null,
          new Date(), id, siteId,
        ],
      ),
    );
    return rows[0] && toFunnel(rows[0]);
  }

  async deleteFunnel(siteId: string, id: string): Promise<boolean> {
    const rows = await this.db.serial((q) => q.rows('DELETE FROM funnels WHERE id = ? AND site_id = ? RETURNING id', [id, siteId]));
    return rows.length > 0;
  }

  async close(): Promise<void> {
    await this.db.close();
  }

  // ---- shared

  /**
   * One page of a list ordered by (created_at, insertion order). Backward pages are read in descending order
   * and flipped, so `data` is always ascending (DESIGN.md section 5).
   */
  private page<T>(
    table: 'sites' | 'goals' | 'milestones' | 'funnels',
    scopeColumn: 'account_id' | 'site_id',
    scope: Param,
    page: PageRequest,
    map: (r: Row) => T,
  ): Promise<Page<T>> {
    return this.db.serial(async (q) => {
      const cursorField = page.startingAfter !== undefined ? 'starting_after' : page.endingBefore !== undefined ? 'ending_before' : undefined;
      const backward = cursorField === 'ending_before';
      let where = `${scopeColumn} = ?`;
      const params: Param[] = [scope];
      if (cursorField) {
        const cursorId = (backward ? page.endingBefore : page.startingAfter)!;
        const [cursor] = await q.rows<{ created_at: Date; seq: bigint }>(
          `SELECT created_at, seq FROM ${table} WHERE id = ? AND ${scopeColumn} = ?`,
          [cursorId, scope],
        );
        if (!cursor) throw ValidationError.of(cursorField, 'does not name an object in this list');
        const op = backward ? '<' : '>';
        where += ` AND (created_at ${op} ? OR (created_at = ? AND seq ${op} ?))`;
        params.push(cursor.created_at, cursor.created_at, cursor.seq);
      }
      const dir = backward ? 'DESC' : 'ASC';
      const rows = await q.rows(
        `SELECT * FROM ${table} WHERE ${where} ORDER BY created_at ${dir}, seq ${dir} LIMIT ?`,
        [...params, page.limit + 1],
      );
      const hasMore = rows.length > page.limit;
      const items = rows.slice(0, page.limit).map(map);
      if (backward) items.reverse();
      return { items, hasMore };
    });
  }
}

const TAKEN_DOMAIN = 'is already used by another site (a domain names one site)';
const TAKEN_KEY = 'is already used by another site';

/** A ValidationError when another site than `siteId` has one of these domains, this Umami website id or Plausible script id. */
async function assertKeysFree(
  q: Querier,
  siteId: string | undefined,
  domains: readonly string[],
  umamiWebsiteId: string | null,
  plausibleScriptId: string | null,
) {
  const other = siteId ?? '';
  for (const domain of domains) {
    const taken = await q.rows('SELECT 1 FROM site_domains WHERE domain = ? AND site_id <> ?', [domain, other]);
    if (taken.length > 0) throw ValidationError.of('domain', `${domain} ${TAKEN_DOMAIN}`);
  }
  if (umamiWebsiteId !== null) {
    const taken = await q.rows('SELECT 1 FROM sites WHERE umami_website_id = ? AND id <> ?', [umamiWebsiteId, other]);
    if (taken.length > 0) throw ValidationError.of('umami_website_id', TAKEN_KEY);
  }
  if (plausibleScriptId !== null) {
    const taken = await q.rows('SELECT 1 FROM sites WHERE plausible_script_id = ? AND id <> ?', [plausibleScriptId, other]);
    if (taken.length > 0) throw ValidationError.of('plausible_script_id', TAKEN_KEY);
  }
}

/** Tracking codes are random; on the rare collision, draw again. */
async function insertWithFreshCode<T>(q: Querier, table: 'sites' | 'goals', insert: (id: string) => Promise<T>): Promise<T> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const id = newTrackingCode();
    const taken = await q.rows(`SELECT 1 FROM ${table} WHERE id = ?`, [id]);
    if (taken.length === 0) return insert(id);
  }
  throw new Error(`could not allocate a free ${table} id`);
}
