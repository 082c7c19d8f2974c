// The side menus of the settings pages (components/section-nav.js): one for a site's pages (its settings, its goals
// and milestones), one for the pages of the person and the account (your account, members, API tokens). Each entry
// is a section of the page it is on (`key`, the id of its <${Section}>) or a link to that section on its own page.

const SITE_SETTINGS = [['general', 'General'], ['sharing', 'Sharing'], ['embedding', 'Embedding'], ['imports', 'Imports'],
  ['tracking-code', 'Tracking code'], ['danger-zone', 'Danger zone']];
const SITE_GOALS = [['goals', 'Event goals'], ['page-goals', 'Pageview goals'], ['milestones', 'Milestones']];
/** The members page's sections; requiring two-factor authentication of everyone is for owners. */
const MEMBERS = [['members', 'Members'], ['invite', 'Invite someone'], ['security', 'Two-factor rule']];
const TOKENS = [['tokens', 'Tokens'], ['create-token', 'Create a token']];

/** Entries of `list` (on the page at `path`): sections here when `here`, links there otherwise. */
const entries = (path, list, here) => list.map(([key, title]) => (here ? { key, title } : { href: `${path}#${key}`, title }));

/** A site's menu, on its settings page (`page` 'settings') or its goals page ('goals'). */
export function siteNav(siteId, page) {
  const base = `/sites/${encodeURIComponent(siteId)}`;
  return [
    { title: 'Site settings', items: entries(`${base}/settings`, SITE_SETTINGS, page === 'settings') },
    { title: 'Goals and milestones', items: entries(`${base}/goals`, SITE_GOALS, page === 'goals') },
  ];
}

/** The account page's sections; "Accounts" only for a person in several (account.js adds it then). */
export const ACCOUNT_SECTIONS = [['two-factor', 'Two-factor'], ['email-reports', 'Email reports'], ['password', 'Password'],
  ['email', 'Email address'], ['sessions', 'Sessions']];

/**
 * The menu of the account pages: `page` is 'account', 'members' or 'tokens'; `role` the viewer's (viewers have no
 * members or tokens pages); `own` the sections the account page shows this person (some are not always there).
 */
export function accountNav(page, role, own = ACCOUNT_SECTIONS) {
  const groups = [{ title: 'Your account', items: entries('/account', own, page === 'account') }];
  if (role !== 'viewer') {
    groups.push(
      { title: 'Members', items: entries('/settings/members', MEMBERS.filter(([key]) => key !== 'security' || role === 'owner'), page === 'members') },
      { title: 'API tokens', items: entries('/settings/api', TOKENS, page === 'tokens') },
    );
  }
  return groups;
}

