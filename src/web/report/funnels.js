// The funnels panel: pick one of the site's funnels (GET /v1/sites/{id}/funnels) and see its steps for the report's
// range and filters (…/funnels/{funnel_id}/report, docs/reports.md "Funnels") as a bar per step with its visits,
// conversion, drop-off and median time from the step before; each step filters the whole page to the visits that
// continued after it or dropped before the next one (the last step: those that completed the funnel), the panel
// itself staying the funnel's own report. Owners and admins create, edit and delete funnels in a dialog; share
// pages and viewers only read.

import { api, ApiError, listAll, query } from '../api.js';
import { Dialog } from '../components/dialog.js';
import { Field } from '../field.js';
import { ConfirmButton, failed, Status } from '../forms.js';
import { fmtDuration, fmtInt, fmtPercent } from '../format.js';
import { html, useEffect, useState } from '../ui.js';
import { baseParams, explainError, usePanel, useSite } from './data.js';
import { setFunnelFilter, setReport, useReportState } from './state.js';

export const MIN_STEPS = 2;
export const MAX_STEPS = 8;
const MAX_NAME = 255;

const funnelsPath = (site) => `/v1/sites/${encodeURIComponent(site.id)}/funnels`;

/**
 * A funnel's report for a period with the page's filters, custom property filters included (through the report
 * page's own route, which /v1 lacks), but not the page's funnel filter: the panel shows the funnel whole.
 */
export function fetchFunnel(site, state, period, funnelId, signal) {
  const { entity: _entity, funnel: _funnel, funnel_step: _step, funnel_outcome: _outcome, ...scope } = baseParams(site, period, state.filters);
  return scope.props
    ? api('GET', `/dashboard/api/report/funnel-report?${query({ ...scope, funnel_id: funnelId })}`, undefined, { signal })
    : api('GET', `${funnelsPath(site)}/${encodeURIComponent(funnelId)}/report?${query({ date_from: scope.date_from, date_to: scope.date_to, filters: scope.filters })}`, undefined, { signal });
}

/** What the server said was wrong, as one line. */
const message = (err) => (err instanceof ApiError ? err.message : 'The server could not be reached.');

/**
 * Whether this member may change funnels: the roles that may change goals (owners and admins), which the goals
 * route says; a share page never may.
 */
function useCanChange(site) {
  const [can, setCan] = useState(false);
  useEffect(() => {
    if (!site.owner) return undefined;
    let live = true;
    api('GET', `/dashboard/api/sites/${encodeURIComponent(site.id)}/page-goals`).then(
      (answer) => live && setCan(answer?.can_change === true),
      () => live && setCan(false),
    );
    return () => {
      live = false;
    };
  }, [site.id]);
  return can;
}

function StepEditor({ step, index, count, onChange, onRemove }) {
  const label = `Step ${index + 1}`;
  return html`<li class="funnel-step-edit" data-step=${String(index + 1)}>
    <span class="funnel-step-number" aria-hidden="true">${index + 1}</span>
    <${Field} label=${`${label} kind`}><select name=${`step_${index}_type`} value=${step.type}
      onChange=${(e) => onChange({ ...step, type: e.currentTarget.value })}>
      <option value="page">Page</option>
      <option value="event">Event</option>
    </select><//>
    <${Field} label=${step.type === 'page' ? `${label} page` : `${label} event name`} class="grow"><input name=${`step_${index}_value`} required
      maxlength=${step.type === 'page' ? 300 : 255} value=${step.value}
      placeholder=${step.type === 'page' ? '/pricing or /blog/*' : 'Signup'} onInput=${(e) => onChange({ ...step, value: e.currentTarget.value })} /><//>
    <button type="button" class="secondary small" disabled=${count <= MIN_STEPS} aria-label=${`Remove step ${index + 1}`} onClick=${onRemove}>Remove</button>
  </li>`;
}

