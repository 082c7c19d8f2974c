// Campaign fields from the page query: utm_*, ref/source/via, keyword/kw.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { campaignFields } from '../../../src/ingest/enrich/campaign.js';

const empty = { utmCampaign: '', utmContent: '', utmMedium: '', utmSource: '', utmTerm: '', ref: '', keyword: '' };
const fields = (query: string) => campaignFields(new URLSearchParams(query));

describe('campaignFields', () => {
  const cases: Array<[string, string, Partial<typeof empty>]> = [
    ['no query', '', {}],
    ['unrelated parameters', 'page=2&q=shoes', {}],
    [
      'all five utm parameters',
      'utm_source=newsletter&utm_medium=email&utm_campaign=spring_sale&utm_content=header&utm_term=running+shoes',
      { utmSource: 'newsletter', utmMedium: 'email', utmCampaign: 'spring_sale', utmContent: 'header', utmTerm: 'running shoes' },
    ],
    ['decodes values', 'utm_campaign=caf%C3%A9%20au%20lait', { utmCampaign: 'café au lait' }],
    ['trims values', 'utm_source=%20%20news%20%20', { utmSource: 'news' }],
    ['blank values are absent', 'utm_source=&utm_medium=%20', {}],
    ['the first non-blank repeat wins', 'utm_source=&utm_source=a&utm_source=b', { utmSource: 'a' }],
    ['strips control characters', 'utm_source=ne%00ws%0A', { utmSource: 'news' }],
    ['parameter names are case-sensitive', 'UTM_SOURCE=x&Ref=y', {}],
    ['ref', 'ref=producthunt', { ref: 'producthunt' }],
    ['source when there is no ref', 'source=twitter', { ref: 'twitter' }],
    ['via when there is no ref or source', 'via=friend', { ref: 'friend' }],
    ['ref before source before via', 'via=c&source=b&ref=a', { ref: 'a' }],
    ['a blank ref falls through to source', 'ref=&source=b', { ref: 'b' }],
    ['keyword', 'keyword=analytics', { keyword: 'analytics' }],
    ['kw when there is no keyword', 'kw=privacy', { keyword: 'privacy' }],
    ['keyword before kw', 'kw=b&keyword=a', { keyword: 'a' }],
    ['utm_term is not copied into keyword', 'utm_term=shoes', { utmTerm: 'shoes' }],
  ];
  for (const [name, query, expected] of cases) {
    it(name, () => assert.deepEqual(fields(query), { ...empty, ...expected }));
  }

  it('caps values at 255 characters without splitting a character', () => {
    assert.equal(fields(`utm_campaign=${'x'.repeat(300)}`).utmCampaign, 'x'.repeat(255));
    assert.equal(fields(`ref=${'x'.repeat(254)}${encodeURIComponent('😀')}`).ref, 'x'.repeat(254));
  });
});
