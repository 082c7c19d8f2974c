// The live count: a compact "N online" in the toolbar (its dot green while someone is there, pulsing when the count
// changes) that opens the realtime view, a dialog with the visitors now, their pages and referrers. Both read
// /v1/current_visitors (detailed), refreshed every 10 seconds while the page is visible and at once when it becomes
// visible again, without reloading.

import { api, query } from '../api.js';
import { Dialog } from '../components/dialog.js';
import { fmtInt } from '../format.js';
import { Icon } from '../icons.js';
import { html, useEffect, useState } from '../ui.js';
import { displayValue } from './properties.js';
import { useSite } from './data.js';

export const LIVE_EVERY_MS = 10_000;
const SHOWN = 10;

/** The site's /v1/current_visitors?detailed=true answer, refreshed while the page is visible; null until the first. */
function useCurrentVisitors(siteId) {
  const [live, setLive] = useState(null);
  const [failed, setFailed] = useState(false);
  useEffect(() => {
    let timer;
    let stopped = false;
    const refresh = async () => {
      if (!document.hidden) {
        try {
          setLive(await api('GET', `/v1/current_visitors?${query({ site_id: siteId, detailed: 'true' })}`));
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
  }, [siteId]);
  return { live, failed };
}

function LiveList({ items, itemKey, text, none }) {
  if (items.length === 0) return html`<p class="muted small">${none}</p>`;
  const top = items[0].total || 1;
  return html`<ol class="live-list">${items.slice(0, SHOWN).map((item) => html`<li data-live-item=${itemKey(item)}>
    <span class="bar" style=${`width: ${(100 * item.total) / top}%`} aria-hidden="true"></span>
    <span class="live-what">${text(item)}</span> <span class="num" data-total>${fmtInt(item.total)}</span></li>`)}</ol>`;
}

function RealtimeView({ live, failed, onClose }) {
  return html`<${Dialog} title="Right now" class="realtime" onClose=${onClose}>
    <p class="realtime-count" data-realtime-total=${live ? String(live.total) : undefined}>
      <strong>${live ? fmtInt(live.total) : '…'}</strong> ${live && live.total === 1 ? 'visitor' : 'visitors'} with a hit in the last 5 minutes</p>
    ${failed ? html`<p class="status error" role="alert">The current visitors could not be loaded; trying again in 10 seconds.</p>` : null}
    <div class="live-columns">
      <div data-live-pages><h3>Pages</h3>
        <${LiveList} items=${live?.content ?? []} itemKey=${(c) => `${c.hostname}${c.pathname}`} text=${(c) => c.pathname} none="No page viewed right now." /></div>
      <div data-live-referrers><h3>Referrers</h3>
        <${LiveList} items=${live?.referrers ?? []} itemKey=${(r) => `${r.referrer_hostname}${r.referrer_pathname}`}
          text=${(r) => displayValue('referrer_hostname', r.referrer_hostname.replace(/^https?:\/\//, ''))} none="No referrer right now." /></div>
    </div>
    <p class="muted small">Updates every 10 seconds.</p>
  <//>`;
}

/** The toolbar's live element and, once opened, the realtime view. */
export function Realtime() {
  const site = useSite();
  const { live, failed } = useCurrentVisitors(site.id);
  const [open, setOpen] = useState(false);
  const total = live ? live.total : null;
  const words = failed && !live ? 'Live: unavailable' : `${total === null ? '…' : fmtInt(total)} online`;
  return html`<button type="button" class="live-button" data-live data-total=${total === null ? undefined : String(total)}
      aria-haspopup="dialog" title="Visitors with a hit in the last 5 minutes: open the realtime view" onClick=${() => setOpen(true)}>
      <span key=${total ?? ''} class=${`pulse${total ? ' active' : ''}`} aria-hidden="true"></span><span role="status" aria-live="polite">${words}</span>
      <${Icon} name="users" size=${14} />
    </button>
    ${open ? html`<${RealtimeView} live=${live} failed=${failed} onClose=${() => setOpen(false)} />` : null}`;
}