/** The dialog that creates a funnel, or edits `funnel`. */
function FunnelDialog({ site, funnel, onClose, onSaved }) {
  const [name, setName] = useState(funnel?.name ?? '');
  const [steps, setSteps] = useState(funnel ? funnel.steps.map((s) => ({ ...s })) : [{ type: 'page', value: '/' }, { type: 'page', value: '' }]);
  const [status, setStatus] = useState(null);
  const [busy, setBusy] = useState(false);
  const save = async (e) => {
    e.preventDefault();
    setBusy(true);
    try {
      const body = { name, steps: steps.map((s) => ({ type: s.type, value: s.value.trim() })) };
      const saved = await api('POST', funnel ? `${funnelsPath(site)}/${encodeURIComponent(funnel.id)}` : funnelsPath(site), body);
      onSaved(saved);
    } catch (err) {
      setStatus(failed(message(err)));
    } finally {
      setBusy(false);
    }
  };
  const change = (i, step) => setSteps(steps.map((s, j) => (j === i ? step : s)));
  return html`<${Dialog} title=${funnel ? `Edit ${funnel.name}` : 'New funnel'} class="funnel-dialog" onClose=${onClose}>
    <form class="funnel-form" onSubmit=${save} aria-label=${funnel ? `Edit funnel ${funnel.name}` : 'New funnel'}>
      <${Field} label="Name"><input name="funnel_name" required maxlength=${MAX_NAME} value=${name} placeholder="e.g. Checkout"
        onInput=${(e) => setName(e.currentTarget.value)} /><//>
      <ol class="funnel-step-list">
        ${steps.map((s, i) => html`<${StepEditor} key=${i} step=${s} index=${i} count=${steps.length}
          onChange=${(step) => change(i, step)} onRemove=${() => setSteps(steps.filter((_, j) => j !== i))} />`)}
      </ol>
      <p class="muted small">A page is a path (/pricing) or a pattern where * is anything (/blog/*); an event is a goal's name. Visits count
        at a step when they reached every step before it, in this order.</p>
      <div class="row wrap">
        <button type="button" class="secondary small" disabled=${steps.length >= MAX_STEPS}
          onClick=${() => setSteps([...steps, { type: 'page', value: '' }])}>Add step</button>
        <span class="grow"></span>
        <button type="button" class="secondary" onClick=${onClose}>Cancel</button>
        <button type="submit" disabled=${busy}>${funnel ? 'Save funnel' : 'Create funnel'}</button>
      </div>
      ${status ? html`<${Status} status=${status} />` : null}
    </form>
  <//>`;
}

/**
 * A step's filter buttons: the visits that continued after it and those that dropped before the next step, or, at
 * the last step, those that completed the funnel; pressed when the page is filtered so, pressed again to remove.
 */
function StepFilters({ funnelId, step, last, active }) {
  const choice = (outcome, label) => {
    const pressed = active?.id === funnelId && active.step === step && active.outcome === outcome;
    return html`<button type="button" class="link small" data-outcome=${outcome} aria-pressed=${pressed ? 'true' : 'false'}
      onClick=${() => (pressed ? setReport({ funnel: null }) : setFunnelFilter(funnelId, step, outcome))}>${label}</button>`;
  };
  return html`<span class="funnel-filters" role="group" aria-label=${`Filter the report by step ${step}`}>
    ${step === last
      ? choice('continued', 'Show visits that completed')
      : html`${choice('continued', 'Show visits that continued')} ${choice('dropped', 'Show visits that dropped')}`}
  </span>`;
}

/** The funnel chart: a bar per step, as wide as the share of step 1's visits that reached it. */
function FunnelChart({ answer, active }) {
  return html`<ol class="funnel-chart" aria-label=${`Steps of ${answer.name}`}>
    ${answer.steps.map((s) => {
      const visits = Number(s.visits) || 0;
      const rate = Number(s.conversion_rate) || 0;
      const first = s.step === '1';
      return html`<li class="funnel-row" data-step=${s.step}>
        <div class="funnel-label">
          <span class="funnel-step-number" aria-hidden="true">${s.step}</span>
          <span class="funnel-value" title=${s.value}>${s.type === 'event' ? html`<span class="funnel-kind">Event</span> ` : null}${s.value}</span>
        </div>
        <div class="funnel-bar" aria-hidden="true"><span style=${{ width: `${Math.max(visits ? 0.5 : 0, Math.round(rate * 1000) / 10)}%` }}></span></div>
        <div class="funnel-numbers">
          <span data-column="visits">${fmtInt(visits)} visit${visits === 1 ? '' : 's'}</span>
          <span data-column="conversion_rate">${fmtPercent(rate)}${first ? '' : ' of step 1'}</span>
          ${first ? null : html`<span data-column="drop_off">${fmtInt(s.drop_off)} dropped (${fmtPercent(1 - (Number(s.step_conversion_rate) || 0))})</span>`}
          ${first || s.median_seconds === null ? null : html`<span data-column="median_seconds" title="Median time from the step before">${fmtDuration(s.median_seconds)} median</span>`}
          ${visits > 0 ? html`<${StepFilters} funnelId=${answer.id} step=${Number(s.step)} last=${answer.steps.length} active=${active} />` : null}
        </div>
      </li>`;
    })}
  </ol>`;
}

