// Rows of the metadata tables as domain objects: one mapping for every SQL MetaStore (DuckDB, PostgreSQL).

import type { Account, DashboardSession, Funnel, FunnelStep, Goal, ImportRecord, Milestone, PageGoal, Segment, SegmentFilter, Site, TokenRecord } from './types.js';

type Row = Record<string, unknown>;

export const toAccount = (r: Row): Account => ({
  id: Number(r.id),
  name: r.name as string,
  email: r.email as string,
  timezone: r.timezone as string,
  tier: Number(r.tier),
  subscriptionStatus: r.subscription_status as Account['subscriptionStatus'],
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export const toToken = (r: Row): TokenRecord => ({
  id: r.id as string,
  accountId: Number(r.account_id),
  name: r.name as string,
  version: Number(r.version),
  abilities: JSON.parse(r.abilities as string) as string[],
  hash: r.hash as string,
  lastUsedAt: (r.last_used_at as Date | null) ?? null,
  expiresAt: (r.expires_at as Date | null) ?? null,
  revokedAt: (r.revoked_at as Date | null) ?? null,
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export const toSite = (r: Row): Site => ({
  id: r.id as string,
  accountId: Number(r.account_id),
  name: r.name as string,
  sharing: r.sharing as Site['sharing'],
  sharePasswordHash: (r.share_password_hash as string | null) ?? null,
  timezone: r.timezone as string,
  multiDomain: Boolean(r.multi_domain),
  multiDomainOption: (r.multi_domain_option as Site['multiDomainOption']) ?? null,
  // Comma-separated in the row (site_domains holds one row per domain for lookups).
  domains: typeof r.domains === 'string' && r.domains !== '' ? r.domains.split(',') : [],
  umamiWebsiteId: (r.umami_website_id as string | null | undefined) ?? null,
  plausibleScriptId: (r.plausible_script_id as string | null | undefined) ?? null,
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export const toGoal = (r: Row): Goal => ({
  id: r.id as string,
  siteId: r.site_id as string,
  name: r.name as string,
  currency: r.currency as Goal['currency'],
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export const toMilestone = (r: Row): Milestone => ({
  id: r.id as string,
  siteId: r.site_id as string,
  name: r.name as string,
  // DuckDB gives a Date, PostgreSQL (as Plumb configures it) the `YYYY-MM-DD` text.
  milestoneDate: typeof r.milestone_date === 'string' ? r.milestone_date : (r.milestone_date as Date).toISOString().slice(0, 10),
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export const toSegment = (r: Row): Segment => ({
  id: r.id as string,
  siteId: r.site_id as string,
  userId: Number(r.user_id),
  name: r.name as string,
  shared: Boolean(r.shared),
  // Written only by createSegment/updateSegment, from filters checked before they are saved.
  filters: JSON.parse(r.filters as string) as SegmentFilter[],
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export const toPageGoal = (r: Row): PageGoal => ({
  id: r.id as string,
  siteId: r.site_id as string,
  name: r.name as string,
  path: r.path as string,
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export const toFunnel = (r: Row): Funnel => ({
  id: r.id as string,
  siteId: r.site_id as string,
  name: r.name as string,
  // Written only by createFunnel/updateFunnel, from steps and filters checked before they are saved.
  steps: JSON.parse(r.steps as string) as FunnelStep[],
  filters: JSON.parse(r.filters as string) as SegmentFilter[],
  createdAt: r.created_at as Date,
  updatedAt: r.updated_at as Date,
});

export const toSession = (r: Row): DashboardSession => ({
  idHash: r.id_hash as string,
  kind: r.kind as DashboardSession['kind'],
  accountId: Number(r.account_id),
  siteId: (r.site_id as string | null) ?? null,
  csrf: r.csrf as string,
  binding: (r.binding as string | null) ?? null,
  createdAt: r.created_at as Date,
  expiresAt: r.expires_at as Date,
  userId: r.user_id === null || r.user_id === undefined ? null : Number(r.user_id),
  userAgent: (r.user_agent as string | null) ?? null,
});

const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : (v as Date));

export const toImport = (r: Row): ImportRecord => ({
  id: r.id as string,
  siteId: r.site_id as string,
  kind: r.kind as ImportRecord['kind'],
  fileName: r.file_name as string,
  digest: (r.digest as string | null) ?? null,
  status: r.status as ImportRecord['status'],
  imported: Number(r.imported),
  rejected: Number(r.rejected),
  firstHitAt: dateOrNull(r.first_hit_at),
  lastHitAt: dateOrNull(r.last_hit_at),
  // DuckDB gives a bigint, PostgreSQL's NUMERIC the text of the number.
  visitIdBase: BigInt(r.visit_id_base as bigint | string),
  createdAt: r.created_at as Date,
  finishedAt: dateOrNull(r.finished_at),
  owner: (r.owner as string | null) ?? null,
  heartbeatAt: dateOrNull(r.heartbeat_at),
  failure: (r.failure as string | null) ?? null,
});
