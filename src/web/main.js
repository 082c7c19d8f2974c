// The dashboard's script: starts the page the server named in <main data-page>.

import { whenLoggedOut } from './api.js';
import { fill, h, main } from './dom.js';
import { goalsPage } from './goals.js';
import { reportPage } from './report.js';
import { siteSettingsPage } from './site-settings.js';
import { sitesPage } from './sites.js';
import { tokensPage } from './tokens.js';

const PAGES = {
  sites: sitesPage,
  report: reportPage,
  'site-settings': siteSettingsPage,
  goals: goalsPage,
  tokens: tokensPage,
};

async function start() {
  const root = main();
  const page = PAGES[root?.dataset.page];
  if (!page) return;
  if (root.dataset.mode !== 'share') {
    // The session ended (logout elsewhere, expiry): log in again and come back here.
    whenLoggedOut(() => location.assign(`/login?next=${encodeURIComponent(location.pathname)}`));
  }
  try {
    await page();
  } catch (err) {
    fill(root, h('h1', {}, 'Something went wrong'), h('p', { class: 'status error', role: 'alert' }, err && err.message ? err.message : String(err)));
  }
}

if (document.readyState === 'loading') document.addEventListener('DOMContentLoaded', () => void start());
else void start();