export function FunnelsPanel() {
  const site = useSite();
  const state = useReportState();
  const canChange = useCanChange(site);
  const [funnels, setFunnels] = useState(null);
  const [listError, setListError] = useState(null);
  const [chosen, setChosen] = useState('');
  const [editing, setEditing] = useState(null);
  const [status, setStatus] = useState(null);
  const [version, setVersion] = useState(0);
  useEffect(() => {
    let live = true;
    listAll(funnelsPath(site)).then(
      (list) => {
        if (!live) return;
        setFunnels(list);
        setChosen((c) => (list.some((f) => f.id === c) ? c : (list[0]?.id ?? '')));
      },
      (err) => live && setListError(err),
    );
    return () => {
      live = false;
    };
  }, [site.id, version]);
  const funnel = funnels?.find((f) => f.id === chosen);
  const { loading, error, data } = usePanel(
    (period, signal) => (chosen ? fetchFunnel(site, state, period, chosen, signal) : Promise.resolve(null)),
    [chosen, version],
    { compare: false },
  );
  const saved = (f) => {
    setEditing(null);
    setStatus(null);
    setChosen(f.id);
    setVersion((v) => v + 1);
  };
  const remove = async () => {
    try {
      await api('DELETE', `${funnelsPath(site)}/${encodeURIComponent(funnel.id)}`);
      setChosen('');
      setVersion((v) => v + 1);
    } catch (err) {
      setStatus(failed(message(err)));
    }
  };
  const answer = data && data.id === chosen ? data : null;
  return html`<section class="card funnels" aria-labelledby="funnels-h" aria-busy=${loading ? 'true' : 'false'}>
    <h2 id="funnels-h">Funnels</h2>
    ${listError ? html`<p class="status error" role="alert">${explainError(listError)}</p>` : null}
    ${funnels === null && !listError ? html`<p class="muted">Loading…</p>` : null}
    ${funnels !== null
      ? html`<div class="row wrap funnels-controls">
          ${funnels.length > 0
            ? html`<${Field} label="Funnel"><select name="funnel" value=${chosen} onChange=${(e) => setChosen(e.currentTarget.value)}>
                ${funnels.map((f) => html`<option value=${f.id}>${f.name}</option>`)}
              </select><//>`
            : html`<p class="muted">No funnels yet.${canChange ? ' Create one to see how many visits go from page to page, in order.' : ''}</p>`}
          ${canChange ? html`<button type="button" class="small" onClick=${() => setEditing('new')}>New funnel</button>` : null}
          ${canChange && funnel
            ? html`<button type="button" class="secondary small" onClick=${() => setEditing(funnel)}>Edit</button>
                <${ConfirmButton} label="Delete" confirmLabel="Confirm delete" what=${`funnel ${funnel.name}`} onConfirm=${remove} />`
            : null}
        </div>`
      : null}
    ${status ? html`<${Status} status=${status} />` : null}
    ${chosen && error ? html`<p class="status error" role="alert">${explainError(error)}</p>` : null}
    ${chosen && !answer && !error ? html`<p class="muted">Loading…</p>` : null}
    ${answer
      ? html`<${FunnelChart} answer=${answer} active=${state.funnel} />
        <p class="muted small">Visits in this range that reached each step after the ones before it; the time is the median from the step
          before.${state.funnel ? ' The funnel filter does not narrow this panel: it shows the funnel whole.' : ''}</p>`
      : null}
    ${editing
      ? html`<${FunnelDialog} site=${site} funnel=${editing === 'new' ? null : editing} onClose=${() => setEditing(null)} onSaved=${saved} />`
      : null}
  </section>`;
}
