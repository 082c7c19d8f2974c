// What went wrong, in words a site owner understands: every page's failures go through explain(), never the
// API's raw text alone nor "Something went wrong".

import { ApiError } from './api.js';

/** How the fields of the API's `{errors: {field: [...]}}` answers are called on the pages. */
const FIELD_WORDS = new Map([
  ['name', 'The name'],
  ['timezone', 'The time zone'],
  ['domain', 'The domain'],
  ['sharing', 'Sharing'],
  ['share_password', 'The share password'],
  ['multi_domain_option', 'How to count several domains'],
  ['embed_origins', 'The embedding addresses'],
  ['abilities', 'The permissions'],
  ['currency', 'The currency'],
  ['milestone_date', 'The date'],
  ['body', 'The form'],
]);

const sentence = (text) => {
  const t = String(text).trim();
  const capital = t.charAt(0).toUpperCase() + t.slice(1);
  return /[.!?]$/.test(capital) ? capital : `${capital}.`;
};

/** A field's problems as sentences: "The time zone is not a time zone of the TZ database." */
function fieldSentences(errors, labels) {
  return Object.entries(errors).map(([field, messages]) => {
    const label = (labels && Object.hasOwn(labels, field) && labels[field]) || FIELD_WORDS.get(field) || 'A value';
    return sentence(`${label} ${[].concat(messages).join(' and ')}`);
  });
}

/**
 * `err` (an ApiError from ./api.js, or a failure to reach the server) as one or two sentences.
 * `labels` renames fields for this form ({ name: 'The goal name' }); `missing` is said for a 404.
 */
export function explain(err, { labels, missing } = {}) {
  if (!(err instanceof ApiError)) return 'Plumb could not be reached. Check your connection, then try again.';
  const body = err.body && typeof err.body === 'object' ? err.body : {};
  switch (true) {
    case err.status === 400 && body.errors && typeof body.errors === 'object':
      return fieldSentences(body.errors, labels).join(' ');
    case err.status === 400 && typeof body.error === 'string' && /lapsed/i.test(body.error):
      return 'The subscription of this account has lapsed, so nothing can be changed until it is renewed.';
    case err.status === 400 && typeof body.error === 'string' && /permission|not allow|role/i.test(body.error):
      return 'Your role in this account does not allow this. Ask the account owner.';
    case err.status === 400 && typeof body.error === 'string':
      return `Plumb could not do this: ${sentence(body.error.charAt(0).toLowerCase() + body.error.slice(1))}`;
    case err.status === 401:
      return 'Your login has ended. Log in again to continue.';
    case err.status === 403:
      return 'This is not allowed from this page. Reload it and try again.';
    case err.status === 404:
      return missing ?? 'This no longer exists: it may have been deleted in the meantime. Reload the page.';
    case err.status === 413:
      return 'That is too large for Plumb to take.';
    case err.status === 429 || err.status === 503:
      return 'Plumb is busy right now. Wait a moment, then try again.';
    case err.status >= 500:
      return 'Plumb could not do this because of a problem on the server. Try again; if it keeps failing, the server log says why.';
    default:
      return `Plumb answered in a way this page does not understand (status ${err.status}). Reload the page and try again.`;
  }
}
