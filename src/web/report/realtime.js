// The live panel: visitors on the site now, their pages and referrers (/v1/current_visitors?detailed=true),
// refreshed every 10 seconds while the page is visible, without reloading.

import { api, query } from '../api.js';
import { fmtInt } from '../format.js';
import { html, useEffect, useState } from '../ui.js';
import { displayValue } from './properties.js';
import { useSite } from './data.js';

export const LIVE_EVERY_MS = 10_000;
const SHOWN = 5;

export function Realtime() {
  const site = useSite();
  const [live, setLive] = useState(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let timer;
    let stopped = false;
    const refresh = async () => {
      if (!document.hidden) {
        try {
          setLive(await api('GET', `/v1/current_visitors?${query({ site_id: site.id, detailed: 'true' })}`));
          setFailed(false);
        } catch {
          setFailed(true);
        }
      }
      if (!stopped) timer = setTimeout(refresh, LIVE_EVERY_MS);
    };
    const visible = () => {
      if (!document.hidden) {
        clearTimeout(timer);
        void refresh();
      }
    };
    void refresh();
    document.addEventListener('visibilitychange', visible);
    return () => {
      stopped = true;
      clearTimeout(timer);
      document.removeEventListener('visibilitychange', visible);
    };
  }, [site.id]);
  const list = (items, key, text) =>
    items.length === 0
      ? html`<p class="muted small">None right now.</p>`
      : html`<ol class="live-list">${items.slice(0, SHOWN).map((item) => html`<li data-live-item=${key(item)}>
          <span class="live-what">${text(item)}</span> <span class="num" data-total>${fmtInt(item.total)}</span></li>`)}</ol>`;
  return html`<section class="card live-panel" aria-labelledby="live-h">
    <h2 id="live-h" class="visually-hidden">Right now</h2>
    <p class="live" role="status" aria-live="polite" data-live data-total=${live ? String(live.total) : undefined}>
      <span class="pulse" aria-hidden="true"></span>${failed && !live ? 'Current visitors: unavailable' : `Current visitors: ${live ? live.total : '…'}`}</p>
    ${live && live.total > 0
      ? html`<div class="live-columns">
          <div data-live-pages><h3>Pages</h3>${list(live.content ?? [], (c) => `${c.hostname}${c.pathname}`, (c) => c.pathname)}</div>
          <div data-live-referrers><h3>Referrers</h3>${list(live.referrers ?? [], (r) => `${r.referrer_hostname}${r.referrer_pathname}`,
            (r) => displayValue('referrer_hostname', r.referrer_hostname.replace(/^https?:\/\//, '')))}</div>
        </div>`
      : null}
  </section>`;
}
