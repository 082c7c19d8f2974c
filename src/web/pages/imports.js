// A site's imported history (docs/collection.md, "Imports"): upload Umami's raw-event CSV (or Umami Cloud's
// .csv.gz), Plausible's or Fathom's export zip, see each import with what it brought, delete one. Owners and admins only, as the server enforces.

import { api, upload } from '../api.js';
import { ConfirmButton, failed, Field, ok, Status } from '../forms.js';
import { explain } from '../messages.js';
import { html, useEffect, useState } from '../ui.js';

const KINDS = [
  { kind: 'plausible', label: "Plausible's export (zip)", type: 'application/zip', accept: '.zip,application/zip' },
  { kind: 'umami', label: "Umami's events (CSV, or Umami Cloud's .csv.gz)", type: 'text/csv', accept: '.csv,.gz,text/csv,application/gzip' },
  { kind: 'fathom', label: "Fathom's export (zip of its CSV files)", type: 'application/zip', accept: '.zip,application/zip' },
];
const KIND_NAMES = { plausible: 'Plausible', umami: 'Umami', fathom: 'Fathom' };
const describeError = (e) => (typeof e === 'string' ? e : `${e.file ? `${e.file} ` : ''}line ${e.line}: ${e.message}`);

const day = (at) => (at ? at.slice(0, 10) : '');
/** A failed import says why (older servers give no reason); a running one that it is still going. */
const statusText = (item) =>
  item.status === 'failed' ? `failed${item.failure_reason ? `: ${item.failure_reason}` : ''}` : item.status === 'running' ? 'running…' : item.status;

/** The site's imports, newest first; [] when the viewer may not see them. */
export async function siteImports(siteId) {
  try {
    return (await api('GET', `/dashboard/api/sites/${siteId}/imports`)).data;
  } catch {
    return [];
  }
}

export function ImportsPanel({ site }) {
  const [items, setItems] = useState(null);
  const [kind, setKind] = useState(KINDS[0].kind);
  const [file, setFile] = useState(null);
  const [busy, setBusy] = useState(false);
  const [status, setStatus] = useState(null);
  const load = async () => setItems(await siteImports(site.id));
  useEffect(() => {
    void load();
  }, [site.id]);
  const chosen = KINDS.find((k) => k.kind === kind) ?? KINDS[0];
  const submit = async (event) => {
    event.preventDefault();
    const form = event.currentTarget;
    if (!file) return setStatus(failed('Choose the export file first.'));
    setBusy(true);
    setStatus(ok('Importing… large exports take a while; keep this page open.'));
    try {
      const done = await upload(`/dashboard/api/sites/${site.id}/imports/${kind}?file_name=${encodeURIComponent(file.name)}`, file, chosen.type);
      const rejected = done.rejected > 0 ? `, ${done.rejected.toLocaleString()} rows left out (${(done.errors ?? []).slice(0, 3).map(describeError).join('; ')})` : '';
      setFile(null);
      form.reset();
      await load();
      setStatus(ok(`Imported ${done.imported.toLocaleString()} rows from ${done.file_name}${rejected}.`));
    } catch (err) {
      setStatus(failed(explain(err, { labels: { body: 'The file' } })));
    } finally {
      setBusy(false);
    }
  };
  const remove = async (item) => {
    try {
      await api('DELETE', `/dashboard/api/sites/${site.id}/imports/${item.id}`);
      setStatus(ok(`The import of ${item.file_name} is deleted, with everything it brought.`));
      await load();
    } catch (err) {
      setStatus(failed(explain(err)));
    }
  };
  return html`<section class="card stack" aria-labelledby="imports-h">
    <h2 id="imports-h">Imports</h2>
    <p class="muted">Bring the history you have in Plausible (Site settings, Imports & Exports, Export data), Umami (its
      events as CSV, by the query in Plumb's docs/collection.md) or Fathom (its CSV export, zipped). Importing the same
      file again replaces it.</p>
    <form class="stack" aria-label="Import an export" onSubmit=${submit}>
      <${Field} label="What it is">
        ${(id) => html`<select id=${id} name="kind" value=${kind} onChange=${(e) => setKind(e.currentTarget.value)}>
          ${KINDS.map((k) => html`<option value=${k.kind}>${k.label}</option>`)}
        </select>`}
      <//>
      <${Field} label="Export file">
        ${(id) => html`<input id=${id} type="file" name="file" accept=${chosen.accept} onChange=${(e) => setFile(e.currentTarget.files?.[0] ?? null)} />`}
      <//>
      <button type="submit" disabled=${busy}>${busy ? 'Importing…' : 'Import'}</button>
    </form>
    <${Status} status=${status} />
    ${items === null
      ? html`<p class="muted">Loading…</p>`
      : items.length === 0
        ? html`<p class="muted" data-imports="none">No imports yet.</p>`
        : html`<table class="imports stacked" data-imports="">
            <thead><tr><th>File</th><th>From</th><th>Days</th><th>Rows</th><th>Status</th><th><span class="visually-hidden">Actions</span></th></tr></thead>
            <tbody>${items.map((item) => html`<tr key=${item.id} data-import=${item.id}>
              <td class="label" data-label="File">${item.file_name}</td>
              <td data-label="From">${KIND_NAMES[item.kind] ?? item.kind}</td>
              <td data-label="Days">${item.first_hit_at ? `${day(item.first_hit_at)} to ${day(item.last_hit_at)}` : '—'}</td>
              <td data-label="Rows">${item.imported.toLocaleString()}${item.rejected > 0 ? ` (${item.rejected.toLocaleString()} left out)` : ''}</td>
              <td data-label="Status" data-status=${item.status}>${statusText(item)}</td>
              <td class="actions"><${ConfirmButton} label="Delete" confirmLabel="Delete for good" what=${item.file_name} onConfirm=${() => remove(item)} /></td>
            </tr>`)}</tbody>
          </table>`}
  </section>`;
}

/** The imports whose days overlap the report's period (YYYY-MM-DD in the site's zone; imports' days are UTC). */
export function importsIn(items, period) {
  return items.filter((i) => i.status === 'done' && i.first_hit_at && day(i.first_hit_at) <= period.to && day(i.last_hit_at) >= period.from);
}

export function describeImports(items) {
  return items.map((i) => `${KIND_NAMES[i.kind] ?? i.kind} (${day(i.first_hit_at)} to ${day(i.last_hit_at)})`).join(', ');
}
