// Body rules of SPEC.md section 4 that a JSON schema cannot say: cross-field requirements, time zones, dates.
// Types, lengths, enumerations and required fields are checked first by the route schemas; these rules run on
// well-typed input.

import { FieldErrorCollector, ValidationError } from './errors.js';
import { normalizePlausibleScriptId, normalizeUmamiWebsiteId, parseDomainList } from './site-domains.js';
import { isCalendarDate, isTimeZone } from './time.js';
import type { Currency, MultiDomainOption, Sharing, Site } from '../store/types.js';

export interface SiteBody {
  name?: string;
  sharing?: Sharing;
  share_password?: string;
  timezone?: string;
  multi_domain?: boolean;
  multi_domain_option?: MultiDomainOption;
  /** Extension: comma-separated hostnames; `null` or `''` removes them all. */
  domain?: string | null;
  /** Extension: the Umami website UUID; `null` or `''` removes it. */
  umami_website_id?: string | null;
  /** Extension: the id of Plausible's per-site script (`pa-<id>.js`); `null` or `''` removes it. */
  plausible_script_id?: string | null;
}

/** The settings a site ends up with, with the share password still in clear (hashed by the caller). */
export interface SiteSettings {
  name: string;
  sharing: Sharing;
  /** New clear-text password, `null` to clear the stored one, undefined to keep it. */
  sharePassword: string | null | undefined;
  timezone: string;
  multiDomain: boolean;
  multiDomainOption: MultiDomainOption | null;
  /** The new domains, undefined to keep them. */
  domains: string[] | undefined;
  /** The new Umami website id (`null`: none), undefined to keep it. */
  umamiWebsiteId: string | null | undefined;
  /** The new Plausible script id (`null`: none), undefined to keep it. */
  plausibleScriptId: string | null | undefined;
}

/**
 * Applies a create (no `current`) or update body. `private` needs a password in the same request; leaving
 * `private` clears the stored one. `multi_domain: true` needs `multi_domain_option` in the same request, and
 * turning multi-domain off clears the option.
 */
export function siteSettings(body: SiteBody, current: Site | undefined, defaultTimezone: string): SiteSettings {
  const errors = new FieldErrorCollector();
  if (body.timezone !== undefined && !isTimeZone(body.timezone)) {
    errors.add('timezone', 'is not a time zone of the TZ database (for example Europe/Berlin)');
  }
  const sharing = body.sharing ?? current?.sharing ?? 'none';
  if (body.sharing === 'private' && body.share_password === undefined) {
    errors.add('share_password', "is required when sharing is 'private'");
  }
  if (body.multi_domain === true && body.multi_domain_option === undefined) {
    errors.add('multi_domain_option', 'is required when multi_domain is true');
  }
  let domains: string[] | undefined;
  if (body.domain !== undefined) {
    const parsed = parseDomainList(body.domain ?? '');
    if ('error' in parsed) errors.add('domain', parsed.error);
    else domains = parsed.domains;
  }
  let umamiWebsiteId: string | null | undefined;
  if (body.umami_website_id === null || body.umami_website_id === '') umamiWebsiteId = null;
  else if (body.umami_website_id !== undefined) {
    umamiWebsiteId = normalizeUmamiWebsiteId(body.umami_website_id);
    if (umamiWebsiteId === undefined) errors.add('umami_website_id', 'must be a UUID (the website id of Umami\'s tracking code)');
  }
  let plausibleScriptId: string | null | undefined;
  if (body.plausible_script_id === null || body.plausible_script_id === '') plausibleScriptId = null;
  else if (body.plausible_script_id !== undefined) {
    plausibleScriptId = normalizePlausibleScriptId(body.plausible_script_id);
    if (plausibleScriptId === undefined) {
      errors.add('plausible_script_id', "must be the id of Plausible's script for the site: pa-<id>.js in the snippet's src (4 to 64 letters, digits, _ or -)");
    }
  }
  errors.throwIfAny();

  const multiDomain = body.multi_domain ?? current?.multiDomain ?? false;
  let sharePassword: string | null | undefined;
  if (sharing !== 'private') sharePassword = current?.sharePasswordHash ? null : undefined;
  else sharePassword = body.share_password;
  return {
    name: body.name ?? current!.name,
    sharing,
    sharePassword,
    timezone: body.timezone ?? current?.timezone ?? defaultTimezone,
    multiDomain,
    multiDomainOption: multiDomain ? (body.multi_domain_option ?? current?.multiDomainOption ?? null) : null,
    domains,
    umamiWebsiteId,
    plausibleScriptId,
  };
}

export interface GoalBody {
  name?: string;
  currency?: Currency;
}

export interface MilestoneBody {
  name?: string;
  milestone_date?: string;
}

/** Both fields are required on create and on update (SPEC.md section 4); the date must exist. */
export function milestoneFields(body: Required<MilestoneBody>): { name: string; milestoneDate: string } {
  if (!isCalendarDate(body.milestone_date)) {
    throw ValidationError.of('milestone_date', 'must be a real date in YYYY-MM-DD format');
  }
  return { name: body.name, milestoneDate: body.milestone_date };
}
