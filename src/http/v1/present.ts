// Resource objects as SPEC.md section 2 writes them.

import { formatDomainList } from '../../domain/site-domains.js';
import { formatDateAsTimestamp, formatTimestamp } from '../../domain/time.js';
import type { Account, Goal, Milestone, Page, Site, TokenRecord } from '../../store/types.js';

const ts = (d: Date | null) => (d ? formatTimestamp(d) : null);

export const presentAccount = (a: Account) => ({ id: a.id, object: 'account', name: a.name, email: a.email });

export const presentToken = (t: TokenRecord) => ({
  object: 'token',
  name: t.name,
  version: t.version,
  abilities: t.abilities,
  last_used_at: ts(t.lastUsedAt),
  expires_at: ts(t.expiresAt),
  created_at: formatTimestamp(t.createdAt),
  updated_at: formatTimestamp(t.updatedAt),
});

/** share_password is write-only; the multi-domain settings are returned (DESIGN.md section 5). */
export const presentSite = (s: Site) => ({
  id: s.id,
  object: 'site',
  name: s.name,
  sharing: s.sharing,
  created_at: formatTimestamp(s.createdAt),
  timezone: s.timezone,
  multi_domain: s.multiDomain,
  multi_domain_option: s.multiDomainOption,
  domain: formatDomainList(s.domains),
  umami_website_id: s.umamiWebsiteId,
  plausible_script_id: s.plausibleScriptId,
});

/** SPEC.md: `currency` is filled only in create and update responses, `null` in list and get. */
export const presentEvent = (g: Goal, withCurrency: boolean) => ({
  id: g.id,
  object: 'event',
  name: g.name,
  currency: withCurrency ? g.currency : null,
  created_at: formatTimestamp(g.createdAt),
});

export const presentMilestone = (m: Milestone) => ({
  id: m.id,
  object: 'milestone',
  name: m.name,
  milestone_date: formatDateAsTimestamp(m.milestoneDate),
  created_at: formatTimestamp(m.createdAt),
  updated_at: formatTimestamp(m.updatedAt),
});

export const presentList = <T>(url: string, page: Page<T>, present: (item: T) => unknown) => ({
  object: 'list',
  url: url.split('?')[0]!.replace(/(.)\/+$/, '$1'),
  has_more: page.hasMore,
  data: page.items.map(present),
});

export const presentDeleted = (id: string, object: string) => ({ id, object, deleted: true });
