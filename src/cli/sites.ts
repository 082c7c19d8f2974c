// `plumb site list | create | show`: an account's sites through /v1, with each site's script tag and report link.

import type { V1Call } from './acting.js';

export interface SiteJson {
  id: string;
  name: string;
  sharing: string;
  timezone: string;
  created_at: string;
  domain?: string | null;
}

interface SiteList {
  data: SiteJson[];
  has_more: boolean;
}

/** The tag a site owner adds to their pages; SPA tracking on, as the dashboard's tag has it. */
export const scriptTag = (url: string, siteId: string) =>
  `<script src="${url}/script.js" data-site="${siteId}" data-spa="auto" defer></script>`;

export const reportUrl = (url: string, siteId: string) => `${url}/sites/${siteId}`;
export const shareUrl = (url: string, siteId: string) => `${url}/share/${siteId}`;

export async function listSites(call: V1Call): Promise<SiteJson[]> {
  const sites: SiteJson[] = [];
  // Pages of 100; bounded by the account's own number of sites.
  for (let after: string | undefined; ; ) {
    const page = await call<SiteList>('GET', `/v1/sites?limit=100${after ? `&starting_after=${encodeURIComponent(after)}` : ''}`);
    sites.push(...page.data);
    if (!page.has_more || page.data.length === 0) return sites;
    after = page.data[page.data.length - 1]!.id;
  }
}

export const describeSiteLine = (s: SiteJson) => `${s.id}  ${s.name}  (${s.timezone}, sharing: ${s.sharing})`;

export function describeSite(url: string, s: SiteJson): string {
  return [
    `site ${s.id}: ${s.name}`,
    `  time zone  ${s.timezone}`,
    ...(s.domain ? [`  domains    ${s.domain}`] : []),
    `  sharing    ${s.sharing}${s.sharing === 'none' ? '' : ` (${shareUrl(url, s.id)})`}`,
    `  created    ${s.created_at}`,
    `  report     ${reportUrl(url, s.id)}`,
    `  script tag ${scriptTag(url, s.id)}`,
  ].join('\n');
}
