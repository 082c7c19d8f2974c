// Campaign attribution from a page's query string: the five `utm_*` parameters, `ref` and `keyword`.

import type { HitAttributes } from '../../domain/hits.js';
import { stripControlChars, truncate } from './text.js';

export const MAX_CAMPAIGN_VALUE_LENGTH = 255;

/**
 * The campaign part of a hit's attributes. `ref` comes from `ref`, else `source`, else `via` (the short forms
 * link shorteners and newsletters use); `keyword` from `keyword`, else `kw` (paid-search templates), and
 * `utm_term` is recorded on its own, never copied into it.
 */
export type CampaignFields = Pick<HitAttributes, 'utmCampaign' | 'utmContent' | 'utmMedium' | 'utmSource' | 'utmTerm' | 'ref' | 'keyword'>;

/**
 * The campaign fields of a page's query. For each field the first parameter (in the order above) with a
 * non-blank value wins; values are trimmed, stripped of control characters and capped; absent fields are ''.
 */
export function campaignFields(query: URLSearchParams): CampaignFields {
  return {
    utmCampaign: firstValue(query, 'utm_campaign'),
    utmContent: firstValue(query, 'utm_content'),
    utmMedium: firstValue(query, 'utm_medium'),
    utmSource: firstValue(query, 'utm_source'),
    utmTerm: firstValue(query, 'utm_term'),
    ref: firstValue(query, 'ref', 'source', 'via'),
    keyword: firstValue(query, 'keyword', 'kw'),
  };
}

function firstValue(query: URLSearchParams, ...names: string[]): string {
  for (const name of names) {
    // getAll: `?utm_source=&utm_source=news` should still say `news`.
    for (const raw of query.getAll(name)) {
      const value = stripControlChars(raw).trim();
      if (value !== '') return truncate(value, MAX_CAMPAIGN_VALUE_LENGTH);
    }
  }
  return '';
}
