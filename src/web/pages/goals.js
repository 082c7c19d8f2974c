// A site's conversion goals (the API's "events") with their currency and conversions of the last 30 days, its
// pageview goals (a path or pattern) with theirs, and its milestones: list, add, edit in place, delete.

import { api, listAll, query } from '../api.js';
import { IsoDateInput } from '../components/date-range-picker.js';
import { Section, SettingsLayout } from '../components/section-nav.js';
import { siteNav } from './settings-nav.js';
import { ConfirmButton, failed, Field, ok, Status } from '../forms.js';
import { CURRENCY_CODES, fmtInt, fmtValue } from '../format.js';
import { explain } from '../messages.js';
import { goalCode } from './goal-code.js';
import { addDays, todayIn } from '../range.js';
import { html, useEffect, useState } from '../ui.js';

/** SPEC.md's currencies in words ("US dollar (USD)"), in its order. */
export const CURRENCIES = [
  ['dollar', 'US dollar'],
  ['pound', 'Pound sterling'],
  ['euro', 'Euro'],
  ['yuan', 'Chinese yuan'],
  ['peso', 'Mexican peso'],
  ['shekel', 'Israeli shekel'],
  ['yen', 'Japanese yen'],
  ['won', 'South Korean won'],
  ['hryvnia', 'Ukrainian hryvnia'],
  ['franc', 'Swiss franc'],
  ['rupee', 'Indian rupee'],
  ['integer', 'Plain number'],
  ['none', 'No value'],
];
const CURRENCY_WORDS = new Map(CURRENCIES);
export const currencyWords = (c) => (CURRENCY_CODES.has(c) ? `${CURRENCY_WORDS.get(c)} (${CURRENCY_CODES.get(c)})` : CURRENCY_WORDS.get(c) ?? c);

const GOAL_LABELS = { name: 'The goal name', currency: 'The currency' };
const MILESTONE_LABELS = { name: 'The milestone name', milestone_date: 'The date' };

function parseCurrencies(text) {
  try {
    const parsed = JSON.parse(text || '{}');
    return parsed && typeof parsed === 'object' ? parsed : {};
  } catch {
    return {};
  }
}

/** The last 30 days (today included) as the report counts them, in the site's time zone. */
export function last30Days(timeZone) {
  const today = todayIn(timeZone);
  return { from: `${addDays(today, -29)} 00:00:00`, to: `${today} 23:59:59` };
}

/** A calendar day ("2026-11-23 ...") as the viewer reads dates: "Nov 23, 2026". */
const dayWords = (timestamp) =>
  new Intl.DateTimeFormat(undefined, { timeZone: 'UTC', day: 'numeric', month: 'short', year: 'numeric' }).format(new Date(`${timestamp.slice(0, 10)}T00:00:00Z`));

/** A goal's conversions and value over a period, from /v1 (one query per goal, as the report asks). */
async function conversionsOf(siteId, goal, period) {
  const [row] = await api('GET', `/v1/aggregations?${query({ entity: 'event', site_id: siteId, entity_name: goal.name, aggregates: 'conversions,value', date_from: period.from, date_to: period.to })}`);
  return { conversions: Number(row?.conversions) || 0, value: Number(row?.value) || 0 };
}

function CurrencySelect({ id, value, onChange }) {
  return html`<select id=${id} name="currency" value=${value} onChange=${(e) => onChange(e.currentTarget.value)}>
    ${CURRENCIES.map(([c]) => html`<option value=${c}>${currencyWords(c)}</option>`)}
  </select>`;
}

/** The goal's code for Plumb's script, and behind a disclosure the code for every other tracker Plumb accepts. */
function GoalCode({ name }) {
  const [first, ...others] = goalCode(name);
  return html`<code data-goal-code=${first.tracker}>${first.code}</code>
    <details class="goal-code">
      <summary>Other trackers</summary>
      <dl>${others.map((e) => html`<dt>${e.tracker}</dt><dd><code data-goal-code=${e.tracker}>${e.code}</code></dd>`)}</dl>
    </details>`;
}

