// Segments in the filter bar: the member's saved sets of filters and the account's shared ones, applied in one
// click; the page's filters saved under a name (personal or shared); renamed and deleted by whoever may
// (/dashboard/api/sites/{id}/segments). Logged-in members only: a share page has none.

import { api } from '../api.js';
import { Field } from '../field.js';
import { ConfirmButton, failed, ok, Status } from '../forms.js';
import { html, useEffect, useRef, useState } from '../ui.js';
import { useSite } from './data.js';
import { describeFilter, validFilter } from './properties.js';
import { setReport, useReportState } from './state.js';

const MAX_NAME = 100;
const sameFilters = (a, b) => JSON.stringify(a) === JSON.stringify(b);
const message = (err) => (err && err.message) || 'The server could not be reached.';

function SegmentRow({ segment, applied, path, onChanged, onApply }) {
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(segment.name);
  const [status, setStatus] = useState(null);
  const words = segment.filters.map(describeFilter).join(', ');
  const rename = async (e) => {
    e.preventDefault();
    try {
      await api('PATCH', `${path}/${segment.id}`, { name });
      setRenaming(false);
      onChanged(ok(`Renamed to ${name.trim()}.`));
    } catch (err) {
      setStatus(failed(message(err)));
    }
  };
  const remove = async () => {
    try {
      await api('DELETE', `${path}/${segment.id}`);
      onChanged(ok(`Deleted ${segment.name}.`));
    } catch (err) {
      setStatus(failed(message(err)));
    }
  };
  return html`<li class="segment" data-segment=${segment.name}>
    ${renaming
      ? html`<form class="row wrap segment-rename" onSubmit=${rename} aria-label=${`Rename ${segment.name}`}>
          <${Field} label="New name" class="grow"><input name="name" required maxlength=${MAX_NAME} value=${name} onInput=${(e) => setName(e.currentTarget.value)} /><//>
          <button type="submit" class="small">Save name</button>
          <button type="button" class="secondary small" onClick=${() => setRenaming(false)}>Cancel</button>
        </form>`
      : html`<div class="segment-main">
          <button type="button" class="link segment-apply" aria-current=${applied ? 'true' : undefined} onClick=${() => onApply(segment)}
            aria-label=${`Apply segment ${segment.name}`}>${segment.name}</button>
          ${segment.shared ? html`<span class="segment-tag">${segment.mine ? 'shared by you' : 'shared'}</span>` : null}
          ${applied ? html`<span class="segment-tag">applied</span>` : null}
          <span class="muted small segment-words">${words}</span>
        </div>
        ${segment.can_change
          ? html`<div class="segment-actions">
              <button type="button" class="secondary small" aria-label=${`Rename ${segment.name}`} onClick=${() => setRenaming(true)}>Rename</button>
              <${ConfirmButton} label="Delete" confirmLabel="Delete for good" what=${`segment ${segment.name}`} onConfirm=${remove} />
            </div>`
          : null}`}
    ${status ? html`<${Status} status=${status} />` : null}
  </li>`;
}

function SaveForm({ path, canShare, filters, onSaved }) {
  const [name, setName] = useState('');
  const [shared, setShared] = useState(false);
  const [status, setStatus] = useState(null);
  const save = async (e) => {
    e.preventDefault();
    try {
      const saved = await api('POST', path, { name, filters, shared: canShare && shared });
      setName('');
      onSaved(ok(`Saved ${saved.name}.`));
    } catch (err) {
      setStatus(failed(message(err)));
    }
  };
  return html`<form class="row wrap segment-save" onSubmit=${save} aria-label="Save the filters as a segment">
    <${Field} label="Save these filters as" class="grow"><input name="segment_name" required maxlength=${MAX_NAME} value=${name}
      placeholder="a name, e.g. Blog readers from Germany" onInput=${(e) => setName(e.currentTarget.value)} /><//>
    ${canShare
      ? html`<label class="check"><input type="checkbox" name="shared" checked=${shared} onChange=${(e) => setShared(e.currentTarget.checked)} />
          Share with the account</label>`
      : null}
    <button type="submit">Save segment</button>
    ${status ? html`<${Status} status=${status} />` : null}
  </form>`;
}

/** The panel the Segments button opens: the list, and the form that saves the page's filters. */
export function SegmentPanel({ onDone }) {
  const site = useSite();
  const state = useReportState();
  const path = `/dashboard/api/sites/${encodeURIComponent(site.id)}/segments`;
  const [list, setList] = useState(null);
  const [status, setStatus] = useState(null);
  const [version, setVersion] = useState(0);
  const panel = useRef(null);
  useEffect(() => {
    let live = true;
    api('GET', path).then((answer) => live && setList(answer), (err) => live && setStatus(failed(`The segments could not be loaded: ${message(err)}`)));
    return () => {
      live = false;
    };
  }, [version]);
  // Opened from the keyboard, the panel takes the focus where its first control is.
  useEffect(() => panel.current?.querySelector('button, input')?.focus(), [list === null]);
  const changed = (s) => {
    setStatus(s);
    setVersion((v) => v + 1);
  };
  const apply = (segment) => {
    // Checked as an address is: a filter this page cannot show is left out rather than sent.
    setReport({ filters: segment.filters.filter(validFilter) });
    onDone();
  };
  const segments = list?.data ?? [];
  return html`<section class="card segment-panel" aria-label="Segments" ref=${panel} onKeyDown=${(e) => e.key === 'Escape' && onDone()}>
    <h2 class="small-heading">Segments</h2>
    ${list === null && !status ? html`<p class="muted" data-loading>Loading…</p>` : null}
    ${list !== null && segments.length === 0 ? html`<p class="muted">No saved segments yet. Add filters, then save them here under a name.</p>` : null}
    ${segments.length > 0
      ? html`<ul class="segment-list">
          ${segments.map((s) => html`<${SegmentRow} key=${`${s.id}-${s.name}`} segment=${s} path=${path} applied=${sameFilters(s.filters, state.filters)}
              onChanged=${changed} onApply=${apply} />`)}
        </ul>`
      : null}
    ${list !== null && state.filters.length > 0
      ? html`<${SaveForm} path=${path} canShare=${list.can_share} filters=${state.filters} onSaved=${changed} />`
      : null}
    ${segments.length > 0 && state.filters.length === 0 ? html`<p class="muted small">Add filters to save them here as a segment of your own.</p>` : null}
    <${Status} status=${status} />
    <div class="row"><button type="button" class="secondary small" onClick=${onDone}>Close</button></div>
  </section>`;
}

/** The filter bar's Segments button (none on share pages). */
export function SegmentsButton({ open, onToggle }) {
  const site = useSite();
  if (!site.owner) return null;
  return html`<button type="button" class="secondary small" aria-expanded=${open ? 'true' : 'false'} onClick=${onToggle}>Segments</button>`;
}
