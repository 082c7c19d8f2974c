// Token abilities (SPEC.md section 5): which scopes exist and what each one lets a token do.

import { TRACKING_CODE_RE } from './ids.js';

export type Ability = '*' | 'all-sites-readonly' | `read:${string}` | `manage:${string}`;

/** Undefined when the string is a well-formed ability, else the reason it is not. */
export function abilityProblem(text: string): string | undefined {
  if (text === '*' || text === 'all-sites-readonly') return undefined;
  const m = /^(read|manage):(.*)$/.exec(text);
  if (!m) return `"${text}" is not one of *, all-sites-readonly, read:{site_id}, manage:{site_id}`;
  if (!TRACKING_CODE_RE.test(m[2] ?? '')) return `"${text}" does not name a site id`;
  return undefined;
}

/** What a token's abilities allow, asked by operation. */
export class Scopes {
  private readonly set: ReadonlySet<string>;
  constructor(readonly abilities: readonly string[]) {
    this.set = new Set(abilities);
  }
  get isFullAccess(): boolean {
    return this.set.has('*');
  }
  /** GET /sites: the whole account's site list. */
  get canListSites(): boolean {
    return this.isFullAccess || this.set.has('all-sites-readonly');
  }
  canReadSite(siteId: string): boolean {
    return this.canListSites || this.set.has(`read:${siteId}`) || this.set.has(`manage:${siteId}`);
  }
  canManageSite(siteId: string): boolean {
    return this.isFullAccess || this.set.has(`manage:${siteId}`);
  }
}