function GoalRow({ siteId, goal, currency, counts, onSaved, onDeleted, setStatus }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(goal.name);
  const [cur, setCur] = useState(currency);
  const url = `/v1/sites/${siteId}/events/${goal.id}`;
  const save = async (event) => {
    event.preventDefault();
    try {
      const saved = await api('POST', url, { name: name.trim(), currency: cur });
      setEditing(false);
      setStatus(ok(`Saved goal ${saved.name}.`));
      await onSaved(saved);
    } catch (err) {
      setStatus(failed(explain(err, { labels: GOAL_LABELS, missing: 'This goal no longer exists. Reload the page.' })));
    }
  };
  if (editing) {
    return html`<tr data-goal=${goal.id}><td colspan="5">
      <form class="row wrap" aria-label=${`Edit goal ${goal.name}`} onSubmit=${save}>
        <${Field} label="Goal name">${(id) => html`<input id=${id} name="name" required maxlength="255" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}<//>
        <${Field} label="Value currency">${(id) => html`<${CurrencySelect} id=${id} value=${cur} onChange=${setCur} />`}<//>
        <button type="submit">Save</button>
        <button type="button" class="secondary" onClick=${() => setEditing(false)}>Cancel</button>
      </form>
    </td></tr>`;
  }
  const conversions = counts === undefined ? '…' : counts === null ? 'not available' : fmtInt(counts.conversions);
  const value = counts && currency !== 'none' ? fmtValue(counts.value, currency) : '';
  return html`<tr data-goal=${goal.id}>
    <td class="label" data-label="Name">${goal.name}</td>
    <td data-label="Currency" data-currency="">${currencyWords(currency)}</td>
    <td class="num" data-label="Conversions, last 30 days" data-conversions="">${conversions}${value ? html`<br /><small class="muted" data-value="">${value}</small>` : null}</td>
    <td data-label="Code to send it"><${GoalCode} name=${goal.name} /><small class="muted">id ${goal.id}</small></td>
    <td class="actions">
      <button type="button" class="secondary small" aria-label=${`Edit goal ${goal.name}`} onClick=${() => setEditing(true)}>Edit</button>
      <${ConfirmButton} label="Delete" confirmLabel="Confirm delete" what=${`goal ${goal.name}`} onConfirm=${() => onDeleted(goal)} />
    </td>
  </tr>`;
}

function Goals({ siteId, timeZone, initialCurrencies }) {
  const [goals, setGoals] = useState(null);
  const [currencies, setCurrencies] = useState(() => parseCurrencies(initialCurrencies));
  const [counts, setCounts] = useState({});
  const [status, setStatus] = useState(null);
  const [name, setName] = useState('');
  const [currency, setCurrency] = useState('dollar');
  const url = `/v1/sites/${siteId}/events`;
  const period = last30Days(timeZone);
  const count = (goal) =>
    conversionsOf(siteId, goal, period).then(
      (c) => setCounts((old) => ({ ...old, [goal.id]: c })),
      () => setCounts((old) => ({ ...old, [goal.id]: null })),
    );
  const load = async () => {
    try {
      const list = await listAll(url);
      setGoals(list);
      await Promise.all(list.map(count));
    } catch (err) {
      setStatus(failed(`The goals could not be loaded. ${explain(err)}`));
    }
  };
  useEffect(() => void load(), [siteId]);
  const remember = (goal) => setCurrencies((old) => ({ ...old, [goal.id]: goal.currency }));
  const add = async (event) => {
    event.preventDefault();
    try {
      const goal = await api('POST', url, { name: name.trim(), currency });
      remember(goal);
      setName('');
      setStatus(ok(`Added goal ${goal.name}. Send it from your pages with the code shown next to it.`));
      await load();
    } catch (err) {
      setStatus(failed(explain(err, { labels: GOAL_LABELS })));
    }
  };
  const saved = async (goal) => {
    remember(goal);
    await load();
  };
  const deleted = async (goal) => {
    try {
      await api('DELETE', `${url}/${goal.id}`);
      setStatus(ok(`Deleted goal ${goal.name}.`));
      await load();
    } catch (err) {
      setStatus(failed(explain(err, { missing: 'This goal was already deleted. Reload the page.' })));
    }
  };
  return html`<section class="card" aria-labelledby="goals-h">
    <h2 id="goals-h">Event goals</h2>
    <p class="muted">Conversions your pages send by name, with Plumb's script or Fathom's, Plausible's or Umami's pointed at Plumb (the code for each is beside the goal; a name not here yet becomes a goal on its first conversion). The conversions are those of the last 30 days,${' '}<span class="nowrap">${dayWords(period.from)}</span> to <span class="nowrap">${dayWords(period.to)}</span>, in the site's time zone (${timeZone}).</p>
    ${goals === null
      ? html`<p class="muted">Loading…</p>`
      : goals.length === 0
        ? html`<p class="muted">No goals yet.</p>`
        : html`<div class="scroll-x"><table class="stacked">
            <thead><tr><th scope="col">Name</th><th scope="col">Currency</th><th scope="col" class="num">Conversions, last 30 days</th><th scope="col">Code to send it</th><th scope="col">Actions</th></tr></thead>
            <tbody>${goals.map((g) => html`<${GoalRow} key=${`${g.id}:${g.name}:${currencies[g.id]}`} siteId=${siteId} goal=${g} currency=${currencies[g.id] ?? 'dollar'}
              counts=${counts[g.id]} onSaved=${saved} onDeleted=${deleted} setStatus=${setStatus} />`)}</tbody>
          </table></div>`}
    <form class="row wrap add-form" aria-label="Add a goal" onSubmit=${add}>
      <${Field} label="Goal name">${(id) => html`<input id=${id} name="name" required maxlength="255" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}<//>
      <${Field} label="Value currency">${(id) => html`<${CurrencySelect} id=${id} value=${currency} onChange=${setCurrency} />`}<//>
      <button type="submit">Add goal</button>
    </form>
    <${Status} status=${status} />
  </section>`;
}

const PAGE_GOAL_LABELS = { name: 'The goal name', path: 'The page path' };

/** Every pageview goal with its pageviews and visits over `period`, in one request (none while there are none). */
const pageGoalNumbers = (siteId, period) =>
  api('GET', `/dashboard/api/report/page-goal-aggregations?${query({ entity_id: siteId, date_from: period.from, date_to: period.to })}`);

function PathInput({ id, value, onInput }) {
  return html`<input id=${id} name="path" required maxlength="300" placeholder="/signup or /blog/*" spellcheck="false" autocomplete="off"
    value=${value} onInput=${(e) => onInput(e.currentTarget.value)} />`;
}

function PageGoalRow({ siteId, goal, counts, canChange, onChanged, setStatus }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(goal.name);
  const [path, setPath] = useState(goal.path);
  const url = `/dashboard/api/sites/${siteId}/page-goals/${goal.id}`;
  const save = async (event) => {
    event.preventDefault();
    try {
      const saved = await api('PATCH', url, { name: name.trim(), path: path.trim() });
      setEditing(false);
      setStatus(ok(`Saved goal ${saved.name}.`));
      await onChanged();
    } catch (err) {
      setStatus(failed(explain(err, { labels: PAGE_GOAL_LABELS, missing: 'This goal no longer exists. Reload the page.' })));
    }
  };
  const remove = async () => {
    try {
      await api('DELETE', url);
      setStatus(ok(`Deleted goal ${goal.name}.`));
      await onChanged();
    } catch (err) {
      setStatus(failed(explain(err, { missing: 'This goal was already deleted. Reload the page.' })));
    }
  };
  if (editing) {
    return html`<tr data-page-goal=${goal.id}><td colspan="4">
      <form class="row wrap" aria-label=${`Edit goal ${goal.name}`} onSubmit=${save}>
        <${Field} label="Goal name">${(id) => html`<input id=${id} name="name" required maxlength="255" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}<//>
        <${Field} label="Page path">${(id) => html`<${PathInput} id=${id} value=${path} onInput=${setPath} />`}<//>
        <button type="submit">Save</button>
        <button type="button" class="secondary" onClick=${() => setEditing(false)}>Cancel</button>
      </form>
    </td></tr>`;
  }
  const shown = (n) => (counts === undefined ? '…' : counts === null ? 'not available' : fmtInt(n));
  return html`<tr data-page-goal=${goal.id}>
    <td class="label" data-label="Name">${goal.name}</td>
    <td data-label="Page path"><code data-path="">${goal.path}</code></td>
    <td class="num" data-label="Visits, last 30 days" data-visits="">${shown(counts?.unique_conversions)}${counts ? html`<br /><small class="muted" data-pageviews="">${fmtInt(counts.conversions)} pageviews</small>` : null}</td>
    <td class="actions">${canChange
      ? html`<button type="button" class="secondary small" aria-label=${`Edit goal ${goal.name}`} onClick=${() => setEditing(true)}>Edit</button>
        <${ConfirmButton} label="Delete" confirmLabel="Confirm delete" what=${`goal ${goal.name}`} onConfirm=${remove} />`
      : null}</td>
  </tr>`;
}

/** Goals reached by viewing a page: an exact path, or a pattern where `*` is any run of characters. */
function PageGoals({ siteId, timeZone }) {
  const [goals, setGoals] = useState(null);
  const [canChange, setCanChange] = useState(false);
  const [counts, setCounts] = useState({});
  const [status, setStatus] = useState(null);
  const [name, setName] = useState('');
  const [path, setPath] = useState('');
  const url = `/dashboard/api/sites/${siteId}/page-goals`;
  const period = last30Days(timeZone);
  const load = async () => {
    try {
      const list = await api('GET', url);
      setGoals(list.data);
      setCanChange(list.can_change);
      if (list.data.length === 0) return;
      const numbers = await pageGoalNumbers(siteId, period).catch(() => null);
      setCounts(Object.fromEntries(list.data.map((g) => {
        const found = numbers?.find((n) => n.id === g.id);
        const row = found?.rows?.[0];
        return [g.id, row ? { conversions: Number(row.conversions) || 0, unique_conversions: Number(row.unique_conversions) || 0 } : null];
      })));
    } catch (err) {
      setStatus(failed(`The pageview goals could not be loaded. ${explain(err)}`));
    }
  };
  useEffect(() => void load(), [siteId]);
  const add = async (event) => {
    event.preventDefault();
    try {
      const goal = await api('POST', url, { name: name.trim(), path: path.trim() });
      setName('');
      setPath('');
      setStatus(ok(`Added goal ${goal.name}: visits that view ${goal.path} count as its conversions.`));
      await load();
    } catch (err) {
      setStatus(failed(explain(err, { labels: PAGE_GOAL_LABELS })));
    }
  };
  return html`<section class="card" aria-labelledby="page-goals-h">
    <h2 id="page-goals-h">Pageview goals</h2>
    <p class="muted">A visit converts when it views a page whose path matches: <code>/signup</code> exactly, or a pattern where <code>*</code> stands for anything: <code>/blog/*</code> for every page under /blog. No code to add. The report counts a goal's visits as unique conversions and its pageviews as conversions, over the last 30 days here.</p>
    ${goals === null
      ? html`<p class="muted">Loading…</p>`
      : goals.length === 0
        ? html`<p class="muted">No pageview goals yet.</p>`
        : html`<div class="scroll-x"><table class="stacked">
            <thead><tr><th scope="col">Name</th><th scope="col">Page path</th><th scope="col" class="num">Visits, last 30 days</th><th scope="col">Actions</th></tr></thead>
            <tbody>${goals.map((g) => html`<${PageGoalRow} key=${`${g.id}:${g.name}:${g.path}`} siteId=${siteId} goal=${g} counts=${counts[g.id]}
              canChange=${canChange} onChanged=${load} setStatus=${setStatus} />`)}</tbody>
          </table></div>`}
    ${canChange
      ? html`<form class="row wrap add-form" aria-label="Add a pageview goal" onSubmit=${add}>
          <${Field} label="Goal name">${(id) => html`<input id=${id} name="name" required maxlength="255" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}<//>
          <${Field} label="Page path">${(id) => html`<${PathInput} id=${id} value=${path} onInput=${setPath} />`}<//>
          <button type="submit">Add pageview goal</button>
        </form>`
      : null}
    <${Status} status=${status} />
  </section>`;
}

function MilestoneRow({ milestone, url, onChanged, setStatus }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(milestone.name);
  const [date, setDate] = useState(milestone.milestone_date.slice(0, 10));
  const save = async (event) => {
    event.preventDefault();
    try {
      const saved = await api('POST', `${url}/${milestone.id}`, { name: name.trim(), milestone_date: date });
      setEditing(false);
      setStatus(ok(`Saved milestone ${saved.name}.`));
      await onChanged();
    } catch (err) {
      setStatus(failed(explain(err, { labels: MILESTONE_LABELS, missing: 'This milestone no longer exists. Reload the page.' })));
    }
  };
  const remove = async () => {
    try {
      await api('DELETE', `${url}/${milestone.id}`);
      setStatus(ok(`Deleted milestone ${milestone.name}.`));
      await onChanged();
    } catch (err) {
      setStatus(failed(explain(err, { missing: 'This milestone was already deleted. Reload the page.' })));
    }
  };
  if (editing) {
    return html`<tr data-milestone=${milestone.id}><td colspan="3">
      <form class="row wrap" aria-label=${`Edit milestone ${milestone.name}`} onSubmit=${save}>
        <${Field} label="Milestone name">${(id) => html`<input id=${id} name="name" required maxlength="30" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}<//>
        <${Field} label="Date">${(id) => html`<${IsoDateInput} id=${id} name="milestone_date" value=${date} onChange=${setDate} />`}<//>
        <button type="submit">Save</button>
        <button type="button" class="secondary" onClick=${() => setEditing(false)}>Cancel</button>
      </form>
    </td></tr>`;
  }
  return html`<tr data-milestone=${milestone.id}>
    <td class="label" data-label="Name">${milestone.name}</td>
    <td data-label="Date">${milestone.milestone_date.slice(0, 10)}</td>
    <td class="actions">
      <button type="button" class="secondary small" aria-label=${`Edit milestone ${milestone.name}`} onClick=${() => setEditing(true)}>Edit</button>
      <${ConfirmButton} label="Delete" confirmLabel="Confirm delete" what=${`milestone ${milestone.name}`} onConfirm=${remove} />
    </td>
  </tr>`;
}

function Milestones({ siteId }) {
  const [items, setItems] = useState(null);
  const [status, setStatus] = useState(null);
  const [name, setName] = useState('');
  const [date, setDate] = useState('');
  const url = `/v1/sites/${siteId}/milestones`;
  const load = async () => {
    try {
      setItems(await listAll(url));
    } catch (err) {
      setStatus(failed(`The milestones could not be loaded. ${explain(err)}`));
    }
  };
  useEffect(() => void load(), [siteId]);
  const add = async (event) => {
    event.preventDefault();
    try {
      const m = await api('POST', url, { name: name.trim(), milestone_date: date });
      setName('');
      setStatus(ok(`Added milestone ${m.name}.`));
      await load();
    } catch (err) {
      setStatus(failed(explain(err, { labels: MILESTONE_LABELS })));
    }
  };
  return html`<section class="card" aria-labelledby="milestones-h">
    <h2 id="milestones-h">Milestones</h2>
    <p class="muted">Dated notes drawn on the report chart (a launch, a campaign).</p>
    ${items === null
      ? html`<p class="muted">Loading…</p>`
      : items.length === 0
        ? html`<p class="muted">No milestones yet.</p>`
        : html`<div class="scroll-x"><table class="stacked">
            <thead><tr><th scope="col">Name</th><th scope="col">Date</th><th scope="col">Actions</th></tr></thead>
            <tbody>${items.map((m) => html`<${MilestoneRow} key=${`${m.id}:${m.name}:${m.milestone_date}`} milestone=${m} url=${url} onChanged=${load} setStatus=${setStatus} />`)}</tbody>
          </table></div>`}
    <form class="row wrap add-form" aria-label="Add a milestone" onSubmit=${add}>
      <${Field} label="Milestone name">${(id) => html`<input id=${id} name="name" required maxlength="30" value=${name} onInput=${(e) => setName(e.currentTarget.value)} />`}<//>
      <${Field} label="Date">${(id) => html`<${IsoDateInput} id=${id} name="milestone_date" value=${date} onChange=${setDate} />`}<//>
      <button type="submit">Add milestone</button>
    </form>
    <${Status} status=${status} />
  </section>`;
}

export function GoalsPage({ data }) {
  return html`<div class="settings-page-head">
      <h1>Goals and milestones of ${data.siteName}</h1>
      <p class="links"><a href=${`/sites/${data.site}`}>Report</a> · <a href="/sites">All sites</a></p>
    </div>
    <${SettingsLayout} label="Site settings" groups=${siteNav(data.site, 'goals')}>
      <${Section} id="goals"><${Goals} siteId=${data.site} timeZone=${data.timezone || 'UTC'} initialCurrencies=${data.goalCurrencies} /><//>
      <${Section} id="page-goals"><${PageGoals} siteId=${data.site} timeZone=${data.timezone || 'UTC'} /><//>
      <${Section} id="milestones"><${Milestones} siteId=${data.site} /><//>
    <//>`;
}
