// The dashboard's shell: mounts the page the server named in <main id="app" data-page>, the theme switch in the
// top bar, and the "logged out" handling.
//
// How a page plugs in: one entry in PAGES below, keyed by the server's data-page value (src/http/dashboard/
// pages.ts and share.ts write it): `{ component: ReportPage }`, a Preact component (write it with `html` and
// hooks from ./ui.js). The shell renders it into <main> with one prop, `data`: the data-* attributes of <main> as
// a plain object (`data.site`, `data.siteName`, `data.timezone`, `data.mode`, ...). State shared between a page's
// panels lives in a store (./store.js; the report's is ./report/state.js). Talk to the server only through
// ./api.js. A page that throws while rendering is replaced by a message in words, never a blank page.

import { AccountPage } from './pages/account.js';
import { whenLoggedOut } from './api.js';
import { GoalsPage } from './pages/goals.js';
import { MembersPage } from './pages/members.js';
import { ReportPage } from './report/page.js';
import { SiteSettingsPage } from './pages/site-settings.js';
import { SitesPage } from './pages/sites.js';
import { startTheme, ThemeSwitch } from './theme.js';
import { TokensPage } from './pages/tokens.js';
import { Component, html, render } from './ui.js';

export const PAGES = {
  report: { component: ReportPage },
  sites: { component: SitesPage },
  'site-settings': { component: SiteSettingsPage },
  goals: { component: GoalsPage },
  tokens: { component: TokensPage },
  members: { component: MembersPage },
  account: { component: AccountPage },
};

const explain = (err) => (err && err.message ? err.message : String(err));

function Failure({ message }) {
  return html`<h1>This page could not be shown</h1>
    <p class="status error" role="alert">${message}</p>
    <p><a href="">Reload the page</a> to try again.</p>`;
}

/** Catches a component page's render errors so the viewer gets a message, not an empty page. */
class Boundary extends Component {
  constructor() {
    super();
    this.state = { error: null };
  }
  componentDidCatch(error) {
    this.setState({ error });
  }
  render() {
    return this.state.error ? html`<${Failure} message=${explain(this.state.error)} />` : this.props.children;
  }
}

function mountThemeSwitch() {
  const nav = document.querySelector('nav.top');
  if (!nav) return;
  const slot = document.createElement('span');
  slot.className = 'theme-slot';
  nav.append(slot);
  render(html`<${ThemeSwitch} />`, slot);
}

export async function start() {
  startTheme();
  mountThemeSwitch();
  const root = document.getElementById('app');
  const page = root && Object.hasOwn(PAGES, root.dataset.page) ? PAGES[root.dataset.page] : undefined;
  if (!page) return;
  if (root.dataset.mode !== 'share') {
    // The session ended (logout elsewhere, expiry): log in again and come back here. Not when this page's own Log
    // out was pressed: requests still in flight then find the session gone, and their redirect would race the
    // form's to /login.
    let leaving = false;
    document.querySelector('form.logout')?.addEventListener('submit', () => (leaving = true));
    whenLoggedOut(() => {
      if (!leaving) location.assign(`/login?next=${encodeURIComponent(location.pathname)}`);
    });
  }
  root.replaceChildren();
  render(html`<${Boundary}><${page.component} data=${{ ...root.dataset }} /><//>`, root);
}
