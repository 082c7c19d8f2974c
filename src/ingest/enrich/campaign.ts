// Campaign attribution from a page's query string: the five `utm_*` parameters, `ref` and `keyword`.

import { stripControlChars, truncate } from './text.js';

export const MAX_CAMPAIGN_VALUE_LENGTH = 255;

export interface CampaignFields {
  utmCampaign: string;
  utmContent: string;
  utmMedium: string;
  utmSource: string;
  utmTerm: string;
  /** `ref`, else `source`, else `via` (the short forms link shorteners and newsletters use). */
  ref: string;
  /** `keyword`, else `kw` (paid-search templates). `utm_term` is recorded on its own, never copied here. */
  keyword: string;
}

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
